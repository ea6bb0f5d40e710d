import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { protos } from '../../../src/transport/protos.js';
import { WireDecodeError, callSize, decodeCalls, decodeReplies, encodeCalls, encodeReplies, replySize, type WireCall, type WireReply } from '../../../src/transport/replica-codec.js';

const bytes = (max = 64) => fc.uint8Array({ maxLength: max }).map((u) => Buffer.from(u));
const id = fc.integer({ min: 0, max: 0xffffffff });
// Deadlines are ms since the epoch; the wire carries the time left at NOW.
const NOW = 1_796_000_000_000;
const deadline = fc.integer({ min: NOW + 1, max: NOW + 10 * 60_000 });
const text = fc.string({ maxLength: 20, unit: 'grapheme' });

const call: fc.Arbitrary<WireCall> = fc.oneof(
  fc.record({ id, deadline, op: fc.constant('apply' as const), key: bytes(), value: fc.option(bytes(), { nil: null }), context: bytes(), requestId: bytes(64) }),
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

/** What protobufjs (proto-loader) makes of the same bytes: the codec must agree with the .proto. */
function viaProto(type: 'ReplicaCalls' | 'ReplicaReplies') {
  const t = protos().definition[`ringkv.internal.v1.${type}`] as unknown as { serialize(o: object): Buffer; deserialize(b: Buffer): Record<string, unknown> };
  return t;
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

  it('writes what replica.proto declares: protobufjs decodes our bytes, and we decode its', () => {
    fc.assert(
      fc.property(fc.array(call, { minLength: 1, maxLength: 5 }), (calls) => {
        const decoded = viaProto('ReplicaCalls').deserialize(encodeCalls(calls, NOW)) as { calls: Record<string, unknown>[] };
        decoded.calls.forEach((d, i) => {
          const c = calls[i]!;
          expect(d.id).toBe(c.id);
          expect(d.timeoutMs).toBe(c.deadline - NOW);
          for (const op of ['apply', 'merge', 'read', 'digest']) expect(d[op] !== undefined && d[op] !== null).toBe(op === c.op);
          expect(Buffer.from((d[c.op] as { key: Uint8Array }).key)).toEqual(c.key);
        });
        expect(decodeCalls(viaProto('ReplicaCalls').serialize(decoded), NOW)).toEqual(calls);
      }),
      { seed: 15, numRuns: 50 },
    );
    fc.assert(
      fc.property(fc.array(reply, { minLength: 1, maxLength: 5 }), (replies) => {
        const decoded = viaProto('ReplicaReplies').deserialize(encodeReplies(replies));
        expect(decodeReplies(viaProto('ReplicaReplies').serialize(decoded))).toEqual(replies);
      }),
      { seed: 15, numRuns: 50 },
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
