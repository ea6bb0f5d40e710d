/**
 * The counter's bytes: its record (format 4), the delta of one increment that the other
 * replicas merge, and a counter field's causal context. Decoding checks everything and
 * throws DecodeError saying what is wrong; what it accepts, encoding writes byte for byte.
 *
 * Owns: the bytes of a counter's state. Must not: do I/O, or hold a counter's rules
 * (counter.ts does).
 */
import { crc32 } from 'node:zlib';
import { DecodeError, asBuffer, varintSize, writeVarint } from '../record-bytes.js';
import { COUNTER_FORMAT } from '../formats.js';
import { ACTOR_BYTES, DotReader, WRITE_ID_BYTES } from '../dots.js';
import {
  EMPTY_COUNTER,
  LOG_MAX,
  byDot,
  implied,
  reset,
  resetAboveEntry,
  type CounterDelta,
  type CounterEntry,
  type CounterState,
  type Dot,
  type LoggedOp,
  type Void,
} from './counter.js';

/* ---------------------------------------------------------------- a counter field's context */

/** The first byte of a counter's context: apart from a versions context's (codec.ts: 1, 2). */
const COUNTER_CONTEXT_FORMAT = 3;

/**
 * What a reset of a counter needs (a counter read or a map read gives it with the value):
 * the state the read saw, whole, after the format and the key's check (keys.ts
 * contextCheckOf), so that a context is never applied to another key, whose actors'
 * floors it would cover.
 */
export function encodeCounterContext(keyCheck: number, state: CounterState): Buffer {
  const head = Buffer.allocUnsafe(5);
  head[0] = COUNTER_CONTEXT_FORMAT;
  head.writeUInt32BE(keyCheck >>> 0, 1);
  return Buffer.concat([head, encodeCounter(state)]);
}

/** The state a counter context saw (what `reset` takes), checked against the key's check; DecodeError if it is none of that key's, or holds nothing. */
export function decodeCounterContext(bytes: Uint8Array, keyCheck: number): CounterState {
  const buf = asBuffer(bytes);
  if (buf.length < 6 || buf[0] !== COUNTER_CONTEXT_FORMAT)
    throw new DecodeError("not a counter's context (a counter read or a map read gives one)");
  if (buf.readUInt32BE(1) !== keyCheck >>> 0) throw new DecodeError('the context was read from a different key');
  const { state, ownerEpoch, heldSince } = decodeCounter(buf.subarray(5));
  if (ownerEpoch !== undefined || heldSince !== undefined)
    throw new DecodeError("a counter's context carries no node's bookkeeping");
  if (state.entries.length === 0) throw new DecodeError('the context saw no increment: there is nothing to reset');
  return state;
}

/* ---------------------------------------------------------------- record format 4 */

const FLAG_OWNER = 1;
/** A hint's held-since time: flag 2, the slot of a versions record's deleted-at, so codec.ts reads any record's header alike (headerTime, versionBytes). */
const FLAG_HELD = 2;
/** A delta's bytes (encodeCounterDelta): its base follows the entries. Never in a stored record. */
const FLAG_BASE = 4;
/** Least bytes of an entry, a logged op and a void: what bounds their counts on decode. */
const ENTRY_MIN = ACTOR_BYTES + 3,
  OP_MIN = 4 + WRITE_ID_BYTES + 1,
  VOID_MIN = 4;

function amountSize(amount: number): number {
  return 1 + varintSize(Math.abs(amount));
}

function writeAmount(buf: Buffer, pos: number, amount: number): number {
  buf[pos++] = amount < 0 ? 1 : 0;
  return writeVarint(buf, pos, Math.abs(amount));
}

/** Actors and write ids as their bytes (latin1), without a native call for a few bytes. */
function writeLatin1(buf: Buffer, pos: number, s: string): number {
  for (let i = 0; i < s.length; i++) buf[pos++] = s.charCodeAt(i);
  return pos;
}

/** Each dot's actor index in `entries` (both sorted by actor), or a RangeError for a dot no entry covers. */
function actorIndexes(entries: readonly CounterEntry[], dots: readonly Dot[]): number[] {
  const out: number[] = [];
  let i = 0;
  for (const d of dots) {
    while (i < entries.length && entries[i]!.actor < d.actor) i++;
    if (entries[i]?.actor !== d.actor || d.counter > entries[i]!.floor)
      throw new RangeError('a counter state with a dot its entries do not cover');
    out.push(i);
  }
  return out;
}

/**
 * The counter's record: canonical (equal states, equal bytes) after a header holding this
 * node's owner epoch for the key, or (a hint) the time it has been held since.
 */
export function encodeCounter(state: CounterState, ownerEpoch?: number, heldSince?: number): Buffer {
  return encode(state, ownerEpoch, heldSince, undefined);
}

/** A delta's bytes for the wire: as a record's, with its base (a full state: exactly the record's bytes). */
export function encodeCounterDelta(delta: CounterDelta): Buffer {
  return encode(delta.state, undefined, undefined, delta.base);
}

function encode(
  state: CounterState,
  ownerEpoch: number | undefined,
  heldSince: number | undefined,
  base: CounterDelta['base'],
): Buffer {
  const { entries, log, voids } = state;
  const resets = state.resets ?? [];
  const logAt = actorIndexes(entries, log),
    voidAt = actorIndexes(entries, voids);
  const resetAt = actorIndexes(
    entries,
    resets.map((e) => ({ actor: e.actor, counter: e.floor })),
  );
  if (resets.length > 0 && resetAboveEntry(state) !== undefined)
    throw new RangeError('a counter state with a reset above its entry');
  const baseAt =
    base === undefined ? undefined : actorIndexes(entries, [{ actor: base.actor, counter: base.floor + 1 }])[0]!;
  let size =
    2 + (ownerEpoch === undefined ? 0 : varintSize(ownerEpoch)) + (heldSince === undefined ? 0 : varintSize(heldSince));
  size += varintSize(entries.length) + varintSize(log.length) + varintSize(voids.length) + 4;
  if (base !== undefined) size += varintSize(baseAt!) + varintSize(base.floor);
  for (const e of entries) size += ACTOR_BYTES + varintSize(e.floor) + varintSize(e.p) + varintSize(e.n);
  log.forEach(
    (op, k) =>
      (size +=
        varintSize(logAt[k]!) + varintSize(op.counter) + WRITE_ID_BYTES + amountSize(op.amount) + varintSize(op.seq)),
  );
  voids.forEach((d, k) => (size += varintSize(voidAt[k]!) + varintSize(d.counter) + amountSize(d.amount)));
  if (resets.length > 0) size += varintSize(resets.length);
  resets.forEach((e, k) => (size += varintSize(resetAt[k]!) + varintSize(e.floor) + varintSize(e.p) + varintSize(e.n)));
  const buf = Buffer.allocUnsafe(size);
  buf[0] = COUNTER_FORMAT;
  buf[1] =
    (ownerEpoch === undefined ? 0 : FLAG_OWNER) |
    (heldSince === undefined ? 0 : FLAG_HELD) |
    (base === undefined ? 0 : FLAG_BASE);
  let pos = ownerEpoch === undefined ? 2 : writeVarint(buf, 2, ownerEpoch);
  if (heldSince !== undefined) pos = writeVarint(buf, pos, heldSince);
  pos = writeVarint(buf, pos, entries.length);
  for (const e of entries) {
    pos = writeLatin1(buf, pos, e.actor);
    pos = writeVarint(buf, writeVarint(buf, writeVarint(buf, pos, e.floor), e.p), e.n);
  }
  if (base !== undefined) pos = writeVarint(buf, writeVarint(buf, pos, baseAt!), base.floor);
  pos = writeVarint(buf, pos, log.length);
  log.forEach((op, k) => {
    pos = writeVarint(buf, writeVarint(buf, pos, logAt[k]!), op.counter);
    pos = writeLatin1(buf, pos, op.id);
    pos = writeVarint(buf, writeAmount(buf, pos, op.amount), op.seq);
  });
  pos = writeVarint(buf, pos, voids.length);
  voids.forEach(
    (d, k) => (pos = writeAmount(buf, writeVarint(buf, writeVarint(buf, pos, voidAt[k]!), d.counter), d.amount)),
  );
  if (resets.length > 0) pos = writeVarint(buf, pos, resets.length);
  resets.forEach(
    (e, k) =>
      (pos = writeVarint(
        buf,
        writeVarint(buf, writeVarint(buf, writeVarint(buf, pos, resetAt[k]!), e.floor), e.p),
        e.n,
      )),
  );
  buf.writeUInt32BE(crc32(buf.subarray(0, pos)), pos);
  return buf;
}

/** A decoded counter record: the state, this node's owner epoch for the key, and (a hint's) the time it has been held since. */
export interface StoredCounter {
  readonly state: CounterState;
  readonly ownerEpoch: number | undefined;
  readonly heldSince?: number | undefined;
}

function corrupt(what: string): never {
  throw new DecodeError(`counter record: ${what}`);
}

const uint = (r: DotReader): number => r.uint('counter record');

function count(r: DotReader, least: number, what: string): number {
  const n = uint(r);
  if (n * least > r.end - r.pos) corrupt(`${n} ${what} cannot fit in the ${r.end - r.pos} bytes left`);
  return n;
}

function amount(r: DotReader): number {
  const sign = r.byte();
  if (sign > 1) corrupt(`unknown sign ${sign}`);
  const m = uint(r);
  if (m === 0) corrupt('an amount of zero');
  return sign === 1 ? -m : m;
}

/** A dot of the log or voids: its actor index and counter, covered by the entry, after `prev` in dot order. */
function dot(r: DotReader, entries: readonly CounterEntry[], prev: Dot | undefined, what: string): Dot {
  const i = uint(r);
  const e = entries[i];
  if (e === undefined) corrupt(`${what} names actor ${i} of ${entries.length}`);
  const counter = uint(r);
  if (counter === 0 || counter > e.floor) corrupt(`${what} dot ${counter} not covered by its actor's floor ${e.floor}`);
  const d = { actor: e.actor, counter };
  if (prev !== undefined && byDot(prev, d) >= 0) corrupt(`${what} out of order`);
  return d;
}

/**
 * Voids that could only lose increments, refused: one on a logged dot whose amount is not
 * that op's, and an actor's voids taking more than its entry counts (positive amounts past
 * its p, negative past its n). (A void on the lesser logged copy of a request cannot be
 * told from one whose lesser copy was trimmed, so it is not refused here.)
 */
function checkVoids(entries: readonly CounterEntry[], log: readonly LoggedOp[], voids: readonly Void[]): void {
  let l = 0,
    e = 0,
    p = 0,
    n = 0;
  for (const d of voids) {
    while (l < log.length && byDot(log[l]!, d) < 0) l++;
    const op = log[l];
    if (op !== undefined && byDot(op, d) === 0 && op.amount !== d.amount)
      corrupt(`a void of ${d.amount} on a logged op of ${op.amount}`);
    if (entries[e]!.actor !== d.actor) {
      while (entries[e]!.actor !== d.actor) e++;
      p = n = 0;
    }
    if (d.amount > 0) p += d.amount;
    else n -= d.amount;
    if (p > entries[e]!.p || n > entries[e]!.n) corrupt(`voids taking more than actor ${e}'s entry counts`);
  }
}

/**
 * Decode and check a counter record: the format, the checksum, every count against the
 * bytes left (so nothing is allocated past the record's size and no loop runs past its
 * end), order, coverage, and that every duplicate the log holds is voided. Throws
 * DecodeError saying what is wrong; what it accepts, encodeCounter writes byte for byte.
 */
export function decodeCounter(bytes: Uint8Array): StoredCounter {
  const { base, ...stored } = decodeChecked(bytes);
  if (base !== undefined) corrupt('a delta (it has a base), not a stored record');
  return stored;
}

/**
 * Decode and check a delta's bytes (encodeCounterDelta), with the same checks. A record's
 * bytes are a full state's delta (what read repair, streams and a gap's answer send): its
 * header, the sender's bookkeeping, is dropped.
 */
export function decodeCounterDelta(bytes: Uint8Array): CounterDelta {
  const { state, base } = decodeChecked(bytes);
  return base === undefined ? { state } : { state, base };
}

function decodeChecked(bytes: Uint8Array): StoredCounter & { base?: CounterDelta['base'] } {
  try {
    return decode(asBuffer(bytes));
  } catch (e) {
    // The shared Reader's own refusals ('truncated', 'integer out of range') name no format.
    if (e instanceof DecodeError && !e.message.startsWith('counter record: ')) corrupt(e.message);
    throw e;
  }
}

function decode(buf: Buffer): StoredCounter & { base?: CounterDelta['base'] } {
  if (buf.length < 9) corrupt(`${buf.length} bytes is too short`);
  if (buf[0] !== COUNTER_FORMAT) corrupt(`format ${buf[0]} is not a counter's (${COUNTER_FORMAT})`);
  const end = buf.length - 4;
  if (crc32(buf.subarray(0, end)) !== buf.readUInt32BE(end)) corrupt('checksum mismatch');
  const r = new DotReader(buf, 1, end);
  const flags = r.byte();
  if ((flags & ~(FLAG_OWNER | FLAG_BASE | FLAG_HELD)) !== 0) corrupt(`unknown flags ${flags}`);
  const ownerEpoch = flags & FLAG_OWNER ? uint(r) : undefined;
  const heldSince = flags & FLAG_HELD ? uint(r) : undefined;
  const entries: CounterEntry[] = [];
  for (let k = 0, n = count(r, ENTRY_MIN, 'entries'); k < n; k++) {
    const actor = r.actor();
    if (k > 0 && actor <= entries[k - 1]!.actor) corrupt('entries out of order');
    const floor = uint(r),
      p = uint(r),
      neg = uint(r);
    if (floor === 0) corrupt('an entry with no dot');
    if (p < floor - neg) corrupt(`an entry of ${floor} dots summing to less than ${floor} in magnitude`);
    entries.push({ actor, floor, p, n: neg });
  }
  let base: CounterDelta['base'];
  if (flags & FLAG_BASE) {
    const i = uint(r),
      floor = uint(r);
    const e = entries[i];
    if (e === undefined) corrupt(`the base names actor ${i} of ${entries.length}`);
    if (floor >= e.floor) corrupt(`a base floor ${floor} not below its entry's ${e.floor}`);
    base = { actor: e.actor, floor };
  }
  const log: LoggedOp[] = [];
  const nLog = count(r, OP_MIN, 'logged ops');
  if (nLog > LOG_MAX) corrupt(`${nLog} logged ops, more than the ${LOG_MAX} kept`);
  for (let k = 0; k < nLog; k++) {
    const d = dot(r, entries, log[k - 1], 'a logged op');
    const at = r.pos;
    if (r.end - at < WRITE_ID_BYTES) corrupt('truncated in a write id');
    r.pos += WRITE_ID_BYTES;
    const id = String.fromCharCode(
      buf[at]!,
      buf[at + 1]!,
      buf[at + 2]!,
      buf[at + 3]!,
      buf[at + 4]!,
      buf[at + 5]!,
      buf[at + 6]!,
      buf[at + 7]!,
    );
    const a = amount(r),
      seq = uint(r);
    if (seq === 0) corrupt('a logged op with seq 0');
    log.push({ actor: d.actor, counter: d.counter, id, amount: a, seq });
  }
  const voids: Void[] = [];
  for (let k = 0, n = count(r, VOID_MIN, 'voids'); k < n; k++) {
    const d = dot(r, entries, voids[k - 1], 'a void');
    voids.push({ actor: d.actor, counter: d.counter, amount: amount(r) });
  }
  const resets: CounterEntry[] = [];
  if (r.pos !== r.end) {
    for (let k = 0, n = count(r, 4, 'resets'); k < n; k++) {
      const i = uint(r);
      const e = entries[i];
      if (e === undefined) corrupt(`a reset names actor ${i} of ${entries.length}`);
      if (k > 0 && e.actor <= resets[k - 1]!.actor) corrupt('resets out of order');
      const floor = uint(r),
        p = uint(r),
        neg = uint(r);
      if (floor === 0 || floor > e.floor || p > e.p || neg > e.n || (floor === e.floor && (p !== e.p || neg !== e.n)))
        corrupt(`a reset (${floor}, ${p}, ${neg}) above its actor's entry (${e.floor}, ${e.p}, ${e.n})`);
      if (p < floor - neg) corrupt(`a reset of ${floor} dots summing to less than ${floor} in magnitude`);
      resets.push({ actor: e.actor, floor, p, n: neg });
    }
    if (resets.length === 0) corrupt('an empty resets section (written only when there are resets)');
    if (r.pos !== r.end) corrupt('trailing bytes after the resets');
  }
  let v = 0;
  for (const d of implied(log)) {
    while (v < voids.length && byDot(voids[v]!, d) < 0) v++;
    if (v === voids.length || byDot(voids[v]!, d) !== 0)
      corrupt(`a duplicate logged op (${d.counter}) without its void`);
  }
  checkVoids(entries, log, voids);
  const state = resets.length === 0 ? { entries, log, voids } : { entries, log, voids, resets };
  const held = heldSince === undefined ? { state, ownerEpoch } : { state, ownerEpoch, heldSince };
  return base === undefined ? held : { ...held, base };
}

/** The reset of all `seen` holds (a read's join), as a record: what a counter reset merges on every replica. */
export function counterResetRecord(seen: CounterState): Buffer {
  return encodeCounter(reset(EMPTY_COUNTER, seen));
}
