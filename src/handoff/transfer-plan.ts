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
 * Must not: do I/O, or decide the rings (membership/ring-view.ts does).
 */
import { Ring } from '../ring/index.js';

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
