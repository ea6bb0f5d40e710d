/**
 * Staged topology changes on one node (Riak's `cluster plan / commit / clear`): an operator
 * stages joins of standbys, leaves and removals, reads what they would move, then commits
 * them; the node runs them one after another (one topology change at a time), each to its
 * end, and stops at the first that fails. A commit is refused when the ring changed since
 * the plan: what the operator read is no longer what would happen.
 *
 * The stage lives in this node's memory: a restart discards it (plan again).
 *
 * Owns: the stage, its checks and the commit's sequencing. Must not: move data or decide
 * the topology (each change runs as its own command would: admit, decommission, remove).
 */
import type { Logger } from 'pino';
import type { Gossiper } from '../membership/gossiper.js';
import { field, statusOf } from '../membership/endpoint.js';
import { describeMovement } from '../membership/join.js';
import type { RingView } from '../membership/ring-view.js';
import { tokenHex, tokenOf } from '../ring/index.js';
import { PlanError, planChanges, type StagedChange } from '../handoff/staged-plan.js';
import { MovementRefused } from './movement-driver.js';
import type { PlanResponse } from '../transport/generated/ringkv/v1/PlanResponse.js';

export type StepState = 'staged' | 'running' | 'done' | 'failed';

interface Staged {
  readonly change: StagedChange;
  state: StepState;
  error: string;
}

export interface StagedDeps {
  readonly id: string;
  readonly replicas: number;
  readonly gossiper: Gossiper;
  view(): RingView;
  /** Start a change as its own command does. */
  admit(node: string): Promise<void>;
  decommission(node: string): Promise<void>;
  removeNode(node: string): Promise<void>;
  readonly pollMs?: number;
  readonly log: Logger;
}

/** A change the operator asked for that cannot be staged: INVALID_ARGUMENT. */
export class BadChange extends Error {
  override readonly name = 'BadChange';
  readonly code = 'OP_BAD_ARGUMENT';
}

/** Refused because the ring moved on since the plan: ABORTED. */
export class PlanOutdated extends Error {
  override readonly name = 'PlanOutdated';
  readonly code = 'OP_PLAN_OUTDATED';
}

export class StagedChanges {
  #steps: Staged[] = [];
  #ringKey = '';
  #committing: Promise<void> | undefined;

  constructor(private readonly deps: StagedDeps) {}

  /** What ownership depends on: members, their tokens, and movements in progress. */
  #key(view: RingView): string {
    const members = view.ring?.members.map((m) => `${m.id}:${m.tokens.length}:${m.tokens[0]}`).join(',') ?? '';
    return tokenHex(tokenOf(`${members}|${view.movements.map(describeMovement).join(',')}`));
  }

  /** Stage `changes` after those already staged, and return the whole plan. */
  plan(changes: readonly { kind: string; node: string }[]): PlanResponse {
    if (changes.length === 0) return this.reply();
    if (this.#committing) throw new MovementRefused('a commit is running: wait for it to finish (ringkv plan shows its steps)');
    if (this.#steps.some((s) => s.state !== 'staged')) this.#steps = []; // the last commit's steps are history
    const view = this.deps.view();
    const added = changes.map((c) => this.#check(c, view));
    const next = [...this.#steps.map((s) => s.change), ...added];
    if (view.ring === undefined) throw new MovementRefused('no member owns tokens yet: the cluster is still forming');
    try {
      planChanges(view.ring, next, this.deps.replicas, () => ({ bytes: 0, keys: 0 }));
    } catch (e) {
      if (e instanceof PlanError) throw new BadChange(e.message);
      throw e;
    }
    this.#steps.push(...added.map((change) => ({ change, state: 'staged' as StepState, error: '' })));
    this.#ringKey = this.#key(view);
    return this.reply();
  }

  #check(c: { kind: string; node: string }, view: RingView): StagedChange {
    const st = this.deps.gossiper.state(c.node);
    if (st === undefined || view.removed.has(c.node)) throw new BadChange(`${c.node} is not a member of this cluster (see ringkv status)`);
    if (this.#steps.some((s) => s.change.node === c.node)) throw new BadChange(`a change of ${c.node} is already staged; ringkv clear discards the stage`);
    switch (c.kind) {
      case 'join':
        if (statusOf(st) !== 'joining' || field(st, 'standby') !== 'true') throw new BadChange(`${c.node} is not a standby: start it with --join manual to stage its join (status ${statusOf(st) ?? '?'})`);
        return { kind: 'join', node: c.node, zone: field(st, 'zone') ?? '', rack: field(st, 'rack') ?? '', weight: Number(field(st, 'weight') ?? '1') };
      case 'leave':
        if (!this.deps.gossiper.isUp(c.node)) throw new BadChange(`${c.node} is down: a leave streams from the node itself; stage remove ${c.node} instead`);
        return { kind: 'leave', node: c.node };
      case 'remove':
        if (this.deps.gossiper.isUp(c.node)) throw new BadChange(`${c.node} is up: stage leave ${c.node} (a decommission) instead; remove is for nodes that will not come back`);
        return { kind: 'remove', node: c.node };
      default:
        throw new BadChange(`unknown change "${c.kind}": expected join, leave or remove`);
    }
  }

  clear(): PlanResponse {
    if (this.#committing) throw new MovementRefused('a commit is running: its changes cannot be discarded now');
    this.#steps = [];
    this.#ringKey = '';
    return this.reply();
  }

  /** Run the staged changes; refused when the ring changed since the plan. */
  commit(): PlanResponse {
    if (this.#committing) throw new MovementRefused('a commit is already running');
    const staged = this.#steps.filter((s) => s.state === 'staged');
    if (staged.length === 0) throw new MovementRefused('nothing is staged: ringkv plan join|leave|remove ... first');
    const view = this.deps.view();
    if (this.#key(view) !== this.#ringKey)
      throw new PlanOutdated(`the ring changed since the plan (${view.movements.length > 0 ? view.movements.map(describeMovement).join(', ') : 'members or tokens changed'}): read the new plan (ringkv plan) and commit again`);
    this.#committing = this.#run(staged).finally(() => (this.#committing = undefined));
    return this.reply();
  }

  async #run(steps: Staged[]): Promise<void> {
    for (const s of steps) {
      s.state = 'running';
      try {
        await this.#until(() => this.deps.view().movements.length === 0);
        const { node } = s.change;
        this.deps.log.info({ change: s.change.kind, peer: node }, 'commit: starting a staged change');
        if (s.change.kind === 'join') {
          await this.deps.admit(node);
          await this.#until(() => statusOf(this.deps.gossiper.state(node)!) === 'normal');
        } else if (s.change.kind === 'leave') {
          await this.deps.decommission(node);
          await this.#until(() => statusOf(this.deps.gossiper.state(node)!) === 'left');
        } else {
          await this.deps.removeNode(node);
          await this.#until(() => this.deps.view().removed.has(node));
        }
        s.state = 'done';
      } catch (e) {
        s.state = 'failed';
        s.error = (e as { details?: string; message?: string })?.details ?? (e as Error)?.message ?? String(e);
        this.deps.log.warn({ change: s.change.kind, peer: s.change.node, err: s.error }, 'commit: a staged change failed; the rest are not run');
        return;
      }
    }
  }

  async #until(cond: () => boolean): Promise<void> {
    while (!cond()) await new Promise((r) => setTimeout(r, this.deps.pollMs ?? 500));
  }

  /** The stage as Admin Plan replies it: steps with estimates, ownership before and after. */
  reply(): PlanResponse {
    const view = this.deps.view();
    const load = (id: string): { bytes: number; keys: number } => {
      const st = this.deps.gossiper.state(id);
      return { bytes: Number(st ? (field(st, 'load') ?? '0') : '0'), keys: Number(st ? (field(st, 'keys') ?? '0') : '0') };
    };
    const pending = this.#steps.filter((s) => s.state === 'staged' || s.state === 'running');
    let planned: ReturnType<typeof planChanges> | undefined;
    try {
      planned = view.ring === undefined ? undefined : planChanges(view.ring, pending.map((s) => s.change), this.deps.replicas, load);
    } catch {
      planned = undefined; // a step already under way: its ring is not the current one any more
    }
    return {
      steps: this.#steps.map((s) => ({
        change: { kind: s.change.kind, node: s.change.node },
        moves: [...(planned?.steps[pending.indexOf(s)]?.moves ?? [])],
        state: s.state,
        error: s.error,
      })),
      ownership: [...(planned?.ownership ?? [])],
      topo: this.#ringKey,
      committing: this.#committing !== undefined,
      replicas: this.deps.replicas,
    };
  }
}
