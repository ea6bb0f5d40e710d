/**
 * What a coordinator makes of its replicas' replies to a read: the versions merged
 * (siblings + one context for the client), and which replies were stale, to repair; for a
 * counter (record format 4, counter.ts), the join of the replies and its value
 * (`resolveCounterReplies`: no context, a counter has no remove).
 *
 * Owns: the pure join of records from several replicas. Must not: do I/O or decide who
 * to ask (replication/ does); it lives here because only storage knows the byte formats.
 */
import type { SiblingPolicy } from '../buckets/index.js';
import { createHash } from 'node:crypto';
import { DecodeError, asBuffer, clockBytes, contextFromClock, decodeRecord, encodeRecord, isCounterRecord, versionBytes, viewRecord } from './codec.js';
import { EMPTY_COUNTER, decodeCounter, encodeCounter, join as joinCounters, sameCounter, value } from './counter.js';
import type { CounterState } from './counter.js';
import { KvError } from './kv-errors.js';
import { contextCheckOf, userKey } from './keys.js';
import type { Key } from './keys.js';
import { EMPTY_VERSIONS, liveValues, merge, mergeLww, sameVersions } from './versions.js';
import type { Versions } from './versions.js';

export interface ResolveOptions {
  /** The limit on the key's bytes (default none). */
  readonly maxKeyBytes?: number;
  /** The reading node's wall clock, ms: siblings expired by then are not returned (default the real clock). */
  readonly now?: number;
  /** The key's sibling policy (its bucket's): 'lww' joins replies last-writer-wins (default 'siblings'). */
  readonly policy?: SiblingPolicy;
}

export interface ResolvedRead {
  /** Every live sibling: not a tombstone, not expired at `now`. */
  readonly values: Buffer[];
  /** Covers every version any reply held: a put with it supersedes them all. */
  readonly context: Buffer;
  /** False when no reply held a live value (expired ones are not). */
  readonly found: boolean;
  /** The merged record (what a stale replica is sent); undefined when no reply held the key. */
  readonly record: Buffer | undefined;
  /** Per reply: true when it lacks something the merge holds (read repair sends it `record`). */
  readonly stale: boolean[];
}

/**
 * Join the replies (a record, or undefined where the replica does not hold the key).
 * A reply that does not decode is refused whole with KV_BAD_RECORD: the caller treats
 * that replica as failed, never as holding nothing.
 */
export function resolveReplies(key: Key, replies: readonly (Uint8Array | undefined)[], o: ResolveOptions = {}): ResolvedRead {
  const k = userKey(key, o.maxKeyBytes ?? Infinity);
  const now = o.now ?? Date.now();
  const check = contextCheckOf(k);
  const present = replies.filter((r): r is Uint8Array => r !== undefined);
  if (present.some(isCounterRecord)) throw new KvError('KV_WRONG_TYPE', "a replica answered a read of versions with a counter's record: the key is a counter; read it as one");
  if (present.length === 0) {
    return { values: [], context: contextFromClock(check, undefined), found: false, record: undefined, stale: replies.map(() => false) };
  }
  // The common case: every replica holds the same versions. No decode, no merge.
  const first = present[0]!;
  const firstVersions = checked(() => versionBytes(first));
  if (present.length === replies.length && present.every((r) => r === first || checked(() => versionBytes(r)).equals(firstVersions))) {
    const view = viewRecord(first, now);
    return { values: view.values, context: contextFromClock(check, view.clock, view.format), found: view.values.length > 0, record: asBuffer(first), stale: replies.map(() => false) };
  }
  const decoded = replies.map((r) => (r === undefined ? EMPTY_VERSIONS : checked(() => decodeRecord(r).versions)));
  const join = o.policy === 'lww' ? mergeLww : merge;
  const merged = decoded.reduce<Versions>((acc, v) => join(acc, v), EMPTY_VERSIONS);
  const record = encodeRecord({ versions: merged, ownerEpoch: undefined, deletedAt: undefined });
  const values = liveValues(merged, now).map(asBuffer);
  const causal = clockBytes(record);
  return {
    values,
    context: contextFromClock(check, causal.clock, causal.format),
    found: values.length > 0,
    record,
    stale: decoded.map((v) => !sameVersions(v, merged)),
  };
}

export interface ResolvedCounter {
  /** The counter's value over the join of the replies (0 when none holds it). */
  readonly value: bigint;
  /** False when no reply held the key. */
  readonly found: boolean;
  /** The joined record (what a stale replica is sent); undefined when no reply held the key. */
  readonly record: Buffer | undefined;
  /** Per reply: true when it lacks something the join holds (read repair sends it `record`). */
  readonly stale: boolean[];
}

/**
 * Join the counter records replicas replied (undefined where one does not hold the key)
 * with the counter join, which voids an increment held under two dots, so a read never
 * counts twice a duplicate pair inside the log window. A reply that does not decode is
 * refused whole (KV_BAD_RECORD), one holding versions with KV_WRONG_TYPE: the caller
 * treats that replica as failed, never as holding nothing.
 */
export function resolveCounterReplies(replies: readonly (Uint8Array | undefined)[]): ResolvedCounter {
  const present = replies.filter((r): r is Uint8Array => r !== undefined);
  if (present.length === 0) return { value: 0n, found: false, record: undefined, stale: replies.map(() => false) };
  for (const r of present) if (!isCounterRecord(r)) throw new KvError('KV_WRONG_TYPE', 'a replica answered a counter read with a record of versions: the key is no counter there; read it as its bucket\'s type');
  // The common case: every replica holds the same state. One decode, no join.
  const first = present[0]!;
  const firstBody = checked(() => versionBytes(first));
  if (present.length === replies.length && present.every((r) => r === first || checked(() => versionBytes(r)).equals(firstBody))) {
    return { value: value(checked(() => decodeCounter(first)).state), found: true, record: asBuffer(first), stale: replies.map(() => false) };
  }
  const decoded = replies.map((r) => (r === undefined ? EMPTY_COUNTER : checked(() => decodeCounter(r)).state));
  const joined = decoded.reduce<CounterState>((acc, s) => joinCounters(acc, s), EMPTY_COUNTER);
  return { value: value(joined), found: true, record: encodeCounter(joined), stale: decoded.map((s) => !sameCounter(s, joined)) };
}

/**
 * A digest of a record's versions (empty for no record): two replicas holding the same
 * versions give the same digest, whatever their own bookkeeping. A counter's record is
 * digested the same way (its canonical body). What a digest read
 * compares instead of the record (MD5, as Cassandra's digests: 16 bytes, not a defence
 * against anyone forging records, which a replica could send anyway).
 */
export function recordDigest(record: Uint8Array | undefined): Buffer {
  if (record === undefined) return EMPTY_DIGEST;
  return createHash('md5').update(checked(() => versionBytes(record))).digest();
}

const EMPTY_DIGEST = Buffer.alloc(0);

function checked<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    throw new KvError('KV_BAD_RECORD', `a replica's record does not decode (${e.message})`);
  }
}
