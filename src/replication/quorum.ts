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

export function awaitQuorum<T>(calls: readonly { node: string; promise: Promise<T> }[], needed: number, deadline: number): QuorumResult<T> {
  const outcomes: Outcome<T>[] = [];
  let ok = 0;
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
  const timer = setTimeout(() => finish(() => rejectReached(new QuorumFailed([...outcomes], true))), Math.max(0, deadline - Date.now()));
  if (needed <= 0) finish(() => resolveReached([]));
  else if (calls.length < needed) finish(() => rejectReached(new QuorumFailed([], false)));
  const all = Promise.all(
    calls.map(({ node, promise }) =>
      promise.then(
        (value) => {
          const o: Outcome<T> = { node, ok: true, value };
          outcomes.push(o);
          if (++ok >= needed) finish(() => resolveReached(outcomes.filter((x) => x.ok)));
          return o;
        },
        (error: unknown) => {
          const o: Outcome<T> = { node, ok: false, error };
          outcomes.push(o);
          if (ok + (calls.length - outcomes.length) < needed) finish(() => rejectReached(new QuorumFailed([...outcomes], false)));
          return o;
        },
      ),
    ),
  );
  // Nobody may be waiting on `reached` any more when it rejects late: never unhandled.
  reached.catch(() => undefined);
  return { reached, all };
}
