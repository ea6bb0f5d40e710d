import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ReplicaCall } from '../../../src/transport/generated/ringkv/internal/v1/ReplicaCall.js';
import type { ReplicaReply } from '../../../src/transport/generated/ringkv/internal/v1/ReplicaReply.js';
import { serviceClient } from '../../../src/transport/protos.js';
import type { FieldType } from '../../../src/buckets/index.js';
import {
  WireDecodeError,
  callSize,
  decodeCalls,
  decodeReplies,
  encodeCalls,
  encodeReplies,
  replySize,
  type WireCall,
  type WireReply,
  type WireSubOp,
} from '../../../src/transport/replica-codec.js';

const bytes = (max = 64) => fc.uint8Array({ maxLength: max }).map((u) => Buffer.from(u));
const id = fc.integer({ min: 0, max: 0xffffffff });
// Deadlines are ms since the epoch; the wire carries the time left at NOW.
const NOW = 1_796_000_000_000;
const deadline = fc.integer({ min: NOW + 1, max: NOW + 10 * 60_000 });
const text = fc.string({ maxLength: 20, unit: 'grapheme' });

const fieldType = fc.constantFrom<FieldType>('register', 'flag', 'counter', 'set', 'map');
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Amounts protobufjs (longs as numbers) carries exactly: the safe integers, the bounds most. */
const safeAmount = fc.oneof(fc.constantFrom(0n, 1n, -1n, SAFE, -SAFE), fc.bigInt({ min: -SAFE, max: SAFE }));
const subOp: fc.Arbitrary<WireSubOp> = fc.record({
  op: fc.constantFrom('add' as const, 'remove' as const, 'assign' as const, 'increment' as const),
  fields: fc.array(fc.record({ name: bytes(8), type: fieldType }), { maxLength: 4 }),
  // Set but empty is not unset: the replica refuses an empty element rather than read a flag.
  element: fc.option(bytes(16), { nil: undefined }),
  context: bytes(32),
  value: bytes(32),
  amount: safeAmount,
});
// A delta is present only when not empty (an empty one is the field's default: none).
const subKeyRecord = fc
  .record({ key: bytes(), record: bytes(100), delta: bytes(40) })
  .map(({ delta, ...r }) => (delta.length > 0 ? { ...r, delta } : r));

const newCall = (amount: fc.Arbitrary<bigint>): fc.Arbitrary<WireCall> =>
  fc.oneof(
    fc.record({ id, deadline, op: fc.constant('counterUpdate' as const), key: bytes(), amount, requestId: bytes(32) }),
    fc.record({
      id,
      deadline,
      op: fc.constant('writeMany' as const),
      parent: bytes(),
      ops: fc.array(subOp, { maxLength: 6 }),
      requestId: bytes(32),
    }),
    fc.record({
      id,
      deadline,
      op: fc.constant('readRange' as const),
      parent: bytes(),
      after: fc.option(bytes(), { nil: undefined }),
      limit: fc.oneof(fc.constantFrom(0, 1, 1000, 2 ** 32 - 1), fc.nat({ max: 2 ** 32 - 1 })),
    }),
    // Ballots as a clock in ms makes them (and past 2^32 on the wire's uint64).
    fc.record({
      id,
      deadline,
      op: fc.constant('paxos' as const),
      key: bytes(),
      step: fc.constantFrom('prepare' as const, 'propose' as const, 'commit' as const),
      ballot: fc.oneof(fc.constantFrom(0, 1, 1_796_000_000_000), fc.nat()),
      proposer: bytes(16),
      proposalId: bytes(32),
      base: bytes(32),
      value: fc.option(bytes(), { nil: null }),
    }),
    fc.record({
      id,
      deadline,
      op: fc.constant('step' as const),
      key: bytes(),
      kind: fc.oneof(fc.constantFrom(0, 5, 255), fc.nat({ max: 2 ** 32 - 1 })),
      step: text,
      arg: bytes(100),
    }),
  );

const oldCall: fc.Arbitrary<WireCall> = fc.oneof(
  fc.record({
    id,
    deadline,
    op: fc.constant('apply' as const),
    key: bytes(),
    value: fc.option(bytes(), { nil: null }),
    context: bytes(),
    requestId: bytes(64),
    expiresAt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER })),
  }),
  fc.record({ id, deadline, op: fc.constant('merge' as const), key: bytes(), record: bytes(200), hintFor: text }),
  fc.record({ id, deadline, op: fc.constant('read' as const), key: bytes(), hintFor: text }),
  fc.record({ id, deadline, op: fc.constant('digest' as const), key: bytes() }),
);
/** Every call; amounts over the whole sint64 range (our codec is exact in bigints). */
const call: fc.Arbitrary<WireCall> = fc.oneof(
  oldCall,
  newCall(
    fc.oneof(
      safeAmount,
      fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n, SAFE + 1n),
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    ),
  ),
);
/** Every call, with the amounts protobufjs decodes exactly. */
const protoCall: fc.Arbitrary<WireCall> = fc.oneof(oldCall, newCall(safeAmount));
const reply: fc.Arbitrary<WireReply> = fc.oneof(
  fc.record({ id, op: fc.constant('apply' as const), record: bytes(200), context: bytes() }),
  fc.record({ id, op: fc.constant('merge' as const), changed: fc.boolean() }),
  fc.record({ id, op: fc.constant('read' as const), record: fc.option(bytes(200), { nil: undefined }) }),
  fc.record({ id, op: fc.constant('digest' as const), digest: bytes(16) }),
  fc.record({ id, op: fc.constant('error' as const), code: text, message: text }),
  // Counter values past 2^53 (the sum of many increments of different issuers' within bounds).
  fc.record({
    id,
    op: fc.constant('counterUpdate' as const),
    record: bytes(200),
    delta: bytes(100),
    value: fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  }),
  fc.record({ id, op: fc.constant('writeMany' as const), records: fc.array(subKeyRecord, { maxLength: 5 }) }),
  fc.record({
    id,
    op: fc.constant('readRange' as const),
    records: fc.array(subKeyRecord, { maxLength: 5 }),
    next: fc.option(bytes(), { nil: undefined }),
  }),
  fc.record({ id, op: fc.constant('paxos' as const), ok: fc.boolean(), state: bytes(100) }),
  fc.record({ id, op: fc.constant('step' as const), reply: bytes(100) }),
);

const KIND = { add: 'ADD', remove: 'REMOVE', assign: 'ASSIGN', increment: 'INCREMENT' } as const;
const TYPE = {
  register: 'FIELD_TYPE_REGISTER',
  flag: 'FIELD_TYPE_FLAG',
  counter: 'FIELD_TYPE_COUNTER',
  set: 'FIELD_TYPE_SET',
  map: 'FIELD_TYPE_MAP',
} as const;
const subOpAsProto = (o: WireSubOp) => ({
  op: KIND[o.op as keyof typeof KIND],
  fields: o.fields.map((f) => ({ name: f.name, type: TYPE[f.type as FieldType] })),
  ...(o.element === undefined ? {} : { element: o.element }),
  context: o.context,
  value: o.value,
  amount: Number(o.amount),
});
const recordAsProto = (r: { key: Buffer; record: Buffer; delta?: Buffer }) => ({
  key: r.key,
  record: r.record,
  delta: r.delta ?? EMPTY,
});

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
      return {
        ...head,
        apply: {
          key: c.key,
          value: c.value ?? EMPTY,
          tombstone: c.value === null,
          context: c.context,
          requestId: c.requestId,
          expiresAt: c.expiresAt,
        },
      };
    case 'merge':
      return { ...head, merge: { key: c.key, record: c.record, hintFor: c.hintFor } };
    case 'read':
      return { ...head, read: { key: c.key, hintFor: c.hintFor } };
    case 'digest':
      return { ...head, digest: { key: c.key } };
    case 'counterUpdate':
      return { ...head, counterUpdate: { key: c.key, amount: Number(c.amount), requestId: c.requestId } };
    case 'writeMany':
      return { ...head, writeMany: { parent: c.parent, ops: c.ops.map(subOpAsProto), requestId: c.requestId } };
    case 'readRange':
      return {
        ...head,
        readRange: { parent: c.parent, ...(c.after === undefined ? {} : { after: c.after }), limit: c.limit },
      };
    case 'paxos':
      return {
        ...head,
        paxos: {
          key: c.key,
          step: STEP[c.step as keyof typeof STEP],
          ballot: c.ballot,
          proposer: c.proposer,
          proposalId: c.proposalId,
          value: c.value ?? EMPTY,
          absent: c.value === null,
          base: c.base,
        },
      };
    case 'step':
      return { ...head, step: { key: c.key, kind: c.kind, step: c.step, arg: c.arg } };
  }
}

const STEP = { prepare: 'PREPARE', propose: 'PROPOSE', commit: 'COMMIT' } as const;

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
    case 'counterUpdate':
      return { id: r.id, counterUpdate: { record: r.record, delta: r.delta, value: r.value } };
    case 'writeMany':
      return { id: r.id, writeMany: { records: r.records.map(recordAsProto) } };
    case 'readRange':
      return {
        id: r.id,
        readRange: { records: r.records.map(recordAsProto), ...(r.next === undefined ? {} : { next: r.next }) },
      };
    case 'paxos':
      return { id: r.id, paxos: { ok: r.ok, state: r.state } };
    case 'step':
      return { id: r.id, step: { reply: r.reply } };
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
      fc.property(fc.array(protoCall, { maxLength: 8 }), (calls) => {
        const named = { calls: calls.map((c) => asProto(c, NOW)) };
        expect(STREAM.requestDeserialize(encodeCalls(calls, NOW))).toEqual(named);
        expect(decodeCalls(STREAM.requestSerialize(named), NOW)).toEqual(calls);
      }),
      { seed: 15, numRuns: 200 },
    );
    fc.assert(
      fc.property(fc.array(reply, { maxLength: 8 }), (replies) => {
        const named = { replies: replies.map(replyAsProto) };
        expect(STREAM.responseDeserialize(encodeReplies(replies))).toEqual(named);
        expect(decodeReplies(STREAM.responseSerialize(named))).toEqual(replies);
      }),
      { seed: 15, numRuns: 200 },
    );
  });

  it('skips fields it does not know (a newer peer), and refuses bytes that are not a batch', () => {
    // Field 15 (varint 7) inside the call, before its op: what a newer node could add.
    const known = encodeCalls([{ id: 9, deadline: NOW + 5, op: 'digest', key: Buffer.from('k') }], NOW);
    const inner = known.subarray(2);
    const withExtra = Buffer.concat([Buffer.from([0x0a, inner.length + 2]), Buffer.from([15 << 3, 7]), inner]);
    expect(decodeCalls(withExtra, NOW)).toEqual([{ id: 9, deadline: NOW + 5, op: 'digest', key: Buffer.from('k') }]);
    // Field 14 (bytes "xyz") too: a length-delimited field is skipped whole, its length's own byte included.
    const withBytes = Buffer.concat([
      Buffer.from([0x0a, inner.length + 5]),
      Buffer.from([(14 << 3) | 2, 3, 0x78, 0x79, 0x7a]),
      inner,
    ]);
    expect(decodeCalls(withBytes, NOW)).toEqual([{ id: 9, deadline: NOW + 5, op: 'digest', key: Buffer.from('k') }]);
    for (const bad of [Buffer.from([0x0a, 0x05, 0x08]), Buffer.from([0x0b]), Buffer.from([0x0a, 0x02, 0x08, 0xff])]) {
      expect(() => decodeCalls(bad)).toThrow(WireDecodeError);
      expect(() => decodeReplies(bad)).toThrow(WireDecodeError);
    }
    // A reply naming no result is a peer's bug (a call without one is refused alone: below).
    expect(() => decodeReplies(Buffer.from([0x0a, 0x00]))).toThrow(WireDecodeError);
  });

  it('carries amounts exactly past 2^53 in both directions, and the sint64 bounds', () => {
    for (const amount of [2n ** 53n, -(2n ** 53n) - 1n, 2n ** 63n - 1n, -(2n ** 63n), 12345678901234567n]) {
      const c: WireCall = {
        id: 1,
        deadline: NOW + 5,
        op: 'counterUpdate',
        key: Buffer.from('c'),
        amount,
        requestId: EMPTY,
      };
      expect(decodeCalls(encodeCalls([c], NOW), NOW)).toEqual([c]);
    }
    // As protobufjs (with Long) encodes one: the replica sees the exact value, to refuse it in so many words.
    const big = STREAM.requestSerialize({
      calls: [{ id: 2, timeoutMs: 5, counterUpdate: { key: Buffer.from('c'), amount: '-9223372036854775808' } }],
    });
    expect(decodeCalls(big, NOW)).toMatchObject([{ op: 'counterUpdate', amount: -(2n ** 63n) }]);
  });

  it('decodes a call naming no operation it knows (none set, or a newer one) as unsupported, and the rest of its batch as usual', () => {
    const known: WireCall = { id: 9, deadline: NOW + 5, op: 'digest', key: Buffer.from('k') };
    const none = STREAM.requestSerialize({ calls: [{ id: 7, timeoutMs: 5 }] });
    // Field 12, a oneof case of some later release, holding a message.
    const newer = Buffer.from([0x0a, 0x06, 0x08, 0x08, 0x62, 0x02, 0x0a, 0x00]);
    expect(decodeCalls(Buffer.concat([none, newer, encodeCalls([known], NOW)]), NOW)).toEqual([
      { id: 7, deadline: NOW + 5, op: 'unsupported' },
      { id: 8, deadline: NOW, op: 'unsupported' },
      known,
    ]);
  });

  it('keeps what it cannot name for the replica to refuse: an unknown op kind or field type as its number, an empty element as set', () => {
    const named: unknown = {
      calls: [
        {
          id: 1,
          timeoutMs: 5,
          writeMany: {
            parent: Buffer.from('p'),
            ops: [
              { op: 7, fields: [{ name: Buffer.from('f'), type: 9 }], element: Buffer.alloc(0) },
              { op: 'KIND_UNSPECIFIED', fields: [{ name: Buffer.from('g'), type: -1 }] },
            ],
          },
        },
      ],
    };
    expect(decodeCalls(STREAM.requestSerialize(named as Parameters<typeof STREAM.requestSerialize>[0]), NOW)).toEqual([
      {
        id: 1,
        deadline: NOW + 5,
        op: 'writeMany',
        parent: Buffer.from('p'),
        requestId: EMPTY,
        ops: [
          {
            op: 7,
            fields: [{ name: Buffer.from('f'), type: 9 }],
            element: EMPTY,
            context: EMPTY,
            value: EMPTY,
            amount: 0n,
          },
          {
            op: 0,
            fields: [{ name: Buffer.from('g'), type: -1 }],
            element: undefined,
            context: EMPTY,
            value: EMPTY,
            amount: 0n,
          },
        ],
      },
    ]);
  });
});
