/**
 * Byte formats of the store: records (a key's versions plus local metadata, with a
 * checksum) and causal contexts (the opaque bytes a read hands to a client).
 *
 * Owns: encoding, and decoding that checks everything — a record or context that does
 * not decode is refused with a clear error, never half-read. Must not: know about
 * LevelDB, keys' layout or locks.
 *
 * Record, version 1 (all integers unsigned LEB128 varints unless a width is given):
 *   u8 format = 1 | u8 flags (1: owner epoch, 2: deleted-at) | [owner epoch] | [deleted-at ms]
 *   versions: n actors, each 16 bytes + counter, ascending by actor
 *             n siblings, each actor index + counter + u8 kind (0 tombstone, 1 value)
 *             [+ value length + value bytes], in canonical (actor, counter) order
 *   u32 big-endian CRC-32 of everything before it
 * The versions section is canonical: equal versions encode to equal bytes, which is what
 * range hashes (anti-entropy) compare. The flags' fields are this node's own bookkeeping;
 * a record sent to another node carries them, and the receiver ignores them.
 *
 *
 * Record, version 2, for versions with write ids (versions.ts), otherwise as version 1:
 *   u8 format = 2 | the same header
 *   versions: the clock as in version 1
 *             n ids, each WRITE_ID_BYTES: the live siblings' write ids, ascending, distinct
 *             n retired, each WRITE_ID_BYTES + at (ms), ascending by id
 *             n siblings as in version 1, each followed by its id: 0 for none, else
 *             1 + its index among the ids
 *   u32 big-endian CRC-32
 * A record is version 2 exactly when its versions have a write id or a retired one, so
 * the encoding stays a function of the versions (canonical), and a record a node of an
 * earlier release wrote is read as it was.
 *
 * Record, version 3, for versions where some sibling expires or carries a write time
 * (versions.ts: expiry, last-writer-wins), otherwise as version 2:
 *   u8 format = 3 | the same header | the clock, ids and retired as in version 2
 *   n siblings as in version 2, each followed by u8 extras (1: expires, 2: written at)
 *             + [expires-at ms] + [written-at ms]
 *   u32 big-endian CRC-32
 * A record is version 3 exactly when a sibling has an expiry or a write time: canonical
 * still, and a record without either is written as before. Its causal section is
 * version 2's, so its contexts are version 2 contexts.
 *
 * Record, version 4: a counter (counter.ts owns its body: encodeCounter, decodeCounter).
 * Its header is the one above (flag 2 is a hint's time: a counter is never deleted), so
 * the frame checks, `versionBytes`/`versionsSpan` (range hashes, digests, kept trees) and
 * `headerTime` take it as any other record; decodeRecord, viewRecord and skimRecord do
 * not (they read versions), and the store dispatches on the format (`isCounterRecord`).
 *
 * Context: u8 format | u32 key check (low 32 bits of the key's hash) | the clock as in a
 * record; version 2 adds the ids as in a record: the write ids of the siblings the
 * reader saw. The key check refuses a context read from another key, which would
 * otherwise supersede versions that the reader never saw. A context is a record's clock
 * (and ids) section with a header: no re-encoding on the read path.
 */
import { crc32 } from 'node:zlib';
import { DecodeError, Reader, asBuffer, varintSize, writeVarint } from '../record-bytes.js';
import { ACTOR_BYTES, DotReader, WRITE_ID_BYTES, type Actor, type WriteId } from '../dots.js';
import { COUNTER_FORMAT, REGISTER_FORMAT, isKnownFormat } from '../formats.js';
import { liveIds, type Clock, type Retired, type Sibling, type Versions } from './versions.js';

const RECORD_FORMAT = 1;
export const RECORD_FORMAT_IDS = 2;
export const RECORD_FORMAT_EXTRAS = 3;
export const EXTRA_EXPIRES = 1;
export const EXTRA_AT = 2;
const CONTEXT_FORMAT = 1;
const CONTEXT_FORMAT_IDS = 2;
export const FLAG_OWNER = 1;
export const FLAG_DELETED = 2;

/** A decoded record: the versions and this node's bookkeeping for the key. */
export interface StoredRecord {
  readonly versions: Versions;
  /** The epoch of this node's actor for the key while the key lives here (store.ts). */
  readonly ownerEpoch: number | undefined;
  /** When the key became tombstones only on this node (ms since the epoch). */
  readonly deletedAt: number | undefined;
}

function sortedActors(clock: Clock): Actor[] {
  const actors = [...clock.keys()];
  return actors.length > 1 ? actors.sort() : actors;
}

function clockSize(actors: readonly Actor[], clock: Clock): number {
  let size = varintSize(actors.length);
  for (const a of actors) size += ACTOR_BYTES + varintSize(clock.get(a)!);
  return size;
}

function writeClock(buf: Buffer, pos: number, actors: readonly Actor[], clock: Clock): number {
  pos = writeVarint(buf, pos, actors.length);
  for (const a of actors) {
    for (let i = 0; i < ACTOR_BYTES; i++) buf[pos++] = a.charCodeAt(i); // latin1, without a native call
    pos = writeVarint(buf, pos, clock.get(a)!);
  }
  return pos;
}

function readClock(r: DotReader): { clock: Map<Actor, number>; actors: Actor[] } {
  const n = r.varint();
  if (n > (r.end - r.pos) / (ACTOR_BYTES + 1)) throw new DecodeError('clock longer than the record');
  const clock = new Map<Actor, number>();
  const actors: Actor[] = [];
  for (let i = 0; i < n; i++) {
    const a = r.actor();
    if (i > 0 && a <= actors[i - 1]!) throw new DecodeError('clock actors out of order');
    const c = r.varint();
    if (c === 0) throw new DecodeError('zero counter in clock');
    clock.set(a, c);
    actors.push(a);
  }
  return { clock, actors };
}

/**
 * Where the causal section (clock, and ids in version 2) of a record just encoded lies,
 * and the record's format: a context is that section with a header.
 */
export interface ClockSpan {
  start: number;
  end: number;
  format: number;
}

function writeId(buf: Buffer, pos: number, id: WriteId): number {
  for (let i = 0; i < WRITE_ID_BYTES; i++) buf[pos++] = id.charCodeAt(i);
  return pos;
}

/** A sibling's id as a record stores it: 0 for none, else 1 + its index among the ids. */
function idRef(ids: readonly WriteId[], s: Sibling): number {
  return s.id === undefined ? 0 : ids.indexOf(s.id) + 1;
}

export function encodeRecord(rec: StoredRecord, clockAt?: ClockSpan): Buffer {
  const { clock, siblings } = rec.versions;
  const retired = rec.versions.retired ?? [];
  const actors = sortedActors(clock);
  const ids = liveIds(rec.versions);
  const withExtras = siblings.some((s) => s.expiresAt !== undefined || s.at !== undefined);
  const withIds = withExtras || ids.length > 0 || retired.length > 0;
  let flags = 0,
    size = 2;
  if (rec.ownerEpoch !== undefined) ((flags |= FLAG_OWNER), (size += varintSize(rec.ownerEpoch)));
  if (rec.deletedAt !== undefined) ((flags |= FLAG_DELETED), (size += varintSize(rec.deletedAt)));
  size += clockSize(actors, clock) + varintSize(siblings.length);
  if (withIds) {
    size += varintSize(ids.length) + ids.length * WRITE_ID_BYTES + varintSize(retired.length);
    for (const r of retired) size += WRITE_ID_BYTES + varintSize(r.at);
  }
  for (const s of siblings) {
    size += varintSize(actors.indexOf(s.actor)) + varintSize(s.counter) + 1; // few actors: indexOf beats a Map
    if (s.value !== null) size += varintSize(s.value.length) + s.value.length;
    if (withIds) size += varintSize(idRef(ids, s));
    if (withExtras)
      size +=
        1 + (s.expiresAt === undefined ? 0 : varintSize(s.expiresAt)) + (s.at === undefined ? 0 : varintSize(s.at));
  }
  size += 4;
  const buf = Buffer.allocUnsafe(size);
  buf[0] = withExtras ? RECORD_FORMAT_EXTRAS : withIds ? RECORD_FORMAT_IDS : RECORD_FORMAT;
  buf[1] = flags;
  let pos = 2;
  if (rec.ownerEpoch !== undefined) pos = writeVarint(buf, pos, rec.ownerEpoch);
  if (rec.deletedAt !== undefined) pos = writeVarint(buf, pos, rec.deletedAt);
  if (clockAt) ((clockAt.start = pos), (clockAt.format = withIds ? CONTEXT_FORMAT_IDS : CONTEXT_FORMAT));
  pos = writeClock(buf, pos, actors, clock);
  if (withIds) {
    pos = writeVarint(buf, pos, ids.length);
    for (const id of ids) pos = writeId(buf, pos, id);
  }
  if (clockAt) clockAt.end = pos;
  if (withIds) {
    pos = writeVarint(buf, pos, retired.length);
    for (const r of retired) pos = writeVarint(buf, writeId(buf, pos, r.id), r.at);
  }
  pos = writeVarint(buf, pos, siblings.length);
  for (const s of siblings) {
    pos = writeVarint(buf, pos, actors.indexOf(s.actor));
    pos = writeVarint(buf, pos, s.counter);
    if (s.value === null) buf[pos++] = 0;
    else {
      buf[pos++] = 1;
      pos = writeVarint(buf, pos, s.value.length);
      buf.set(s.value, pos);
      pos += s.value.length;
    }
    if (withIds) pos = writeVarint(buf, pos, idRef(ids, s));
    if (withExtras) {
      buf[pos++] = (s.expiresAt === undefined ? 0 : EXTRA_EXPIRES) | (s.at === undefined ? 0 : EXTRA_AT);
      if (s.expiresAt !== undefined) pos = writeVarint(buf, pos, s.expiresAt);
      if (s.at !== undefined) pos = writeVarint(buf, pos, s.at);
    }
  }
  buf.writeUInt32BE(crc32(buf.subarray(0, pos)), pos);
  return buf;
}

/** A versions record's format (1 to 3). */
export const isVersionsFormat = (format: number | undefined): boolean =>
  format === RECORD_FORMAT || format === RECORD_FORMAT_IDS || format === RECORD_FORMAT_EXTRAS;

/** True for a counter's record (format 4): decode it with counter.ts decodeCounter, not decodeRecord. */
export function isCounterRecord(bytes: Uint8Array): boolean {
  return bytes.length > 0 && bytes[0] === COUNTER_FORMAT;
}

/**
 * Check the format byte and checksum; return where the body ends (before the CRC). A
 * counter's record passes only with `counters` (what reads the header alone).
 */
function checkFrame(buf: Buffer, counters = false): number {
  if (buf.length < 7) throw new DecodeError(`record of ${buf.length} bytes is too short`);
  if (!(counters ? isKnownFormat(buf[0]) : isVersionsFormat(buf[0])))
    throw new DecodeError(
      buf[0] === COUNTER_FORMAT
        ? 'a counter record (format 4) where versions were expected'
        : buf[0] === REGISTER_FORMAT
          ? 'a compare-and-set register (format 5) where versions were expected'
          : `unknown record format ${buf[0]}`,
    );
  const end = buf.length - 4;
  if (crc32(buf.subarray(0, end)) !== buf.readUInt32BE(end)) throw new DecodeError('checksum mismatch');
  return end;
}

/** True when `bytes` has a known record format (a counter's too) and its checksum holds: what a range scan checks before it sends a record (the receiver decodes, or skims, it in full). */
export function recordIntact(bytes: Uint8Array): boolean {
  const buf = asBuffer(bytes);
  if (buf.length < 7 || !isKnownFormat(buf[0])) return false;
  return crc32(buf.subarray(0, buf.length - 4)) === buf.readUInt32BE(buf.length - 4);
}

/**
 * The time a checked record's header holds, of any format: a record's deleted-at, or the
 * time a hint has been held since (hints.ts keeps it there; a counter's flag 2).
 */
export function headerTime(bytes: Uint8Array): number | undefined {
  const buf = asBuffer(bytes);
  return readHeader(new DotReader(buf, 0, checkFrame(buf, true))).deletedAt;
}

/** A version 2 record's or context's ids: ascending, distinct. */
function readIds(r: DotReader): WriteId[] {
  const n = r.varint();
  if (n * WRITE_ID_BYTES > r.end - r.pos) throw new DecodeError('more write ids than bytes');
  const ids: WriteId[] = [];
  for (let i = 0; i < n; i++) {
    const id = r.writeId();
    if (i > 0 && id <= ids[i - 1]!) throw new DecodeError('write ids out of order');
    ids.push(id);
  }
  return ids;
}

function readHeader(r: DotReader): { ownerEpoch: number | undefined; deletedAt: number | undefined } {
  r.byte(); // format, checked
  const flags = r.byte();
  if ((flags & ~(FLAG_OWNER | FLAG_DELETED)) !== 0) throw new DecodeError(`unknown record flags ${flags}`);
  const ownerEpoch = flags & FLAG_OWNER ? r.varint() : undefined;
  const deletedAt = flags & FLAG_DELETED ? r.varint() : undefined;
  return { ownerEpoch, deletedAt };
}

export function decodeRecord(bytes: Uint8Array): StoredRecord {
  const buf = asBuffer(bytes);
  const r = new DotReader(buf, 0, checkFrame(buf));
  const withExtras = buf[0] === RECORD_FORMAT_EXTRAS;
  const withIds = withExtras || buf[0] === RECORD_FORMAT_IDS;
  const { ownerEpoch, deletedAt } = readHeader(r);
  const { clock, actors } = readClock(r);
  const ids = withIds ? readIds(r) : [];
  const retired: Retired[] = [];
  if (withIds) {
    const n = r.varint();
    if (n * (WRITE_ID_BYTES + 1) > r.end - r.pos) throw new DecodeError('more retired ids than bytes');
    for (let i = 0; i < n; i++) {
      const id = r.writeId();
      if (i > 0 && id <= retired[i - 1]!.id) throw new DecodeError('retired ids out of order');
      if (ids.includes(id)) throw new DecodeError('a write id both live and retired');
      retired.push({ id, at: r.varint() });
    }
  }
  const n = r.varint();
  if (n > r.end - r.pos) throw new DecodeError('more siblings than bytes');
  const siblings: Sibling[] = [];
  const used = new Array<boolean>(ids.length).fill(false);
  let prevAi = -1,
    prevCounter = 0,
    anyExtras = false;
  for (let i = 0; i < n; i++) {
    const ai = r.varint();
    const actor = actors[ai];
    if (actor === undefined) throw new DecodeError(`sibling names actor ${ai} of ${actors.length}`);
    const counter = r.varint();
    if (counter === 0 || counter > clock.get(actor)!) throw new DecodeError('sibling dot not covered by the clock');
    if (ai < prevAi || (ai === prevAi && counter <= prevCounter)) throw new DecodeError('siblings out of order');
    ((prevAi = ai), (prevCounter = counter));
    const kind = r.byte();
    if (kind > 1) throw new DecodeError(`unknown sibling kind ${kind}`);
    const value = kind === 1 ? r.bytes(r.varint()) : null;
    const ref = withIds ? r.varint() : 0;
    if (ref > ids.length) throw new DecodeError(`sibling names write id ${ref - 1} of ${ids.length}`);
    const s: { actor: Actor; counter: number; value: Buffer | null; id?: WriteId; expiresAt?: number; at?: number } = {
      actor,
      counter,
      value,
    };
    if (ref > 0) ((used[ref - 1] = true), (s.id = ids[ref - 1]!));
    if (withExtras) {
      const extras = r.byte();
      if ((extras & ~(EXTRA_EXPIRES | EXTRA_AT)) !== 0) throw new DecodeError(`unknown sibling extras ${extras}`);
      if (extras & EXTRA_EXPIRES) {
        if (value === null) throw new DecodeError('a tombstone with an expiry');
        s.expiresAt = r.varint();
      }
      if (extras & EXTRA_AT) s.at = r.varint();
      if (extras !== 0) anyExtras = true;
    }
    siblings.push(s);
  }
  if (r.pos !== r.end) throw new DecodeError('trailing bytes after the siblings');
  if (used.includes(false)) throw new DecodeError('a write id no sibling holds');
  if (withIds && !withExtras && ids.length === 0 && retired.length === 0)
    throw new DecodeError('a version 2 record with no write ids');
  if (withExtras && !anyExtras) throw new DecodeError('a version 3 record with no expiry or write time');
  return { versions: retired.length === 0 ? { clock, siblings } : { clock, siblings, retired }, ownerEpoch, deletedAt };
}

/** What a read returns, taken from a record without building its versions. */
export interface RecordView {
  /** The live values at the reader's time, each distinct value once (versions.ts: liveValues). */
  readonly values: Buffer[];
  /** Siblings held, tombstones and expired ones included. */
  readonly siblings: number;
  /** The causal section exactly as encoded in the record (clock, and ids): a context is this with a header. */
  readonly clock: Buffer;
  /** The record's format, which the context's follows. */
  readonly format: number;
}

/** Skip a version 2 record's retired list. */
function skipRetired(r: DotReader): void {
  const n = r.varint();
  for (let i = 0; i < n; i++) {
    r.bytes(WRITE_ID_BYTES);
    r.varint();
  }
}

/** The formats whose records carry ids (2 and 3), and sibling extras (3). */
const hasIds = (format: number): boolean => format === RECORD_FORMAT_IDS || format === RECORD_FORMAT_EXTRAS;

/**
 * The read path's decode at `now` (the reader's clock, ms): checksum, then the causal
 * section's bytes and the live values (not tombstones, not expired) as views into the
 * record. Skips what a read does not need (actor strings, maps, order checks: the record
 * was checked in full when it was written; the checksum proves it unchanged).
 */
export function viewRecord(bytes: Uint8Array, now: number): RecordView {
  const buf = asBuffer(bytes);
  const r = new DotReader(buf, 0, checkFrame(buf));
  const withIds = hasIds(buf[0]!),
    withExtras = buf[0] === RECORD_FORMAT_EXTRAS;
  readHeader(r);
  const clockStart = r.pos;
  skipCausal(r, withIds);
  const clock = buf.subarray(clockStart, r.pos);
  if (withIds) skipRetired(r);
  const n = r.varint();
  const values: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    r.varint();
    r.varint();
    const v = r.byte() === 1 ? r.bytes(r.varint()) : undefined;
    if (withIds) r.varint();
    let live = true;
    if (withExtras) {
      const extras = r.byte();
      if (extras & EXTRA_EXPIRES) live = r.varint() > now;
      if (extras & EXTRA_AT) r.varint();
    }
    if (v !== undefined && live && !values.some((x) => x.equals(v))) values.push(v);
  }
  if (r.pos !== r.end) throw new DecodeError('trailing bytes after the siblings');
  return { values, siblings: n, clock, format: withIds ? CONTEXT_FORMAT_IDS : CONTEXT_FORMAT };
}

/** The record's format, or undefined for bytes too short to be one: a caller that needs only format 3's records decodes only those. */
export function recordFormat(bytes: Uint8Array): number | undefined {
  return bytes.length > 0 ? bytes[0] : undefined;
}

/** The format of records that may hold expiring siblings. */
export const EXTRAS_FORMAT = RECORD_FORMAT_EXTRAS;

/** Skip the clock, and in version 2 the ids: the causal section. */
function skipCausal(r: Reader, withIds: boolean): void {
  const n = r.varint();
  for (let i = 0; i < n; i++) {
    r.bytes(ACTOR_BYTES);
    r.varint();
  }
  if (withIds) r.bytes(r.varint() * WRITE_ID_BYTES);
}

/** The causal section of a record and its format (no checksum check: for records this node just encoded). */
export function clockBytes(bytes: Uint8Array): { clock: Buffer; format: number } {
  const buf = asBuffer(bytes);
  const r = new DotReader(buf, 0, buf.length - 4);
  readHeader(r);
  const start = r.pos;
  const withIds = hasIds(buf[0]!);
  skipCausal(r, withIds);
  return { clock: buf.subarray(start, r.pos), format: withIds ? CONTEXT_FORMAT_IDS : CONTEXT_FORMAT };
}

/** A context from a causal section already encoded (a record's, or none), of the record's format. */
export function contextFromClock(keyCheck: number, clock: Buffer | undefined, format = CONTEXT_FORMAT): Buffer {
  const buf = Buffer.allocUnsafe(5 + (clock?.length ?? 1));
  buf[0] = clock ? format : CONTEXT_FORMAT;
  buf.writeUInt32BE(keyCheck >>> 0, 1);
  if (clock) clock.copy(buf, 5);
  else buf[5] = 0; // no actors
  return buf;
}

/**
 * The canonical versions section of a checked record, without decoding it: what a range
 * hash covers (it excludes this node's bookkeeping, so replicas holding equal versions
 * hash equally). A counter's (format 4) is its state's canonical body.
 */
export function versionBytes(bytes: Uint8Array): Buffer {
  const buf = asBuffer(bytes);
  const r = new DotReader(buf, 0, checkFrame(buf, true));
  readHeader(r);
  return buf.subarray(r.pos, r.end);
}

/**
 * versionBytes of a record known intact (one the store has just encoded, or whose checksum
 * it has just verified), without checking its checksum again: a kept tree's hash of a
 * record being written (kept-trees.ts). Same bytes as versionBytes for an intact record;
 * for anything else use versionBytes.
 */
export function versionsSpan(bytes: Uint8Array): Buffer {
  const buf = asBuffer(bytes);
  if (buf.length < 7 || !isKnownFormat(buf[0])) throw new DecodeError(`not a ringkv record (format ${buf[0]})`);
  const r = new DotReader(buf, 0, buf.length - 4);
  readHeader(r);
  return buf.subarray(r.pos, r.end);
}

/** A decoded context: the clock, and the write ids of the siblings the reader saw. */
export interface Context {
  readonly clock: Clock;
  readonly ids: readonly WriteId[];
}

const NO_CONTEXT: Context = Object.freeze({ clock: new Map(), ids: Object.freeze([]) });

/** Decode a context; zero bytes mean "no context" (a blind write). */
export function decodeContext(bytes: Uint8Array, keyCheck: number): Context {
  if (bytes.length === 0) return NO_CONTEXT;
  const buf = asBuffer(bytes);
  if (buf.length < 6 || (buf[0] !== CONTEXT_FORMAT && buf[0] !== CONTEXT_FORMAT_IDS))
    throw new DecodeError('not a ringkv causal context');
  if (buf.readUInt32BE(1) !== keyCheck >>> 0) throw new DecodeError('the context was read from a different key');
  const r = new DotReader(buf, 5, buf.length);
  const { clock } = readClock(r);
  const ids = buf[0] === CONTEXT_FORMAT_IDS ? readIds(r) : [];
  if (r.pos !== r.end) throw new DecodeError('trailing bytes after the clock');
  return { clock, ids };
}

/** Run a decoder; undefined when the bytes do not decode (a corrupt record). */
export function tryDecode<T>(decode: (bytes: Buffer) => T, bytes: Buffer): T | undefined {
  try {
    return decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The record this node stores for versions received verbatim (`versions`, a canonical
 * section that skimRecord accepted): the header encodeRecord writes for a key merged in
 * (no owner epoch; deleted-at when tombstones only), the section, a new checksum.
 * Byte for byte what encodeRecord gives for the same versions and bookkeeping.
 */
export function spliceRecord(format: number, versions: Buffer, deletedAt: number | undefined): Buffer {
  const head = 2 + (deletedAt === undefined ? 0 : varintSize(deletedAt));
  const buf = Buffer.allocUnsafe(head + versions.length + 4);
  buf[0] = format;
  buf[1] = deletedAt === undefined ? 0 : FLAG_DELETED;
  if (deletedAt !== undefined) writeVarint(buf, 2, deletedAt);
  versions.copy(buf, head);
  const end = head + versions.length;
  buf.writeUInt32BE(crc32(buf.subarray(0, end)), end);
  return buf;
}
