/**
 * The Replica service's stream messages (proto/ringkv/internal/v1/replica.proto:
 * ReplicaCalls and ReplicaReplies), encoded and decoded by hand rather than through
 * proto-loader's dynamic objects: one exact-size buffer per batch, and fields decoded as
 * views of the received buffer, not copies. The bytes are plain protobuf, so grpcurl and
 * reflection describe them truly. (bench/replica-codec.ts measures the difference.)
 *
 * Owns: the byte layout of a batch. Must not: know what the calls mean (replica-wire.ts
 * maps them to ReplicaApi and LocalReplica).
 */

import { EMPTY, LEN, Reader, VARINT, WireDecodeError, Writer, bytesField, expect, messageField, varintField } from './protobuf-bytes.js';

export { WireDecodeError } from './protobuf-bytes.js';

export type WireCall =
  | { id: number; deadline: number; op: 'apply'; key: Buffer; value: Buffer | null; context: Buffer }
  | { id: number; deadline: number; op: 'merge'; key: Buffer; record: Buffer; hintFor: string }
  | { id: number; deadline: number; op: 'read'; key: Buffer; hintFor: string }
  | { id: number; deadline: number; op: 'digest'; key: Buffer };

export type WireReply =
  | { id: number; op: 'apply'; record: Buffer; context: Buffer }
  | { id: number; op: 'merge'; changed: boolean }
  | { id: number; op: 'read'; record: Buffer | undefined }
  | { id: number; op: 'digest'; digest: Buffer }
  | { id: number; op: 'error'; code: string; message: string };

// Field numbers, as in replica.proto.
const CALL_OP = { apply: 3, merge: 4, read: 5, digest: 6 } as const;
const REPLY_OP = { apply: 2, merge: 3, read: 4, digest: 5, error: 6 } as const;
function callBody(c: WireCall): number {
  switch (c.op) {
    case 'apply':
      return bytesField(c.key.length) + bytesField(c.value?.length ?? 0) + (c.value === null ? 2 : 0) + bytesField(c.context.length);
    case 'merge':
      return bytesField(c.key.length) + bytesField(c.record.length) + bytesField(Buffer.byteLength(c.hintFor));
    case 'read':
      return bytesField(c.key.length) + bytesField(Buffer.byteLength(c.hintFor));
    case 'digest':
      return bytesField(c.key.length);
  }
}

/**
 * What a call's deadline goes on the wire as: the ms left at `now` (at least 1), which
 * the receiver adds to its own clock, so that nodes' clocks need not agree (as gRPC's
 * grpc-timeout header).
 */
export const timeLeft = (deadline: number, now: number): number => Math.max(1, Math.ceil(deadline - now));

/** Bytes one call takes in a batch (ReplicaCalls field 1), sent at `now`. */
export function callSize(c: WireCall, now = Date.now()): number {
  const body = callBody(c);
  return messageField(varintField(c.id) + varintField(timeLeft(c.deadline, now)) + messageField(body));
}

/** ReplicaCalls holding `calls`, sent at `now`. */
export function encodeCalls(calls: readonly WireCall[], now = Date.now()): Buffer {
  const bodies = calls.map(callBody);
  const left = calls.map((c) => timeLeft(c.deadline, now));
  const sizes = calls.map((c, i) => varintField(c.id) + varintField(left[i]!) + messageField(bodies[i]!));
  const w = new Writer(Buffer.allocUnsafe(sizes.reduce((a, s) => a + messageField(s), 0)));
  calls.forEach((c, i) => {
    w.message(1, sizes[i]!);
    w.uint(1, c.id);
    w.uint(2, left[i]!);
    w.message(CALL_OP[c.op], bodies[i]!);
    switch (c.op) {
      case 'apply':
        w.bytes(1, c.key);
        if (c.value !== null) w.bytes(2, c.value);
        else w.uint(3, 1);
        w.bytes(4, c.context);
        break;
      case 'merge':
        w.bytes(1, c.key);
        w.bytes(2, c.record);
        w.string(3, c.hintFor, Buffer.byteLength(c.hintFor));
        break;
      case 'read':
        w.bytes(1, c.key);
        w.string(2, c.hintFor, Buffer.byteLength(c.hintFor));
        break;
      case 'digest':
        w.bytes(1, c.key);
        break;
    }
  });
  return w.buf;
}

function replyBody(r: WireReply): number {
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
  }
}

/** Bytes one reply takes in a batch (ReplicaReplies field 1). */
export function replySize(r: WireReply): number {
  return messageField(varintField(r.id) + messageField(replyBody(r)));
}

/** ReplicaReplies holding `replies`. */
export function encodeReplies(replies: readonly WireReply[]): Buffer {
  const bodies = replies.map(replyBody);
  const sizes = replies.map((r, i) => varintField(r.id) + messageField(bodies[i]!));
  const w = new Writer(Buffer.allocUnsafe(sizes.reduce((a, s) => a + messageField(s), 0)));
  replies.forEach((r, i) => {
    w.message(1, sizes[i]!);
    w.uint(1, r.id);
    w.message(REPLY_OP[r.op], bodies[i]!);
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
    }
  });
  return w.buf;
}

const CALL_OPS = ['apply', 'merge', 'read', 'digest'] as const;
const REPLY_OPS = ['apply', 'merge', 'read', 'digest', 'error'] as const;

/** The ReplicaCalls in `buf`, received at `now` (deadlines are `now` plus the time left). Throws WireDecodeError when it is not one. */
export function decodeCalls(buf: Buffer, now = Date.now()): WireCall[] {
  const out: WireCall[] = [];
  const r = new Reader(buf, 0, buf.length);
  while (!r.done) {
    const t = r.tag();
    if (t >>> 3 !== 1) r.skip(t & 7);
    else {
      expect(t & 7, LEN, 'a call');
      const end = r.nested();
      out.push(decodeCall(r, end, now));
      r.pos = end;
    }
  }
  return out;
}

function decodeCall(outer: Reader, end: number, now: number): WireCall {
  const r = new Reader(outer.buf, outer.pos, end);
  let id = 0, deadline = now, op: (typeof CALL_OPS)[number] | undefined, body = 0, bodyEnd = 0;
  while (!r.done) {
    const t = r.tag(), f = t >>> 3, wire = t & 7;
    if (f === 1 && wire === VARINT) id = r.varint();
    else if (f === 2 && wire === VARINT) deadline = now + r.varint();
    else if (f >= 3 && f <= 6 && wire === LEN) {
      op = CALL_OPS[f - 3];
      bodyEnd = r.nested();
      body = r.pos;
      r.pos = bodyEnd;
    } else r.skip(wire);
  }
  if (op === undefined) throw new WireDecodeError(`call ${id} names no operation`);
  const b = new Reader(r.buf, body, bodyEnd);
  let key = EMPTY, value = EMPTY, tombstone = false, context = EMPTY, record = EMPTY, hintFor = '';
  while (!b.done) {
    const t = b.tag(), f = t >>> 3, wire = t & 7;
    // Field numbers per message (replica.proto): key is 1 everywhere.
    if (f === 1 && wire === LEN) key = b.bytes();
    else if (op === 'apply' && f === 2 && wire === LEN) value = b.bytes();
    else if (op === 'apply' && f === 3 && wire === VARINT) tombstone = b.varint() !== 0;
    else if (op === 'apply' && f === 4 && wire === LEN) context = b.bytes();
    else if (op === 'merge' && f === 2 && wire === LEN) record = b.bytes();
    else if (((op === 'merge' && f === 3) || (op === 'read' && f === 2)) && wire === LEN) hintFor = b.string();
    else b.skip(wire);
  }
  switch (op) {
    case 'apply':
      return { id, deadline, op, key, value: tombstone ? null : value, context };
    case 'merge':
      return { id, deadline, op, key, record, hintFor };
    case 'read':
      return { id, deadline, op, key, hintFor };
    case 'digest':
      return { id, deadline, op, key };
  }
}

/** The ReplicaReplies in `buf`. Throws WireDecodeError when it is not one. */
export function decodeReplies(buf: Buffer): WireReply[] {
  const out: WireReply[] = [];
  const r = new Reader(buf, 0, buf.length);
  while (!r.done) {
    const t = r.tag();
    if (t >>> 3 !== 1) r.skip(t & 7);
    else {
      expect(t & 7, LEN, 'a reply');
      const end = r.nested();
      out.push(decodeReply(r, end));
      r.pos = end;
    }
  }
  return out;
}

function decodeReply(outer: Reader, end: number): WireReply {
  const r = new Reader(outer.buf, outer.pos, end);
  let id = 0, op: (typeof REPLY_OPS)[number] | undefined, body = 0, bodyEnd = 0;
  while (!r.done) {
    const t = r.tag(), f = t >>> 3, wire = t & 7;
    if (f === 1 && wire === VARINT) id = r.varint();
    else if (f >= 2 && f <= 6 && wire === LEN) {
      op = REPLY_OPS[f - 2];
      bodyEnd = r.nested();
      body = r.pos;
      r.pos = bodyEnd;
    } else r.skip(wire);
  }
  if (op === undefined) throw new WireDecodeError(`reply ${id} names no result`);
  const b = new Reader(r.buf, body, bodyEnd);
  let first = EMPTY, second = EMPTY, flag = false;
  while (!b.done) {
    const t = b.tag(), f = t >>> 3, wire = t & 7;
    if (f === 1 && wire === VARINT) flag = b.varint() !== 0;
    else if (f === 1 && wire === LEN) first = b.bytes();
    else if (f === 2 && wire === LEN) second = b.bytes();
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
  }
}
