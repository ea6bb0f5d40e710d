/**
 * The Replica service's stream messages (proto/ringkv/internal/v1/replica.proto:
 * ReplicaCalls and ReplicaReplies), encoded and decoded by hand rather than through
 * proto-loader's dynamic objects: one exact-size buffer per batch, and fields decoded as
 * views of the received buffer, not copies. The bytes are plain protobuf, so grpcurl and
 * reflection describe them truly. (bench/replica-codec.ts measures the difference.) The
 * field numbers below are replica.proto's: test/unit/transport/replica-codec.test.ts
 * encodes every field by name with protobufjs and decodes it here, and the reverse, so a
 * field renumbered in the .proto fails it.
 *
 * Owns: the byte layout of a batch and its calls and replies (the messages nested in
 * them are replica-parts.ts's). Must not: know what the calls mean (replica-wire.ts maps
 * them to ReplicaApi and LocalReplica).
 */

import {
  EMPTY,
  LEN,
  VARINT,
  WireDecodeError,
  batchItemSize,
  bytesField,
  decodeBatch,
  encodeBatch,
  messageField,
  readSint64,
  sint64Field,
  varintField,
  writeSint64,
  Reader,
  type ItemLayout,
  type Writer,
} from './protobuf-bytes.js';

export { WireDecodeError } from './protobuf-bytes.js';
export type { WirePathField, WireSubKeyRecord, WireSubOp, WireSubOpKind } from './replica-parts.js';
import {
  eachField,
  optionalBytesField,
  readEnum,
  readRecord,
  readSubOp,
  nestedReader,
  recordsSize,
  subOpSize,
  writeOptionalBytes,
  writeRecords,
  writeSubOp,
  type WireSubKeyRecord,
  type WireSubOp,
} from './replica-parts.js';

export type WireCall =
  | {
      id: number;
      deadline: number;
      op: 'apply';
      key: Buffer;
      value: Buffer | null;
      context: Buffer;
      requestId: Buffer;
      expiresAt: number;
    }
  | { id: number; deadline: number; op: 'merge'; key: Buffer; record: Buffer; hintFor: string }
  | { id: number; deadline: number; op: 'read'; key: Buffer; hintFor: string }
  | { id: number; deadline: number; op: 'digest'; key: Buffer }
  // The amount as sent: a peer may send any sint64, and the replica refuses what is past its bound (KV_BAD_AMOUNT).
  | { id: number; deadline: number; op: 'counterUpdate'; key: Buffer; amount: bigint; requestId: Buffer }
  | { id: number; deadline: number; op: 'writeMany'; parent: Buffer; ops: readonly WireSubOp[]; requestId: Buffer }
  | { id: number; deadline: number; op: 'readRange'; parent: Buffer; after: Buffer | undefined; limit: number }
  // A Paxos step (replica.proto PaxosRequest): `step` one this release does not know stays its number, for the replica to refuse.
  | {
      id: number;
      deadline: number;
      op: 'paxos';
      key: Buffer;
      step: WirePaxosStep | number;
      ballot: number;
      proposer: Buffer;
      proposalId: Buffer;
      base: Buffer;
      value: Buffer | null;
    }
  // A kind's step (replica.proto StepRequest): the replica finds the kind and step by their numbers and name.
  | { id: number; deadline: number; op: 'step'; key: Buffer; kind: number; step: string; arg: Buffer };

export type WirePaxosStep = 'prepare' | 'propose' | 'commit';

/**
 * A call as decoded: one of the above, or one that names no operation this release knows
 * (none set, or a oneof case of a newer release), which the server refuses by itself
 * (RK_UNSUPPORTED) instead of failing the whole batch and the stream with it.
 */
export type DecodedCall = WireCall | { id: number; deadline: number; op: 'unsupported' };

export type WireReply =
  | { id: number; op: 'apply'; record: Buffer; context: Buffer }
  | { id: number; op: 'merge'; changed: boolean }
  | { id: number; op: 'read'; record: Buffer | undefined }
  | { id: number; op: 'digest'; digest: Buffer }
  | { id: number; op: 'error'; code: string; message: string }
  // The value in decimal as the replica sent it: replica-wire.ts reads it as a bigint (and refuses one that is not a number).
  | { id: number; op: 'counterUpdate'; record: Buffer; delta: Buffer; value: string }
  | { id: number; op: 'writeMany'; records: readonly WireSubKeyRecord[] }
  | { id: number; op: 'readRange'; records: readonly WireSubKeyRecord[]; next: Buffer | undefined }
  | { id: number; op: 'paxos'; ok: boolean; state: Buffer }
  | { id: number; op: 'step'; reply: Buffer };

// Field numbers, as in replica.proto.
const CALL_OP = {
  apply: 3,
  merge: 4,
  read: 5,
  digest: 6,
  counterUpdate: 7,
  writeMany: 8,
  readRange: 9,
  paxos: 10,
  step: 11,
} as const;
const REPLY_OP = {
  apply: 2,
  merge: 3,
  read: 4,
  digest: 5,
  error: 6,
  counterUpdate: 7,
  writeMany: 8,
  readRange: 9,
  paxos: 10,
  step: 11,
} as const;
/** Each operation by its field number less the first's (the oneof's numbers are consecutive). */
const byField = <O extends string>(ops: Readonly<Record<O, number>>): O[] =>
  (Object.keys(ops) as O[]).sort((a, b) => ops[a] - ops[b]);
const CALL_OPS = byField(CALL_OP);
const REPLY_OPS = byField(REPLY_OP);
const STEP: Readonly<Record<WirePaxosStep, number>> = { prepare: 1, propose: 2, commit: 3 };
const STEP_OF = new Map<number, WirePaxosStep>(Object.entries(STEP).map(([k, n]) => [n, k as WirePaxosStep]));
const stepNumber = (s: WirePaxosStep | number): number => (typeof s === 'number' ? s : STEP[s]);

/**
 * What a call's deadline goes on the wire as: the ms left at `now` (at least 1), which
 * the receiver adds to its own clock, so that nodes' clocks need not agree (as gRPC's
 * grpc-timeout header).
 */
export const timeLeft = (deadline: number, now: number): number => Math.max(1, Math.ceil(deadline - now));

/** Bytes of a call's body (its operation's message). */
function callBodySize(c: WireCall): number {
  switch (c.op) {
    case 'apply':
      return (
        bytesField(c.key.length) +
        bytesField(c.value?.length ?? 0) +
        (c.value === null ? 2 : 0) +
        bytesField(c.context.length) +
        bytesField(c.requestId.length) +
        varintField(c.expiresAt)
      );
    case 'merge':
      return bytesField(c.key.length) + bytesField(c.record.length) + bytesField(Buffer.byteLength(c.hintFor));
    case 'read':
      return bytesField(c.key.length) + bytesField(Buffer.byteLength(c.hintFor));
    case 'digest':
      return bytesField(c.key.length);
    case 'counterUpdate':
      return bytesField(c.key.length) + sint64Field(c.amount) + bytesField(c.requestId.length);
    case 'writeMany':
      return (
        bytesField(c.parent.length) +
        c.ops.reduce((a, o) => a + messageField(subOpSize(o)), 0) +
        bytesField(c.requestId.length)
      );
    case 'readRange':
      return bytesField(c.parent.length) + optionalBytesField(c.after) + varintField(c.limit);
    case 'paxos':
      return (
        bytesField(c.key.length) +
        varintField(stepNumber(c.step)) +
        varintField(c.ballot) +
        bytesField(c.proposer.length) +
        bytesField(c.proposalId.length) +
        bytesField(c.value?.length ?? 0) +
        (c.value === null ? 2 : 0) +
        bytesField(c.base.length)
      );
    case 'step':
      return (
        bytesField(c.key.length) +
        varintField(c.kind) +
        bytesField(Buffer.byteLength(c.step)) +
        bytesField(c.arg.length)
      );
  }
}

/** A call's body: its operation's message, field by field. */
function writeCallBody(w: Writer, c: WireCall): void {
  // Field 1 is the key (the parent) in every request.
  w.bytes(1, 'key' in c ? c.key : c.parent);
  switch (c.op) {
    case 'apply':
      if (c.value !== null) w.bytes(2, c.value);
      else w.uint(3, 1);
      w.bytes(4, c.context);
      w.bytes(5, c.requestId);
      w.uint(6, c.expiresAt);
      break;
    case 'merge':
      w.bytes(2, c.record);
      w.string(3, c.hintFor, Buffer.byteLength(c.hintFor));
      break;
    case 'read':
      w.string(2, c.hintFor, Buffer.byteLength(c.hintFor));
      break;
    case 'counterUpdate':
      writeSint64(w, 2, c.amount);
      w.bytes(3, c.requestId);
      break;
    case 'writeMany':
      for (const o of c.ops) {
        w.message(2, subOpSize(o));
        writeSubOp(w, o);
      }
      w.bytes(3, c.requestId);
      break;
    case 'readRange':
      writeOptionalBytes(w, 2, c.after);
      w.uint(3, c.limit);
      break;
    case 'paxos':
      w.uint(2, stepNumber(c.step));
      w.uint(3, c.ballot);
      w.bytes(4, c.proposer);
      w.bytes(5, c.proposalId);
      if (c.value !== null) w.bytes(6, c.value);
      else w.uint(7, 1);
      w.bytes(8, c.base);
      break;
    case 'step':
      w.uint(2, c.kind);
      w.string(3, c.step, Buffer.byteLength(c.step));
      w.bytes(4, c.arg);
      break;
  }
}

function callLayout(now: number): ItemLayout<WireCall> {
  return {
    second: (c) => timeLeft(c.deadline, now),
    opField: (c) => CALL_OP[c.op],
    bodySize: callBodySize,
    writeBody: writeCallBody,
  };
}

const REPLY_LAYOUT: ItemLayout<WireReply> = {
  second: () => undefined,
  opField: (r) => REPLY_OP[r.op],
  bodySize: (r) => {
    switch (r.op) {
      case 'apply':
        return bytesField(r.record.length) + bytesField(r.context.length);
      case 'merge':
        return r.changed ? 2 : 0;
      case 'read':
        return r.record === undefined ? 0 : 2 + bytesField(r.record.length);
      case 'digest':
        return bytesField(r.digest.length);
      case 'error':
        return bytesField(Buffer.byteLength(r.code)) + bytesField(Buffer.byteLength(r.message));
      case 'counterUpdate':
        return bytesField(r.record.length) + bytesField(r.delta.length) + bytesField(Buffer.byteLength(r.value));
      case 'writeMany':
        return recordsSize(r.records);
      case 'readRange':
        return recordsSize(r.records) + optionalBytesField(r.next);
      case 'paxos':
        return (r.ok ? 2 : 0) + bytesField(r.state.length);
      case 'step':
        return bytesField(r.reply.length);
    }
  },
  writeBody: (w, r) => {
    switch (r.op) {
      case 'apply':
        w.bytes(1, r.record);
        w.bytes(2, r.context);
        break;
      case 'merge':
        w.uint(1, r.changed ? 1 : 0);
        break;
      case 'read':
        if (r.record !== undefined) {
          w.uint(1, 1);
          w.bytes(2, r.record);
        }
        break;
      case 'digest':
        w.bytes(1, r.digest);
        break;
      case 'error':
        w.string(1, r.code, Buffer.byteLength(r.code));
        w.string(2, r.message, Buffer.byteLength(r.message));
        break;
      case 'counterUpdate':
        w.bytes(1, r.record);
        w.bytes(2, r.delta);
        w.string(3, r.value, Buffer.byteLength(r.value));
        break;
      case 'writeMany':
        writeRecords(w, 1, r.records);
        break;
      case 'readRange':
        writeRecords(w, 1, r.records);
        writeOptionalBytes(w, 2, r.next);
        break;
      case 'paxos':
        w.uint(1, r.ok ? 1 : 0);
        w.bytes(2, r.state);
        break;
      case 'step':
        w.bytes(1, r.reply);
        break;
    }
  },
};

/** Bytes one call takes in a batch (ReplicaCalls field 1), sent at `now`. */
export const callSize = (c: WireCall, now = Date.now()): number => batchItemSize(callLayout(now), c);

/** ReplicaCalls holding `calls`, sent at `now`. */
export const encodeCalls = (calls: readonly WireCall[], now = Date.now()): Buffer =>
  encodeBatch(callLayout(now), calls);

/** Bytes one reply takes in a batch (ReplicaReplies field 1). */
export const replySize = (r: WireReply): number => batchItemSize(REPLY_LAYOUT, r);

/** ReplicaReplies holding `replies`. */
export const encodeReplies = (replies: readonly WireReply[]): Buffer => encodeBatch(REPLY_LAYOUT, replies);

/** A PaxosRequest's body. */
function readPaxos(id: number, deadline: number, b: Reader): WireCall {
  let key = EMPTY,
    step = 0,
    ballot = 0,
    proposer = EMPTY,
    proposalId = EMPTY,
    value = EMPTY,
    absent = false,
    base = EMPTY;
  eachField(b, (f, wire) => {
    if (f === 1 && wire === LEN) key = b.bytes();
    else if (f === 2 && wire === VARINT) step = readEnum(b);
    else if (f === 3 && wire === VARINT) ballot = b.varint();
    else if (f === 4 && wire === LEN) proposer = b.bytes();
    else if (f === 5 && wire === LEN) proposalId = b.bytes();
    else if (f === 6 && wire === LEN) value = b.bytes();
    else if (f === 7 && wire === VARINT) absent = b.varint() !== 0;
    else if (f === 8 && wire === LEN) base = b.bytes();
    else return false;
    return true;
  });
  const s = STEP_OF.get(step) ?? step;
  return { id, deadline, op: 'paxos', key, step: s, ballot, proposer, proposalId, base, value: absent ? null : value };
}

/** A StepRequest's body. */
function readStep(id: number, deadline: number, b: Reader): WireCall {
  let key = EMPTY,
    kind = 0,
    step = '',
    arg = EMPTY;
  eachField(b, (f, wire) => {
    if (f === 1 && wire === LEN) key = b.bytes();
    else if (f === 2 && wire === VARINT) kind = b.varint();
    else if (f === 3 && wire === LEN) step = b.string();
    else if (f === 4 && wire === LEN) arg = b.bytes();
    else return false;
    return true;
  });
  return { id, deadline, op: 'step', key, kind, step, arg };
}

/**
 * The ReplicaCalls in `buf`, received at `now` (deadlines are `now` plus the time left).
 * A call that names no operation this release knows decodes as 'unsupported', for the
 * server to refuse alone. Throws WireDecodeError when `buf` is not a batch of calls.
 */
export function decodeCalls(buf: Buffer, now = Date.now()): DecodedCall[] {
  return decodeBatch(
    buf,
    'call',
    3,
    11,
    ({ id, second, opField, body: b }): DecodedCall => {
      const deadline = now + second;
      if (opField === 0) return { id, deadline, op: 'unsupported' };
      const op = CALL_OPS[opField - 3]!;
      if (op === 'paxos') return readPaxos(id, deadline, b);
      if (op === 'step') return readStep(id, deadline, b);
      let key = EMPTY,
        value = EMPTY,
        tombstone = false,
        context = EMPTY,
        requestId = EMPTY,
        record = EMPTY,
        hintFor = '',
        expiresAt = 0;
      let amount = 0n,
        limit = 0,
        after: Buffer | undefined;
      const ops: WireSubOp[] = [];
      while (!b.done) {
        const t = b.tag(),
          f = t >>> 3,
          wire = t & 7;
        // Field numbers per message (replica.proto): key (a parent) is 1 everywhere.
        if (f === 1 && wire === LEN) key = b.bytes();
        else if (op === 'apply' && f === 2 && wire === LEN) value = b.bytes();
        else if (op === 'apply' && f === 3 && wire === VARINT) tombstone = b.varint() !== 0;
        else if (op === 'apply' && f === 4 && wire === LEN) context = b.bytes();
        else if (
          ((op === 'apply' && f === 5) || ((op === 'counterUpdate' || op === 'writeMany') && f === 3)) &&
          wire === LEN
        )
          requestId = b.bytes();
        else if (op === 'apply' && f === 6 && wire === VARINT) expiresAt = b.varint();
        else if (op === 'merge' && f === 2 && wire === LEN) record = b.bytes();
        else if (((op === 'merge' && f === 3) || (op === 'read' && f === 2)) && wire === LEN) hintFor = b.string();
        else if (op === 'counterUpdate' && f === 2 && wire === VARINT) amount = readSint64(b);
        else if (op === 'writeMany' && f === 2 && wire === LEN) ops.push(readSubOp(nestedReader(b)));
        else if (op === 'readRange' && f === 2 && wire === LEN) after = b.bytes();
        else if (op === 'readRange' && f === 3 && wire === VARINT) limit = b.varint();
        else b.skip(wire);
      }
      switch (op) {
        case 'apply':
          return { id, deadline, op, key, value: tombstone ? null : value, context, requestId, expiresAt };
        case 'merge':
          return { id, deadline, op, key, record, hintFor };
        case 'read':
          return { id, deadline, op, key, hintFor };
        case 'digest':
          return { id, deadline, op, key };
        case 'counterUpdate':
          return { id, deadline, op, key, amount, requestId };
        case 'writeMany':
          return { id, deadline, op, parent: key, ops, requestId };
        case 'readRange':
          return { id, deadline, op, parent: key, after, limit };
      }
    },
    { unknownOp: 'pass' },
  );
}

/** The ReplicaReplies in `buf`. Throws WireDecodeError when it is not one. */
export function decodeReplies(buf: Buffer): WireReply[] {
  return decodeBatch(buf, 'reply', 2, 11, ({ id, opField, body: b }): WireReply => {
    const op = REPLY_OPS[opField - 2]!;
    let first = EMPTY,
      second = EMPTY,
      third = EMPTY,
      flag = false,
      next: Buffer | undefined;
    const records: WireSubKeyRecord[] = [];
    const listed = op === 'writeMany' || op === 'readRange';
    while (!b.done) {
      const t = b.tag(),
        f = t >>> 3,
        wire = t & 7;
      if (f === 1 && wire === VARINT) flag = b.varint() !== 0;
      else if (listed && f === 1 && wire === LEN) records.push(readRecord(nestedReader(b)));
      else if (f === 1 && wire === LEN) first = b.bytes();
      else if (op === 'readRange' && f === 2 && wire === LEN) next = b.bytes();
      else if (f === 2 && wire === LEN) second = b.bytes();
      else if (f === 3 && wire === LEN) third = b.bytes();
      else b.skip(wire);
    }
    switch (op) {
      case 'apply':
        return { id, op, record: first, context: second };
      case 'merge':
        return { id, op, changed: flag };
      case 'read':
        return { id, op, record: flag ? second : undefined };
      case 'digest':
        return { id, op, digest: first };
      case 'error':
        return { id, op, code: first.toString('utf8'), message: second.toString('utf8') };
      case 'counterUpdate':
        return { id, op, record: first, delta: second, value: third.toString('utf8') };
      case 'writeMany':
        return { id, op, records };
      case 'readRange':
        return { id, op, records, next };
      case 'paxos':
        return { id, op, ok: flag, state: second };
      case 'step':
        return { id, op, reply: first };
    }
  });
}
