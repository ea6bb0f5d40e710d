/**
 * A bucket: a named key space with its own replication, defaults and sibling policy
 * (Riak's bucket types, Cassandra's keyspaces). docs/reads-and-writes.md#buckets.
 *
 * A key of a bucket travels inside the node as one byte string, its *stored key*: the
 * default bucket's keys are themselves (so data and clients from before buckets keep
 * working, on the disk and on the wire between nodes of mixed releases), and a named
 * bucket's are `MARK len(1) name key`. The ring hashes the stored key, so each bucket's
 * keys spread over the ring independently of the others'. Default-bucket keys that begin
 * with MARK are refused: they are what keeps the two kinds apart. A third kind, a
 * *sub-key* (a data type's element or field, subkeys.ts), is `MARK 00 len(1) name
 * varint(len(key)) key path`: the zero byte after MARK is no bucket name's length, so no
 * stored key of the other two kinds (since buckets) begins that way. This file reads a
 * sub-key's head (its bucket and parent key); the path is subkeys.ts's.
 *
 * Owns: names, properties and their limits, the stored-key encoding, BK_* and DT_* errors.
 * Must not: know the ring, the store, the network or who changed what (table.ts).
 */

export type BucketErrorCode =
  | 'BK_BAD_NAME'
  | 'BK_BAD_PROPERTY'
  | 'BK_UNKNOWN'
  | 'BK_EXISTS'
  | 'BK_N_FIXED'
  | 'BK_N_ABOVE_MEMBERS' // a new bucket's n above the cluster's member count
  | 'BK_NOT_EMPTY' // a delete without purge of a bucket that holds keys (or whose members cannot all be asked)
  | 'BK_DELETING' // a create of a deleted bucket's name before every member purged its keys
  | 'BK_TYPE_FIXED' // a change of a bucket's data type: its keys' records are of that type
  | 'BK_WRONG_TYPE' // an operation of one data type on a bucket of another
  | 'BK_UNKNOWN_TYPE' // a bucket of a type this release does not know (a later release's)
  | 'BK_TOO_MANY'
  | 'BK_NOT_READY'
  | 'BK_RESERVED_KEY'
  | 'BK_EMPTY_KEY'; // a request's key of no bytes

export class BucketError extends Error {
  constructor(
    readonly code: BucketErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'BucketError';
  }
}

/** A data type's element or field named wrongly (subkeys.ts): each a bad argument. */
export type DataTypeErrorCode =
  | 'DT_BAD_SUBKEY' // bytes that are not a sub-key (a malformed head, no path)
  | 'DT_BAD_PARENT' // a sub-key asked of a key that is not a named bucket's
  | 'DT_BAD_PATH' // a path that does not parse: an unknown tag, a field of a type that has none, bytes past its end
  | 'DT_PATH_TOO_DEEP' // more nested fields than MAX_PATH_DEPTH
  | 'DT_ELEMENT_EMPTY'
  | 'DT_ELEMENT_TOO_LARGE'
  | 'DT_FIELD_NAME_EMPTY'
  | 'DT_FIELD_NAME_TOO_LARGE'
  | 'DT_NO_CONTEXT' // a set element's remove without the context a read of that element gave
  | 'DT_BAD_OP'; // an update that names no sub-key, one sub-key twice, or more than a call may carry

export class DataTypeError extends Error {
  constructor(
    readonly code: DataTypeErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'DataTypeError';
  }
}

/** The bucket of requests that name none. */
export const DEFAULT_BUCKET = 'default';
export const MAX_BUCKET_NAME = 64;
/** Buckets a cluster may have, the default one included. */
export const MAX_BUCKETS = 256;
export const MIN_N = 1;
export const MAX_N = 9;
/** The longest default TTL, and the longest TTL of a put: 10 years, ms. */
export const MAX_TTL_MS = 10 * 365 * 24 * 3600 * 1000;

export type SiblingPolicy = 'siblings' | 'lww';

/**
 * What a bucket's keys hold (docs/data-types.md): `kv` values written with put (siblings
 * and all), `counter` PN counters, `set` observed-remove sets of byte strings, `map` maps
 * of named fields (registers, flags, counters, sets and maps), `consistent` registers
 * written only by linearizable compare-and-set (docs/reads-and-writes.md#compare-and-set).
 * Chosen at creation and fixed after: the store keeps each type's records in its own
 * format, and a key's operations are its bucket's type's alone.
 */
export type BucketType = 'kv' | 'counter' | 'set' | 'map' | 'consistent';
export const BUCKET_TYPES: readonly BucketType[] = ['kv', 'counter', 'set', 'map', 'consistent'];

/** A bucket's properties. r and w: 0 = a majority of n. ttlMs: 0 = values do not expire. */
export interface BucketProps {
  readonly n: number;
  readonly r: number;
  readonly w: number;
  readonly ttlMs: number;
  readonly siblings: SiblingPolicy;
  /**
   * The data type of its keys (typeOf). The table always gives it; callers that build
   * properties by hand for kv keys (tests, the coordinator's defaults) may leave it out.
   * A bucket created before types (no type written) is kv.
   */
  readonly type?: BucketType;
}

export const PROPERTY_NAMES = ['n', 'r', 'w', 'ttl_ms', 'siblings', 'type'] as const;
export type PropertyName = (typeof PROPERTY_NAMES)[number];

const NAME = /^[a-z0-9][a-z0-9_.-]*$/;

/** A bucket name from a request: '' is the default bucket; anything else is checked. */
export function bucketName(name: string): string {
  if (name === '') return DEFAULT_BUCKET;
  if (name.length > MAX_BUCKET_NAME)
    throw new BucketError(
      'BK_BAD_NAME',
      `bucket name of ${name.length} characters is over the limit of ${MAX_BUCKET_NAME}`,
    );
  if (!NAME.test(name))
    throw new BucketError(
      'BK_BAD_NAME',
      `bucket name ${JSON.stringify(name)} is not valid: use a-z, 0-9, '_', '-' and '.', starting with a letter or digit`,
    );
  return name;
}

/** The default bucket's properties on a cluster of N replicas. */
export function defaultProps(clusterN: number): BucketProps {
  return { n: clusterN, r: 0, w: 0, ttlMs: 0, siblings: 'siblings', type: 'kv' };
}

/** A bucket's data type: kv when its properties name none. */
export function typeOf(p: BucketProps): BucketType {
  return p.type ?? 'kv';
}

/** A property's value as the table keeps it (text), checked. */
export function propertyText(name: PropertyName, p: BucketProps): string {
  switch (name) {
    case 'n':
      return String(p.n);
    case 'r':
      return String(p.r);
    case 'w':
      return String(p.w);
    case 'ttl_ms':
      return String(p.ttlMs);
    case 'siblings':
      return p.siblings;
    case 'type':
      return typeOf(p);
  }
}

function int(name: string, v: number, min: number, max: number, what: string): number {
  if (!Number.isSafeInteger(v) || v < min || v > max)
    throw new BucketError('BK_BAD_PROPERTY', `${name} must be ${what} (${min} to ${max}), got ${v}`);
  return v;
}

/** Properties checked against each other and the limits; throws BK_BAD_PROPERTY naming what is wrong. */
export function checkProps(p: BucketProps): BucketProps {
  int('n', p.n, MIN_N, MAX_N, 'the replicas per key');
  int('r', p.r, 0, p.n, 'at most n; 0 for a majority of n');
  int('w', p.w, 0, p.n, 'at most n; 0 for a majority of n');
  int('ttl_ms', p.ttlMs, 0, MAX_TTL_MS, 'a time to live in ms; 0 for none');
  if (p.siblings !== 'siblings' && p.siblings !== 'lww')
    throw new BucketError('BK_BAD_PROPERTY', `siblings must be "siblings" or "lww", got ${JSON.stringify(p.siblings)}`);
  const type = checkType(typeOf(p));
  // A counter is never deleted, and a set's elements and a map's fields leave only by a remove: nothing of theirs expires.
  if (type !== 'kv' && p.ttlMs !== 0)
    throw new BucketError(
      'BK_BAD_PROPERTY',
      `a bucket of type ${type} has no TTL (its values do not expire): leave ttl_ms at 0`,
    );
  // Paxos needs quorums that meet: a majority of n, whatever a request asks.
  if (type === 'consistent' && (p.r !== 0 || p.w !== 0))
    throw new BucketError(
      'BK_BAD_PROPERTY',
      `a consistent bucket reads and writes a majority of its n replicas always (Paxos quorums must meet): leave r and w at 0`,
    );
  return p;
}

function checkType(t: string): BucketType {
  if (!(BUCKET_TYPES as readonly string[]).includes(t))
    throw new BucketError('BK_BAD_PROPERTY', `type must be ${BUCKET_TYPES.join(', ')}, got ${JSON.stringify(t)}`);
  return t as BucketType;
}

/** `p` with property `name` set from text (as the table and the CLI hold it). */
export function withProperty(p: BucketProps, name: string, text: string): BucketProps {
  const num = (): number => (/^\d+$/.test(text) ? Number(text) : NaN);
  switch (name) {
    case 'n':
      return { ...p, n: num() };
    case 'r':
      return { ...p, r: num() };
    case 'w':
      return { ...p, w: num() };
    case 'ttl_ms':
      return { ...p, ttlMs: num() };
    case 'siblings':
      return { ...p, siblings: text as SiblingPolicy };
    case 'type':
      return { ...p, type: checkType(text) };
    default:
      throw new BucketError(
        'BK_BAD_PROPERTY',
        `unknown bucket property ${JSON.stringify(name)}: use one of ${PROPERTY_NAMES.join(', ')}`,
      );
  }
}

/** Marks a named bucket's stored key: a zero byte and "bkt". */
export const MARK = Buffer.from([0x00, 0x62, 0x6b, 0x74]);

/** Whether a stored key is marked as a named bucket's (a 4-byte check). */
export function startsWithMark(key: Uint8Array): boolean {
  return (
    key.length >= MARK.length && key[0] === MARK[0] && key[1] === MARK[1] && key[2] === MARK[2] && key[3] === MARK[3]
  );
}

/**
 * The stored key of `key` in `bucket` (a checked name). The default bucket's key is
 * returned as it is; one that begins with MARK is refused (BK_RESERVED_KEY).
 */
export function storedKey(bucket: string, key: Buffer): Buffer {
  if (bucket === DEFAULT_BUCKET) {
    if (startsWithMark(key))
      throw new BucketError(
        'BK_RESERVED_KEY',
        'keys of the default bucket may not begin with the bytes 00 62 6b 74 (they mark keys of named buckets): put this key in a named bucket',
      );
    return key;
  }
  const name = Buffer.from(bucket, 'latin1');
  const out = Buffer.allocUnsafe(MARK.length + 1 + name.length + key.length);
  MARK.copy(out, 0);
  out[MARK.length] = name.length;
  name.copy(out, MARK.length + 1);
  key.copy(out, MARK.length + 1 + name.length);
  return out;
}

/** Bytes a stored key adds to the user key of a bucket. */
export function keyOverhead(bucket: string): number {
  return bucket === DEFAULT_BUCKET ? 0 : MARK.length + 1 + bucket.length;
}

/** The byte after MARK that marks a sub-key: no bucket name has length 0. */
export const SUBKEY = 0x00;
/** A sub-key's parent key length is a minimal varint of at most this many bytes. */
const MAX_VARINT_BYTES = 4;
/** The longest parent key a sub-key can name (far above any key limit a store takes). */
export const MAX_PARENT_KEY_BYTES = 2 ** (7 * MAX_VARINT_BYTES) - 1;

/** Where a sub-key's parts lie: its bucket name's length (the name is at SUBKEY_NAME_AT), its parent's user key [keyStart, keyEnd), its path [keyEnd, end). */
export interface SubKeyHead {
  readonly nameLen: number;
  readonly keyStart: number;
  readonly keyEnd: number;
}

/** The first offset of a sub-key's bucket name. */
export const SUBKEY_NAME_AT = MARK.length + 2;

/** a-z, 0-9 (and with `rest`, '_', '.', '-'): NAME byte by byte, no string made. */
function nameByte(c: number, rest: boolean): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || (rest && (c === 0x5f || c === 0x2e || c === 0x2d));
}

/** Whether the `len` bytes at `at` are a valid bucket name (as bucketName checks it). */
function isNameAt(b: Uint8Array, at: number, len: number): boolean {
  if (len === 0 || len > MAX_BUCKET_NAME || b.length < at + len) return false;
  for (let i = 0; i < len; i++) if (!nameByte(b[at + i]!, i > 0)) return false;
  return true;
}

/** The bucket name of `len` bytes at `at` (checked by isNameAt). */
export function bucketNameAt(b: Uint8Array, at: number, len: number): string {
  return Buffer.from(b.buffer, b.byteOffset + at, len).toString('latin1');
}

/**
 * The head of a sub-key (`MARK 00 len name varint(len(key)) key`, then at least one byte
 * of path), or undefined when `stored` is not one: a valid bucket name, a minimal varint,
 * a key of at least one byte. The path is not read here (subkeys.ts parseSubKey).
 */
export function subKeyHead(stored: Uint8Array): SubKeyHead | undefined {
  if (!startsWithMark(stored) || stored[MARK.length] !== SUBKEY) return undefined;
  const nameLen = stored[MARK.length + 1] ?? 0;
  if (!isNameAt(stored, SUBKEY_NAME_AT, nameLen)) return undefined;
  let at = SUBKEY_NAME_AT + nameLen;
  let keyLen = 0;
  for (let i = 0; ; i++) {
    if (i === MAX_VARINT_BYTES || at >= stored.length) return undefined;
    const b = stored[at++]!;
    keyLen += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) {
      if (b === 0 && i > 0) return undefined; // not minimal: one sub-key, one encoding
      break;
    }
  }
  if (keyLen === 0 || at + keyLen >= stored.length) return undefined; // an empty key, or no path
  return { nameLen, keyStart: at, keyEnd: at + keyLen };
}

/**
 * The bucket and user key of a stored key (the user key a view of the same bytes); a
 * sub-key's are its parent's. A stored key that begins with MARK but does not parse is
 * taken as a default-bucket key (it can only be one written before buckets existed).
 */
export function splitKey(stored: Uint8Array): { bucket: string; key: Uint8Array } {
  if (startsWithMark(stored)) {
    const head = stored[MARK.length] === SUBKEY ? subKeyHead(stored) : undefined;
    if (head !== undefined)
      return {
        bucket: bucketNameAt(stored, SUBKEY_NAME_AT, head.nameLen),
        key: stored.subarray(head.keyStart, head.keyEnd),
      };
    const len = stored[MARK.length]!;
    const start = MARK.length + 1 + len;
    if (stored.length > start && isNameAt(stored, MARK.length + 1, len))
      return { bucket: bucketNameAt(stored, MARK.length + 1, len), key: stored.subarray(start) };
  }
  return { bucket: DEFAULT_BUCKET, key: stored };
}

/** Only the bucket of a stored key (splitKey without the user key). */
export function bucketOf(stored: Uint8Array): string {
  return startsWithMark(stored) ? splitKey(stored).bucket : DEFAULT_BUCKET;
}
