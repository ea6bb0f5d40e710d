/**
 * Compare-and-set's acceptor: one replica's Paxos state of one key — the
 * highest ballot it promised, the latest proposal it accepted and has not seen committed,
 * the latest committed proposal (the register's value), and the last few commits before
 * it (their ids and bases: the chain a proposer reads, `history`) — with the acceptor's rules
 * (`onPrepare`, `onPropose`, `onCommit`), the join of two replicas' states, and its record
 * (format 5), as counter.ts is the counter's. Pure. The proposer's side (what to do with
 * a round's replies) is replication/paxos.ts's; docs/architecture.md tells the whole.
 *
 * **Why states may be joined.** Anti-entropy, streaming and hints copy records between
 * replicas; for an acceptor that means one replica taking another's promises and
 * acceptances. `joinAcceptors` takes the greater of each (promise, accepted proposal,
 * commit), drops an accepted proposal a commit covers, and keeps the newest
 * HISTORY_LENGTH of every other commit either knows (the top of a union: a join too, so
 * replicas that saw different commits converge on the same history). That is safe for Paxos: a higher
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
import { DecodeError, Reader, asBuffer, varintSize, writeVarint } from '../record-bytes.js';
import { REGISTER_FORMAT } from '../formats.js';

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
 * A commit as the chain remembers it: the request `id` it wrote, decided on the commit of
 * request `base` (absent: on a register never written), under a ballot. Committed
 * proposals form a chain by their bases (each is decided on the one before), which tells a
 * proposer whose proposal was preempted whether it can still apply, and a retry whether
 * its write applied (replication/paxos.ts decide).
 */
export interface Link {
  readonly ballot: Ballot;
  readonly id: string;
  readonly base?: string | undefined;
}

/** A proposal: the register's value after it (null: absent), and its link in the chain. */
export interface Proposal<V> extends Link {
  readonly value: V | null;
}

/** How many commits before the latest an acceptor remembers (`Acceptor.history`). */
export const HISTORY_LENGTH = 8;

/** One replica's Paxos state of one key. */
export interface Acceptor<V> {
  readonly promised: Ballot;
  /** The latest proposal accepted and not known committed (one at or below `committed` is dropped). */
  readonly accepted: Proposal<V> | undefined;
  /** The latest committed proposal: the register's value here. */
  readonly committed: Proposal<V> | undefined;
  /** Commits before it this replica learned (committed, or by a join), newest first, at most HISTORY_LENGTH. */
  readonly history: readonly Link[];
}

export const EMPTY_ACCEPTOR: Acceptor<never> = {
  promised: NO_BALLOT,
  accepted: undefined,
  committed: undefined,
  history: [],
};

export type PrepareReply<V> =
  | {
      readonly promised: true;
      readonly accepted: Proposal<V> | undefined;
      readonly committed: Proposal<V> | undefined;
      readonly history: readonly Link[];
    }
  | { readonly promised: false; readonly higher: Ballot };

export type ProposeReply = { readonly accepted: true } | { readonly accepted: false; readonly higher: Ballot };

/** A prepare: promised when `ballot` is above every ballot promised here (and then the acceptor's proposals go back). */
export function onPrepare<V>(a: Acceptor<V>, ballot: Ballot): { acceptor: Acceptor<V>; reply: PrepareReply<V> } {
  if (compareBallots(ballot, a.promised) <= 0) return { acceptor: a, reply: { promised: false, higher: a.promised } };
  return {
    acceptor: { ...a, promised: ballot },
    reply: { promised: true, accepted: a.accepted, committed: a.committed, history: a.history },
  };
}

/**
 * A proposal: accepted when its ballot is at least the one promised here. One at the
 * ballot of the commit held (a copy arriving after its own commit) is accepted without
 * being kept: the commit is that proposal.
 */
export function onPropose<V>(a: Acceptor<V>, p: Proposal<V>): { acceptor: Acceptor<V>; reply: ProposeReply } {
  if (compareBallots(p.ballot, a.promised) < 0) return { acceptor: a, reply: { accepted: false, higher: a.promised } };
  if (a.committed !== undefined && compareBallots(p.ballot, a.committed.ballot) <= 0)
    return { acceptor: a, reply: { accepted: true } };
  return { acceptor: { ...a, promised: p.ballot, accepted: p }, reply: { accepted: true } };
}

/**
 * A commit (a proposal a quorum accepted): kept when newer than the commit held, which
 * then joins the history (an older one joins it at once). A commit raises the promise to
 * its ballot (no proposal below a chosen one can matter), and drops an accepted proposal
 * it covers.
 */
export function onCommit<V>(a: Acceptor<V>, p: Proposal<V>): Acceptor<V> {
  const { committed, history } = joinCommits(a, { committed: p, history: [] }, (x, y) =>
    compareBallots(x.ballot, y.ballot),
  );
  const accepted =
    a.accepted !== undefined && compareBallots(a.accepted.ballot, committed!.ballot) <= 0 ? undefined : a.accepted;
  return { promised: maxBallot(a.promised, p.ballot), accepted, committed, history };
}

/** The join of two replicas' states of one key: each part's greater (module comment). Commutative, associative, idempotent. */
export function joinAcceptors<V>(
  a: Acceptor<V>,
  b: Acceptor<V>,
  order: (x: Proposal<V>, y: Proposal<V>) => number,
): Acceptor<V> {
  const { committed, history } = joinCommits(a, b, order);
  let accepted = greater(a.accepted, b.accepted, order);
  if (accepted !== undefined && committed !== undefined && compareBallots(accepted.ballot, committed.ballot) <= 0)
    accepted = undefined;
  return { promised: maxBallot(a.promised, b.promised), accepted, committed, history };
}

const greater = <V>(
  x: Proposal<V> | undefined,
  y: Proposal<V> | undefined,
  order: (x: Proposal<V>, y: Proposal<V>) => number,
): Proposal<V> | undefined => (x === undefined ? y : y === undefined ? x : order(x, y) >= 0 ? x : y);

/**
 * The greater commit of two states, and the newest HISTORY_LENGTH links of every other
 * commit they know (both histories, and the lesser commit unless it is the same link):
 * the top of a union, so a join in any order and grouping keeps the same ones.
 */
function joinCommits<V>(
  a: Pick<Acceptor<V>, 'committed' | 'history'>,
  b: Pick<Acceptor<V>, 'committed' | 'history'>,
  order: (x: Proposal<V>, y: Proposal<V>) => number,
): { committed: Proposal<V> | undefined; history: readonly Link[] } {
  const committed = greater(a.committed, b.committed, order);
  const lesser = committed === a.committed ? b.committed : a.committed;
  const distinct = lesser !== undefined && linkOrder(lesser, committed!) !== 0;
  return { committed, history: newest(distinct ? [...a.history, ...b.history, lesser] : [...a.history, ...b.history]) };
}

/** Links by ballot, then (one ballot commits one proposal, so only a bug or a forger gets here) id and base. */
const linkOrder = (x: Link, y: Link): number =>
  compareBallots(x.ballot, y.ballot) || compareNames(x.id, y.id) || compareNames(x.base ?? '', y.base ?? '');

/** The newest HISTORY_LENGTH distinct links of `links`, newest first, as links only (a proposal's value dropped). */
function newest(links: readonly Link[]): readonly Link[] {
  const out: Link[] = [];
  for (const l of [...links].sort((x, y) => linkOrder(y, x))) {
    if (out.length > 0 && linkOrder(out[out.length - 1]!, l) === 0) continue;
    out.push(l.base === undefined ? { ballot: l.ballot, id: l.id } : { ballot: l.ballot, id: l.id, base: l.base });
    if (out.length === HISTORY_LENGTH) break;
  }
  return out;
}

/* ---------------------------------------------------------------- record format 5 */

/**
 * Whether two states are the same: whether their canonical bytes would be, compared field
 * by field (a step under the key's lock asks it each time; encoding both cost a tenth of a
 * contended node's CPU).
 */
export function sameRegister(a: RegisterState, b: RegisterState): boolean {
  if (a === b) return true;
  const sameProposal = (x: Proposal<Buffer> | undefined, y: Proposal<Buffer> | undefined): boolean =>
    x === y ||
    (x !== undefined &&
      y !== undefined &&
      linkOrder(x, y) === 0 &&
      (x.value === null || y.value === null ? x.value === y.value : x.value.equals(y.value)));
  return (
    compareBallots(a.promised, b.promised) === 0 &&
    sameProposal(a.accepted, b.accepted) &&
    sameProposal(a.committed, b.committed) &&
    a.history.length === b.history.length &&
    a.history.every((l, i) => linkOrder(l, b.history[i]!) === 0)
  );
}

/** A register's value as the store keeps it: bytes, or null (absent). */
export type RegisterState = Acceptor<Buffer>;

/** Two proposals of one key in a total order: by ballot, then (one ballot proposes one value, so only a bug or a forger gets here) by id and value bytes. */
export function proposalOrder(x: Proposal<Buffer>, y: Proposal<Buffer>): number {
  return linkOrder(x, y) || compareValues(x.value, y.value);
}

const compareNames = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
const compareValues = (x: Buffer | null, y: Buffer | null): number =>
  x === null ? (y === null ? 0 : -1) : y === null ? 1 : Buffer.compare(x, y);

/** A hint's held-since time: flag 2, as in the other formats' headers (versions/codec.ts headerTime). */
const FLAG_HELD = 2;
/** The longest proposer id and request id a record holds, bytes. */
const MAX_NAME_BYTES = 255;

const ballotSize = (b: Ballot): number => varintSize(b.n) + 1 + Buffer.byteLength(b.by, 'latin1');
const linkSize = (l: Link): number =>
  ballotSize(l.ballot) + 1 + Buffer.byteLength(l.id, 'latin1') + 1 + Buffer.byteLength(l.base ?? '', 'latin1');
const proposalSize = (p: Proposal<Buffer> | undefined): number =>
  1 + (p === undefined ? 0 : linkSize(p) + 1 + (p.value === null ? 0 : varintSize(p.value.length) + p.value.length));

function writeBallot(buf: Buffer, pos: number, b: Ballot): number {
  pos = writeVarint(buf, pos, b.n);
  buf[pos++] = b.by.length;
  return pos + buf.write(b.by, pos, 'latin1');
}

const historySize = (h: readonly Link[]): number => (h.length === 0 ? 0 : 1 + h.reduce((n, l) => n + linkSize(l), 0));

function writeLink(buf: Buffer, pos: number, l: Link): number {
  pos = writeBallot(buf, pos, l.ballot);
  buf[pos++] = l.id.length;
  pos += buf.write(l.id, pos, 'latin1');
  const base = l.base ?? '';
  buf[pos++] = base.length;
  return pos + buf.write(base, pos, 'latin1');
}

function writeProposal(buf: Buffer, pos: number, p: Proposal<Buffer> | undefined): number {
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

function checkNames(s: RegisterState): void {
  const check = (n: string | undefined): void => {
    if (n !== undefined && (n.length > MAX_NAME_BYTES || /[^\x00-\xff]/.test(n)))
      throw new RangeError(`a proposer or request id of a register record is 0 to ${MAX_NAME_BYTES} latin1 characters`);
  };
  check(s.promised.by);
  for (const l of [s.accepted, s.committed, ...s.history])
    if (l !== undefined) (check(l.ballot.by), check(l.id), check(l.base));
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
  checkNames(s);
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
  if (s.history.length > 0) {
    buf[pos++] = s.history.length;
    for (const l of s.history) pos = writeLink(buf, pos, l);
  }
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

function link(r: Reader): Link {
  const b = ballot(r);
  const id = r.bytes(r.byte()).toString('latin1');
  const base = r.bytes(r.byte()).toString('latin1');
  return base === '' ? { ballot: b, id } : { ballot: b, id, base };
}

function proposal(r: Reader): Proposal<Buffer> | undefined {
  const present = r.byte();
  if (present === 0) return undefined;
  if (present !== 1) corrupt(`a proposal marked ${present}`);
  const l = link(r);
  const hasValue = r.byte();
  if (hasValue > 1) corrupt(`a value marked ${hasValue}`);
  return { ...l, value: hasValue === 0 ? null : Buffer.from(r.bytes(uint(r))) };
}

/** The history after the commit: newest first, distinct, below the commit (what `newest` makes). */
function history(r: Reader, end: number, committed: Proposal<Buffer> | undefined): Link[] {
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
  const promised = ballot(r),
    accepted = proposal(r),
    committed = proposal(r),
    past = history(r, end, committed);
  if (r.pos !== end) corrupt(`${end - r.pos} bytes past its end`);
  if (accepted !== undefined && compareBallots(accepted.ballot, promised) > 0)
    corrupt('an accepted proposal above its promise');
  if (accepted !== undefined && committed !== undefined && compareBallots(accepted.ballot, committed.ballot) <= 0)
    corrupt('an accepted proposal at or below its commit');
  if (committed !== undefined && compareBallots(committed.ballot, promised) > 0) corrupt('a commit above its promise');
  const register = { promised, accepted, committed, history: past };
  return heldSince === undefined ? { register } : { register, heldSince };
}
