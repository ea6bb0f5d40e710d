/**
 * The KeyValue stream's messages (proto/ringkv/v1/kv.proto: KvCalls and KvReplies),
 * encoded and decoded by hand (protobuf-bytes.ts), as the replica stream's are.
 *
 * Owns: the byte layout. Must not: know what the calls do (kv-service.ts runs them).
 */
import { EMPTY, LEN, Reader, VARINT, WireDecodeError, Writer, bytesField, expect, messageField, varintField } from './protobuf-bytes.js';
import { timeLeft } from './replica-codec.js';

export type KvCall =
  | { id: number; deadline: number; op: 'put'; key: Buffer; value: Buffer; context: Buffer; w: number }
  | { id: number; deadline: number; op: 'get'; key: Buffer; r: number }
  | { id: number; deadline: number; op: 'delete'; key: Buffer; context: Buffer; w: number };

export type KvReply =
  | { id: number; op: 'put'; context: Buffer }
  | { id: number; op: 'get'; values: Buffer[]; context: Buffer; found: boolean }
  | { id: number; op: 'delete' }
  | { id: number; op: 'error'; code: number; details: string };

const CALL_OP = { put: 3, get: 4, delete: 5 } as const;
const REPLY_OP = { put: 2, get: 3, delete: 4, error: 5 } as const;
const CALL_OPS = ['put', 'get', 'delete'] as const;
const REPLY_OPS = ['put', 'get', 'delete', 'error'] as const;

function callBody(c: KvCall): number {
  switch (c.op) {
    case 'put':
      return bytesField(c.key.length) + bytesField(c.value.length) + bytesField(c.context.length) + varintField(c.w);
    case 'get':
      return bytesField(c.key.length) + varintField(c.r);
    case 'delete':
      return bytesField(c.key.length) + bytesField(c.context.length) + varintField(c.w);
  }
}

export function kvCallSize(c: KvCall, now = Date.now()): number {
  return messageField(varintField(c.id) + varintField(timeLeft(c.deadline, now)) + messageField(callBody(c)));
}

export function encodeKvCalls(calls: readonly KvCall[], now = Date.now()): Buffer {
  const bodies = calls.map(callBody);
  const left = calls.map((c) => timeLeft(c.deadline, now));
  const sizes = calls.map((c, i) => varintField(c.id) + varintField(left[i]!) + messageField(bodies[i]!));
  const w = new Writer(Buffer.allocUnsafe(sizes.reduce((a, s) => a + messageField(s), 0)));
  calls.forEach((c, i) => {
    w.message(1, sizes[i]!);
    w.uint(1, c.id);
    w.uint(2, left[i]!);
    w.message(CALL_OP[c.op], bodies[i]!);
    w.bytes(1, c.key);
    if (c.op === 'put') {
      w.bytes(2, c.value);
      w.bytes(3, c.context);
      w.uint(4, c.w);
    } else if (c.op === 'get') w.uint(2, c.r);
    else {
      w.bytes(2, c.context);
      w.uint(3, c.w);
    }
  });
  return w.buf;
}

function replyBody(r: KvReply): number {
  switch (r.op) {
    case 'put':
      return bytesField(r.context.length);
    case 'get':
      // Every value is written, even an empty one: a repeated field keeps its count.
      return r.values.reduce((a, v) => a + messageField(v.length), 0) + bytesField(r.context.length) + (r.found ? 2 : 0);
    case 'delete':
      return 0;
    case 'error':
      return varintField(r.code) + bytesField(Buffer.byteLength(r.details));
  }
}

export function kvReplySize(r: KvReply): number {
  return messageField(varintField(r.id) + messageField(replyBody(r)));
}

export function encodeKvReplies(replies: readonly KvReply[]): Buffer {
  const bodies = replies.map(replyBody);
  const sizes = replies.map((r, i) => varintField(r.id) + messageField(bodies[i]!));
  const w = new Writer(Buffer.allocUnsafe(sizes.reduce((a, s) => a + messageField(s), 0)));
  replies.forEach((r, i) => {
    w.message(1, sizes[i]!);
    w.uint(1, r.id);
    w.message(REPLY_OP[r.op], bodies[i]!);
    if (r.op === 'put') w.bytes(1, r.context);
    else if (r.op === 'get') {
      for (const v of r.values) {
        w.message(1, v.length);
        w.raw(v);
      }
      w.bytes(2, r.context);
      w.uint(3, r.found ? 1 : 0);
    } else if (r.op === 'error') {
      w.uint(1, r.code);
      w.string(2, r.details, Buffer.byteLength(r.details));
    }
  });
  return w.buf;
}

export function decodeKvCalls(buf: Buffer, now = Date.now()): KvCall[] {
  const out: KvCall[] = [];
  const r = new Reader(buf, 0, buf.length);
  while (!r.done) {
    const t = r.tag();
    if (t >>> 3 !== 1) r.skip(t & 7);
    else {
      expect(t & 7, LEN, 'a call');
      const end = r.nested();
      out.push(decodeCall(new Reader(buf, r.pos, end), now));
      r.pos = end;
    }
  }
  return out;
}

function decodeCall(r: Reader, now: number): KvCall {
  let id = 0, deadline = now, op: (typeof CALL_OPS)[number] | undefined, body = 0, bodyEnd = 0;
  while (!r.done) {
    const t = r.tag(), f = t >>> 3, wire = t & 7;
    if (f === 1 && wire === VARINT) id = r.varint();
    else if (f === 2 && wire === VARINT) deadline = now + r.varint();
    else if (f >= 3 && f <= 5 && wire === LEN) {
      op = CALL_OPS[f - 3];
      bodyEnd = r.nested();
      body = r.pos;
      r.pos = bodyEnd;
    } else r.skip(wire);
  }
  if (op === undefined) throw new WireDecodeError(`call ${id} names no operation`);
  const b = new Reader(r.buf, body, bodyEnd);
  let key = EMPTY, value = EMPTY, context = EMPTY, quorum = 0;
  while (!b.done) {
    const t = b.tag(), f = t >>> 3, wire = t & 7;
    if (f === 1 && wire === LEN) key = b.bytes();
    else if (op === 'put' && f === 2 && wire === LEN) value = b.bytes();
    else if (((op === 'put' && f === 3) || (op === 'delete' && f === 2)) && wire === LEN) context = b.bytes();
    else if (((op === 'put' && f === 4) || (op === 'get' && f === 2) || (op === 'delete' && f === 3)) && wire === VARINT) quorum = b.varint();
    else b.skip(wire);
  }
  if (op === 'put') return { id, deadline, op, key, value, context, w: quorum };
  if (op === 'get') return { id, deadline, op, key, r: quorum };
  return { id, deadline, op, key, context, w: quorum };
}

export function decodeKvReplies(buf: Buffer): KvReply[] {
  const out: KvReply[] = [];
  const r = new Reader(buf, 0, buf.length);
  while (!r.done) {
    const t = r.tag();
    if (t >>> 3 !== 1) r.skip(t & 7);
    else {
      expect(t & 7, LEN, 'a reply');
      const end = r.nested();
      out.push(decodeReply(new Reader(buf, r.pos, end)));
      r.pos = end;
    }
  }
  return out;
}

function decodeReply(r: Reader): KvReply {
  let id = 0, op: (typeof REPLY_OPS)[number] | undefined, body = 0, bodyEnd = 0;
  while (!r.done) {
    const t = r.tag(), f = t >>> 3, wire = t & 7;
    if (f === 1 && wire === VARINT) id = r.varint();
    else if (f >= 2 && f <= 5 && wire === LEN) {
      op = REPLY_OPS[f - 2];
      bodyEnd = r.nested();
      body = r.pos;
      r.pos = bodyEnd;
    } else r.skip(wire);
  }
  if (op === undefined) throw new WireDecodeError(`reply ${id} names no result`);
  const b = new Reader(r.buf, body, bodyEnd);
  const values: Buffer[] = [];
  let first = EMPTY, second = EMPTY, number = 0, flag = false;
  while (!b.done) {
    const t = b.tag(), f = t >>> 3, wire = t & 7;
    if (op === 'get' && f === 1 && wire === LEN) values.push(b.bytes());
    else if (f === 1 && wire === LEN) first = b.bytes();
    else if (f === 1 && wire === VARINT) number = b.varint();
    else if (f === 2 && wire === LEN) second = b.bytes();
    else if (f === 3 && wire === VARINT) flag = b.varint() !== 0;
    else b.skip(wire);
  }
  switch (op) {
    case 'put':
      return { id, op, context: first };
    case 'get':
      return { id, op, values, context: second, found: flag };
    case 'delete':
      return { id, op };
    case 'error':
      return { id, op, code: number, details: second.toString('utf8') };
  }
}
