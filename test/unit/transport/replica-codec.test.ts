import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReplicaCall } from '../../../src/transport/generated/ringkv/internal/v1/ReplicaCall.js';
import type { ReplicaReply } from '../../../src/transport/generated/ringkv/internal/v1/ReplicaReply.js';
import { serviceClient } from '../../../src/transport/protos.js';
import { WireDecodeError, callSize, decodeCalls, decodeReplies, encodeCalls, encodeReplies, replySize, type WireCall, type WireReply } from '../../../src/transport/replica-codec.js';

const bytes = (max = 64) => fc.uint8Array({ maxLength: max }).map((u) => Buffer.from(u));
const id = fc.integer({ min: 0, max: 0xffffffff });
// Deadlines are ms since the epoch; the wire carries the time left at NOW.
const NOW = 1_796_000_000_000;
const deadline = fc.integer({ min: NOW + 1, max: NOW + 10 * 60_000 });
const text = fc.string({ maxLength: 20, unit: 'grapheme' });

const call: fc.Arbitrary<WireCall> = fc.oneof(
  fc.record({ id, deadline, op: fc.constant('apply' as const), key: bytes(), value: fc.option(bytes(), { nil: null }), context: bytes(), requestId: bytes(64), expiresAt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER })) }),
  fc.record({ id, deadline, op: fc.constant('merge' as const), key: bytes(), record: bytes(200), hintFor: text }),
  fc.record({ id, deadline, op: fc.constant('read' as const), key: bytes(), hintFor: text }),
  fc.record({ id, deadline, op: fc.constant('digest' as const), key: bytes() }),
);
const reply: fc.Arbitrary<WireReply> = fc.oneof(
  fc.record({ id, op: fc.constant('apply' as const), record: bytes(200), context: bytes() }),
  fc.record({ id, op: fc.constant('merge' as const), changed: fc.boolean() }),
  fc.record({ id, op: fc.constant('read' as const), record: fc.option(bytes(200), { nil: undefined }) }),
  fc.record({ id, op: fc.constant('digest' as const), digest: bytes(16) }),
  fc.record({ id, op: fc.constant('error' as const), code: text, message: text }),
);

/** The stream's protobufjs (proto-loader) encoding, typed by the generated ReplicaCalls and ReplicaReplies. */
const STREAM = serviceClient('ringkv.internal.v1.Replica').service.Stream;
const EMPTY = Buffer.alloc(0);

/**
 * A call as replica.proto names its fields, every field set (as proto-loader decodes with
 * defaults): built by name, so the protobufjs side puts each value at the number the
 * .proto gives that name, and the hand codec must agree field by field.
 */
function asProto(c: WireCall, now: number): ReplicaCall {
  const head = { id: c.id, timeoutMs: c.deadline - now };
  switch (c.op) {
    case 'apply':
      return { ...head, apply: { key: c.key, value: c.value ?? EMPTY, tombstone: c.value === null, context: c.context, requestId: c.requestId, expiresAt: c.expiresAt } };
    case 'merge':
      return { ...head, merge: { key: c.key, record: c.record, hintFor: c.hintFor } };
    case 'read':
      return { ...head, read: { key: c.key, hintFor: c.hintFor } };
    case 'digest':
      return { ...head, digest: { key: c.key } };
  }
}

function replyAsProto(r: WireReply): ReplicaReply {
  switch (r.op) {
    case 'apply':
      return { id: r.id, apply: { record: r.record, context: r.context } };
    case 'merge':
      return { id: r.id, merge: { changed: r.changed } };
    case 'read':
      return { id: r.id, read: { found: r.record !== undefined, record: r.record ?? EMPTY } };
    case 'digest':
      return { id: r.id, digest: { digest: r.digest } };
    case 'error':
      return { id: r.id, error: { code: r.code, message: r.message } };
  }
}

describe('replica stream codec', () => {
  it('calls round-trip, and take the bytes callSize says', () => {
    fc.assert(
      fc.property(fc.array(call, { maxLength: 20 }), (calls) => {
        const buf = encodeCalls(calls, NOW);
        expect(buf.length).toBe(calls.reduce((a, c) => a + callSize(c, NOW), 0));
        expect(decodeCalls(buf, NOW)).toEqual(calls);
        // Received 30 ms later on a clock 5 s ahead: the same time left, from the receiver's clock.
        expect(decodeCalls(buf, NOW + 5030).map((c) => c.deadline)).toEqual(calls.map((c) => c.deadline + 5030));
      }),
      { seed: 15 },
    );
  });

  it('replies round-trip, and take the bytes replySize says', () => {
    fc.assert(
      fc.property(fc.array(reply, { maxLength: 20 }), (replies) => {
        const buf = encodeReplies(replies);
        expect(buf.length).toBe(replies.reduce((a, r) => a + replySize(r), 0));
        expect(decodeReplies(buf)).toEqual(replies);
      }),
      { seed: 15 },
    );
  });

  it('is the protobuf replica.proto declares, field by field: protobufjs reads each of our fields by its name, and we read each of its', () => {
    fc.assert(
      fc.property(fc.array(call, { maxLength: 8 }), (calls) => {
        const named = { calls: calls.map((c) => asProto(c, NOW)) };
        expect(STREAM.requestDeserialize(encodeCalls(calls, NOW))).toEqual(named);
        expect(decodeCalls(STREAM.requestSerialize(named), NOW)).toEqual(calls);
      }),
      { seed: 15, numRuns: 100 },
    );
    fc.assert(
      fc.property(fc.array(reply, { maxLength: 8 }), (replies) => {
        const named = { replies: replies.map(replyAsProto) };
        expect(STREAM.responseDeserialize(encodeReplies(replies))).toEqual(named);
        expect(decodeReplies(STREAM.responseSerialize(named))).toEqual(replies);
      }),
      { seed: 15, numRuns: 100 },
    );
  });

  it('skips fields it does not know (a newer peer), and refuses bytes that are not a batch', () => {
    // Field 15 (varint 7) inside the call, before its op: what a newer node could add.
    const known = encodeCalls([{ id: 9, deadline: NOW + 5, op: 'digest', key: Buffer.from('k') }], NOW);
    const inner = known.subarray(2);
    const withExtra = Buffer.concat([Buffer.from([0x0a, inner.length + 2]), Buffer.from([15 << 3, 7]), inner]);
    expect(decodeCalls(withExtra, NOW)).toEqual([{ id: 9, deadline: NOW + 5, op: 'digest', key: Buffer.from('k') }]);
    for (const bad of [Buffer.from([0x0a, 0x05, 0x08]), Buffer.from([0x0a, 0x00]), Buffer.from([0x0b]), Buffer.from([0x0a, 0x02, 0x08, 0xff])]) {
      expect(() => decodeCalls(bad)).toThrow(WireDecodeError);
      expect(() => decodeReplies(bad)).toThrow(WireDecodeError);
    }
  });
});
