/**
 * Compare-and-set's acceptor (issue 31): one replica's Paxos state of one key — the
 * highest ballot it promised, the latest proposal it accepted and has not seen committed,
 * and the latest committed proposal (the register's value) — with the acceptor's rules
 * (`onPrepare`, `onPropose`, `onCommit`), the join of two replicas' states, and its record
 * (format 5), as counter.ts is the counter's. Pure. The proposer's side (what to do with
 * a round's replies) is replication/paxos.ts's; docs/architecture.md tells the whole.
 *
 * **Why states may be joined.** Anti-entropy, streaming and hints copy records between
 * replicas; for an acceptor that means one replica taking another's promises and
 * acceptances. `joinAcceptors` takes the greater of each (promise, accepted proposal,
 * commit) and drops an accepted proposal a commit covers. That is safe for Paxos: a higher
 * promise only refuses more; an accepted proposal above the latest commit may be
 * re-proposed by any later ballot, which Paxos allows of any accepted value (every
 * proposal above a chosen ballot carries the chosen value); and a commit is what a quorum
 * chose. A replacement node that takes a leaver's state this way stands in for its
 * acceptor.
 *
 * Owns: the acceptor's rules and join, the record's bytes. Must not: do I/O, decide what a
 * proposer does, or know the network.
 */
import { crc32 } from 'node:zlib';
import { DecodeError, PAXOS_RECORD_FORMAT, Reader, asBuffer, varintSize, writeVarint } from './codec.js';

/** A ballot: a number, then the proposer's id to break ties. Ordered by `compareBallots`. */
export interface Ballot {
  readonly n: number;
  readonly by: string;
}

/** Below every ballot a proposer makes. */
export const NO_BALLOT: Ballot = { n: 0, by: '' };

export function compareBallots(a: Ballot, b: Ballot): number {
  return a.n - b.n || (a.by < b.by ? -1 : a.by > b.by ? 1 : 0);
}

export const maxBallot = (a: Ballot, b: Ballot): Ballot => (compareBallots(a, b) >= 0 ? a : b);

/**
 * A proposal: the register's value after it (null: absent), under a ballot, for the
 * request `id`, decided on the commit of request `base` (absent: on a register never
 * written). Committed proposals form a chain by their bases (each is decided on the one
 * before), which tells a proposer whose proposal was preempted whether it can still apply
 * (replication/paxos.ts decide).
 */
export interface Proposal<V> {
  readonly ballot: Ballot;
  readonly value: V | null;
  readonly id: string;
  readonly base?: string | undefined;
}

/** One replica's Paxos state of one key. */
export interface Acceptor<V> {
  readonly promised: Ballot;
  /** The latest proposal accepted and not known committed (one at or below `committed` is dropped). */
  readonly accepted: Proposal<V> | undefined;
  /** The latest committed proposal: the register's value here. */
  readonly committed: Proposal<V> | undefined;
}

export const EMPTY_ACCEPTOR: Acceptor<never> = { promised: NO_BALLOT, accepted: undefined, committed: undefined };

export type PrepareReply<V> =
  | { readonly promised: true; readonly accepted: Proposal<V> | undefined; readonly committed: Proposal<V> | undefined }
  | { readonly promised: false; readonly higher: Ballot };

export type ProposeReply = { readonly accepted: true } | { readonly accepted: false; readonly higher: Ballot };

/** A prepare: promised when `ballot` is above every ballot promised here (and then the acceptor's proposals go back). */
export function onPrepare<V>(a: Acceptor<V>, ballot: Ballot): { acceptor: Acceptor<V>; reply: PrepareReply<V> } {
  if (compareBallots(ballot, a.promised) <= 0) return { acceptor: a, reply: { promised: false, higher: a.promised } };
  return { acceptor: { ...a, promised: ballot }, reply: { promised: true, accepted: a.accepted, committed: a.committed } };
}

/**
 * A proposal: accepted when its ballot is at least the one promised here. One at the
 * ballot of the commit held (a copy arriving after its own commit) is accepted without
 * being kept: the commit is that proposal.
 */
export function onPropose<V>(a: Acceptor<V>, p: Proposal<V>): { acceptor: Acceptor<V>; reply: ProposeReply } {
  if (compareBallots(p.ballot, a.promised) < 0) return { acceptor: a, reply: { accepted: false, higher: a.promised } };
  if (a.committed !== undefined && compareBallots(p.ballot, a.committed.ballot) <= 0) return { acceptor: a, reply: { accepted: true } };
  return { acceptor: { ...a, promised: p.ballot, accepted: p }, reply: { accepted: true } };
}

/**
 * A commit (a proposal a quorum accepted): kept when newer than the commit held. A
 * commit raises the promise to its ballot (no proposal below a chosen one can matter),
 * and drops an accepted proposal it covers.
 */
export function onCommit<V>(a: Acceptor<V>, p: Proposal<V>): Acceptor<V> {
  const newer = a.committed === undefined || compareBallots(p.ballot, a.committed.ballot) > 0;
  const committed = newer ? p : a.committed;
  const accepted = a.accepted !== undefined && compareBallots(a.accepted.ballot, committed!.ballot) <= 0 ? undefined : a.accepted;
  return { promised: maxBallot(a.promised, p.ballot), accepted, committed };
}


/** The join of two replicas' states of one key: each part's greater (module comment). Commutative, associative, idempotent. */
export function joinAcceptors<V>(a: Acceptor<V>, b: Acceptor<V>, order: (x: Proposal<V>, y: Proposal<V>) => number): Acceptor<V> {
  const greater = (x: Proposal<V> | undefined, y: Proposal<V> | undefined): Proposal<V> | undefined => (x === undefined ? y : y === undefined ? x : order(x, y) >= 0 ? x : y);
  const committed = greater(a.committed, b.committed);
  let accepted = greater(a.accepted, b.accepted);
  if (accepted !== undefined && committed !== undefined && compareBallots(accepted.ballot, committed.ballot) <= 0) accepted = undefined;
  return { promised: maxBallot(a.promised, b.promised), accepted, committed };
}

/* ---------------------------------------------------------------- record format 5 */

/** Whether two states are the same (their canonical bytes are). */
export function sameRegister(a: RegisterState, b: RegisterState): boolean {
  return encodeRegister(a).equals(encodeRegister(b));
}

/** A register's value as the store keeps it: bytes, or null (absent). */
export type RegisterState = Acceptor<Buffer>;

/** Two proposals of one key in a total order: by ballot, then (one ballot proposes one value, so only a bug or a forger gets here) by id and value bytes. */
export function proposalOrder(x: Proposal<Buffer>, y: Proposal<Buffer>): number {
  return compareBallots(x.ballot, y.ballot) || compareNames(x.id, y.id) || compareNames(x.base ?? '', y.base ?? '') || compareValues(x.value, y.value);
}

const compareNames = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
const compareValues = (x: Buffer | null, y: Buffer | null): number => (x === null ? (y === null ? 0 : -1) : y === null ? 1 : Buffer.compare(x, y));

/** A hint's held-since time: flag 2, as in the other formats' headers (codec.ts headerTime). */
const FLAG_HELD = 2;
/** The longest proposer id and request id a record holds, bytes. */
const MAX_NAME_BYTES = 255;

const ballotSize = (b: Ballot): number => varintSize(b.n) + 1 + Buffer.byteLength(b.by, 'latin1');
const proposalSize = (p: Proposal<Buffer> | undefined): number =>
  1 + (p === undefined ? 0 : ballotSize(p.ballot) + 1 + Buffer.byteLength(p.id, 'latin1') + 1 + Buffer.byteLength(p.base ?? '', 'latin1') + 1 + (p.value === null ? 0 : varintSize(p.value.length) + p.value.length));

function writeBallot(buf: Buffer, pos: number, b: Ballot): number {
  pos = writeVarint(buf, pos, b.n);
  buf[pos++] = b.by.length;
  return pos + buf.write(b.by, pos, 'latin1');
}

function writeProposal(buf: Buffer, pos: number, p: Proposal<Buffer> | undefined): number {
  if (p === undefined) {
    buf[pos] = 0;
    return pos + 1;
  }
  buf[pos++] = 1;
  pos = writeBallot(buf, pos, p.ballot);
  buf[pos++] = p.id.length;
  pos += buf.write(p.id, pos, 'latin1');
  const base = p.base ?? '';
  buf[pos++] = base.length;
  pos += buf.write(base, pos, 'latin1');
  if (p.value === null) {
    buf[pos] = 0;
    return pos + 1;
  }
  buf[pos++] = 1;
  pos = writeVarint(buf, pos, p.value.length);
  p.value.copy(buf, pos);
  return pos + p.value.length;
}

function checkNames(s: RegisterState): void {
  const names = [s.promised.by, s.accepted?.ballot.by, s.accepted?.id, s.accepted?.base, s.committed?.ballot.by, s.committed?.id, s.committed?.base];
  for (const n of names) if (n !== undefined && (n.length > MAX_NAME_BYTES || /[^\x00-\xff]/.test(n))) throw new RangeError(`a proposer or request id of a register record is 0 to ${MAX_NAME_BYTES} latin1 characters`);
}

/**
 * The register's record (format 5): canonical (equal states, equal bytes), then a CRC-32.
 *   5 flags [held-since] promised accepted? committed? crc
 *   ballot   = varint(n) len(1) proposer
 *   proposal = 0 | 1 ballot len(1) id len(1) base (0 | 1 varint(len) value)
 */
export function encodeRegister(s: RegisterState, heldSince?: number): Buffer {
  checkNames(s);
  const size = 2 + (heldSince === undefined ? 0 : varintSize(heldSince)) + ballotSize(s.promised) + proposalSize(s.accepted) + proposalSize(s.committed) + 4;
  const buf = Buffer.allocUnsafe(size);
  buf[0] = PAXOS_RECORD_FORMAT;
  buf[1] = heldSince === undefined ? 0 : FLAG_HELD;
  let pos = heldSince === undefined ? 2 : writeVarint(buf, 2, heldSince);
  pos = writeBallot(buf, pos, s.promised);
  pos = writeProposal(buf, pos, s.accepted);
  pos = writeProposal(buf, pos, s.committed);
  buf.writeUInt32BE(crc32(buf.subarray(0, pos)), pos);
  return buf;
}

function corrupt(what: string): never {
  throw new DecodeError(`register record: ${what}`);
}

const uint = (r: Reader): number => r.uint('register record');

function ballot(r: Reader): Ballot {
  const n = uint(r);
  const by = r.bytes(r.byte()).toString('latin1');
  return { n, by };
}

function proposal(r: Reader): Proposal<Buffer> | undefined {
  const present = r.byte();
  if (present === 0) return undefined;
  if (present !== 1) corrupt(`a proposal marked ${present}`);
  const b = ballot(r);
  const id = r.bytes(r.byte()).toString('latin1');
  const base = r.bytes(r.byte()).toString('latin1');
  const hasValue = r.byte();
  if (hasValue > 1) corrupt(`a value marked ${hasValue}`);
  const value = hasValue === 0 ? null : Buffer.from(r.bytes(uint(r)));
  return base === '' ? { ballot: b, id, value } : { ballot: b, id, value, base };
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
  if (buf[0] !== PAXOS_RECORD_FORMAT) corrupt(`format ${buf[0]}, not ${PAXOS_RECORD_FORMAT}`);
  const end = buf.length - 4;
  if (crc32(buf.subarray(0, end)) !== buf.readUInt32BE(end)) corrupt('checksum mismatch');
  const flags = buf[1]!;
  if ((flags & ~FLAG_HELD) !== 0) corrupt(`unknown flags ${flags}`);
  const r = new Reader(buf, 2, end);
  const heldSince = flags & FLAG_HELD ? uint(r) : undefined;
  const promised = ballot(r), accepted = proposal(r), committed = proposal(r);
  if (r.pos !== end) corrupt(`${end - r.pos} bytes past its end`);
  if (accepted !== undefined && compareBallots(accepted.ballot, promised) > 0) corrupt('an accepted proposal above its promise');
  if (accepted !== undefined && committed !== undefined && compareBallots(accepted.ballot, committed.ballot) <= 0) corrupt('an accepted proposal at or below its commit');
  if (committed !== undefined && compareBallots(committed.ballot, promised) > 0) corrupt('a commit above its promise');
  const register = { promised, accepted, committed };
  return heldSince === undefined ? { register } : { register, heldSince };
}
