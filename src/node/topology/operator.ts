/**
 * The operator's side of this node's topology, for the Admin service: the commands
 * (decommission, removenode, cleanup) and the reports on data in motion (Admin Transfers,
 * and the `progress` the node gossips for status).
 *
 * Owns: the commands' replies, cleanup's deletes, and the reports' shape. Must not:
 * decide what cleanup may delete (cluster/cleanup.ts), drive a movement
 * (movement-driver.ts does), join (joining.ts) or decide the topology (membership/ does).
 */
import type { Logger } from 'pino';
import type { Store } from '../../storage/index.js';
import type { RingView } from '../../membership/ring-view.js';
import { describeMovement } from '../../cluster/join.js';
import { cleanupPlan } from '../../cluster/cleanup.js';
import { deleteFilter } from '../../cluster/n-classes.js';
import type { Handoff } from '../handoff.js';
import type { Identity } from '../identity.js';
import { MovementRefused, type MovementDriver } from './movement-driver.js';
import type { TransfersResponse } from '../../transport/generated/ringkv/v1/TransfersResponse.js';

export interface OperatorDeps {
  readonly id: string;
  readonly store: Pick<Store, 'ranges'>;
  readonly driver: Pick<MovementDriver, 'status' | 'decommission' | 'cancelDecommission' | 'removeNode'>;
  readonly handoff: Pick<Handoff, 'transfers' | 'outgoing' | 'throttle' | 'pullsOf' | 'classes'>;
  view(): RingView;
  identity(): Pick<Identity, 'status' | 'move'>;
  readonly log: Logger;
}

export class Operator {
  constructor(private readonly deps: OperatorDeps) {}

  /** Start (or, with `cancel`, withdraw) this node's decommission. */
  async decommission(cancel: boolean): Promise<{ move: string; message: string }> {
    const { id, driver } = this.deps;
    if (cancel) {
      await driver.cancelDecommission();
      return { move: '', message: `${id}: decommission cancelled; the node is normal again` };
    }
    const move = await driver.decommission();
    return {
      move,
      message: `${id} is leaving: once every member sees it, the nodes that gain its ranges pull them; then it goes left and exits`,
    };
  }

  async removeNode(target: string): Promise<{ move: string; message: string }> {
    const move = await this.deps.driver.removeNode(target);
    return {
      move,
      message:
        move === ''
          ? `${target} owned no data: removed`
          : `removing ${target}: the nodes that gain its ranges pull them from the surviving replicas, then its ranges and the writes it held hints for are repaired (driven by ${this.deps.id})`,
    };
  }

  /**
   * Delete data of ranges this node no longer replicates (after joins), per N class: a
   * range's keys of each class where this node is not among that class's replicas.
   * Refused while anything moves (cluster/cleanup.ts decides).
   */
  async cleanup(): Promise<{ deleted: number; kept: number; ranges: number }> {
    const { deps } = this;
    const view = deps.view();
    const classes = deps.handoff.classes();
    const plan = cleanupPlan({ self: deps.id, status: deps.identity().status, view, classes: classes.classes });
    if (plan.kind === 'refuse') throw new MovementRefused(plan.message);
    let deleted = 0,
      kept = 0,
      ranges = 0;
    for (const r of plan.ranges) {
      // The ring (or the buckets' classes) may have changed meanwhile: stop rather than delete by a stale one.
      if (deps.view() !== view) throw new MovementRefused('the ring changed during cleanup; run it again');
      if (deps.handoff.classes().classes.join() !== classes.classes.join())
        throw new MovementRefused('a bucket of a new n was created during cleanup; run it again');
      const res = await deps.store.ranges.delete({ start: r.start, end: r.end }, {}, deleteFilter(classes, r.n));
      deleted += res.deleted;
      kept += res.kept;
      ranges++;
    }
    deps.log.info(
      { component: 'topology', deleted, kept, ranges },
      'cleanup: data of ranges this node no longer replicates deleted',
    );
    return { deleted, kept, ranges };
  }

  /** What this node pulls and sends, and the movement it drives (Admin Transfers). */
  transfers(): TransfersResponse {
    const { handoff } = this.deps;
    const d = this.deps.driver.status;
    return {
      nodeId: this.deps.id,
      movements: this.deps.view().movements.map(describeMovement),
      pulls: handoff.transfers.status().map((p) => ({
        move: p.move,
        requestedBy: p.from,
        startedAtMs: p.startedAt,
        finishedAtMs: p.finishedAt ?? 0,
        ranges: p.ranges.map((r) => ({
          start: r.start,
          end: r.end,
          state: r.state,
          peer: r.source,
          keys: r.keys,
          bytes: r.bytes,
          share: r.share,
          fallbackSource: r.fallbackSource,
          error: r.error,
        })),
      })),
      outgoing: [...handoff.outgoing].map((o) => ({
        start: o.start,
        end: o.end,
        state: 'active',
        peer: o.to,
        keys: o.keys,
        bytes: o.bytes,
        share: 0,
        fallbackSource: false,
        error: '',
      })),
      drive:
        d === undefined
          ? undefined
          : {
              kind: d.movement.kind,
              node: d.movement.node,
              move: d.move,
              phase: d.phase,
              startedAtMs: d.startedAt,
              gainers: d.gainers,
            },
      streamBytesPerSecond: Number.isFinite(handoff.throttle.rate) ? handoff.throttle.rate : 0,
    };
  }

  /** Ranges done/total of the movement this node streams (its join) or drives, for status; '' when none. */
  progress(): string {
    const { handoff } = this.deps;
    const d = this.deps.driver.status;
    if (d !== undefined && d.phase === 'streaming')
      return `${d.gainers.filter((g) => g.state === 'done').reduce((s, g) => s + g.ranges, 0)}/${d.gainers.reduce((s, g) => s + g.ranges, 0)}`;
    const { status, move } = this.deps.identity();
    if (status !== 'joining' || move === undefined) return '';
    const total = handoff.pullsOf(this.deps.view(), this.deps.id).length;
    const pull = handoff.transfers.status().find((p) => p.move === move);
    return total === 0 ? '' : `${pull?.ranges.filter((r) => r.state === 'done').length ?? 0}/${total}`;
  }
}
