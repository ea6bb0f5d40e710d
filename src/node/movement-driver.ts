/**
 * Driving the topology changes an operator starts on this node: its own decommission
 * (`leaving` → streams → `left`, then the node exits) and the removal of a dead node
 * (`removing` → the heirs pull its ranges from the surviving replicas → `removed`).
 *
 * Each gossip round `step()` looks at the topology view: once this node's movement is the
 * only one and every live coordinator gossips the view that holds it (so all write to the
 * pending ranges), it asks each node that gains ranges to pull them (Handoff.Fetch, which
 * resumes from the gainer's checkpoints), and when every gainer has them, it finishes
 * the movement. A crash of this node resumes at restart (the movement is in node.json);
 * a movement that loses to another started at the same moment is withdrawn.
 *
 * Owns: the checks an operator's request must pass, and the movement's progress. Must
 * not: decide the topology (membership/ring-view.ts) or move data (handoff/).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Gossiper } from '../membership/gossiper.js';
import { disagreeing, settledHeirs, type Movement, type RingView } from '../membership/ring-view.js';
import { describeMovement } from '../membership/join.js';
import { formatHeirs, formatTokens, parseHeirs, statusOf } from '../membership/endpoint.js';
import { leaveHeirs } from '../ring/index.js';
import type { PullItem } from '../streaming/transfers.js';
import type { Handoff } from './handoff.js';
import type { Identity } from './identity.js';

/** An operator's request that cannot be run now: FAILED_PRECONDITION, with what to do. */
export class MovementRefused extends Error {
  override readonly name = 'MovementRefused';
  readonly code = 'OP_MOVEMENT_REFUSED';
}

export interface DriverDeps {
  readonly id: string;
  readonly replicas: number;
  readonly gossiper: Gossiper;
  readonly handoff: Handoff;
  view(): RingView;
  identity(): Identity;
  persist(change: Partial<Pick<Identity, 'status' | 'move' | 'removing' | 'removed' | 'heirs' | 'tokens'>>): Promise<void>;
  /** Set our gossip fields and republish the view. */
  gossip(fields: Record<string, string>): void;
  /** Tell every peer our state now (before exiting). */
  announce(): Promise<void>;
  /** The decommission is done: stop serving and exit. */
  exit(): void;
  /** Hand every hint this node holds to its target or to a live replica; resolves with how many are left. */
  handOverHints(): Promise<number>;
  /** ms a gainer gets to pull its ranges in one Fetch call before the driver asks again. */
  readonly fetchTimeoutMs: number;
  readonly log: Logger;
}

export interface GainerProgress {
  readonly node: string;
  readonly ranges: number;
  state: 'waiting' | 'pulling' | 'done' | 'failed';
  keys: number;
  bytes: number;
  error: string;
}

export interface DriveStatus {
  readonly movement: Movement;
  readonly move: string;
  readonly startedAt: number;
  phase: string;
  readonly gainers: GainerProgress[];
}

export class MovementDriver {
  #running: Promise<void> | undefined;
  #status: DriveStatus | undefined;
  #lastWait = '';
  #settling = false;

  constructor(private readonly deps: DriverDeps) {}

  /** The movement this node drives, with each gainer's progress; undefined when none. */
  get status(): DriveStatus | undefined {
    return this.#status;
  }

  /** Start decommissioning this node. */
  async decommission(): Promise<string> {
    const { id } = this.deps;
    const me = this.deps.identity();
    if (me.status === 'leaving') return me.move!;
    if (me.status !== 'normal') throw new MovementRefused(`${id} is ${me.status}, not normal: only a normal member can be decommissioned`);
    const view = this.deps.view();
    this.#refuseWhileMoving(view);
    this.#refuseIfTooSmall(view, id);
    const move = `leave-${id}-${randomBytes(6).toString('hex')}`;
    const heirs = this.#heirsWith(id, leaveHeirs(view.ring!, id, this.deps.replicas));
    await this.deps.persist({ status: 'leaving', move, heirs });
    this.deps.gossip({ status: 'leaving', heirs });
    this.deps.log.info({ move }, 'decommission started: status leaving; streaming starts once every member sees it');
    return move;
  }

  /** Give up a decommission that has not finished: the node is normal again. */
  async cancelDecommission(): Promise<void> {
    const me = this.deps.identity();
    if (me.status !== 'leaving') throw new MovementRefused(`${this.deps.id} is ${me.status}, not leaving: there is no decommission to cancel`);
    await this.#retract('cancelled by an operator');
  }

  /** Start removing `target`, a member that is down and will not come back. */
  async removeNode(target: string): Promise<string> {
    const { id, gossiper } = this.deps;
    if (target === id) throw new MovementRefused(`${id} cannot remove itself: decommission it instead (ringkv decommission --node <its address>)`);
    const me = this.deps.identity();
    if (me.removing === target) return me.move!;
    if (me.status !== 'normal') throw new MovementRefused(`${id} is ${me.status}: ask a normal member to remove ${target}`);
    const view = this.deps.view();
    const st = gossiper.state(target);
    if (st === undefined || view.removed.has(target) || statusOf(st) === 'left') throw new MovementRefused(`${target} is not a member of this cluster (see ringkv status)`);
    if (gossiper.isUp(target)) throw new MovementRefused(`${target} is up: decommission it (ringkv decommission --node ${st.fields.get('addr')?.value ?? '<its address>'}) or stop it first; removenode is for nodes that will not come back`);
    const owner = view.ring?.has(target) ?? false;
    // A joiner that never became an owner holds nothing anyone needs: it is simply removed.
    if (!owner) {
      await this.#markRemoved(target);
      this.deps.log.info({ peer: target }, 'removed a member that owned nothing');
      return '';
    }
    // A node that died while leaving may be removed: its removal takes over its leave.
    const other = view.movements.find((m) => !(m.kind === 'leave' && m.node === target));
    if (other !== undefined) this.#refuseWhileMoving({ ...view, movements: [other] });
    this.#refuseIfTooSmall(view, target);
    const move = `remove-${target}-${randomBytes(6).toString('hex')}`;
    const heirs = this.#heirsWith(target, leaveHeirs(view.ring!, target, this.deps.replicas));
    await this.deps.persist({ removing: target, move, heirs });
    this.deps.gossip({ removing: target, heirs });
    this.deps.log.info({ peer: target, move }, 'removal started: the nodes that gain its ranges pull them from the surviving replicas');
    return move;
  }

  /**
   * Heirs bookkeeping, once leaves are done. Tokens the ring gives this node through a
   * gone leaver's heirs become its own (gossiped in `tokens`: the ring does not change);
   * and entries of our `heirs` field that no ring needs any more are dropped, so that
   * the field does not grow with every removal.
   */
  async #settleHeirs(): Promise<void> {
    if (this.#settling) return;
    this.#settling = true;
    try {
      const me = this.deps.identity();
      const view = this.deps.view();
      const own = new Set(me.tokens ?? []);
      const gained = me.status === 'normal' ? (view.ring?.member(this.deps.id)?.tokens ?? []).filter((t) => !own.has(t)) : [];
      if (gained.length > 0) {
        const tokens = [...own, ...gained].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        await this.deps.persist({ tokens });
        this.deps.gossip({ tokens: formatTokens(tokens) });
        this.deps.log.info({ tokens: gained.length }, 'took the tokens inherited from a node that left as our own');
      }
      if (me.heirs === '') return;
      const entries = parseHeirs(me.heirs) ?? new Map<string, ReadonlyMap<bigint, string>>();
      const settled = settledHeirs(this.deps.gossiper.states(), entries).filter((s) => s !== this.deps.id && s !== me.removing);
      if (settled.length > 0) {
        for (const s of settled) entries.delete(s);
        const heirs = formatHeirs(entries);
        await this.deps.persist({ heirs });
        this.deps.gossip({ heirs });
      }
    } finally {
      this.#settling = false;
    }
  }

  /**
   * Our `heirs` field with the entry for `subject` set (who inherits each of its tokens,
   * chosen on the ring as it stands when the change starts) or, undefined, withdrawn.
   * Entries of finished changes stay: the ring goes on applying them (ring-view.ts).
   */
  #heirsWith(subject: string, heirs: ReadonlyMap<bigint, string> | undefined): string {
    const entries = parseHeirs(this.deps.identity().heirs) ?? new Map<string, ReadonlyMap<bigint, string>>();
    if (heirs === undefined) entries.delete(subject);
    else entries.set(subject, heirs);
    return formatHeirs(entries);
  }

  #refuseWhileMoving(view: RingView): void {
    const m = view.movements[0];
    if (m !== undefined) throw new MovementRefused(`${describeMovement(m)}: one topology change at a time; wait for it to finish (ringkv transfers) and try again`);
  }

  #refuseIfTooSmall(view: RingView, leaving: string): void {
    const left = (view.ring?.size ?? 0) - 1;
    if (left < 1) throw new MovementRefused(`${leaving} is the last member: a cluster needs at least one`);
    if (left < this.deps.replicas)
      this.deps.log.warn({ members: left, replicas: this.deps.replicas }, 'after this change the cluster has fewer members than N: each key will have fewer copies than N');
  }

  /** One gossip round: drive our movement on if it may go on. */
  step(): void {
    void this.#settleHeirs();
    const me = this.deps.identity();
    const subject = me.status === 'leaving' ? this.deps.id : me.removing;
    if (subject === undefined || this.#running !== undefined || me.move === undefined) return;
    const view = this.deps.view();
    const mine = view.movements.find((m) => m.node === subject && m.driver === this.deps.id);
    if (mine === undefined) {
      // A removal whose subject is no longer an owner (removed meanwhile, or its data is gone): done.
      if (me.removing !== undefined && !(view.ring?.has(subject) ?? false)) void this.#finishRemoval(subject);
      return;
    }
    const first = view.movements[0]!;
    if (first !== mine) {
      void this.#retract(`${describeMovement(first)} started at the same moment and goes first; run the command again once it is done`);
      return;
    }
    if (view.movements.length > 1) return this.#wait(`waiting for ${view.movements.slice(1).map(describeMovement).join(', ')} to withdraw`);
    const behind = disagreeing(this.deps.gossiper.states(), this.deps.id, view.hash, view.removed, (x) => this.deps.gossiper.isUp(x));
    if (behind !== undefined) return this.#wait(`waiting for ${behind} to see the change (then every coordinator writes to the pending ranges)`);
    this.#running = this.#drive(view, mine, me.move).finally(() => (this.#running = undefined));
  }

  #wait(reason: string): void {
    if (reason !== this.#lastWait) this.deps.log.info({ reason }, 'topology change: waiting');
    this.#lastWait = reason;
  }

  async #drive(view: RingView, movement: Movement, move: string): Promise<void> {
    const byGainer = new Map<string, PullItem[]>();
    for (const t of this.deps.handoff.plan(view)) {
      const items = byGainer.get(t.to) ?? [];
      items.push(t);
      byGainer.set(t.to, items);
    }
    const status: DriveStatus = this.#status?.move === move ? this.#status : {
      movement,
      move,
      startedAt: Date.now(),
      phase: 'streaming',
      gainers: [...byGainer].map(([node, items]) => ({ node, ranges: items.length, state: 'waiting', keys: 0, bytes: 0, error: '' })),
    };
    this.#status = status;
    status.phase = 'streaming';
    this.deps.log.info({ move, gainers: [...byGainer.keys()], ranges: [...byGainer.values()].reduce((s, x) => s + x.length, 0) }, 'asking the nodes that gain ranges to pull them');
    await Promise.all(
      status.gainers.map(async (g) => {
        if (g.state === 'done') return;
        g.state = 'pulling';
        try {
          const items = byGainer.get(g.node)!;
          const r =
            g.node === this.deps.id
              ? await this.deps.handoff.transfers.pull(move, this.deps.id, items)
              : await this.deps.handoff.peers.fetch(g.node, move, items, Date.now() + this.deps.fetchTimeoutMs);
          g.keys = Number(r.keys);
          g.bytes = Number(r.bytes);
          g.state = 'done';
          g.error = '';
        } catch (e) {
          g.state = 'failed';
          g.error = (e as { details?: string; message?: string })?.details ?? (e as Error)?.message ?? String(e);
          this.deps.log.warn({ peer: g.node, err: g.error }, 'a node could not pull its ranges yet; asking again next round');
        }
      }),
    );
    if (!status.gainers.every((g) => g.state === 'done')) return;
    const keys = status.gainers.reduce((s, g) => s + g.keys, 0);
    const bytes = status.gainers.reduce((s, g) => s + g.bytes, 0);
    if (movement.kind === 'leave') {
      // Hints this node keeps for others would leave with it.
      const left = await this.deps.handOverHints();
      if (left > 0) {
        status.phase = `handing over hints (${left} left)`;
        this.deps.log.info({ hints: left }, 'ranges streamed; some hints could not be handed over yet: trying again next round');
        return;
      }
      status.phase = 'left';
      await this.deps.persist({ status: 'left', move: undefined });
      this.deps.gossip({ status: 'left' });
      await this.deps.announce();
      this.deps.log.info({ move, keys, bytes, ms: Date.now() - status.startedAt }, 'decommissioned: every range is on its new replicas; status left, stopping');
      this.deps.exit();
    } else {
      await this.#finishRemoval(movement.node);
      status.phase = 'removed';
      this.deps.log.info({ move, peer: movement.node, keys, bytes, ms: Date.now() - status.startedAt }, 'removed: every range of the node is back on N replicas');
    }
  }

  async #finishRemoval(target: string): Promise<void> {
    await this.#markRemoved(target);
    await this.deps.persist({ removing: undefined, move: undefined });
    this.deps.gossip({ removing: '' });
  }

  async #markRemoved(target: string): Promise<void> {
    const removed = [...new Set([...this.deps.identity().removed, target])];
    await this.deps.persist({ removed });
    this.deps.gossip({ removed: removed.join(',') });
  }

  async #retract(why: string): Promise<void> {
    const me = this.deps.identity();
    if (me.status === 'leaving') {
      const heirs = this.#heirsWith(this.deps.id, undefined);
      await this.deps.persist({ status: 'normal', move: undefined, heirs });
      this.deps.gossip({ status: 'normal', heirs });
      this.deps.log.warn({ reason: why }, 'decommission withdrawn: the node is normal again');
    } else if (me.removing !== undefined) {
      const target = me.removing;
      const heirs = this.#heirsWith(target, undefined);
      await this.deps.persist({ removing: undefined, move: undefined, heirs });
      this.deps.gossip({ removing: '', heirs });
      this.deps.log.warn({ peer: target, reason: why }, 'removal withdrawn');
    }
    if (this.#status) this.#status.phase = `withdrawn: ${why}`;
  }
}
