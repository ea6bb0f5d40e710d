/**
 * Cleanup, decided: which ranges' data this node may delete now (`ringkv cleanup`), and
 * when the automatic cleanup is due. Old owners keep their copies after a change
 * completes, as a safety net, and never delete while a change runs (the copies may still
 * be a stream's source); the automatic cleanup waits until the ownership this node sees
 * has stood still for `delayMs` with nothing moving, then cleans once per ownership.
 *
 * Riak deletes a handed-off partition as soon as the handoff is done; Cassandra never
 * deletes until an operator runs nodetool cleanup. The default delay (an hour) is between.
 *
 * Owns: these decisions. Must not: delete (node/topology/operator.ts does), read clocks (`now` is
 * passed in) or schedule itself (node/topology/auto-cleanup.ts ticks it).
 */
import type { RingRange } from '../ring/index.js';
import type { NodeStatus } from '../membership/endpoint.js';
import type { RingView } from '../membership/ring-view.js';
import { describeMovement } from './join.js';

/** A range to clean, of N class `n` (its keys only; undefined: every key, one class in use). */
export type CleanupRange = RingRange & { readonly n?: number };

export type CleanupPlan =
  | { readonly kind: 'refuse'; readonly message: string }
  | { readonly kind: 'delete'; readonly ranges: readonly CleanupRange[] };

/**
 * The ranges of the ring whose data `self` holds no replica of: what cleanup deletes. Per
 * N class in `classes` (ascending, n-classes.ts): a range this node replicates for n=5 but
 * not for n=1 is cleaned of its n=1 keys only. With one class, the ranges of that N.
 */
export function cleanupPlan(i: {
  readonly self: string;
  readonly status: NodeStatus;
  readonly view: RingView;
  readonly classes: readonly number[];
}): CleanupPlan {
  const { self, status, view, classes } = i;
  if (view.movements.length > 0)
    return {
      kind: 'refuse',
      message: `${describeMovement(view.movements[0]!)}: cleanup waits until no topology change is in progress (the old copies may still be needed)`,
    };
  if (status !== 'normal' || view.ring === undefined || !view.ring.has(self))
    return { kind: 'refuse', message: `${self} is ${status}, not an owner: nothing to clean up against` };
  const ring = view.ring;
  const ranges = classes.flatMap((n) =>
    ring
      .ranges(Math.min(n, ring.size))
      .filter((r) => !r.replicas.includes(self))
      .map((r): CleanupRange => (classes.length > 1 ? { ...r, n } : r)),
  );
  return { kind: 'delete', ranges };
}

/** What the automatic cleanup remembers between looks. */
export interface AutoCleanupState {
  /** The ownership (view fingerprint) last seen with nothing moving, and since when. */
  readonly seen: string;
  readonly since: number;
  /** The ownership last cleaned for. */
  readonly cleaned: string;
}

export const AUTO_CLEANUP_START: AutoCleanupState = { seen: '', since: 0, cleaned: '' };

/**
 * One look (every gossip round): the next state, and whether to clean now (for the
 * ownership `fingerprint`). `owner`: is this node a normal owner now? `delayMs` 0: never.
 */
export function autoCleanupStep(
  s: AutoCleanupState,
  i: {
    readonly now: number;
    readonly delayMs: number;
    readonly view: Pick<RingView, 'fingerprint' | 'movements'>;
    readonly owner: boolean;
  },
): { readonly state: AutoCleanupState; readonly clean: boolean } {
  if (i.delayMs === 0) return { state: s, clean: false };
  const { view, now } = i;
  if (view.fingerprint !== s.seen || view.movements.length > 0 || !i.owner) {
    return { state: { ...s, seen: view.movements.length > 0 ? '' : view.fingerprint, since: now }, clean: false };
  }
  return { state: s, clean: s.cleaned !== view.fingerprint && now - s.since >= i.delayMs };
}

/** After a cleanup for `fingerprint`: done for that ownership. */
export function autoCleanupDone(s: AutoCleanupState, fingerprint: string): AutoCleanupState {
  return { ...s, cleaned: fingerprint };
}

/** After a refused or failed cleanup: try again after another delay. */
export function autoCleanupPutOff(s: AutoCleanupState, now: number): AutoCleanupState {
  return { ...s, since: now };
}
