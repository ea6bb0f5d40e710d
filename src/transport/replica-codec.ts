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
 * Owns: the byte layout of a batch. Must not: know what the calls mean (replica-wire.ts
 * maps them to ReplicaApi and LocalReplica).
 */

import { EMPTY, LEN, VARINT, batchItemSize, bytesField, decodeBatch, encodeBatch, varintField, type ItemLayout } from './protobuf-bytes.js';

export { WireDecodeError } from './protobuf-bytes.js';

export type WireCall =
  | { id: number; deadline: number; op: 'apply'; key: Buffer; value: Buffer | null; context: Buffer; requestId: Buffer; expiresAt: number }
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
const CALL_OPS = ['apply', 'merge', 'read', 'digest'] as const;
const REPLY_OPS = ['apply', 'merge', 'read', 'digest', 'error'] as const;

/**
 * What a call's deadline goes on the wire as: the ms left at `now` (at least 1), which
 * the receiver adds to its own clock, so that nodes' clocks need not agree (as gRPC's
 * grpc-timeout header).
 */
export const timeLeft = (deadline: number, now: number): number => Math.max(1, Math.ceil(deadline - now));

function callLayout(now: number): ItemLayout<WireCall> {
  return {
    second: (c) => timeLeft(c.deadline, now),
    opField: (c) => CALL_OP[c.op],
    bodySize: (c) => {
      switch (c.op) {
        case 'apply':
          return bytesField(c.key.length) + bytesField(c.value?.length ?? 0) + (c.value === null ? 2 : 0) + bytesField(c.context.length) + bytesField(c.requestId.length) + varintField(c.expiresAt);
        case 'merge':
          return bytesField(c.key.length) + bytesField(c.record.length) + bytesField(Buffer.byteLength(c.hintFor));
        case 'read':
          return bytesField(c.key.length) + bytesField(Buffer.byteLength(c.hintFor));
        case 'digest':
          return bytesField(c.key.length);
      }
    },
    writeBody: (w, c) => {
      w.bytes(1, c.key);
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
      }
    },
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
    }
  },
};

/** Bytes one call takes in a batch (ReplicaCalls field 1), sent at `now`. */
export const callSize = (c: WireCall, now = Date.now()): number => batchItemSize(callLayout(now), c);

/** ReplicaCalls holding `calls`, sent at `now`. */
export const encodeCalls = (calls: readonly WireCall[], now = Date.now()): Buffer => encodeBatch(callLayout(now), calls);

/** Bytes one reply takes in a batch (ReplicaReplies field 1). */
export const replySize = (r: WireReply): number => batchItemSize(REPLY_LAYOUT, r);

/** ReplicaReplies holding `replies`. */
export const encodeReplies = (replies: readonly WireReply[]): Buffer => encodeBatch(REPLY_LAYOUT, replies);

/** The ReplicaCalls in `buf`, received at `now` (deadlines are `now` plus the time left). Throws WireDecodeError when it is not one. */
export function decodeCalls(buf: Buffer, now = Date.now()): WireCall[] {
  return decodeBatch(buf, 'call', 3, 6, ({ id, second, opField, body: b }): WireCall => {
    const op = CALL_OPS[opField - 3]!;
    const deadline = now + second;
    let key = EMPTY, value = EMPTY, tombstone = false, context = EMPTY, requestId = EMPTY, record = EMPTY, hintFor = '', expiresAt = 0;
    while (!b.done) {
      const t = b.tag(), f = t >>> 3, wire = t & 7;
      // Field numbers per message (replica.proto): key is 1 everywhere.
      if (f === 1 && wire === LEN) key = b.bytes();
      else if (op === 'apply' && f === 2 && wire === LEN) value = b.bytes();
      else if (op === 'apply' && f === 3 && wire === VARINT) tombstone = b.varint() !== 0;
      else if (op === 'apply' && f === 4 && wire === LEN) context = b.bytes();
      else if (op === 'apply' && f === 5 && wire === LEN) requestId = b.bytes();
      else if (op === 'apply' && f === 6 && wire === VARINT) expiresAt = b.varint();
      else if (op === 'merge' && f === 2 && wire === LEN) record = b.bytes();
      else if (((op === 'merge' && f === 3) || (op === 'read' && f === 2)) && wire === LEN) hintFor = b.string();
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
    }
  });
}

/** The ReplicaReplies in `buf`. Throws WireDecodeError when it is not one. */
export function decodeReplies(buf: Buffer): WireReply[] {
  return decodeBatch(buf, 'reply', 2, 6, ({ id, opField, body: b }): WireReply => {
    const op = REPLY_OPS[opField - 2]!;
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
  });
}
