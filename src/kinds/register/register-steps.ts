/**
 * The compare-and-set register's steps on one replica's acceptor (acceptor.ts onPrepare,
 * onPropose, onCommit), with the bytes their arguments and replies travel as: a ballot,
 * a proposal, and replies made of the register record's parts (register-record.ts). The
 * proposer's side is replication/cas.ts's.
 *
 * Owns: the register's steps and their bytes. Must not: do I/O.
 */
import { DecodeError, Reader, asBuffer } from '../record-bytes.js';
import type { KindStep, StepCodec } from '../record-kind.js';
import {
  onCommit,
  onPrepare,
  onPropose,
  type Ballot,
  type PrepareReply,
  type Proposal,
  type ProposeReply,
  type RegisterState,
} from './acceptor.js';
import { checkBallot, checkProposal } from './proposal-checks.js';
import {
  ballotSize,
  historySize,
  proposalSize,
  readBallot,
  readHistory,
  readProposal,
  writeBallot,
  writeHistory,
  writeProposal,
} from './register-record.js';
import { checkValueSize } from '../kv-errors.js';

/** `size` bytes written by `write` from 0; it returns where it stopped, which must be the end. */
function written(size: number, write: (buf: Buffer) => number): Buffer {
  const buf = Buffer.allocUnsafe(size);
  const end = write(buf);
  if (end !== size) throw new RangeError(`a register step's bytes: wrote ${end} of ${size}`);
  return buf;
}

/** What `read` makes of all of `bytes`; anything left over, or a read past the end, is a DecodeError. */
function readAll<T>(bytes: Uint8Array, what: string, read: (r: Reader, end: number) => T): T {
  const buf = asBuffer(bytes);
  const r = new Reader(buf, 0, buf.length);
  const value = read(r, buf.length);
  if (r.pos !== buf.length) throw new DecodeError(`${what}: ${buf.length - r.pos} bytes past its end`);
  return value;
}

/** A flag byte: 1 or 0, anything else a DecodeError. */
function flag(r: Reader, what: string): boolean {
  const b = r.byte();
  if (b > 1) throw new DecodeError(`${what}: a flag of ${b}`);
  return b === 1;
}

const BALLOT: StepCodec<Ballot> = {
  encode: (b) => (checkBallot(b), written(ballotSize(b), (buf) => writeBallot(buf, 0, b))),
  decode: (bytes) => readAll(bytes, 'a ballot', readBallot),
};

const PROPOSAL: StepCodec<Proposal<Buffer>> = {
  encode: (p) => (checkProposal(p), written(proposalSize(p), (buf) => writeProposal(buf, 0, p))),
  decode: (bytes) =>
    readAll(bytes, 'a proposal', (r) => {
      const p = readProposal(r);
      if (p === undefined) throw new DecodeError('a proposal: none');
      return p;
    }),
};

/**
 * Promised: 1, the accepted proposal, the commit, and its history (a count, 0 when empty,
 * then the links: unlike the record's, never left out, so that no cut of a reply reads as
 * a whole one); else 0 and the higher ballot.
 */
const PREPARE_REPLY: StepCodec<PrepareReply<Buffer>> = {
  encode: (p) =>
    p.promised
      ? written(
          1 + proposalSize(p.accepted) + proposalSize(p.committed) + Math.max(1, historySize(p.history)),
          (buf) => {
            buf[0] = 1;
            const pos = writeProposal(buf, writeProposal(buf, 1, p.accepted), p.committed);
            if (p.history.length > 0) return writeHistory(buf, pos, p.history);
            buf[pos] = 0;
            return pos + 1;
          },
        )
      : written(1 + ballotSize(p.higher), (buf) => ((buf[0] = 0), writeBallot(buf, 1, p.higher))),
  decode: (bytes) =>
    readAll(bytes, 'a prepare reply', (r, end) => {
      if (!flag(r, 'a prepare reply')) return { promised: false, higher: readBallot(r) };
      const accepted = readProposal(r),
        committed = readProposal(r);
      if (r.pos === end) throw new DecodeError('a prepare reply: no history count');
      if (r.buf[r.pos] !== 0) return { promised: true, accepted, committed, history: readHistory(r, end, committed) };
      r.pos++;
      return { promised: true, accepted, committed, history: [] };
    }),
};

/** Accepted: 1; else 0 and the higher ballot. */
const PROPOSE_REPLY: StepCodec<ProposeReply> = {
  encode: (p) =>
    p.accepted
      ? Buffer.from([1])
      : written(1 + ballotSize(p.higher), (buf) => ((buf[0] = 0), writeBallot(buf, 1, p.higher))),
  decode: (bytes) =>
    readAll(bytes, 'a proposal reply', (r) =>
      flag(r, 'a proposal reply') ? { accepted: true } : { accepted: false, higher: readBallot(r) },
    ),
};

const NOTHING: StepCodec<void> = {
  encode: () => Buffer.alloc(0),
  decode: (bytes) => {
    if (bytes.length !== 0) throw new DecodeError(`a commit reply: ${bytes.length} bytes where none are`);
  },
};

/** A proposal an acceptor may take: its parts (proposal-checks.ts) and its value's size. */
function checkProposed(p: Proposal<Buffer>, maxValueBytes: number): void {
  checkProposal(p);
  if (p.value !== null) checkValueSize(p.value.length, maxValueBytes);
}

/** A prepare under a ballot: promised (and written) when above every ballot promised here. */
export const PAXOS_PREPARE: KindStep<RegisterState, Ballot, PrepareReply<Buffer>> = {
  name: 'paxosPrepare',
  what: 'a Paxos prepare',
  writesValue: false,
  arg: BALLOT,
  reply: PREPARE_REPLY,
  check: (b) => checkBallot(b),
  run: (a, b) => {
    const { acceptor, reply } = onPrepare(a, b);
    return { state: acceptor, reply };
  },
};

/** A proposal: accepted (and written) when its ballot is at least the one promised here. */
export const PAXOS_PROPOSE: KindStep<RegisterState, Proposal<Buffer>, ProposeReply> = {
  name: 'paxosPropose',
  what: 'a Paxos proposal',
  writesValue: true,
  arg: PROPOSAL,
  reply: PROPOSE_REPLY,
  check: (p, limits) => checkProposed(p, limits.maxValueBytes),
  run: (a, p) => {
    const { acceptor, reply } = onPropose(a, p);
    return { state: acceptor, reply };
  },
};

/** A commit: kept when newer than the commit held. */
export const PAXOS_COMMIT: KindStep<RegisterState, Proposal<Buffer>, void> = {
  name: 'paxosCommit',
  what: 'a Paxos commit',
  writesValue: true,
  arg: PROPOSAL,
  reply: NOTHING,
  check: (p, limits) => checkProposed(p, limits.maxValueBytes),
  run: (a, p) => ({ state: onCommit(a, p), reply: undefined }),
};
