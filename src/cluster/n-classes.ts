/**
 * N classes: the keys of buckets that share one n. A bucket has its own n (1..9), so a
 * token range has one replica set per distinct n in use: whatever moves or checks data by
 * range (a join's or a leave's transfers, cleanup, anti-entropy repair) does it once per
 * class, over the keys of that class only. With one class (only the default bucket, or
 * every bucket with the cluster's N) there is nothing to tell apart: the plans are those of
 * one N, and a range's keys are taken whole, as before buckets (class `undefined`).
 *
 * A key of a bucket this node's table does not have yet has no known class: callers that
 * would send or compare it refuse until the table has it (tables converge in seconds),
 * and cleanup keeps it. A key of a deleted bucket keeps the class it had (kept trees
 * count its removal where they counted it), and is never sent: every node reclaims such
 * keys (node/bucket-purge.ts).
 *
 * Owns: a key's class and the filter of one class. Must not: know the store, the wire
 * or the ring (a plan per class is the planner's: transfer-plan.ts, cleanup.ts).
 */
import { BucketError, DEFAULT_BUCKET, bucketOf, startsWithMark, type BucketTable } from '../buckets/index.js';

export interface KeyClasses {
  /** The distinct n in use, ascending (the cluster's N among them). */
  readonly classes: readonly number[];
  /** A stored key's n (a deleted bucket's: the n it had); undefined for a key of a bucket the table does not have. */
  nOf(key: Uint8Array): number | undefined;
  /** Whether a stored key is of a deleted bucket. */
  deleted(key: Uint8Array): boolean;
}

/** The classes of a bucket table, as it is now. */
export function keyClasses(table: Pick<BucketTable, 'nValues' | 'props' | 'clusterN' | 'deletion'>): KeyClasses {
  const classes = table.nValues();
  const clusterN = table.clusterN;
  return {
    classes,
    // Default-bucket keys (no mark: a 4-byte check) have the cluster's N.
    nOf: (key) => {
      if (!startsWithMark(key)) return table.props(DEFAULT_BUCKET)?.n ?? clusterN;
      const name = bucketOf(key);
      return table.props(name)?.n ?? table.deletion(name)?.n;
    },
    deleted: (key) => startsWithMark(key) && table.deletion(bucketOf(key)) !== undefined,
  };
}

/** Do two class lists (ascending) hold the same n? */
export function sameClasses(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Why a peer's request for class `n` (0: every key) planned on `theirs` cannot be served
 * by a node whose classes are `ours`; undefined when it can. An empty `theirs` is a
 * release without buckets: every key, as before.
 */
export function classRefusal(n: number, theirs: readonly number[], ours: readonly number[]): string | undefined {
  if (theirs.length === 0) return undefined;
  if (!sameClasses(theirs, ours))
    return `the requester planned for buckets of n ${theirs.join(', ')} but this node's bucket table has n ${ours.join(', ')}: retry once the bucket tables converge (seconds)`;
  if (n !== 0 && !ours.includes(n)) return `no bucket here has n ${n} (this node's buckets have n ${ours.join(', ')})`;
  return undefined;
}

/**
 * The filter of class `n` for a scan that sends or compares keys: with one class in use
 * (or n 0) every key, with more the keys of class n; never a deleted bucket's key. A key
 * of a bucket the table lacks throws BK_NOT_READY either way (its class is unknown, and
 * so is whether the requester planned for it); for a default-bucket key that costs a
 * 4-byte check.
 */
export function sendFilter(k: KeyClasses, n: number): (key: Uint8Array) => boolean {
  const all = n === 0 || k.classes.length <= 1;
  return (key) => {
    if (all && !startsWithMark(key)) return true;
    if (k.deleted(key)) return false;
    const of = k.nOf(key);
    if (of === undefined)
      throw new BucketError(
        'BK_NOT_READY',
        `a key of bucket ${bucketOf(key)}, which this node's bucket table does not have yet: retry once the bucket tables converge (seconds)`,
      );
    return all || of === n;
  };
}

/**
 * What a node serves of a peer's stream or repair tree of class `n` (0: every key),
 * planned on the peer's classes `theirs`: the filter of the keys to take, or BK_NOT_READY
 * (FAILED_PRECONDITION) when the tables differ (classRefusal).
 */
export function servedFilter(k: KeyClasses, n: number, theirs: readonly number[]): (key: Uint8Array) => boolean {
  const why = classRefusal(n, theirs, k.classes);
  if (why !== undefined) throw new BucketError('BK_NOT_READY', why);
  return sendFilter(k, n);
}

/**
 * The filter of class `n` (undefined: every class) for cleanup: the keys it may delete.
 * A key of a bucket the table lacks is kept: its class, and so whether this node is one
 * of its replicas, is unknown.
 */
export function deleteFilter(k: KeyClasses, n: number | undefined): (key: Uint8Array) => boolean {
  const all = n === undefined || k.classes.length <= 1;
  return (key) => {
    if (all && !startsWithMark(key)) return true;
    const of = k.nOf(key);
    return of !== undefined && (all || of === n);
  };
}
