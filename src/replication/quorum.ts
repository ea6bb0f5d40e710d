/**
 * Waiting for R or W of a request's replica calls: answer as soon as enough succeeded,
 * fail as soon as enough cannot, and still see every call's outcome (read repair looks
 * at late replies; writes complete in the background).
 *
 * Owns: the counting. Must not: decide what a failure means to the client (coordinator.ts).
 */

export type Outcome<T> = { readonly node: string; readonly ok: true; readonly value: T } | { readonly node: string; readonly ok: false; readonly error: unknown };

export interface QuorumResult<T> {
  /** Resolves with the successes once `needed` of them are in (more may be there); rejects with QuorumFailed. */
  readonly reached: Promise<Outcome<T>[]>;
  /** Every call's outcome, once every call has settled (each call has its own deadline). */
  readonly all: Promise<Outcome<T>[]>;
}

export class QuorumFailed extends Error {
  constructor(
    readonly outcomes: readonly Outcome<unknown>[],
    /** True when the deadline passed with calls still pending. */
    readonly timedOut: boolean,
  ) {
    super(timedOut ? 'deadline passed' : 'too many replicas failed');
  }

  get succeeded(): number {
    return this.outcomes.filter((o) => o.ok).length;
  }
}

/**
 * Wait for `needed` successes. With several groups (`needed` an array, each call naming
 * the groups its success counts in; by default group 0), every group must reach its
 * count: how a write to a moving range counts W on the current replicas and W on the
 * future ones. Fails as soon as some group can no longer reach its count.
 */
export function awaitQuorum<T>(calls: readonly { node: string; promise: Promise<T>; groups?: readonly number[] }[], needed: number | readonly number[], deadline: number): QuorumResult<T> {
  const need = typeof needed === 'number' ? [needed] : needed;
  const groupsOf = (c: { groups?: readonly number[] }): readonly number[] => c.groups ?? ZERO;
  const ok = need.map(() => 0);
  // Calls still pending that could count in each group.
  const open = need.map((_, g) => calls.filter((c) => groupsOf(c).includes(g)).length);
  const outcomes: Outcome<T>[] = [];
  let done = false;
  let resolveReached!: (o: Outcome<T>[]) => void;
  let rejectReached!: (e: QuorumFailed) => void;
  const reached = new Promise<Outcome<T>[]>((res, rej) => ((resolveReached = res), (rejectReached = rej)));
  const finish = (fn: () => void): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    fn();
  };
  const enough = (): boolean => need.every((n, g) => ok[g]! >= n);
  const hopeless = (): boolean => need.some((n, g) => ok[g]! + open[g]! < n);
  const timer = setTimeout(() => finish(() => rejectReached(new QuorumFailed([...outcomes], true))), Math.max(0, deadline - Date.now()));
  if (enough()) finish(() => resolveReached([]));
  else if (hopeless()) finish(() => rejectReached(new QuorumFailed([], false)));
  const all = Promise.all(
    calls.map((call) =>
      call.promise.then(
        (value) => {
          const o: Outcome<T> = { node: call.node, ok: true, value };
          outcomes.push(o);
          for (const g of groupsOf(call)) {
            ok[g]!++;
            open[g]!--;
          }
          if (enough()) finish(() => resolveReached(outcomes.filter((x) => x.ok)));
          return o;
        },
        (error: unknown) => {
          const o: Outcome<T> = { node: call.node, ok: false, error };
          outcomes.push(o);
          for (const g of groupsOf(call)) open[g]!--;
          if (hopeless()) finish(() => rejectReached(new QuorumFailed([...outcomes], false)));
          return o;
        },
      ),
    ),
  );
  // Nobody may be waiting on `reached` any more when it rejects late: never unhandled.
  reached.catch(() => undefined);
  return { reached, all };
}

const ZERO: readonly number[] = [0];
