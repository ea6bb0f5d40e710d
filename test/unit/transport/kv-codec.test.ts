import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { protos } from '../../../src/transport/protos.js';
import { decodeKvCalls, decodeKvReplies, encodeKvCalls, encodeKvReplies, kvCallSize, kvReplySize, type KvCall, type KvReply } from '../../../src/transport/kv-codec.js';

const NOW = 1_796_000_000_000;
const bytes = (max = 64) => fc.uint8Array({ maxLength: max }).map((u) => Buffer.from(u));
const id = fc.integer({ min: 0, max: 0xffffffff });
const deadline = fc.integer({ min: NOW + 1, max: NOW + 600_000 });
const q = fc.integer({ min: 0, max: 16 });
const call: fc.Arbitrary<KvCall> = fc.oneof(
  fc.record({ id, deadline, op: fc.constant('put' as const), key: bytes(), value: bytes(200), context: bytes(), w: q, requestId: bytes(64) }),
  fc.record({ id, deadline, op: fc.constant('get' as const), key: bytes(), r: q }),
  fc.record({ id, deadline, op: fc.constant('delete' as const), key: bytes(), context: bytes(), w: q, requestId: bytes(64) }),
);
const reply: fc.Arbitrary<KvReply> = fc.oneof(
  fc.record({ id, op: fc.constant('put' as const), context: bytes() }),
  // Empty values included: a repeated field keeps every element.
  fc.record({ id, op: fc.constant('get' as const), values: fc.array(bytes(100), { maxLength: 4 }), context: bytes(), found: fc.boolean() }),
  fc.record({ id, op: fc.constant('delete' as const) }),
  fc.record({ id, op: fc.constant('error' as const), code: fc.integer({ min: 0, max: 16 }), details: fc.string({ maxLength: 40, unit: 'grapheme' }) }),
);
type Codec = { serialize(o: object): Buffer; deserialize(b: Buffer): object };
const viaProto = (t: string): Codec => protos().definition[`ringkv.v1.${t}`] as unknown as Codec;

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

  it('is the protobuf kv.proto declares: protobufjs reads our bytes and we read its', () => {
    fc.assert(
      fc.property(fc.array(call, { maxLength: 5 }), fc.array(reply, { maxLength: 5 }), (calls, replies) => {
        const c = viaProto('KvCalls').deserialize(encodeKvCalls(calls, NOW));
        expect(decodeKvCalls(viaProto('KvCalls').serialize(c), NOW)).toEqual(calls);
        const r = viaProto('KvReplies').deserialize(encodeKvReplies(replies)) as { replies: { get?: { values: unknown[] } }[] };
        r.replies.forEach((x, i) => {
          const want = replies[i]!;
          if (want.op === 'get') expect(x.get!.values).toHaveLength(want.values.length);
        });
        expect(decodeKvReplies(viaProto('KvReplies').serialize(r))).toEqual(replies);
      }),
      { seed: 15, numRuns: 50 },
    );
  });
});
