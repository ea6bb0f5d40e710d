import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KvCall as ProtoCall } from '../../../src/transport/generated/ringkv/v1/KvCall.js';
import type { KvReply as ProtoReply } from '../../../src/transport/generated/ringkv/v1/KvReply.js';
import { serviceClient } from '../../../src/transport/protos.js';
import {
  decodeKvCalls,
  decodeKvReplies,
  encodeKvCalls,
  encodeKvReplies,
  kvCallSize,
  kvReplySize,
  type KvCall,
  type KvReply,
} from '../../../src/transport/kv-codec.js';

const NOW = 1_796_000_000_000;
const bytes = (max = 64) => fc.uint8Array({ maxLength: max }).map((u) => Buffer.from(u));
const id = fc.integer({ min: 0, max: 0xffffffff });
const deadline = fc.integer({ min: NOW + 1, max: NOW + 600_000 });
const q = fc.integer({ min: 0, max: 16 });
const bucket = fc.string({ maxLength: 64, unit: 'grapheme' });
const ttlMs = fc.integer({ min: 0, max: 2 ** 52 });
const confirms = { nodeConfirms: q, zoneConfirms: q, pw: q };
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Amounts protobufjs (longs as numbers) carries exactly: the safe integers, the bounds most. */
const safeAmount = fc.oneof(fc.constantFrom(0n, 1n, -1n, SAFE, -SAFE), fc.bigInt({ min: -SAFE, max: SAFE }));
const calls = (amount: fc.Arbitrary<bigint>): fc.Arbitrary<KvCall> =>
  fc.oneof(
    fc.record({
      id,
      deadline,
      op: fc.constant('put' as const),
      key: bytes(),
      value: bytes(200),
      context: bytes(),
      w: q,
      requestId: bytes(64),
      bucket,
      ttlMs,
      ...confirms,
    }),
    fc.record({ id, deadline, op: fc.constant('get' as const), key: bytes(), r: q, bucket }),
    fc.record({
      id,
      deadline,
      op: fc.constant('delete' as const),
      key: bytes(),
      context: bytes(),
      w: q,
      requestId: bytes(64),
      bucket,
      ...confirms,
    }),
    fc.record({
      id,
      deadline,
      op: fc.constant('counterUpdate' as const),
      key: bytes(),
      amount,
      w: q,
      requestId: bytes(64),
      bucket,
      ...confirms,
    }),
    fc.record({
      id,
      deadline,
      op: fc.constant('putIf' as const),
      key: bytes(),
      value: bytes(200),
      context: bytes(),
      bucket,
      requestId: bytes(64),
    }),
    fc.record({
      id,
      deadline,
      op: fc.constant('deleteIf' as const),
      key: bytes(),
      context: bytes(),
      bucket,
      requestId: bytes(64),
    }),
  );
/** Every call; amounts over the whole sint64 range (our codec is exact in bigints). */
const call = calls(
  fc.oneof(
    safeAmount,
    fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n, SAFE + 1n),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  ),
);
/** Every call, with the amounts protobufjs decodes exactly. */
const protoCall = calls(safeAmount);
const reply: fc.Arbitrary<KvReply> = fc.oneof(
  fc.record({ id, op: fc.constant('put' as const), context: bytes() }),
  // Empty values included: a repeated field keeps every element.
  fc.record({
    id,
    op: fc.constant('get' as const),
    values: fc.array(bytes(100), { maxLength: 4 }),
    context: bytes(),
    found: fc.boolean(),
  }),
  fc.record({ id, op: fc.constant('delete' as const) }),
  fc.record({
    id,
    op: fc.constant('error' as const),
    code: fc.integer({ min: 0, max: 16 }),
    details: fc.string({ maxLength: 40, unit: 'grapheme' }),
  }),
  // Decoded, the flag is there only when set.
  fc.record({
    id,
    op: fc.constant('error' as const),
    code: fc.integer({ min: 0, max: 16 }),
    details: fc.string({ maxLength: 40, unit: 'grapheme' }),
    casNotApplied: fc.constant(true),
  }),
  fc.record({
    id,
    op: fc.constant('counterUpdate' as const),
    value: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  }),
  fc.record({
    id,
    op: fc.constant('putIf' as const),
    applied: fc.boolean(),
    context: bytes(),
    found: fc.boolean(),
    value: bytes(200),
  }),
);
/** The stream's protobufjs (proto-loader) encoding, typed by the generated KvCalls and KvReplies. */
const STREAM = serviceClient('ringkv.v1.KeyValue').service.Stream;

/** A call as kv.proto names its fields, every field set (as proto-loader decodes with defaults), so each value goes where the .proto puts that name. */
function asProto(c: KvCall, now: number): ProtoCall {
  const head = { id: c.id, timeoutMs: c.deadline - now };
  switch (c.op) {
    case 'put':
      return {
        ...head,
        put: {
          key: c.key,
          value: c.value,
          context: c.context,
          w: c.w,
          requestId: c.requestId,
          bucket: c.bucket,
          ttlMs: c.ttlMs,
          nodeConfirms: c.nodeConfirms,
          zoneConfirms: c.zoneConfirms,
          pw: c.pw,
        },
      };
    case 'get':
      return { ...head, get: { key: c.key, r: c.r, bucket: c.bucket } };
    case 'delete':
      return {
        ...head,
        delete: {
          key: c.key,
          context: c.context,
          w: c.w,
          requestId: c.requestId,
          bucket: c.bucket,
          nodeConfirms: c.nodeConfirms,
          zoneConfirms: c.zoneConfirms,
          pw: c.pw,
        },
      };
    case 'counterUpdate':
      return {
        ...head,
        counterUpdate: {
          bucket: c.bucket,
          key: c.key,
          amount: Number(c.amount),
          requestId: c.requestId,
          w: c.w,
          nodeConfirms: c.nodeConfirms,
          zoneConfirms: c.zoneConfirms,
          pw: c.pw,
        },
      };
    case 'putIf':
      return {
        ...head,
        putIf: { key: c.key, value: c.value, context: c.context, bucket: c.bucket, requestId: c.requestId },
      };
    case 'deleteIf':
      return { ...head, deleteIf: { key: c.key, context: c.context, bucket: c.bucket, requestId: c.requestId } };
  }
}

function replyAsProto(r: KvReply): ProtoReply {
  switch (r.op) {
    case 'put':
      return { id: r.id, put: { context: r.context } };
    case 'get':
      return { id: r.id, get: { values: r.values, context: r.context, found: r.found } };
    case 'delete':
      return { id: r.id, delete: {} };
    case 'error':
      return { id: r.id, error: { code: r.code, details: r.details, casNotApplied: r.casNotApplied === true } };
    case 'counterUpdate':
      return { id: r.id, counterUpdate: { value: r.value } };
    case 'putIf':
      return { id: r.id, putIf: { applied: r.applied, context: r.context, found: r.found, value: r.value } };
  }
}

describe('KeyValue stream codec', () => {
  it('calls and replies round-trip, at the sizes it computes', () => {
    fc.assert(
      fc.property(fc.array(call, { maxLength: 20 }), fc.array(reply, { maxLength: 20 }), (calls, replies) => {
        const c = encodeKvCalls(calls, NOW);
        expect(c.length).toBe(calls.reduce((a, x) => a + kvCallSize(x, NOW), 0));
        expect(decodeKvCalls(c, NOW)).toEqual(calls);
        const r = encodeKvReplies(replies);
        expect(r.length).toBe(replies.reduce((a, x) => a + kvReplySize(x), 0));
        expect(decodeKvReplies(r)).toEqual(replies);
      }),
      { seed: 15 },
    );
  });

  it('is the protobuf kv.proto declares, field by field: protobufjs reads each of our fields by its name, and we read each of its', () => {
    fc.assert(
      fc.property(fc.array(protoCall, { maxLength: 8 }), fc.array(reply, { maxLength: 8 }), (calls, replies) => {
        const namedCalls = { calls: calls.map((c) => asProto(c, NOW)) };
        expect(STREAM.requestDeserialize(encodeKvCalls(calls, NOW))).toEqual(namedCalls);
        expect(decodeKvCalls(STREAM.requestSerialize(namedCalls), NOW)).toEqual(calls);
        // Empty values included: both sides keep every element of a repeated field.
        const namedReplies = { replies: replies.map(replyAsProto) };
        expect(STREAM.responseDeserialize(encodeKvReplies(replies))).toEqual(namedReplies);
        expect(decodeKvReplies(STREAM.responseSerialize(namedReplies))).toEqual(replies);
      }),
      { seed: 15, numRuns: 100 },
    );
  });

  it('a call naming no operation this release knows decodes alone as unsupported; the calls beside it decode as sent', () => {
    const get: KvCall = { id: 1, deadline: NOW + 500, op: 'get', key: Buffer.from('k'), r: 0, bucket: '' };
    // KvCall 9: a field of some later release, its body a message.
    const later = Buffer.from([0x0a, 0x06, 0x08, 0x02, 0x4a, 0x02, 0x08, 0x01]);
    const buf = Buffer.concat([encodeKvCalls([get], NOW), later]);
    expect(decodeKvCalls(buf, NOW)).toEqual([get, { id: 2, deadline: NOW, op: 'unsupported', bucket: '' }]);
  });
});
