/**
 * What a coordinator makes of its replicas' replies to a read: the versions merged
 * (siblings + one context for the client), and which replies were stale, to repair; for a
 * counter (record format 4, counter.ts), the join of the replies and its value
 * (`resolveCounterReplies`); for a page of a parent's sub-keys (Store.readRange on
 * several replicas), the join per sub-key up to the least of the replies' page ends
 * (`resolvePage`), a counter field's with the context its reset needs; and what a
 * counter reset of a read writes (`counterContext`, `counterReset`).
 *
 * Owns: the pure join of records from several replicas, and the contexts and reset
 * records made from such a join. Must not: do I/O or decide who
 * to ask (replication/ does); it lives here because only storage knows the byte formats.
 */
import { DecodeError, asBuffer, recordKind, joinedKindOf } from '../kinds/index.js';
import { subKeyPolicy, type SiblingPolicy } from '../buckets/index.js';
import { createHash } from 'node:crypto';
import {
  clockBytes,
  contextFromClock,
  decodeRecord,
  encodeRecord,
  isCounterRecord,
  versionBytes,
  viewRecord,
} from '../kinds/versions/codec.js';
import { EMPTY_COUNTER, isReset, join as joinCounters, sameCounter, value } from '../kinds/counter/counter.js';
import { counterResetRecord } from '../kinds/counter/counter-record.js';
import {
  decodeCounter,
  decodeCounterContext,
  encodeCounter,
  encodeCounterContext,
} from '../kinds/counter/counter-record.js';
import type { CounterState } from '../kinds/counter/counter.js';
import { KvError, showKey } from '../kinds/kv-errors.js';
import { contextCheckOf, userKey } from './keys.js';
import type { Key } from './keys.js';
import { EMPTY_VERSIONS, liveValues, merge, mergeLww, sameVersions } from '../kinds/versions/versions.js';
import type { Versions } from '../kinds/versions/versions.js';

export interface ResolveOptions {
  /** The limit on the key's bytes (default none). */
  readonly maxKeyBytes?: number;
  /** The reading node's wall clock, ms: siblings expired by then are not returned (default the real clock). */
  readonly now?: number;
  /** The key's sibling policy (its bucket's): 'lww' joins replies last-writer-wins (default 'siblings'). A sub-key's is its path's (a map's register: lww). */
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
export function resolveReplies(
  key: Key,
  replies: readonly (Uint8Array | undefined)[],
  o: ResolveOptions = {},
): ResolvedRead {
  const k = userKey(key, o.maxKeyBytes ?? Infinity);
  const now = o.now ?? Date.now();
  const check = contextCheckOf(k);
  const present = replies.filter((r): r is Uint8Array => r !== undefined);
  const other = present.find((r) => isCounterRecord(r) || joinedKindOf(r) !== undefined);
  if (other !== undefined)
    throw new KvError(
      'KV_WRONG_TYPE',
      `a replica answered a read of versions with the record of ${recordKind(other)}: read the key as its bucket's type`,
    );
  if (present.length === 0) {
    return {
      values: [],
      context: contextFromClock(check, undefined),
      found: false,
      record: undefined,
      stale: replies.map(() => false),
    };
  }
  // The common case: every replica holds the same versions. No decode, no merge.
  const first = present[0]!;
  const firstVersions = checked(() => versionBytes(first));
  if (
    present.length === replies.length &&
    present.every((r) => r === first || checked(() => versionBytes(r)).equals(firstVersions))
  ) {
    const view = viewRecord(first, now);
    return {
      values: view.values,
      context: contextFromClock(check, view.clock, view.format),
      found: view.values.length > 0,
      record: asBuffer(first),
      stale: replies.map(() => false),
    };
  }
  const decoded = replies.map((r) => (r === undefined ? EMPTY_VERSIONS : checked(() => decodeRecord(r).versions)));
  const join = (subKeyPolicy(k) ?? o.policy) === 'lww' ? mergeLww : merge;
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
  /** A map's counter field (resolvePage): what a remove of it needs, the entries the join saw (counter.ts encodeCounterContext). */
  readonly context?: Buffer;
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
  for (const r of present)
    if (!isCounterRecord(r))
      throw new KvError(
        'KV_WRONG_TYPE',
        `a replica answered a counter read with the record of ${recordKind(r)}: the key is no counter there; read it as its bucket's type`,
      );
  // The common case: every replica holds the same state. One decode, no join.
  const first = present[0]!;
  const firstBody = checked(() => versionBytes(first));
  if (
    present.length === replies.length &&
    present.every((r) => r === first || checked(() => versionBytes(r)).equals(firstBody))
  ) {
    return {
      value: value(checked(() => decodeCounter(first)).state),
      found: true,
      record: asBuffer(first),
      stale: replies.map(() => false),
    };
  }
  const decoded = replies.map((r) => (r === undefined ? EMPTY_COUNTER : checked(() => decodeCounter(r)).state));
  const joined = decoded.reduce<CounterState>((acc, s) => joinCounters(acc, s), EMPTY_COUNTER);
  return {
    value: value(joined),
    found: true,
    record: encodeCounter(joined),
    stale: decoded.map((s) => !sameCounter(s, joined)),
  };
}

/** A counter field's join with the context a remove (a reset) of what it saw needs; not found once reset and not incremented since. */
function withCounterContext(key: Buffer, read: ResolvedCounter): ResolvedCounter {
  if (read.record === undefined) return read;
  const { state } = decodeCounter(read.record);
  return { ...read, found: !isReset(state), context: encodeCounterContext(contextCheckOf(key), state) };
}

/** The context a reset of the counter at `key` needs, from a read's joined record (resolveCounterReplies). */
export function counterContext(key: Buffer, record: Uint8Array): Buffer {
  return encodeCounterContext(contextCheckOf(key), decodeCounter(record).state);
}

/**
 * A counter reset of what a read saw, as the record every replica merges and the value it
 * takes out: from a read's joined record, or from a context a reader was given (refused,
 * KV_BAD_CONTEXT, when it is no counter context of this key).
 */
export function counterReset(
  key: Buffer,
  seen: { readonly record: Uint8Array } | { readonly context: Uint8Array },
): { record: Buffer; value: bigint } {
  let state: CounterState;
  if ('record' in seen) state = decodeCounter(seen.record).state;
  else {
    try {
      state = decodeCounterContext(seen.context, contextCheckOf(key));
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      throw new KvError(
        'KV_BAD_CONTEXT',
        `bad counter context for ${showKey(key)}: ${e.message}; pass the context a read of this counter returned`,
      );
    }
  }
  return { record: counterResetRecord(state), value: value(state) };
}

/** One replica's page of a parent's sub-keys (Store.readRange), as it replied. */
export interface PageReply {
  /** Intact records in key order. */
  readonly records: readonly { readonly key: Uint8Array; readonly record: Uint8Array }[];
  /** Where the replica's page stopped (its last key read) when more follow; undefined when it read its span to the end. */
  readonly next: Uint8Array | undefined;
}

/** One sub-key of a resolved page: versions (a set element, a register, a flag) or a counter field, each joined over the replies. */
export type ResolvedSubKey =
  | { readonly key: Buffer; readonly kind: 'versions'; readonly read: ResolvedRead }
  | { readonly key: Buffer; readonly kind: 'counter'; readonly read: ResolvedCounter };

export interface ResolvedPage {
  /** The sub-keys any reply held up to the page's end, in key order, each with its join and which replies were stale. */
  readonly entries: ResolvedSubKey[];
  /** Where the next page starts (pass it as `after`); undefined when every reply read to its end. */
  readonly next: Buffer | undefined;
}

/**
 * Join replicas' pages of one parent's sub-keys. A replica whose page stopped early (it
 * has `next`) has not said what lies past its last key, so the page ends at the least
 * `next` of the replies (bigsets' "least-last"): sub-keys past it are left to the next
 * page, where every reply covers them. Each sub-key up to there is joined as a read of it
 * is (resolveReplies, or resolveCounterReplies for a counter's record), a reply that does
 * not hold it counting as not holding the key (stale, so read repair sends it the join);
 * a reply that does not decode is refused whole, as those do.
 */
export function resolvePage(pages: readonly PageReply[], o: ResolveOptions = {}): ResolvedPage {
  let end: Buffer | undefined;
  for (const p of pages)
    if (p.next !== undefined && (end === undefined || Buffer.compare(asBuffer(p.next), end) < 0))
      end = asBuffer(p.next);
  const byKey = new Map<string, { key: Buffer; replies: (Uint8Array | undefined)[] }>();
  pages.forEach((p, i) => {
    for (const r of p.records) {
      const key = asBuffer(r.key);
      if (end !== undefined && Buffer.compare(key, end) > 0) break; // in key order: the rest are past the end too
      const id = key.toString('latin1');
      let e = byKey.get(id);
      if (e === undefined) byKey.set(id, (e = { key, replies: pages.map(() => undefined) }));
      e.replies[i] = r.record;
    }
  });
  const entries = [...byKey.values()]
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map(({ key, replies }): ResolvedSubKey =>
      replies.some((r) => r !== undefined && isCounterRecord(r))
        ? { key, kind: 'counter', read: withCounterContext(key, resolveCounterReplies(replies)) }
        : { key, kind: 'versions', read: resolveReplies(key, replies, o) },
    );
  return { entries, next: end };
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
  return createHash('md5')
    .update(checked(() => versionBytes(record)))
    .digest();
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
