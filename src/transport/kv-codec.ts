/**
 * The KeyValue stream's messages (proto/ringkv/v1/kv.proto: KvCalls and KvReplies),
 * encoded and decoded by hand (protobuf-bytes.ts), as the replica stream's are. The field
 * numbers are kv.proto's, checked field by field against protobufjs by
 * test/unit/transport/kv-codec.test.ts.
 *
 * Owns: the byte layout. Must not: know what the calls do (kv-service.ts runs them).
 */
import {
  EMPTY,
  LEN,
  VARINT,
  batchItemSize,
  bytesField,
  decodeBatch,
  encodeBatch,
  messageField,
  readSint64,
  sint64Field,
  varintField,
  writeSint64,
  type ItemLayout,
  type Reader,
} from './protobuf-bytes.js';
import { timeLeft } from './replica-codec.js';

/** What a put and a delete may ask of their acknowledgements (kv.proto's node_confirms, zone_confirms, pw). */
export interface Confirms {
  nodeConfirms: number;
  zoneConfirms: number;
  pw: number;
}

export type KvCall =
  | ({
      id: number;
      deadline: number;
      op: 'put';
      key: Buffer;
      value: Buffer;
      context: Buffer;
      w: number;
      requestId: Buffer;
      bucket: string;
      ttlMs: number;
    } & Confirms)
  | { id: number; deadline: number; op: 'get'; key: Buffer; r: number; bucket: string }
  | ({
      id: number;
      deadline: number;
      op: 'delete';
      key: Buffer;
      context: Buffer;
      w: number;
      requestId: Buffer;
      bucket: string;
    } & Confirms)
  // The amount as sent (any sint64): the coordinator refuses what is past its bound (KV_BAD_AMOUNT).
  | ({
      id: number;
      deadline: number;
      op: 'counterUpdate';
      key: Buffer;
      amount: bigint;
      w: number;
      requestId: Buffer;
      bucket: string;
    } & Confirms)
  // A compare-and-set (kv.proto's PutIfRequest, DeleteIfRequest).
  | {
      id: number;
      deadline: number;
      op: 'putIf';
      key: Buffer;
      value: Buffer;
      context: Buffer;
      bucket: string;
      requestId: Buffer;
    }
  | { id: number; deadline: number; op: 'deleteIf'; key: Buffer; context: Buffer; bucket: string; requestId: Buffer };

/** A call as the server decodes it: one naming no operation this release knows is 'unsupported', refused alone. */
export type DecodedKvCall = KvCall | { id: number; deadline: number; op: 'unsupported'; bucket: '' };

const confirmsSize = (c: Confirms): number =>
  varintField(c.nodeConfirms) + varintField(c.zoneConfirms) + varintField(c.pw);

export type KvReply =
  | { id: number; op: 'put'; context: Buffer }
  | { id: number; op: 'get'; values: Buffer[]; context: Buffer; found: boolean }
  | { id: number; op: 'delete' }
  // casNotApplied: a putIf's or deleteIf's error that proves it did not apply (kv.proto's KvError).
  | { id: number; op: 'error'; code: number; details: string; casNotApplied?: boolean }
  // The counter's value after the update, in decimal (it may pass 2^53).
  | { id: number; op: 'counterUpdate'; value: string }
  // A putIf's or deleteIf's answer (PutIfResponse).
  | { id: number; op: 'putIf'; applied: boolean; context: Buffer; found: boolean; value: Buffer };

const CALL_OP = { put: 3, get: 4, delete: 5, counterUpdate: 6, putIf: 7, deleteIf: 8 } as const;
const REPLY_OP = { put: 2, get: 3, delete: 4, error: 5, counterUpdate: 6, putIf: 7 } as const;
const CALL_OPS = ['put', 'get', 'delete', 'counterUpdate', 'putIf', 'deleteIf'] as const;
const REPLY_OPS = ['put', 'get', 'delete', 'error', 'counterUpdate', 'putIf'] as const;

function callLayout(now: number): ItemLayout<KvCall> {
  return {
    second: (c) => timeLeft(c.deadline, now),
    opField: (c) => CALL_OP[c.op],
    bodySize: (c) => {
      switch (c.op) {
        case 'put':
          return (
            bytesField(c.key.length) +
            bytesField(c.value.length) +
            bytesField(c.context.length) +
            varintField(c.w) +
            bytesField(c.requestId.length) +
            bytesField(Buffer.byteLength(c.bucket)) +
            varintField(c.ttlMs) +
            confirmsSize(c)
          );
        case 'get':
          return bytesField(c.key.length) + varintField(c.r) + bytesField(Buffer.byteLength(c.bucket));
        case 'delete':
          return (
            bytesField(c.key.length) +
            bytesField(c.context.length) +
            varintField(c.w) +
            bytesField(c.requestId.length) +
            bytesField(Buffer.byteLength(c.bucket)) +
            confirmsSize(c)
          );
        case 'counterUpdate':
          return (
            bytesField(Buffer.byteLength(c.bucket)) +
            bytesField(c.key.length) +
            sint64Field(c.amount) +
            bytesField(c.requestId.length) +
            varintField(c.w) +
            confirmsSize(c)
          );
        case 'putIf':
          return (
            bytesField(c.key.length) +
            bytesField(c.value.length) +
            bytesField(c.context.length) +
            bytesField(Buffer.byteLength(c.bucket)) +
            bytesField(c.requestId.length)
          );
        case 'deleteIf':
          return (
            bytesField(c.key.length) +
            bytesField(c.context.length) +
            bytesField(Buffer.byteLength(c.bucket)) +
            bytesField(c.requestId.length)
          );
      }
    },
    writeBody: (w, c) => {
      if (c.op === 'putIf' || c.op === 'deleteIf') {
        // PutIfRequest; a DeleteIfRequest's fields are one lower from its context on (no value).
        w.bytes(1, c.key);
        const shift = c.op === 'deleteIf' ? 1 : 0;
        if (c.op === 'putIf') w.bytes(2, c.value);
        w.bytes(3 - shift, c.context);
        w.string(4 - shift, c.bucket, Buffer.byteLength(c.bucket));
        w.bytes(5 - shift, c.requestId);
        return;
      }
      if (c.op === 'counterUpdate') {
        // CounterUpdateRequest: its bucket comes first.
        w.string(1, c.bucket, Buffer.byteLength(c.bucket));
        w.bytes(2, c.key);
        writeSint64(w, 3, c.amount);
        w.bytes(4, c.requestId);
        w.uint(5, c.w);
        w.uint(6, c.nodeConfirms);
        w.uint(7, c.zoneConfirms);
        w.uint(8, c.pw);
        return;
      }
      w.bytes(1, c.key);
      if (c.op === 'put') {
        w.bytes(2, c.value);
        w.bytes(3, c.context);
        w.uint(4, c.w);
        w.bytes(5, c.requestId);
        w.string(6, c.bucket, Buffer.byteLength(c.bucket));
        w.uint(7, c.ttlMs);
        w.uint(8, c.nodeConfirms);
        w.uint(9, c.zoneConfirms);
        w.uint(10, c.pw);
      } else if (c.op === 'get') {
        w.uint(2, c.r);
        w.string(3, c.bucket, Buffer.byteLength(c.bucket));
      } else {
        w.bytes(2, c.context);
        w.uint(3, c.w);
        w.bytes(4, c.requestId);
        w.string(5, c.bucket, Buffer.byteLength(c.bucket));
        w.uint(6, c.nodeConfirms);
        w.uint(7, c.zoneConfirms);
        w.uint(8, c.pw);
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
        return (
          r.values.reduce((a, v) => a + messageField(v.length), 0) + bytesField(r.context.length) + (r.found ? 2 : 0)
        );
      case 'delete':
        return 0;
      case 'error':
        return varintField(r.code) + bytesField(Buffer.byteLength(r.details)) + (r.casNotApplied === true ? 2 : 0);
      case 'counterUpdate':
        return bytesField(Buffer.byteLength(r.value));
      case 'putIf':
        return (r.applied ? 2 : 0) + bytesField(r.context.length) + (r.found ? 2 : 0) + bytesField(r.value.length);
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
      w.uint(3, r.casNotApplied === true ? 1 : 0);
    } else if (r.op === 'counterUpdate') w.string(1, r.value, Buffer.byteLength(r.value));
    else if (r.op === 'putIf') {
      w.uint(1, r.applied ? 1 : 0);
      w.bytes(2, r.context);
      w.uint(3, r.found ? 1 : 0);
      w.bytes(4, r.value);
    }
  },
};

export const kvCallSize = (c: KvCall, now = Date.now()): number => batchItemSize(callLayout(now), c);
export const encodeKvCalls = (calls: readonly KvCall[], now = Date.now()): Buffer =>
  encodeBatch(callLayout(now), calls);
export const kvReplySize = (r: KvReply): number => batchItemSize(REPLY_LAYOUT, r);
export const encodeKvReplies = (replies: readonly KvReply[]): Buffer => encodeBatch(REPLY_LAYOUT, replies);

/**
 * The KvCalls in `buf`, received at `now`. A call that names no operation this release
 * knows decodes as 'unsupported', for the service to refuse alone. Throws
 * WireDecodeError when `buf` is not a batch of calls.
 */
export function decodeKvCalls(buf: Buffer, now = Date.now()): DecodedKvCall[] {
  return decodeBatch(
    buf,
    'call',
    3,
    8,
    ({ id, second, opField, body: b }): DecodedKvCall => {
      const deadline = now + second;
      if (opField === 0) return { id, deadline, op: 'unsupported', bucket: '' };
      const op = CALL_OPS[opField - 3]!;
      if (op === 'counterUpdate') return counterUpdateCall(id, deadline, b);
      if (op === 'putIf' || op === 'deleteIf') return casCall(id, deadline, op, b);
      let key = EMPTY,
        value = EMPTY,
        context = EMPTY,
        requestId = EMPTY,
        quorum = 0,
        bucket = '',
        ttlMs = 0,
        nodeConfirms = 0,
        zoneConfirms = 0,
        pw = 0;
      // A delete's fields up to its bucket are one lower than a put's (no value), and its confirms two (no ttl_ms).
      const shift = op === 'delete' ? 1 : 0,
        confirms = op === 'delete' ? 6 : 8;
      while (!b.done) {
        const t = b.tag(),
          f = t >>> 3,
          wire = t & 7;
        if (f === 1 && wire === LEN) key = b.bytes();
        else if (op === 'get') {
          if (f === 2 && wire === VARINT) quorum = b.varint();
          else if (f === 3 && wire === LEN) bucket = b.string();
          else b.skip(wire);
        } else if (op === 'put' && f === 2 && wire === LEN) value = b.bytes();
        else if (f + shift === 3 && wire === LEN) context = b.bytes();
        else if (f + shift === 4 && wire === VARINT) quorum = b.varint();
        else if (f + shift === 5 && wire === LEN) requestId = b.bytes();
        else if (f + shift === 6 && wire === LEN) bucket = b.string();
        else if (op === 'put' && f === 7 && wire === VARINT) ttlMs = b.varint();
        else if (f === confirms && wire === VARINT) nodeConfirms = b.varint();
        else if (f === confirms + 1 && wire === VARINT) zoneConfirms = b.varint();
        else if (f === confirms + 2 && wire === VARINT) pw = b.varint();
        else b.skip(wire);
      }
      if (op === 'put')
        return {
          id,
          deadline,
          op,
          key,
          value,
          context,
          w: quorum,
          requestId,
          bucket,
          ttlMs,
          nodeConfirms,
          zoneConfirms,
          pw,
        };
      if (op === 'get') return { id, deadline, op, key, r: quorum, bucket };
      return { id, deadline, op, key, context, w: quorum, requestId, bucket, nodeConfirms, zoneConfirms, pw };
    },
    { unknownOp: 'pass' },
  );
}

/** A CounterUpdateRequest's body (kv.proto). */
function counterUpdateCall(id: number, deadline: number, b: Reader): KvCall {
  let key = EMPTY,
    requestId = EMPTY,
    bucket = '',
    amount = 0n,
    w = 0,
    nodeConfirms = 0,
    zoneConfirms = 0,
    pw = 0;
  while (!b.done) {
    const t = b.tag(),
      f = t >>> 3,
      wire = t & 7;
    if (f === 1 && wire === LEN) bucket = b.string();
    else if (f === 2 && wire === LEN) key = b.bytes();
    else if (f === 3 && wire === VARINT) amount = readSint64(b);
    else if (f === 4 && wire === LEN) requestId = b.bytes();
    else if (f === 5 && wire === VARINT) w = b.varint();
    else if (f === 6 && wire === VARINT) nodeConfirms = b.varint();
    else if (f === 7 && wire === VARINT) zoneConfirms = b.varint();
    else if (f === 8 && wire === VARINT) pw = b.varint();
    else b.skip(wire);
  }
  return { id, deadline, op: 'counterUpdate', key, amount, requestId, w, bucket, nodeConfirms, zoneConfirms, pw };
}

/** A PutIfRequest's or DeleteIfRequest's body (kv.proto): a DeleteIfRequest's fields are one lower from its context on. */
function casCall(id: number, deadline: number, op: 'putIf' | 'deleteIf', b: Reader): KvCall {
  let key = EMPTY,
    value = EMPTY,
    context = EMPTY,
    requestId = EMPTY,
    bucket = '';
  const shift = op === 'deleteIf' ? 1 : 0;
  while (!b.done) {
    const t = b.tag(),
      f = t >>> 3,
      wire = t & 7;
    if (f === 1 && wire === LEN) key = b.bytes();
    else if (op === 'putIf' && f === 2 && wire === LEN) value = b.bytes();
    else if (f + shift === 3 && wire === LEN) context = b.bytes();
    else if (f + shift === 4 && wire === LEN) bucket = b.string();
    else if (f + shift === 5 && wire === LEN) requestId = b.bytes();
    else b.skip(wire);
  }
  return op === 'putIf'
    ? { id, deadline, op, key, value, context, bucket, requestId }
    : { id, deadline, op, key, context, bucket, requestId };
}

/** The KvReplies in `buf`. Throws WireDecodeError when it is not one. */
export function decodeKvReplies(buf: Buffer): KvReply[] {
  return decodeBatch(buf, 'reply', 2, 7, ({ id, opField, body: b }): KvReply => {
    const op = REPLY_OPS[opField - 2]!;
    const values: Buffer[] = [];
    let first = EMPTY,
      second = EMPTY,
      fourth = EMPTY,
      number = 0,
      flag = false;
    while (!b.done) {
      const t = b.tag(),
        f = t >>> 3,
        wire = t & 7;
      if (op === 'get' && f === 1 && wire === LEN) values.push(b.bytes());
      else if (f === 1 && wire === LEN) first = b.bytes();
      else if (f === 1 && wire === VARINT) number = b.varint();
      else if (f === 2 && wire === LEN) second = b.bytes();
      else if (f === 3 && wire === VARINT) flag = b.varint() !== 0;
      else if (f === 4 && wire === LEN) fourth = b.bytes();
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
        return { id, op, code: number, details: second.toString('utf8'), ...(flag ? { casNotApplied: true } : {}) };
      case 'counterUpdate':
        return { id, op, value: first.toString('utf8') };
      case 'putIf':
        return { id, op, applied: number !== 0, context: second, found: flag, value: fourth };
    }
  });
}
