/**
 * Staged topology changes, decided (Riak's `cluster plan / commit / clear`, its
 * claimant's checks): what may be staged, when a commit may run, and each next step of a
 * running commit. An operator stages joins of standbys, leaves and removals, reads what
 * they would move (staged-plan.ts), then commits them; the changes run one after
 * another (one topology change at a time), each to its end, and the commit stops at the
 * first that fails. A commit is refused when the ring changed since the plan: what the
 * operator read is no longer what would happen.
 *
 * The stage is a plain value the node persists (node/topology/stage-file.ts, next to node.json),
 * so a restart of the node holding it keeps the plan, and a commit that was running goes
 * on: `nextCommitStep` is asked again with what was persisted (a change started before
 * the restart is started again: every start is idempotent, the node's own request says
 * `already`).
 *
 * Owns: these decisions. Must not: persist, call other nodes, sleep, or start a change
 * (node/topology/staged.ts does, as each change's own command would: admit, decommission, remove).
 */
import { tokenHex, tokenOf, type Ring } from '../ring/index.js';
import { field, statusOf, type EndpointState, type NodeStatus } from '../membership/endpoint.js';
import { describeMovement } from './join.js';
import type { RingView } from '../membership/ring-view.js';
import { PlanError, planChanges, type StagedChange } from './staged-plan.js';

export type StepState = 'staged' | 'running' | 'done' | 'failed';

export interface StageStep {
  readonly change: StagedChange;
  readonly state: StepState;
  readonly error: string;
}

export interface Stage {
  readonly steps: readonly StageStep[];
  /** What ownership was when the steps were planned (`stageKey`); '' when nothing is staged. */
  readonly ringKey: string;
  /** A commit is running (it goes on after a restart). */
  readonly committing: boolean;
}

export const EMPTY_STAGE: Stage = { steps: [], ringKey: '', committing: false };

/** Why a request about the stage is refused: `busy` (FAILED_PRECONDITION), `bad` (INVALID_ARGUMENT), `outdated` (ABORTED). */
export type StageRefusal = { readonly kind: 'busy' | 'bad' | 'outdated'; readonly message: string };
export type StageResult = { readonly kind: 'ok'; readonly stage: Stage } | StageRefusal;

/** What ownership depends on: members, their tokens, and movements in progress. */
export function stageKey(view: RingView): string {
  const members = view.ring?.members.map((m) => `${m.id}:${m.tokens.length}:${m.tokens[0]}`).join(',') ?? '';
  return tokenHex(tokenOf(`${members}|${view.movements.map(describeMovement).join(',')}`));
}

export interface StageContext {
  readonly view: RingView;
  state(id: string): EndpointState | undefined;
  isUp(id: string): boolean;
  /** This node's N. */
  readonly replicas: number;
}

/** One change the operator asked for, checked: the change to stage, or why not. */
export function checkChange(
  c: { readonly kind: string; readonly node: string },
  stage: Stage,
  ctx: StageContext,
): StagedChange | StageRefusal {
  const bad = (message: string): StageRefusal => ({ kind: 'bad', message });
  const st = ctx.state(c.node);
  if (st === undefined || ctx.view.removed.has(c.node))
    return bad(`${c.node} is not a member of this cluster (see ringkv status)`);
  if (stage.steps.some((s) => s.change.node === c.node))
    return bad(`a change of ${c.node} is already staged; ringkv clear discards the stage`);
  switch (c.kind) {
    case 'join':
      if (statusOf(st) !== 'joining' || field(st, 'standby') !== 'true')
        return bad(
          `${c.node} is not a standby: start it with --join manual to stage its join (status ${statusOf(st) ?? '?'})`,
        );
      return {
        kind: 'join',
        node: c.node,
        zone: field(st, 'zone') ?? '',
        rack: field(st, 'rack') ?? '',
        weight: Number(field(st, 'weight') ?? '1'),
      };
    case 'leave':
      if (!ctx.isUp(c.node))
        return bad(`${c.node} is down: a leave streams from the node itself; stage remove ${c.node} instead`);
      return { kind: 'leave', node: c.node };
    case 'remove':
      if (ctx.isUp(c.node))
        return bad(
          `${c.node} is up: stage leave ${c.node} (a decommission) instead; remove is for nodes that will not come back`,
        );
      return { kind: 'remove', node: c.node };
    default:
      return bad(`unknown change "${c.kind}": expected join, leave or remove`);
  }
}

/** Stage `changes` after those already staged (the last commit's steps are history: dropped). */
export function addToStage(
  stage: Stage,
  changes: readonly { readonly kind: string; readonly node: string }[],
  ctx: StageContext,
): StageResult {
  if (changes.length === 0) return { kind: 'ok', stage };
  if (stage.committing)
    return { kind: 'busy', message: 'a commit is running: wait for it to finish (ringkv plan shows its steps)' };
  const base: Stage = stage.steps.some((s) => s.state !== 'staged') ? EMPTY_STAGE : stage;
  const added: StagedChange[] = [];
  for (const c of changes) {
    const r = checkChange(
      c,
      { ...base, steps: [...base.steps, ...added.map((change) => ({ change, state: 'staged' as const, error: '' }))] },
      ctx,
    );
    if ('message' in r) return r;
    added.push(r);
  }
  if (ctx.view.ring === undefined)
    return { kind: 'busy', message: 'no member owns tokens yet: the cluster is still forming' };
  const err = planError(ctx.view.ring, [...base.steps.map((s) => s.change), ...added], ctx.replicas);
  if (err !== undefined) return { kind: 'bad', message: err };
  return {
    kind: 'ok',
    stage: {
      steps: [...base.steps, ...added.map((change) => ({ change, state: 'staged' as const, error: '' }))],
      ringKey: stageKey(ctx.view),
      committing: false,
    },
  };
}

/** The staged changes' plan error (one cannot follow another), if any. */
function planError(ring: Ring, changes: readonly StagedChange[], replicas: number): string | undefined {
  try {
    planChanges(ring, changes, replicas, () => ({ bytes: 0, keys: 0 }));
    return undefined;
  } catch (e) {
    if (e instanceof PlanError) return e.message;
    throw e;
  }
}

/** Discard the stage. */
export function clearStage(stage: Stage): StageResult {
  if (stage.committing) return { kind: 'busy', message: 'a commit is running: its changes cannot be discarded now' };
  return { kind: 'ok', stage: EMPTY_STAGE };
}

/** Commit the staged changes: refused when nothing is staged, a commit runs, or the ring changed since the plan. */
export function commitStage(stage: Stage, view: RingView): StageResult {
  if (stage.committing) return { kind: 'busy', message: 'a commit is already running' };
  if (!stage.steps.some((s) => s.state === 'staged'))
    return { kind: 'busy', message: 'nothing is staged: ringkv plan join|leave|remove ... first' };
  if (stageKey(view) !== stage.ringKey)
    return {
      kind: 'outdated',
      message: `the ring changed since the plan (${view.movements.length > 0 ? view.movements.map(describeMovement).join(', ') : 'members or tokens changed'}): read the new plan (ringkv plan) and commit again`,
    };
  return { kind: 'ok', stage: { ...stage, committing: true } };
}

export type CommitStep =
  /** No commit runs, or it is over: the shell clears `committing` (`finish`). */
  | { readonly kind: 'idle' }
  /** Step `index` is next: mark it running. */
  | { readonly kind: 'begin'; readonly index: number }
  | { readonly kind: 'wait'; readonly reason: string }
  /** Start step `index`'s change as its own command would. */
  | { readonly kind: 'start'; readonly index: number; readonly change: StagedChange }
  /** Step `index`'s change is done. */
  | { readonly kind: 'done'; readonly index: number };

/**
 * The next step of a running commit. `started`: has this run of the node started step
 * `index` (false after a restart: it starts again, idempotently)? `status(id)`: a member's
 * gossiped status.
 */
export function nextCommitStep(
  stage: Stage,
  view: RingView,
  status: (id: string) => NodeStatus | undefined,
  started: (index: number) => boolean,
): CommitStep {
  if (!stage.committing) return { kind: 'idle' };
  const index = stage.steps.findIndex((s) => s.state === 'staged' || s.state === 'running');
  if (index < 0 || stage.steps.some((s) => s.state === 'failed')) return { kind: 'idle' };
  const step = stage.steps[index]!;
  if (step.state === 'staged') return { kind: 'begin', index };
  const { node, kind } = step.change;
  const done =
    kind === 'join' ? status(node) === 'normal' : kind === 'leave' ? status(node) === 'left' : view.removed.has(node);
  if (started(index))
    return done
      ? { kind: 'done', index }
      : {
          kind: 'wait',
          reason: `waiting for ${node} to ${kind === 'join' ? 'join' : kind === 'leave' ? 'leave' : 'be removed'}`,
        };
  if (done) return { kind: 'done', index };
  // Its own movement may be under way (started before a restart): starting it again says `already`.
  const other = view.movements.find((m) => m.node !== node);
  if (other !== undefined) return { kind: 'wait', reason: `${describeMovement(other)}: one topology change at a time` };
  return { kind: 'start', index, change: step.change };
}

/** Step `index` in state `state` (with `error`); a failed step or the last one done ends the commit. */
export function markStep(stage: Stage, index: number, state: StepState, error = ''): Stage {
  const steps = stage.steps.map((s, i) => (i === index ? { ...s, state, error } : s));
  const committing =
    stage.committing && state !== 'failed' && steps.some((s) => s.state === 'staged' || s.state === 'running');
  return { ...stage, steps, committing };
}
