/**
 * Staged topology changes on one node (Riak's `cluster plan / commit / clear`): an operator
 * stages joins of standbys, leaves and removals, reads what they would move, then commits
 * them; the node runs them one after another (one topology change at a time), each to its
 * end, and stops at the first that fails. Every decision (what may be staged, whether a
 * commit may run, each next step of it) is cluster/stage.ts's; this shell keeps the
 * stage, saves it at every change (stage-file.ts, next to node.json), runs the commit's
 * steps on a poll, and replies.
 *
 * The stage survives a restart of this node: `ringkv plan` shows the same plan, `commit`
 * works against it, and a commit that was running goes on from the step it was at.
 *
 * Owns: the stage in memory and on disk, and the commit's loop. Must not: decide (see
 * above), move data or decide the topology (each change runs as its own command would:
 * admit, decommission, remove).
 */
import type { Logger } from 'pino';
import type { Gossiper } from '../../membership/gossiper.js';
import { field, statusOf } from '../../membership/endpoint.js';
import type { RingView } from '../../membership/ring-view.js';
import { planChanges } from '../../cluster/staged-plan.js';
import {
  addToStage,
  clearStage,
  commitStage,
  EMPTY_STAGE,
  markStep,
  nextCommitStep,
  type Stage,
  type StageResult,
} from '../../cluster/stage.js';
import { MovementRefused } from './movement-driver.js';
import type { PlanResponse } from '../../transport/generated/ringkv/v1/PlanResponse.js';

export interface StagedDeps {
  readonly id: string;
  readonly replicas: number;
  /** The N classes in use (the bucket table's distinct n): what a plan's moves are made of. */
  classes(): readonly number[];
  readonly gossiper: Gossiper;
  view(): RingView;
  /** Start a change as its own command does. */
  admit(node: string): Promise<void>;
  decommission(node: string): Promise<void>;
  removeNode(node: string): Promise<void>;
  /** The stage as saved (stage-file.ts), and where to save it; undefined: in memory only. */
  readonly saved?: { readonly stage: Stage; save(stage: Stage): Promise<void> };
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
  #stage: Stage;
  #committing: Promise<void> | undefined;
  /** The step this run of the node has started (a restart starts it again: cluster/stage.ts). */
  #started = -1;
  #closed = false;

  constructor(private readonly deps: StagedDeps) {
    this.#stage = deps.saved?.stage ?? EMPTY_STAGE;
  }

  /** Go on with a commit that was running when the node stopped (call once the node runs). */
  resume(): void {
    if (!this.#stage.committing || this.#committing) return;
    this.deps.log.info(
      { steps: this.#stage.steps.length },
      'commit: going on with the staged changes committed before the restart',
    );
    this.#committing = this.#run().finally(() => (this.#committing = undefined));
  }

  /** The commit loop ends (the node stops); the stage stays saved. */
  close(): void {
    this.#closed = true;
  }

  /** The result's stage in force and saved, or its refusal thrown. */
  async #take(r: StageResult): Promise<void> {
    if (r.kind !== 'ok')
      throw r.kind === 'bad'
        ? new BadChange(r.message)
        : r.kind === 'outdated'
          ? new PlanOutdated(r.message)
          : new MovementRefused(r.message);
    await this.#save(r.stage);
  }

  /** Saves in order, one at a time: a commit's step and an operator's plan or clear may save at once. */
  #saving: Promise<void> = Promise.resolve();

  async #save(stage: Stage): Promise<void> {
    const save = this.#saving.catch(() => undefined).then(() => this.deps.saved?.save(stage));
    this.#saving = save;
    await save;
    this.#stage = stage;
  }

  /** Stage `changes` after those already staged, and return the whole plan. */
  async plan(changes: readonly { kind: string; node: string }[]): Promise<PlanResponse> {
    const { gossiper } = this.deps;
    await this.#take(
      addToStage(this.#stage, changes, {
        view: this.deps.view(),
        state: (id) => gossiper.state(id),
        isUp: (id) => gossiper.isUp(id),
        replicas: this.deps.replicas,
      }),
    );
    return this.reply();
  }

  async clear(): Promise<PlanResponse> {
    await this.#take(clearStage(this.#stage));
    return this.reply();
  }

  /** Run the staged changes; refused when the ring changed since the plan. */
  async commit(): Promise<PlanResponse> {
    if (this.#committing) throw new MovementRefused('a commit is already running');
    await this.#take(commitStage(this.#stage, this.deps.view()));
    this.#started = -1;
    this.#committing = this.#run().finally(() => (this.#committing = undefined));
    return this.reply();
  }

  async #run(): Promise<void> {
    const status = (id: string) => {
      const st = this.deps.gossiper.state(id);
      return st === undefined ? undefined : statusOf(st);
    };
    while (!this.#closed) {
      const step = nextCommitStep(this.#stage, this.deps.view(), status, (i) => i === this.#started);
      switch (step.kind) {
        case 'idle':
          return;
        case 'wait':
          await new Promise((r) => setTimeout(r, this.deps.pollMs ?? 500));
          break;
        case 'begin':
          await this.#save(markStep(this.#stage, step.index, 'running'));
          break;
        case 'done':
          await this.#save(markStep(this.#stage, step.index, 'done'));
          break;
        case 'start': {
          const { kind, node } = step.change;
          this.deps.log.info({ change: kind, peer: node }, 'commit: starting a staged change');
          try {
            if (kind === 'join') await this.deps.admit(node);
            else if (kind === 'leave') await this.deps.decommission(node);
            else await this.deps.removeNode(node);
            this.#started = step.index;
          } catch (e) {
            const error = (e as { details?: string; message?: string })?.details ?? (e as Error)?.message ?? String(e);
            this.deps.log.warn(
              { change: kind, peer: node, err: error },
              'commit: a staged change failed; the rest are not run',
            );
            await this.#save(markStep(this.#stage, step.index, 'failed', error));
            return;
          }
          break;
        }
      }
    }
  }

  /** The stage as Admin Plan replies it: steps with estimates, ownership before and after. */
  reply(): PlanResponse {
    const view = this.deps.view();
    const load = (id: string): { bytes: number; keys: number } => {
      const st = this.deps.gossiper.state(id);
      return {
        bytes: Number(st ? (field(st, 'load') ?? '0') : '0'),
        keys: Number(st ? (field(st, 'keys') ?? '0') : '0'),
      };
    };
    const steps = this.#stage.steps;
    const pending = steps.filter((s) => s.state === 'staged' || s.state === 'running');
    let planned: ReturnType<typeof planChanges> | undefined;
    try {
      planned =
        view.ring === undefined
          ? undefined
          : planChanges(
              view.ring,
              pending.map((s) => s.change),
              this.deps.replicas,
              load,
              this.deps.classes(),
            );
    } catch {
      planned = undefined; // a step already under way: its ring is not the current one any more
    }
    return {
      steps: steps.map((s) => ({
        change: { kind: s.change.kind, node: s.change.node },
        moves: [...(planned?.steps[pending.indexOf(s)]?.moves ?? [])],
        state: s.state,
        error: s.error,
      })),
      ownership: [...(planned?.ownership ?? [])],
      topo: this.#stage.ringKey,
      committing: this.#stage.committing,
      replicas: this.deps.replicas,
    };
  }
}
