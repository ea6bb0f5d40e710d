/**
 * A versions record read without decoding it: where its versions section lies and what
 * the store's indexes and caps need of it (Store.ingest copies records of keys new here
 * this way), checking that the section is canonical as decodeRecord would. A record the
 * skim cannot vouch for is decoded instead.
 *
 * Owns: the skim. Must not: do I/O, or write records (codec.ts spliceRecord does).
 */
import { crc32 } from 'node:zlib';
import { ACTOR_BYTES, WRITE_ID_BYTES } from '../dots.js';
import {
  EXTRA_AT,
  EXTRA_EXPIRES,
  FLAG_DELETED,
  FLAG_OWNER,
  RECORD_FORMAT_EXTRAS,
  RECORD_FORMAT_IDS,
  isVersionsFormat,
} from './codec.js';

/**
 * What the store needs of a record it copies without decoding it (Store.ingest): where
 * its versions section lies, and the facts its indexes and caps take from the versions.
 * One object, reused by every call: read it before the next skim.
 */
export interface RecordSkim {
  format: number;
  /** The versions section: [versionsStart, versionsEnd) of the record's bytes. */
  versionsStart: number;
  versionsEnd: number;
  /** Entries of the clock. */
  actors: number;
  siblings: number;
  retired: number;
  /** versions.ts `isDeleted`: tombstones only (or a clock alone). */
  deleted: boolean;
  /** versions.ts `nextExpiry`: the earliest sibling expiry, or undefined. */
  nextExpiry: number | undefined;
}

/** Actors and write ids a skim keeps track of; a record with more is decoded instead. */
const SKIM_ACTORS = 64;
const SKIM_IDS = 64;
const skimCounters = new Float64Array(SKIM_ACTORS);
const skimUsed = new Uint8Array(SKIM_IDS);
let sp = 0;

/** A varint at `sp` in canonical form (as writeVarint writes it, at most 2^53 - 1), or -1. */
function skimVarint(buf: Buffer, end: number): number {
  let n = 0,
    scale = 1;
  for (let i = 0; i < 8; i++) {
    if (sp >= end) return -1;
    const b = buf[sp++]!;
    n += (b & 0x7f) * scale;
    if (b < 0x80) return (i > 0 && b === 0) || n > Number.MAX_SAFE_INTEGER ? -1 : n;
    scale *= 0x80;
  }
  return -1;
}

/** True when buf[a, a+len) sorts strictly after buf[b, b+len), byte by byte (as latin1 strings compare). */
function after(buf: Buffer, a: number, b: number, len: number): boolean {
  for (let i = 0; i < len; i++) {
    const x = buf[a + i]!,
      y = buf[b + i]!;
    if (x !== y) return x > y;
  }
  return false;
}

function sameBytes(buf: Buffer, a: number, b: number, len: number): boolean {
  for (let i = 0; i < len; i++) if (buf[a + i] !== buf[b + i]) return false;
  return true;
}

/**
 * Check a record received from another node without decoding it: the checksum, and every
 * rule decodeRecord enforces, in one walk that builds nothing. True (and `out` filled)
 * only when decodeRecord would accept the record AND its versions section is exactly what
 * encodeRecord writes for the versions it holds (canonical varints), so the section can
 * be stored as received. False for anything else — corrupt, or merely unusual (a
 * non-minimal varint, more than 64 actors or write ids): the caller decodes those, which
 * refuses what is corrupt with decodeRecord's own message.
 */
export function skimRecord(buf: Buffer, out: RecordSkim): boolean {
  const len = buf.length;
  if (len < 7) return false;
  const format = buf[0]!;
  if (!isVersionsFormat(format)) return false; // a counter's (format 4) too: the caller decodes it
  const end = len - 4;
  if (crc32(buf.subarray(0, end)) !== buf.readUInt32BE(end)) return false;
  const withExtras = format === RECORD_FORMAT_EXTRAS,
    withIds = withExtras || format === RECORD_FORMAT_IDS;
  const flags = buf[1]!;
  if ((flags & ~(FLAG_OWNER | FLAG_DELETED)) !== 0) return false;
  sp = 2;
  if (flags & FLAG_OWNER && skimVarint(buf, end) < 0) return false;
  if (flags & FLAG_DELETED && skimVarint(buf, end) < 0) return false;
  const versionsStart = sp;
  // The clock: actors ascending, counters positive.
  const actors = skimVarint(buf, end);
  if (actors < 0 || actors > SKIM_ACTORS || actors > (end - sp) / (ACTOR_BYTES + 1)) return false;
  for (let i = 0, prev = 0; i < actors; i++) {
    if (sp + ACTOR_BYTES > end) return false;
    if (i > 0 && !after(buf, sp, prev, ACTOR_BYTES)) return false;
    prev = sp;
    sp += ACTOR_BYTES;
    const c = skimVarint(buf, end);
    if (c <= 0) return false;
    skimCounters[i] = c;
  }
  // Write ids: ascending, distinct; retired: ascending, none of them live.
  let ids = 0,
    idsAt = 0,
    retired = 0;
  if (withIds) {
    ids = skimVarint(buf, end);
    if (ids < 0 || ids > SKIM_IDS || ids * WRITE_ID_BYTES > end - sp) return false;
    idsAt = sp;
    for (let i = 0; i < ids; i++, sp += WRITE_ID_BYTES) {
      if (i > 0 && !after(buf, sp, sp - WRITE_ID_BYTES, WRITE_ID_BYTES)) return false;
      skimUsed[i] = 0;
    }
    retired = skimVarint(buf, end);
    if (retired < 0 || retired * (WRITE_ID_BYTES + 1) > end - sp) return false;
    for (let i = 0, prev = 0; i < retired; i++) {
      if (sp + WRITE_ID_BYTES > end) return false;
      if (i > 0 && !after(buf, sp, prev, WRITE_ID_BYTES)) return false;
      for (let j = 0; j < ids; j++) if (sameBytes(buf, sp, idsAt + j * WRITE_ID_BYTES, WRITE_ID_BYTES)) return false;
      prev = sp;
      sp += WRITE_ID_BYTES;
      if (skimVarint(buf, end) < 0) return false;
    }
  }
  // Siblings, in canonical (actor, counter) order, each covered by the clock.
  const n = skimVarint(buf, end);
  if (n < 0 || n > end - sp) return false;
  let prevAi = -1,
    prevCounter = 0,
    anyExtras = false,
    values = 0;
  let due: number | undefined;
  for (let i = 0; i < n; i++) {
    const ai = skimVarint(buf, end);
    if (ai < 0 || ai >= actors) return false;
    const counter = skimVarint(buf, end);
    if (counter <= 0 || counter > skimCounters[ai]!) return false;
    if (ai < prevAi || (ai === prevAi && counter <= prevCounter)) return false;
    ((prevAi = ai), (prevCounter = counter));
    if (sp >= end) return false;
    const kind = buf[sp++]!;
    if (kind > 1) return false;
    if (kind === 1) {
      const vlen = skimVarint(buf, end);
      if (vlen < 0 || vlen > end - sp) return false;
      sp += vlen;
      values++;
    }
    if (withIds) {
      const ref = skimVarint(buf, end);
      if (ref < 0 || ref > ids) return false;
      if (ref > 0) skimUsed[ref - 1] = 1;
    }
    if (withExtras) {
      if (sp >= end) return false;
      const extras = buf[sp++]!;
      if ((extras & ~(EXTRA_EXPIRES | EXTRA_AT)) !== 0) return false;
      if (extras & EXTRA_EXPIRES) {
        if (kind === 0) return false;
        const at = skimVarint(buf, end);
        if (at < 0) return false;
        if (due === undefined || at < due) due = at;
      }
      if (extras & EXTRA_AT && skimVarint(buf, end) < 0) return false;
      if (extras !== 0) anyExtras = true;
    }
  }
  if (sp !== end) return false;
  for (let i = 0; i < ids; i++) if (skimUsed[i] === 0) return false;
  if (withIds && !withExtras && ids === 0 && retired === 0) return false;
  if (withExtras && !anyExtras) return false;
  out.format = format;
  out.versionsStart = versionsStart;
  out.versionsEnd = end;
  out.actors = actors;
  out.siblings = n;
  out.retired = retired;
  out.deleted = (n > 0 || actors > 0) && values === 0;
  out.nextExpiry = due;
  return true;
}
