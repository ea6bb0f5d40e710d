/**
 * Transfer planning: which token ranges a topology change moves, to whom, and from where
 * (a plain function of plain data, as the ring is: docs/architecture.md).
 *
 * A range whose replica set changes from `before` to `after` is gained by each node of
 * after − before. Each gainer is paired with one node of before − after, the replica it
 * replaces in that range, and streams from it when it is up: consistent range movement,
 * as Cassandra does by default (CASSANDRA-2434). Why it matters: a write acknowledged by
 * W replicas of `before` is on the leaver, or on W replicas that stay; streaming from the
 * leaver brings the first kind, so the write is on W replicas of `after` either way.
 * Streaming from a replica that stays could miss a write that only the leaver and another
 * leaver held. When the leaver is down (a removal, a replacement, a dead source) the
 * range comes from a replica that stays, and the plan says so.
 *
 * Buckets of different n (n-classes.ts) are planned class by class: a range's replica set
 * differs per n, so each class has its own transfers, each over that class's keys only.
 *
 * Must not: do I/O, or decide the rings (membership/ring-view.ts does).
 */
import { Ring } from '../ring/index.js';
import type { RingView } from '../membership/ring-view.js';

export interface Transfer {
  /** Tokens in (start, end]. */
  readonly start: bigint;
  readonly end: bigint;
  /** The node that gains the range. */
  readonly to: string;
  /** The replica `to` replaces in this range, if any: the consistent source. */
  readonly leaver: string | undefined;
  /** Where the range may come from, best first: the leaver, then the replicas that keep it. */
  readonly sources: readonly string[];
  /** The N class moved: only keys whose bucket's n is this; undefined: every key (one class in use). */
  readonly n?: number;
  /** The N classes the plan was made for (the planner's bucket table); undefined: not known (a plan of one N). */
  readonly classes?: readonly number[];
}

/** The transfers that turn `before` into `after` with N replicas per key (fewer when a ring is smaller). */
export function planTransfers(before: Ring | undefined, after: Ring | undefined, n: number): Transfer[] {
  if (before === undefined || after === undefined) return [];
  const out: Transfer[] = [];
  for (const c of Ring.diff(before, after, Math.min(n, before.size), Math.min(n, after.size))) {
    const gainers = c.after.filter((x) => !c.before.includes(x));
    const leavers = c.before.filter((x) => !c.after.includes(x));
    const stayers = c.before.filter((x) => c.after.includes(x));
    gainers.forEach((to, i) => {
      const leaver = leavers[i];
      const sources = [...(leaver === undefined ? [] : [leaver]), ...stayers, ...leavers.filter((x) => x !== leaver)];
      out.push({ start: c.start, end: c.end, to, leaver, sources });
    });
  }
  return out;
}

/**
 * The transfers of every N class in `classes` (ascending): with one class, planTransfers
 * for its n, each over every key (`n` undefined), exactly as a plan of one N; with more,
 * each class's own transfers, marked with its n. Every transfer carries `classes`.
 */
export function classTransfers(
  before: Ring | undefined,
  after: Ring | undefined,
  classes: readonly number[],
): Transfer[] {
  return classes.flatMap((n) =>
    planTransfers(before, after, n).map((t) => ({ ...t, ...(classes.length > 1 ? { n } : {}), classes })),
  );
}

/**
 * Every transfer of a view's movements (current ring → target ring) for the N classes in
 * `classes`; `leaverGone` where the replica leaving a range is a node being removed or
 * replaced (dead for good).
 */
export function movementTransfers(
  view: Pick<RingView, 'ring' | 'target' | 'movements'>,
  classes: readonly number[],
): (Transfer & { leaverGone: boolean })[] {
  if (view.target === view.ring) return [];
  const dead = new Set(
    view.movements.flatMap((m) => (m.kind === 'remove' ? [m.node] : m.kind === 'replace' ? [m.replaces!] : [])),
  );
  return classTransfers(view.ring, view.target, classes).map((t) => ({
    ...t,
    leaverGone: t.leaver !== undefined && dead.has(t.leaver),
  }));
}

/**
 * Where to pull a range from now: the source sets to try in turn, each streamed whole and
 * only when all of it is up; none: wait. The replica leaving the range (`sources[0]`)
 * holds every write acknowledged there, or W others do. Without it, one other replica is
 * not enough: a write may be on the leaver and on replicas other than that one. So the
 * fallback is every replica that keeps the range (Cassandra's removenode does the same),
 * taken at once when the leaver is gone for good, and after `leaverWaitMs` when it is only
 * unreachable (`waitedMs` so far): the others' copies of recent writes may still be hints
 * elsewhere (test/property/topology.property.test.ts found both holes).
 *
 * A range with no other replica (a bucket of n=1) has no fallback: while its leaver is
 * only unreachable it is waited for however long; once the leaver is gone for good the
 * answer is one empty set, `[[]]`: no copy is left anywhere, the range is done with
 * nothing to pull (its keys were lost with the node), so a removal or a replacement is
 * not held up for ever.
 */
export function pullSources(
  t: { readonly sources: readonly string[]; readonly leaverGone?: boolean },
  leaverUp: boolean,
  waitedMs: number,
  leaverWaitMs: number,
): string[][] {
  const [first, ...stayers] = t.sources;
  if (leaverUp) return [[first!], stayers];
  if (t.leaverGone === true) return [stayers];
  return waitedMs >= leaverWaitMs && stayers.length > 0 ? [stayers] : [];
}

/** The source to stream from now: the first that is up; undefined when none is. */
export function chooseSource(t: Transfer, isUp: (id: string) => boolean): string | undefined {
  return t.sources.find((s) => s !== t.to && isUp(s));
}

/** The fraction of the token space a transfer covers (its range's length). */
export function transferShare(t: Pick<Transfer, 'start' | 'end'>): number {
  const size = 2n ** 64n;
  const d = (t.end - t.start + size) % size;
  return d === 0n ? 1 : Number(d) / 2 ** 64;
}
