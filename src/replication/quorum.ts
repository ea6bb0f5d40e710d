/**
 * Waiting for R or W of a request's replica calls: answer as soon as enough succeeded,
 * fail as soon as enough cannot, and still see every call's outcome (read repair looks
 * at late replies; writes complete in the background). A write may also ask what its
 * acknowledgements show (confirmations: distinct nodes, distinct zones, primaries).
 *
 * Owns: the counting. Must not: decide what a failure means to the client (coordinator.ts).
 */

export type Outcome<T> =
  | { readonly node: string; readonly ok: true; readonly value: T }
  | { readonly node: string; readonly ok: false; readonly error: unknown };

export interface QuorumResult<T> {
  /** Resolves with the successes once `needed` of them are in (more may be there); rejects with QuorumFailed. */
  readonly reached: Promise<Outcome<T>[]>;
  /** Every call's outcome, once every call has settled (each call has its own deadline); added ones included. */
  readonly all: Promise<Outcome<T>[]>;
  /** True once `reached` has settled. */
  readonly settled: () => boolean;
  /** Count one more call (a speculative one, sent while waiting); nothing once `reached` settled and every call did. */
  readonly add: (call: QuorumCall<T>) => void;
  /** The nodes of the calls still pending. */
  readonly pending: () => string[];
  /** Stop waiting: `reached` rejects (QuorumFailed, `silent` naming the nodes still pending). The calls go on. */
  readonly giveUp: () => void;
}

export interface QuorumCall<T> {
  readonly node: string;
  readonly promise: Promise<T>;
  /** The groups its success counts in (default: group 0). */
  readonly groups?: readonly number[];
}

export class QuorumFailed extends Error {
  constructor(
    readonly outcomes: readonly Outcome<unknown>[],
    /** True when the deadline passed with calls still pending. */
    readonly timedOut: boolean,
    /** Nodes still pending when the wait was given up because they had stopped answering. */
    readonly silent: readonly string[] = [],
  ) {
    super(
      timedOut
        ? 'deadline passed'
        : silent.length > 0
          ? 'the replicas left stopped answering'
          : 'too many replicas failed',
    );
  }

  get succeeded(): number {
    return this.outcomes.filter((o) => o.ok).length;
  }
}

/**
 * What a write's acknowledgements must show besides their number (RequestOptions'
 * nodeConfirms, zoneConfirms and pw), or, as counted, what some did show: distinct
 * nodes, distinct zones among those nodes, and primaries among them. A rule of 0 asks
 * nothing.
 */
export interface Confirms {
  readonly nodes: number;
  readonly zones: number;
  readonly primaries: number;
}

/** What the confirmation rules need to know of an acknowledging node. */
export interface NodeFacts {
  zoneOf(node: string): string;
  /** A primary replica of the key, acknowledging for itself (not a fallback standing in for one). */
  isPrimary(node: string): boolean;
}

/** The rules, in the order messages name them, with their names on the wire. */
export const CONFIRM_RULES: readonly { readonly rule: keyof Confirms; readonly name: string }[] = [
  { rule: 'primaries', name: 'pw' },
  { rule: 'nodes', name: 'node_confirms' },
  { rule: 'zones', name: 'zone_confirms' },
];

/** What acknowledgements from `nodes` confirm: each node counted once, however many of the calls it answered. */
export function confirmsOf(nodes: Iterable<string>, facts: NodeFacts): Confirms {
  const distinct = [...new Set(nodes)];
  return {
    nodes: distinct.length,
    zones: new Set(distinct.map((id) => facts.zoneOf(id))).size,
    primaries: distinct.filter((id) => facts.isPrimary(id)).length,
  };
}

/** The rules of `rules` that `got` falls short of. */
export function unmetConfirms(rules: Confirms, got: Confirms): (keyof Confirms)[] {
  return CONFIRM_RULES.filter(({ rule }) => got[rule] < rules[rule]).map(({ rule }) => rule);
}

/**
 * Confirmation rules for awaitQuorum: `acked`, the nodes whose acknowledgement is in
 * before any call (the replica that issued the version).
 */
export interface ConfirmWait {
  readonly rules: Confirms;
  readonly facts: NodeFacts;
  readonly acked: readonly string[];
}

/**
 * Wait for `needed` successes. With several groups (`needed` an array, each call naming
 * the groups its success counts in; by default group 0), every group must reach its
 * count: how a write to a moving range counts W on the current replicas and W on the
 * future ones. With `confirm`, the nodes that succeeded (and `confirm.acked`) must also
 * meet its rules. Fails as soon as some group can no longer reach its count, or the nodes
 * that succeeded and those still pending can no longer meet a rule. Calls may be added
 * while waiting (`add`).
 */
export function awaitQuorum<T>(
  calls: readonly QuorumCall<T>[],
  needed: number | readonly number[],
  deadline: number,
  confirm?: ConfirmWait,
): QuorumResult<T> {
  const need = typeof needed === 'number' ? [needed] : needed;
  const groupsOf = (c: { groups?: readonly number[] }): readonly number[] => c.groups ?? ZERO;
  const ok = need.map(() => 0);
  // Calls still pending that could count in each group.
  const open = need.map(() => 0);
  const outcomes: Outcome<T>[] = [];
  let done = false;
  let resolveReached!: (o: Outcome<T>[]) => void;
  let rejectReached!: (e: QuorumFailed) => void;
  const reached = new Promise<Outcome<T>[]>((res, rej) => ((resolveReached = res), (rejectReached = rej)));
  let unsettled = 0;
  let resolveAll!: (o: Outcome<T>[]) => void;
  const all = new Promise<Outcome<T>[]>((res) => (resolveAll = res));
  const finish = (fn: () => void): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    fn();
  };
  const acked = [...(confirm?.acked ?? [])];
  const meets = (nodes: Iterable<string>): boolean =>
    confirm === undefined || unmetConfirms(confirm.rules, confirmsOf(nodes, confirm.facts)).length === 0;
  const enough = (): boolean => need.every((n, g) => ok[g]! >= n) && meets(acked);
  const hopeless = (): boolean =>
    need.some((n, g) => ok[g]! + open[g]! < n) || (confirm !== undefined && !meets([...acked, ...waiting.values()]));
  const settle = (o: Outcome<T>): void => {
    outcomes.push(o);
    if (--unsettled === 0) resolveAll([...outcomes]);
  };
  const waiting = new Map<QuorumCall<T>, string>();
  const add = (call: QuorumCall<T>): void => {
    unsettled++;
    waiting.set(call, call.node);
    for (const g of groupsOf(call)) open[g]!++;
    call.promise.then(
      (value) => {
        waiting.delete(call);
        for (const g of groupsOf(call)) {
          ok[g]!++;
          open[g]!--;
        }
        acked.push(call.node);
        settle({ node: call.node, ok: true, value });
        if (enough()) finish(() => resolveReached(outcomes.filter((x) => x.ok)));
      },
      (error: unknown) => {
        waiting.delete(call);
        for (const g of groupsOf(call)) open[g]!--;
        settle({ node: call.node, ok: false, error });
        if (hopeless()) finish(() => rejectReached(new QuorumFailed([...outcomes], false)));
      },
    );
  };
  const timer = setTimeout(
    () => finish(() => rejectReached(new QuorumFailed([...outcomes], true))),
    Math.max(0, deadline - Date.now()),
  );
  for (const c of calls) add(c);
  if (calls.length === 0) resolveAll([]);
  if (enough()) finish(() => resolveReached([]));
  else if (hopeless()) finish(() => rejectReached(new QuorumFailed([], false)));
  // Nobody may be waiting on `reached` any more when it rejects late: never unhandled.
  reached.catch(() => undefined);
  const pending = (): string[] => [...waiting.values()];
  const giveUp = (): void => finish(() => rejectReached(new QuorumFailed([...outcomes], false, pending())));
  return { reached, all, settled: () => done, add, pending, giveUp };
}

const ZERO: readonly number[] = [0];

/**
 * Whether the replies that reached a read's R settle it, or it must wait for a primary: a
 * fallback holds hints, not the key, so its empty reply says only that no write was
 * hinted to it. Such a reply settles nothing while a primary could still answer (`empty`:
 * the fallbacks' empty replies among `reached`; `primariesPending`: primaries that have
 * neither answered nor failed). Cassandra reads only natural replicas; Riak users turn on
 * notfound_ok=false for the same reason.
 */
export function awaitsPrimary(
  reached: readonly string[],
  empty: ReadonlySet<string>,
  primariesPending: number,
): boolean {
  return primariesPending > 0 && reached.some((node) => empty.has(node));
}

/** The first call of `calls` to succeed, or undefined once every one has failed; rejects with a timeout at `deadline`. */
export function firstSuccess<T>(calls: readonly QuorumCall<T>[], deadline: number): Promise<Outcome<T> | undefined> {
  return new Promise((resolve, reject) => {
    let left = calls.length;
    const timer = setTimeout(() => reject(new QuorumFailed([], true)), Math.max(0, deadline - Date.now()));
    const end = (o: Outcome<T> | undefined): void => {
      clearTimeout(timer);
      resolve(o);
    };
    if (left === 0) return end(undefined);
    for (const c of calls)
      c.promise.then(
        (value) => end({ node: c.node, ok: true, value }),
        () => --left === 0 && end(undefined),
      );
  });
}
