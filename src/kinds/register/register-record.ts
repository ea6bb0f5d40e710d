/**
 * The compare-and-set register's record (format 5): an acceptor's state as bytes, and the
 * pieces of it (a ballot, a proposal, a history of links) that the register's steps send
 * between replicas (register-steps.ts).
 *
 * Owns: the bytes of a register's state and of its parts. Must not: do I/O, or decide
 * anything of Paxos (acceptor.ts does).
 */
import { crc32 } from 'node:zlib';
import { DecodeError, Reader, asBuffer, varintSize, writeVarint } from '../record-bytes.js';
import { REGISTER_FORMAT } from '../formats.js';
import {
  HISTORY_LENGTH,
  compareBallots,
  linkOrder,
  type Ballot,
  type Link,
  type Proposal,
  type RegisterState,
} from './acceptor.js';

/** A hint's held-since time: flag 2, as in the other formats' headers (versions/codec.ts headerTime). */
const FLAG_HELD = 2;
/** The longest proposer id and request id a record holds, bytes. */
const MAX_NAME_BYTES = 255;

export const ballotSize = (b: Ballot): number => varintSize(b.n) + 1 + Buffer.byteLength(b.by, 'latin1');
const linkSize = (l: Link): number =>
  ballotSize(l.ballot) + 1 + Buffer.byteLength(l.id, 'latin1') + 1 + Buffer.byteLength(l.base ?? '', 'latin1');
export const proposalSize = (p: Proposal<Buffer> | undefined): number =>
  1 + (p === undefined ? 0 : linkSize(p) + 1 + (p.value === null ? 0 : varintSize(p.value.length) + p.value.length));

/** A name (a proposer id, a request id, a base): its length in one byte, then its latin1 bytes; a longer or wider one is a RangeError. */
function writeName(buf: Buffer, pos: number, s: string): number {
  if (s.length > MAX_NAME_BYTES || /[^\x00-\xff]/.test(s))
    throw new RangeError(`a proposer or request id of a register record is 0 to ${MAX_NAME_BYTES} latin1 characters`);
  buf[pos++] = s.length;
  return pos + buf.write(s, pos, 'latin1');
}

export function writeBallot(buf: Buffer, pos: number, b: Ballot): number {
  return writeName(buf, writeVarint(buf, pos, b.n), b.by);
}

export const historySize = (h: readonly Link[]): number =>
  h.length === 0 ? 0 : 1 + h.reduce((n, l) => n + linkSize(l), 0);

function writeLink(buf: Buffer, pos: number, l: Link): number {
  return writeName(buf, writeName(buf, writeBallot(buf, pos, l.ballot), l.id), l.base ?? '');
}

/** A history: nothing when empty, else its count and links (historySize bytes). */
export function writeHistory(buf: Buffer, pos: number, h: readonly Link[]): number {
  if (h.length === 0) return pos;
  buf[pos++] = h.length;
  for (const l of h) pos = writeLink(buf, pos, l);
  return pos;
}

export function writeProposal(buf: Buffer, pos: number, p: Proposal<Buffer> | undefined): number {
  if (p === undefined) {
    buf[pos] = 0;
    return pos + 1;
  }
  buf[pos++] = 1;
  pos = writeLink(buf, pos, p);
  if (p.value === null) {
    buf[pos] = 0;
    return pos + 1;
  }
  buf[pos++] = 1;
  pos = writeVarint(buf, pos, p.value.length);
  p.value.copy(buf, pos);
  return pos + p.value.length;
}

/**
 * The register's record (format 5): canonical (equal states, equal bytes), then a CRC-32.
 *   5 flags [held-since] promised accepted? committed? [history] crc
 *   ballot   = varint(n) len(1) proposer
 *   link     = ballot len(1) id len(1) base
 *   proposal = 0 | 1 link (0 | 1 varint(len) value)
 *   history  = count(1, 1 to HISTORY_LENGTH) link…, newest first; absent when empty (so
 *              a record written before there was a history reads as one without)
 */
export function encodeRegister(s: RegisterState, heldSince?: number): Buffer {
  const size =
    2 +
    (heldSince === undefined ? 0 : varintSize(heldSince)) +
    ballotSize(s.promised) +
    proposalSize(s.accepted) +
    proposalSize(s.committed) +
    historySize(s.history) +
    4;
  const buf = Buffer.allocUnsafe(size);
  buf[0] = REGISTER_FORMAT;
  buf[1] = heldSince === undefined ? 0 : FLAG_HELD;
  let pos = heldSince === undefined ? 2 : writeVarint(buf, 2, heldSince);
  pos = writeBallot(buf, pos, s.promised);
  pos = writeProposal(buf, pos, s.accepted);
  pos = writeProposal(buf, pos, s.committed);
  pos = writeHistory(buf, pos, s.history);
  buf.writeUInt32BE(crc32(buf.subarray(0, pos)), pos);
  return buf;
}

function corrupt(what: string): never {
  throw new DecodeError(`register record: ${what}`);
}

const uint = (r: Reader): number => r.uint('register record');

export function readBallot(r: Reader): Ballot {
  const n = uint(r);
  const by = r.bytes(r.byte()).toString('latin1');
  return { n, by };
}

function link(r: Reader): Link {
  const b = readBallot(r);
  const id = r.bytes(r.byte()).toString('latin1');
  const base = r.bytes(r.byte()).toString('latin1');
  return base === '' ? { ballot: b, id } : { ballot: b, id, base };
}

export function readProposal(r: Reader): Proposal<Buffer> | undefined {
  const present = r.byte();
  if (present === 0) return undefined;
  if (present !== 1) corrupt(`a proposal marked ${present}`);
  const l = link(r);
  const hasValue = r.byte();
  if (hasValue > 1) corrupt(`a value marked ${hasValue}`);
  return { ...l, value: hasValue === 0 ? null : Buffer.from(r.bytes(uint(r))) };
}

/** The history after the commit: newest first, distinct, below the commit (what `newest` makes). */
export function readHistory(r: Reader, end: number, committed: Proposal<Buffer> | undefined): Link[] {
  if (r.pos === end) return [];
  const count = r.byte();
  if (count < 1 || count > HISTORY_LENGTH) corrupt(`a history of ${count} commits (1 to ${HISTORY_LENGTH})`);
  if (committed === undefined) corrupt('a history without a commit');
  const out: Link[] = [];
  for (let i = 0; i < count; i++) {
    const l = link(r);
    const outOfOrder = i === 0 ? compareBallots(l.ballot, committed.ballot) > 0 : linkOrder(l, out[i - 1]!) >= 0;
    if (outOfOrder) corrupt('a history out of order (newest first, none above the commit)');
    out.push(l);
  }
  return out;
}

/** A decoded register record, and (a hint's) the time it has been held since. */
export interface StoredRegister {
  readonly register: RegisterState;
  readonly heldSince?: number | undefined;
}

/**
 * Decode and check a register record: the format, the checksum, every length against
 * the bytes left, and the acceptor's invariants (a promise at least every proposal's
 * ballot; an accepted proposal above the commit). Throws DecodeError saying what is
 * wrong; what it accepts, encodeRegister writes byte for byte.
 */
export function decodeRegister(bytes: Uint8Array): StoredRegister {
  const buf = asBuffer(bytes);
  if (buf.length < 2 + 4) corrupt('truncated');
  if (buf[0] !== REGISTER_FORMAT) corrupt(`format ${buf[0]}, not ${REGISTER_FORMAT}`);
  const end = buf.length - 4;
  if (crc32(buf.subarray(0, end)) !== buf.readUInt32BE(end)) corrupt('checksum mismatch');
  const flags = buf[1]!;
  if ((flags & ~FLAG_HELD) !== 0) corrupt(`unknown flags ${flags}`);
  const r = new Reader(buf, 2, end);
  const heldSince = flags & FLAG_HELD ? uint(r) : undefined;
  const promised = readBallot(r),
    accepted = readProposal(r),
    committed = readProposal(r),
    past = readHistory(r, end, committed);
  if (r.pos !== end) corrupt(`${end - r.pos} bytes past its end`);
  if (accepted !== undefined && compareBallots(accepted.ballot, promised) > 0)
    corrupt('an accepted proposal above its promise');
  if (accepted !== undefined && committed !== undefined && compareBallots(accepted.ballot, committed.ballot) <= 0)
    corrupt('an accepted proposal at or below its commit');
  if (committed !== undefined && compareBallots(committed.ballot, promised) > 0) corrupt('a commit above its promise');
  const register = { promised, accepted, committed, history: past };
  return heldSince === undefined ? { register } : { register, heldSince };
}
