/**
 * The KeyValue stream's messages (proto/ringkv/v1/kv.proto: KvCalls and KvReplies),
 * encoded and decoded by hand (protobuf-bytes.ts), as the replica stream's are. The field
 * numbers are kv.proto's, checked field by field against protobufjs by
 * test/unit/transport/kv-codec.test.ts.
 *
 * Owns: the byte layout. Must not: know what the calls do (kv-service.ts runs them).
 */
import { EMPTY, LEN, VARINT, batchItemSize, bytesField, decodeBatch, encodeBatch, messageField, varintField, type ItemLayout } from './protobuf-bytes.js';
import { timeLeft } from './replica-codec.js';

export type KvCall =
  | { id: number; deadline: number; op: 'put'; key: Buffer; value: Buffer; context: Buffer; w: number; requestId: Buffer }
  | { id: number; deadline: number; op: 'get'; key: Buffer; r: number }
  | { id: number; deadline: number; op: 'delete'; key: Buffer; context: Buffer; w: number; requestId: Buffer };

export type KvReply =
  | { id: number; op: 'put'; context: Buffer }
  | { id: number; op: 'get'; values: Buffer[]; context: Buffer; found: boolean }
  | { id: number; op: 'delete' }
  | { id: number; op: 'error'; code: number; details: string };

const CALL_OP = { put: 3, get: 4, delete: 5 } as const;
const REPLY_OP = { put: 2, get: 3, delete: 4, error: 5 } as const;
const CALL_OPS = ['put', 'get', 'delete'] as const;
const REPLY_OPS = ['put', 'get', 'delete', 'error'] as const;

function callLayout(now: number): ItemLayout<KvCall> {
  return {
    second: (c) => timeLeft(c.deadline, now),
    opField: (c) => CALL_OP[c.op],
    bodySize: (c) => {
      switch (c.op) {
        case 'put':
          return bytesField(c.key.length) + bytesField(c.value.length) + bytesField(c.context.length) + varintField(c.w) + bytesField(c.requestId.length);
        case 'get':
          return bytesField(c.key.length) + varintField(c.r);
        case 'delete':
          return bytesField(c.key.length) + bytesField(c.context.length) + varintField(c.w) + bytesField(c.requestId.length);
      }
    },
    writeBody: (w, c) => {
      w.bytes(1, c.key);
      if (c.op === 'put') {
        w.bytes(2, c.value);
        w.bytes(3, c.context);
        w.uint(4, c.w);
        w.bytes(5, c.requestId);
      } else if (c.op === 'get') w.uint(2, c.r);
      else {
        w.bytes(2, c.context);
        w.uint(3, c.w);
        w.bytes(4, c.requestId);
      }
    },
  };
}

const REPLY_LAYOUT: ItemLayout<KvReply> = {
  second: () => undefined,
  opField: (r) => REPLY_OP[r.op],
  bodySize: (r) => {
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
  },
  writeBody: (w, r) => {
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
  },
};

export const kvCallSize = (c: KvCall, now = Date.now()): number => batchItemSize(callLayout(now), c);
export const encodeKvCalls = (calls: readonly KvCall[], now = Date.now()): Buffer => encodeBatch(callLayout(now), calls);
export const kvReplySize = (r: KvReply): number => batchItemSize(REPLY_LAYOUT, r);
export const encodeKvReplies = (replies: readonly KvReply[]): Buffer => encodeBatch(REPLY_LAYOUT, replies);

/** The KvCalls in `buf`, received at `now`. Throws WireDecodeError when it is not one. */
export function decodeKvCalls(buf: Buffer, now = Date.now()): KvCall[] {
  return decodeBatch(buf, 'call', 3, 5, ({ id, second, opField, body: b }): KvCall => {
    const op = CALL_OPS[opField - 3]!;
    const deadline = now + second;
    let key = EMPTY, value = EMPTY, context = EMPTY, requestId = EMPTY, quorum = 0;
    while (!b.done) {
      const t = b.tag(), f = t >>> 3, wire = t & 7;
      if (f === 1 && wire === LEN) key = b.bytes();
      else if (op === 'put' && f === 2 && wire === LEN) value = b.bytes();
      else if (((op === 'put' && f === 3) || (op === 'delete' && f === 2)) && wire === LEN) context = b.bytes();
      else if (((op === 'put' && f === 4) || (op === 'get' && f === 2) || (op === 'delete' && f === 3)) && wire === VARINT) quorum = b.varint();
      else if (((op === 'put' && f === 5) || (op === 'delete' && f === 4)) && wire === LEN) requestId = b.bytes();
      else b.skip(wire);
    }
    if (op === 'put') return { id, deadline, op, key, value, context, w: quorum, requestId };
    if (op === 'get') return { id, deadline, op, key, r: quorum };
    return { id, deadline, op, key, context, w: quorum, requestId };
  });
}

/** The KvReplies in `buf`. Throws WireDecodeError when it is not one. */
export function decodeKvReplies(buf: Buffer): KvReply[] {
  return decodeBatch(buf, 'reply', 2, 5, ({ id, opField, body: b }): KvReply => {
    const op = REPLY_OPS[opField - 2]!;
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
  });
}
