/**
 * The store's key layout in LevelDB (docs/architecture.md). One prefix byte per kind:
 *   'd' token(8, big-endian) user-key            a key's record; token order is byte order (a sub-key's token is its parent's)
 *   'h' len(1) target token(8) user-key          a hint: versions owed to node `target`
 *   't' deleted-at(8) token(8) user-key          tombstone index, oldest first, for purging
 *   'x' expires-at(8) token(8) user-key          expiry index: each record's earliest expiry, for reclaiming
 *   'p' token(8) user-key                        clock prune index: a record whose clock may be pruned, with when it last changed
 *   'q' token(8) user-key                        a record that failed its checksum, set aside
 *   'm' name                                     node metadata (store id, epoch lease)
 *   'a' n(1) start(8) end(8) depth(1) leaf(2)    a kept anti-entropy tree's leaf (kept-trees.ts); leaf 0xFFFF: the unit's meta
 *   'a' 0xFF seq(8)                              kept tree journal: the leaves one batch changed (n is at most 254)
 * so that one iterator reads one token range, and hints, metadata and indexes never mix
 * with data.
 *
 * Owns: building and parsing these keys, and turning a token range into byte bounds.
 * Must not: read or write the database.
 */
import {
  bucketOf,
  isSubKey,
  keyOverhead,
  parseSubKey,
  placementKey,
  subKeySpan,
  type FieldName,
} from '../buckets/index.js';
import { hashInto, MAX_TOKEN } from '../ring/index.js';
import { KvError } from '../kinds/kv-errors.js';

export const TREE = 0x61,
  DATA = 0x64,
  HINT = 0x68,
  META = 0x6d,
  PRUNE = 0x70,
  QUARANTINE = 0x71,
  TOMBSTONE = 0x74,
  EXPIRY = 0x78;
const TOKEN_BYTES = 8;

/** A user key: bytes, or a string (its UTF-8 bytes, as the ring hashes it). */
export type Key = string | Uint8Array;

/**
 * A key's bytes (a stored key: buckets/bucket.ts), checked against the limits (1 to
 * maxKeyBytes of the user's key). A sub-key's path is checked too (buckets/subkeys.ts:
 * a malformed one is refused with its DT_* code), and the limit is on its parent's key.
 */
export function userKey(key: Key, maxKeyBytes: number): Buffer {
  // A Buffer is used as it is: a new view of the same bytes would cost an object a write.
  const k =
    typeof key === 'string'
      ? Buffer.from(key, 'utf8')
      : Buffer.isBuffer(key)
        ? key
        : key instanceof Uint8Array
          ? Buffer.from(key.buffer, key.byteOffset, key.byteLength)
          : null;
  if (k === null) throw new KvError('KV_BAD_KEY', `a key must be a string or bytes, got ${typeof key}`);
  // A named bucket's key is stored with its bucket (buckets/bucket.ts): the limits are on the user's part.
  const bytes = isSubKey(k) ? parseSubKey(k).key.length : k.length - keyOverhead(bucketOf(k));
  if (bytes <= 0) throw new KvError('KV_KEY_EMPTY', 'a key must have at least one byte');
  if (bytes > maxKeyBytes)
    throw new KvError(
      'KV_KEY_TOO_LARGE',
      `key of ${bytes} bytes is over the limit of ${maxKeyBytes} bytes; use a shorter key (a hash of it, say)`,
    );
  return k;
}

/** A token range (start, end] as the ring reports ranges; start = end is the whole ring. */
export interface TokenRange {
  readonly start: bigint;
  readonly end: bigint;
}

/** Byte bounds [gte, lt) of one contiguous span of keys. */
export interface Span {
  readonly gte: Buffer;
  readonly lt: Buffer;
}

const pair = new Uint32Array(2);

/**
 * A stored key's token as (hi, lo) halves: the hash of its placement key, so a sub-key
 * (buckets/subkeys.ts) has its parent's token and its record sits in its parent's span.
 * For any other key lo is also the check its contexts carry (contextCheckOf).
 */
export function tokenHalves(key: Uint8Array): [number, number] {
  hashInto(placementKey(key), pair);
  return [pair[0]!, pair[1]!];
}

/**
 * The 32-bit check a context carries of the stored key it was read from (codec.ts
 * decodeContext refuses it on another key): the low half of the key's own hash. For a key
 * that is no sub-key that is its token's low half, as always; a sub-key shares its
 * parent's token with its siblings, so its check is of its own bytes, and a context read
 * from one element is refused on another.
 */
export function contextCheckOf(key: Uint8Array): number {
  hashInto(key, pair);
  return pair[1]!;
}

function withToken(prefix: Buffer, hi: number, lo: number, key: Uint8Array): Buffer {
  const buf = Buffer.allocUnsafe(prefix.length + TOKEN_BYTES + key.length);
  prefix.copy(buf, 0);
  buf.writeUInt32BE(hi, prefix.length);
  buf.writeUInt32BE(lo, prefix.length + 4);
  buf.set(key, prefix.length + TOKEN_BYTES);
  return buf;
}

const DATA_PREFIX = Buffer.from([DATA]);

export function dataKey(hi: number, lo: number, key: Uint8Array): Buffer {
  return withToken(DATA_PREFIX, hi, lo, key);
}

/**
 * The data keys of a parent's sub-keys, or of those under one of its fields (buckets/
 * subkeys.ts subKeySpan): one span under the parent's token, which every one of them has
 * (tokenHalves), and which no other key's record enters.
 */
export function subKeyDataSpan(parent: Uint8Array, fields?: readonly FieldName[]): Span {
  const { gte, lt } = subKeySpan(parent, fields);
  const [hi, lo] = tokenHalves(parent);
  return { gte: dataKey(hi, lo, gte), lt: dataKey(hi, lo, lt) };
}

/** A key of another kind with the same token and user key (a copy of `k` under `prefix`). */
function withPrefix(k: Uint8Array, prefix: number): Buffer {
  const buf = Buffer.from(k);
  buf[0] = prefix;
  return buf;
}

export function quarantineKey(dk: Uint8Array): Buffer {
  return withPrefix(dk, QUARANTINE);
}

/** The user key inside a data or quarantine key (it follows the prefix and the token). */
export function userKeyOf(storageKey: Buffer): Buffer {
  return storageKey.subarray(1 + TOKEN_BYTES);
}

/**
 * Whether a data key read from disk is whole: its token is the hash of its user key's
 * placement key, as `dataKey` wrote it. A byte flipped in the key (a table file damaged)
 * breaks that but for a chance of 2^-64, unless it falls in a sub-key's path (which its
 * parent's token does not cover). A point read never meets such a key (it looks up the
 * token of the key it asks for); a scan must check.
 */
export function dataKeyIntact(dk: Buffer): boolean {
  if (dk.length <= 1 + TOKEN_BYTES) return false;
  try {
    const [hi, lo] = tokenHalves(userKeyOf(dk));
    return dk.readUInt32BE(1) === hi && dk.readUInt32BE(1 + 4) === lo;
  } catch {
    return false;
  }
}

/** The token of a data key (the 8 bytes after its prefix). */
export function tokenOfDataKey(dk: Buffer): bigint {
  return dk.readBigUInt64BE(1);
}

function targetPrefix(target: string): Buffer {
  const id = Buffer.from(target, 'utf8');
  if (id.length === 0 || id.length > 255)
    throw new KvError('KV_BAD_OPTION', `hint target must be 1 to 255 bytes of UTF-8, got ${id.length}`);
  return Buffer.concat([Buffer.from([HINT, id.length]), id]);
}

export function hintKey(target: string, hi: number, lo: number, key: Uint8Array): Buffer {
  return withToken(targetPrefix(target), hi, lo, key);
}

/** All hints for one target, or (no target) every hint. */
export function hintSpan(target?: string): Span {
  if (target === undefined) return { gte: Buffer.from([HINT]), lt: Buffer.from([HINT + 1]) };
  const p = targetPrefix(target);
  return { gte: p, lt: successor(p) };
}

/** The least byte string greater than every string that starts with `prefix`. */
function successor(prefix: Buffer): Buffer {
  const out = Buffer.from(prefix);
  let i = out.length - 1;
  while (i >= 0 && out[i] === 0xff) i--;
  out[i]!++; // never all 0xff: the first byte is a prefix letter
  return out.subarray(0, i + 1);
}

/** The target node and user key of a hint key. */
export function parseHintKey(k: Buffer): { target: string; key: Buffer } {
  const len = k[1]!;
  return { target: k.toString('utf8', 2, 2 + len), key: k.subarray(2 + len + TOKEN_BYTES) };
}

/** An index entry: prefix, a time (8 bytes, big-endian ms), then a data key's token and user key. */
function timeKey(prefix: number, at: number, dk: Uint8Array): Buffer {
  const buf = Buffer.allocUnsafe(1 + 8 + dk.length - 1);
  buf[0] = prefix;
  buf.writeUInt32BE(Math.floor(at / 0x100000000), 1);
  buf.writeUInt32BE(at >>> 0, 5);
  buf.set(dk.subarray(1), 9);
  return buf;
}

/** The time of a tombstone or expiry index entry (ms). */
function timeOf(k: Buffer): number {
  return k.readUInt32BE(1) * 0x100000000 + k.readUInt32BE(5);
}

/** Index entries of `prefix` whose time is before `before` (ms). */
function timesBefore(prefix: number, before: number): Span {
  const lt = Buffer.allocUnsafe(9);
  lt[0] = prefix;
  const t = Math.max(0, before);
  lt.writeUInt32BE(Math.floor(t / 0x100000000), 1);
  lt.writeUInt32BE(t >>> 0, 5);
  return { gte: Buffer.from([prefix]), lt };
}

/** The data key named by a tombstone or expiry index entry. */
function dataKeyOfTime(k: Buffer): Buffer {
  const buf = Buffer.allocUnsafe(k.length - 8);
  buf[0] = DATA;
  k.copy(buf, 1, 9);
  return buf;
}

export const tombstoneKey = (deletedAt: number, dk: Uint8Array): Buffer => timeKey(TOMBSTONE, deletedAt, dk);
/** When a tombstone index entry's record became a tombstone (ms). */
export const tombstoneTime = timeOf;
/** Tombstone index entries older than `before` (ms). */
export const tombstonesBefore = (before: number): Span => timesBefore(TOMBSTONE, before);
/** The data key named by a tombstone index entry. */
export const dataKeyOfTombstone = dataKeyOfTime;

/** The expiry index entry of a record whose earliest sibling expiry is `expiresAt`. */
export const expiryKey = (expiresAt: number, dk: Uint8Array): Buffer => timeKey(EXPIRY, expiresAt, dk);
/** The expiry an expiry index entry was made for (ms). */
export const expiryTime = timeOf;
/** Expiry index entries whose time is at or before `now` (ms): what has expired. */
export const expiriesBy = (now: number): Span => timesBefore(EXPIRY, now + 1);
/** The data key named by an expiry index entry. */
export const dataKeyOfExpiry = dataKeyOfTime;

/** The leaf index of a kept tree's meta key (no tree has 2^16 leaves). */
export const TREE_META_LEAF = 0xffff;
const TREE_KEY_BYTES = 1 + 1 + 8 + 8 + 1 + 2;

/** The key of leaf `leaf` (or TREE_META_LEAF) of the kept tree of class n (0–254) and range (start, end] at `depth`. */
export function treeKey(n: number, range: TokenRange, depth: number, leaf: number): Buffer {
  const buf = Buffer.allocUnsafe(TREE_KEY_BYTES);
  buf[0] = TREE;
  buf[1] = n;
  buf.writeBigUInt64BE(range.start, 2);
  buf.writeBigUInt64BE(range.end, 10);
  buf[18] = depth;
  buf.writeUInt16BE(leaf, 19);
  return buf;
}

/** The parts of a kept tree key; undefined for a key of another length (not one this layout writes). */
export function parseTreeKey(k: Buffer): { n: number; range: TokenRange; depth: number; leaf: number } | undefined {
  if (k.length !== TREE_KEY_BYTES || k[0] !== TREE) return undefined;
  return {
    n: k[1]!,
    range: { start: k.readBigUInt64BE(2), end: k.readBigUInt64BE(10) },
    depth: k[18]!,
    leaf: k.readUInt16BE(19),
  };
}

/** The second byte of a kept tree journal key (no class has n 255). */
export const TREE_JOURNAL = 0xff;

/** The kept tree journal entry `seq` (written in the batch whose leaf changes it lists). */
export function treeJournalKey(seq: number): Buffer {
  const buf = Buffer.allocUnsafe(10);
  buf[0] = TREE;
  buf[1] = TREE_JOURNAL;
  buf.writeUInt32BE(Math.floor(seq / 0x100000000), 2);
  buf.writeUInt32BE(seq >>> 0, 6);
  return buf;
}

/** The seq of a kept tree journal key; undefined for any other key. */
export function treeJournalSeq(k: Buffer): number | undefined {
  if (k.length !== 10 || k[0] !== TREE || k[1] !== TREE_JOURNAL) return undefined;
  return k.readUInt32BE(2) * 0x100000000 + k.readUInt32BE(6);
}

/** Every kept tree key. */
export const ALL_TREES: Span = { gte: Buffer.from([TREE]), lt: Buffer.from([TREE + 1]) };

export function metaKey(name: string): Buffer {
  return Buffer.concat([Buffer.from([META]), Buffer.from(name, 'utf8')]);
}

function tokenBound(t: bigint): Buffer {
  const buf = Buffer.allocUnsafe(1 + TOKEN_BYTES);
  buf[0] = DATA;
  buf.writeBigUInt64BE(t, 1);
  return buf;
}

const DATA_START = DATA_PREFIX;
const DATA_END = Buffer.from([DATA + 1]);

/** Every data key. */
export const ALL_DATA: Span = { gte: DATA_START, lt: DATA_END };

/** Keys with token in (after, upTo]: bounds [after + 1, upTo + 1). */
function span(after: bigint | null, upTo: bigint): Span {
  return {
    gte: after === null ? DATA_START : tokenBound(after + 1n),
    lt: upTo === MAX_TOKEN ? DATA_END : tokenBound(upTo + 1n),
  };
}

/**
 * The byte spans of the data in token range (start, end], in token order: one span, or
 * two when the range wraps past 2^64 − 1.
 */
export function dataSpans(range: TokenRange): Span[] {
  const { start, end } = range;
  for (const t of [start, end])
    if (typeof t !== 'bigint' || t < 0n || t > MAX_TOKEN)
      throw new KvError(
        'KV_BAD_RANGE',
        `token range bounds must be integers in [0, 2^64), got (${String(start)}, ${String(end)}]`,
      );
  if (start === end) return [ALL_DATA];
  if (start < end) return [span(start, end)];
  // Wraps: (start, MAX] then [0, end]; (MAX, MAX] is empty.
  const spans = start === MAX_TOKEN ? [] : [span(start, MAX_TOKEN)];
  spans.push(span(null, end));
  return spans;
}

/** The clock prune index entry of a data key: its token and user key, in token order, one per record. */
export function pruneKey(dk: Uint8Array): Buffer {
  return withPrefix(dk, PRUNE);
}
/** Every clock prune index entry. */
export const PRUNES: Span = { gte: Buffer.from([PRUNE]), lt: Buffer.from([PRUNE + 1]) };
/** The data key named by a clock prune index entry. */
export function dataKeyOfPrune(pk: Uint8Array): Buffer {
  return withPrefix(pk, DATA);
}
