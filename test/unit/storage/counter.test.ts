/**
 * src/kinds/counter/counter.ts beyond its laws (test/property/counter.property.test.ts): the
 * format 4 codec (round trip, canonical bytes, each kind of corrupt input refused with
 * what is wrong, fuzzed bytes refused or re-encoded to themselves), the increment's
 * refusals, the duplicate's delta, and the log window: past it an increment issued twice
 * counts at worst twice, never lost.
 */
import { DecodeError, COUNTER_FORMAT } from '../../../src/kinds/index.js';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { headerTime, versionBytes } from '../../../src/kinds/versions/codec.js';
import {
  EMPTY_COUNTER,
  LOG_MAX,
  applyDelta,
  counterWriteId,
  entryConflicts,
  implied,
  increment,
  isDuplicate,
  join,
  value,
} from '../../../src/kinds/counter/counter.js';
import {
  decodeCounter,
  decodeCounterDelta,
  encodeCounter,
  encodeCounterDelta,
} from '../../../src/kinds/counter/counter-record.js';
import type { CounterState } from '../../../src/kinds/counter/counter.js';
import { KvError } from '../../../src/kinds/kv-errors.js';

const [A, B, C] = ['A', 'B', 'C'].map((c) => c.repeat(16)) as [string, string, string];
const idOf = (k: number, amount: number): string => counterWriteId(Buffer.from(`req-${k}`), amount);

/** Apply increments (actor, amount, request or none) from empty. */
function build(ops: readonly [string, number, number?][], from: CounterState = EMPTY_COUNTER): CounterState {
  let s = from;
  for (const [actor, amount, req] of ops)
    s = increment(s, actor, amount, req === undefined ? undefined : idOf(req, amount)).state;
  return s;
}

/** Random states: three replicas' increments (requests shared, so some issued twice), joined at random. */
const stateArb: fc.Arbitrary<CounterState> = fc
  .array(
    fc.tuple(
      fc.constantFrom(A, B, C),
      fc.integer({ min: -1000, max: 2 ** 40 }).filter((a) => a !== 0),
      fc.option(fc.nat(8), { nil: undefined }),
      fc.boolean(),
    ),
    { maxLength: 30 },
  )
  .map((ops) => {
    const replicas = new Map<string, CounterState>([
      [A, EMPTY_COUNTER],
      [B, EMPTY_COUNTER],
      [C, EMPTY_COUNTER],
    ]);
    for (const [actor, amount, req, share] of ops) {
      replicas.set(actor, build([[actor, amount, req]], replicas.get(actor)));
      if (share) for (const other of [A, B, C]) replicas.set(other, join(replicas.get(other)!, replicas.get(actor)!));
    }
    return join(join(replicas.get(A)!, replicas.get(B)!), replicas.get(C)!);
  });

// ---- hand-built records, to corrupt one rule at a time

function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) (out.push((n % 0x80) | 0x80), (n = Math.floor(n / 0x80)));
  out.push(n);
  return out;
}
const actorBytes = (a: string): number[] => [...Buffer.from(a, 'latin1')];
const ID = [...Buffer.from(idOf(1, 5), 'latin1')];

/** A record around `body` (header, then a correct checksum): what reaches the checks past the frame. */
function frame(body: readonly number[], flags = 0): Buffer {
  const head = Buffer.from([COUNTER_FORMAT, flags, ...body]);
  const out = Buffer.alloc(head.length + 4);
  head.copy(out);
  out.writeUInt32BE(crc32(head), head.length);
  return out;
}

/** Entries (actor, floor, p, n), log (actor index, counter, id, sign, magnitude, seq), voids (actor index, counter, sign, magnitude). */
function body(entries: number[][], log: number[][], voids: number[][]): number[] {
  return [
    ...varint(entries.length),
    ...entries.flat(),
    ...varint(log.length),
    ...log.flat(),
    ...varint(voids.length),
    ...voids.flat(),
  ];
}
const entry = (actor: string, floor: number, p: number, n: number): number[] => [
  ...actorBytes(actor),
  ...varint(floor),
  ...varint(p),
  ...varint(n),
];
const op = (ai: number, counter: number, amount: number, seq: number, id = ID): number[] => [
  ...varint(ai),
  ...varint(counter),
  ...id,
  amount < 0 ? 1 : 0,
  ...varint(Math.abs(amount)),
  ...varint(seq),
];
const voidOf = (ai: number, counter: number, amount: number): number[] => [
  ...varint(ai),
  ...varint(counter),
  amount < 0 ? 1 : 0,
  ...varint(Math.abs(amount)),
];

function refused(bytes: Buffer, message: RegExp): void {
  let error: unknown;
  try {
    decodeCounter(bytes);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(DecodeError);
  expect((error as Error).message).toMatch(/^counter record: /);
  expect((error as Error).message).toMatch(message);
}

describe('counter record (format 4)', () => {
  it('round-trips every state, with or without an owner epoch or a held-since time, and re-encodes to the same bytes', () => {
    fc.assert(
      fc.property(
        stateArb,
        fc.option(fc.nat(2 ** 40), { nil: undefined }),
        fc.option(fc.nat(2 ** 45), { nil: undefined }),
        (s, epoch, since) => {
          const bytes = encodeCounter(s, epoch, since);
          const back = decodeCounter(bytes);
          expect(back.ownerEpoch).toBe(epoch);
          expect(back.heldSince).toBe(since);
          // The generic header read (hints' grace, digests) sees a counter's held-since as any record's time.
          expect(headerTime(bytes)).toBe(since);
          expect(versionBytes(bytes).length).toBeGreaterThan(0);
          expect(back.state).toEqual(s);
          expect(encodeCounter(back.state, epoch, since).equals(bytes)).toBe(true);
          expect(value(back.state)).toBe(value(s));
        },
      ),
      { numRuns: 300, seed: 29 },
    );
  });

  it('is canonical: joins in either order give the same bytes', () => {
    const a = build([
      [A, 3, 1],
      [A, -2, 2],
      [A, 7],
    ]);
    const b = build([
      [B, 5, 1],
      [B, 4, 3],
    ]);
    const c = build([[C, 3, 1]]);
    const one = encodeCounter(join(join(a, b), c)),
      two = encodeCounter(join(c, join(b, a)));
    expect(one.equals(two)).toBe(true);
    expect(encodeCounter(EMPTY_COUNTER).equals(frame([0, 0, 0]))).toBe(true);
  });

  it('refuses each kind of corrupt record, saying what is wrong', () => {
    const good = frame(body([entry(A, 2, 5, 1)], [op(0, 1, 5, 1)], []));
    expect(decodeCounter(good).state.entries).toEqual([{ actor: A, floor: 2, p: 5, n: 1 }]);
    refused(Buffer.from([COUNTER_FORMAT, 0, 0, 0]), /4 bytes is too short/);
    refused(
      Buffer.from([...good.subarray(0, -4), 0, 0, 0, 0].map((x, i) => (i === 0 ? 2 : x))),
      /format 2 is not a counter's \(4\)/,
    );
    const flipped = Buffer.from(good);
    flipped[5]! ^= 1;
    refused(flipped, /checksum mismatch/);
    refused(frame(body([], [], []), 8), /unknown flags 8/);
    refused(frame([0x80, 0x00, 0, 0]), /an integer not in its shortest form/);
    refused(frame([0, 0, 0x80]), /^counter record: truncated$/);
    refused(
      frame([0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
      /^counter record: integer out of range$/,
    );
    refused(frame([...varint(1_000_000), 0, 0]), /1000000 entries cannot fit in the \d+ bytes left/);
    refused(frame(body([entry(B, 1, 1, 0), entry(A, 1, 1, 0)], [], [])), /entries out of order/);
    refused(frame(body([entry(A, 1, 1, 0), entry(A, 1, 1, 0)], [], [])), /entries out of order/);
    refused(frame(body([entry(A, 0, 0, 0)], [], [])), /an entry with no dot/);
    refused(frame(body([entry(A, 5, 2, 2)], [], [])), /an entry of 5 dots summing to less than 5/);
    refused(
      frame([
        ...body([entry(A, 1, 1, 0)], [], []).slice(0, -2),
        ...varint(LOG_MAX + 1),
        ...new Array<number>(14 * (LOG_MAX + 1)).fill(0),
        0,
      ]),
      new RegExp(`${LOG_MAX + 1} logged ops, more than the ${LOG_MAX} kept`),
    );
    refused(frame(body([entry(A, 2, 5, 1)], [op(1, 1, 5, 1)], [])), /a logged op names actor 1 of 1/);
    refused(
      frame(body([entry(A, 2, 5, 1)], [op(0, 3, 5, 1)], [])),
      /a logged op dot 3 not covered by its actor's floor 2/,
    );
    refused(frame(body([entry(A, 2, 5, 1)], [op(0, 0, 5, 1)], [])), /a logged op dot 0 not covered/);
    refused(frame(body([entry(A, 2, 5, 1)], [op(0, 2, -1, 2), op(0, 1, 5, 1)], [])), /a logged op out of order/);
    refused(frame(body([entry(A, 2, 5, 1)], [op(0, 1, 5, 1), op(0, 1, 5, 1)], [])), /a logged op out of order/);
    refused(
      frame(body([entry(A, 2, 5, 1)], [[...op(0, 1, 5, 1)].map((x, i) => (i === 2 + ID.length ? 2 : x))], [])),
      /unknown sign 2/,
    );
    refused(
      frame(body([entry(A, 2, 5, 1)], [op(0, 1, 5, 1).map((x, i) => (i === 3 + ID.length ? 0 : x))], [])),
      /an amount of zero/,
    );
    refused(frame(body([entry(A, 2, 5, 1)], [op(0, 1, 5, 0)], [])), /a logged op with seq 0/);
    refused(frame(body([entry(A, 2, 5, 1)], [], [voidOf(0, 3, 5)])), /a void dot 3 not covered by its actor's floor 2/);
    refused(frame(body([entry(A, 2, 5, 1)], [], [voidOf(0, 2, 5), voidOf(0, 1, 5)])), /a void out of order/);
    refused(frame([...body([entry(A, 2, 5, 1)], [], []), 7]), /7 resets cannot fit/);
    // The resets section (after the voids, only when there are resets): actor index, floor, p, n.
    expect(decodeCounter(frame([...body([entry(A, 2, 5, 1)], [], []), 1, 0, 1, 5, 0])).state.resets).toEqual([
      { actor: A, floor: 1, p: 5, n: 0 },
    ]);
    refused(frame([...body([entry(A, 2, 5, 1)], [], []), 1, 0, 1, 5, 0, 7]), /trailing bytes after the resets/);
    refused(frame([...body([entry(A, 2, 5, 1)], [], []), 0]), /empty resets section/);
    refused(frame([...body([entry(A, 2, 5, 1)], [], []), 1, 1, 1, 1, 0]), /a reset names actor 1 of 1/);
    refused(frame([...body([entry(A, 2, 5, 1)], [], []), 1, 0, 3, 5, 1]), /above its actor's entry/);
    refused(
      frame([...body([entry(A, 2, 5, 1)], [], []), 1, 0, 2, 4, 1]),
      /a reset \(2, 4, 1\) above its actor's entry \(2, 5, 1\)/,
    ); // at the entry's floor: its sums exactly
    refused(frame([...body([entry(A, 3, 5, 1)], [], []), 1, 0, 2, 0, 1]), /a reset of 2 dots summing to less than 2/);
    refused(
      frame(body([entry(A, 2, 10, 0)], [op(0, 1, 5, 1), op(0, 2, 5, 2)], [])),
      /a duplicate logged op \(2\) without its void/,
    );
    expect(
      decodeCounter(frame(body([entry(A, 2, 10, 0)], [op(0, 1, 5, 1), op(0, 2, 5, 2)], [voidOf(0, 2, 5)]))).state.voids,
    ).toEqual([{ actor: A, counter: 2, amount: 5 }]);
    // Voids that could only lose increments.
    refused(
      frame(body([entry(A, 2, 10, 0)], [op(0, 1, 5, 1), op(0, 2, 5, 2)], [voidOf(0, 2, -5)])),
      /a void of -5 on a logged op of 5/,
    );
    refused(frame(body([entry(A, 2, 5, 1)], [], [voidOf(0, 1, 9)])), /voids taking more than actor 0's entry counts/);
    refused(
      frame(body([entry(A, 2, 5, 1)], [], [voidOf(0, 1, -1), voidOf(0, 2, -1)])),
      /voids taking more than actor 0's entry counts/,
    );
  });

  it('codes a delta with its base, and keeps deltas and records apart', () => {
    const before = build([[A, 2, 1]]);
    const { delta } = increment(before, A, 3, idOf(2, 3));
    expect(delta.base).toEqual({ actor: A, floor: 1 });
    const back = decodeCounterDelta(encodeCounterDelta(delta));
    expect(back).toEqual(delta);
    expect(encodeCounterDelta(back).equals(encodeCounterDelta(delta))).toBe(true);
    // A full state's delta is the record's bytes (its header, the sender's bookkeeping, dropped); a delta is no record.
    expect(encodeCounterDelta({ state: before }).equals(encodeCounter(before))).toBe(true);
    expect(decodeCounterDelta(encodeCounter(before))).toEqual({ state: before });
    expect(decodeCounterDelta(encodeCounter(before, 7, 1234))).toEqual({ state: before });
    expect(() => decodeCounter(encodeCounterDelta(delta))).toThrow(
      /counter record: a delta \(it has a base\), not a stored record/,
    );
    // A base not below its entry's floor is refused: format, flags, 1 entry (actor, floor 2,
    // p 5, n 0), then the base's actor index and floor (byte 23).
    const bad = Buffer.from(encodeCounterDelta(delta));
    expect([bad[1], bad[19], bad[22], bad[23]]).toEqual([4, 2, 0, 1]);
    bad[23] = 2;
    bad.writeUInt32BE(crc32(bad.subarray(0, bad.length - 4)), bad.length - 4);
    expect(() => decodeCounterDelta(bad)).toThrow(/counter record: a base floor 2 not below its entry's 2/);
  });

  it('applies a delta only in order: a replica that missed an earlier increment gets the full state, and counts no request twice', () => {
    // The first coordinator issues X at A, then dies; the second issues X again at B.
    const x = idOf(1, 1),
      y = idOf(2, 1);
    const a1 = increment(EMPTY_COUNTER, A, 1, x);
    const b1 = increment(EMPTY_COUNTER, B, 1, x);
    // A learns of B's copy (the pair is voided there), then issues Y.
    const ay = increment(applyDelta(a1.state, b1.delta)!, A, 1, y);
    expect(value(ay.state)).toBe(2n);
    // C got B's copy but not A's first delta: A's second delta has a gap there...
    const c = applyDelta(EMPTY_COUNTER, b1.delta)!;
    expect(applyDelta(c, ay.delta)).toBeUndefined();
    // ...joined anyway, X would count twice (A's entry covers A:1, whose op the delta lacks).
    expect(value(join(c, ay.delta.state))).toBe(3n);
    // The full state brings A:1's op, and the pair is seen.
    expect(value(join(c, ay.state))).toBe(2n);
  });

  it('refuses damaged bytes or reads exactly what they encode, and never runs away on them', () => {
    fc.assert(
      fc.property(
        stateArb,
        fc.array(fc.tuple(fc.nat(), fc.nat(255)), { minLength: 1, maxLength: 4 }),
        fc.nat(40),
        (s, hits, cut) => {
          const bytes = Buffer.from(encodeCounter(s, 3));
          const body = bytes.subarray(0, bytes.length - 4);
          for (const [at, x] of hits) body[at % body.length] = x;
          const damaged = frame([...body.subarray(2, Math.max(2, body.length - (cut % 3 === 0 ? cut : 0)))], body[1]);
          damaged[0] = body[0]!;
          damaged.writeUInt32BE(crc32(damaged.subarray(0, damaged.length - 4)), damaged.length - 4);
          let decoded;
          try {
            decoded = decodeCounter(damaged);
          } catch (e) {
            expect(e).toBeInstanceOf(DecodeError);
            return;
          }
          expect(encodeCounter(decoded.state, decoded.ownerEpoch, decoded.heldSince).equals(damaged)).toBe(true);
        },
      ),
      { numRuns: 2000, seed: 29 },
    );
  });
});

describe('counter: increments', () => {
  it('refuses an amount that is zero or not a safe integer, with what to send', () => {
    for (const bad of [0, 1.5, Number.NaN, Infinity, 2 ** 53, -(2 ** 53)]) {
      expect(() => increment(EMPTY_COUNTER, A, bad)).toThrow(
        expect.objectContaining({
          code: 'KV_BAD_AMOUNT',
          message: expect.stringMatching(/nonzero integer .*negative to decrement/),
        }) as Error,
      );
    }
  });

  it("refuses an increment that would take one replica's sum past 2^53 - 1, leaving the counter as it was", () => {
    const near = build([
      [A, Number.MAX_SAFE_INTEGER - 1],
      [A, -Number.MAX_SAFE_INTEGER],
    ]);
    expect(value(near)).toBe(-1n);
    let error: unknown;
    try {
      increment(near, A, 2);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(KvError);
    expect(error).toMatchObject({
      code: 'KV_COUNTER_OVERFLOW',
      message: expect.stringMatching(/increments .* would pass 9007199254740991 .*not changed/) as string,
    });
    expect(() => increment(near, A, -1)).toThrow(expect.objectContaining({ code: 'KV_COUNTER_OVERFLOW' }) as Error);
    expect(value(increment(near, A, 1).state)).toBe(0n); // up to the bound is fine
    expect(value(increment(near, B, Number.MAX_SAFE_INTEGER).state)).toBe(BigInt(Number.MAX_SAFE_INTEGER) - 1n); // another replica's sum is its own
  });

  it('sums exactly past 2^53 across replicas', () => {
    const s = join(build([[A, Number.MAX_SAFE_INTEGER]]), build([[B, Number.MAX_SAFE_INTEGER]]));
    expect(value(s)).toBe(2n * BigInt(Number.MAX_SAFE_INTEGER));
  });

  it('gives a request id per request and amount, unlike any other', () => {
    const r = Buffer.from('request-1');
    expect(counterWriteId(r, 5)).toBe(counterWriteId(Buffer.from('request-1'), 5));
    expect(counterWriteId(r, 5)).not.toBe(counterWriteId(r, -5));
    expect(counterWriteId(r, 5)).not.toBe(counterWriteId(Buffer.from('request-2'), 5));
    expect(counterWriteId(r, 5)).toHaveLength(8);
  });

  it('answers a request issued again with the whole state, which completes a replication the first coordinator left', () => {
    const id = idOf(1, 4);
    const first = increment(build([[A, 1, 9]]), A, 4, id);
    const again = increment(first.state, A, 4, id);
    expect(again.duplicate).toBe(true);
    expect(again.state).toBe(first.state);
    expect(again.delta).toEqual({ state: first.state });
    // A replica that never got the first delta gets the increment once from the second answer.
    const replica = applyDelta(build([[C, 2]]), again.delta)!;
    expect(value(replica)).toBe(2n + 1n + 4n);
    expect(isDuplicate(replica, id)).toBe(true);
    expect(value(join(replica, first.state))).toBe(2n + 1n + 4n);
  });

  it('takes one write id on two amounts (a hash collision) for two increments, never one dropped', () => {
    const id = idOf(1, 3);
    const a = increment(build([[A, 3, 1]]), A, 5, id);
    expect(a.duplicate).toBe(false);
    expect(value(a.state)).toBe(8n);
    const b = build([[B, 5]]);
    const both = join(a.state, increment(b, B, 3, id).state);
    expect(value(both)).toBe(3n + 5n + 5n); // A's 3 and B's 3 are one increment; A's 5 another
    expect(both.voids).toEqual([{ actor: B, counter: 2, amount: 3 }]);
  });

  it('counts an increment issued at two replicas once when both copies meet in a log, whatever the order', () => {
    const a = build([
      [A, 3, 1],
      [A, 1, 2],
    ]);
    const b = build([[B, 3, 1]]);
    expect(value(join(a, b))).toBe(4n);
    expect(join(a, b).voids).toEqual([{ actor: B, counter: 1, amount: 3 }]);
    expect(encodeCounter(join(a, b)).equals(encodeCounter(join(b, a)))).toBe(true);
    expect(implied(join(a, b).log)).toEqual(join(a, b).voids);
  });

  it('reports entries that share a floor but not sums (corruption), and joins them the same either way', () => {
    const a = build([[A, 3]]);
    const bad: CounterState = { ...a, entries: [{ actor: A, floor: 1, p: 4, n: 0 }] };
    expect(entryConflicts(a, bad)).toEqual([A]);
    expect(entryConflicts(a, a)).toEqual([]);
    expect(join(a, bad)).toEqual(join(bad, a));
  });
});

describe('counter: past the log window', () => {
  it('counts an increment issued twice at worst twice, never lost, once its first copy has left the log', () => {
    const amount = 7;
    const id = idOf(0, amount);
    // A issues the request, then LOG_MAX more logged increments push it out of its log.
    let a = increment(EMPTY_COUNTER, A, amount, id).state;
    for (let k = 1; k <= LOG_MAX; k++) a = increment(a, A, 1, idOf(k, 1)).state;
    expect(a.log).toHaveLength(LOG_MAX);
    expect(isDuplicate(a, id)).toBe(false);
    // The same request reaches B, which never saw it: a second dot.
    const b = increment(EMPTY_COUNTER, B, amount, id).state;
    const distinct = BigInt(amount + LOG_MAX);
    // The copies never share a log: counted twice, the documented failure; never less.
    expect(value(join(a, b))).toBe(distinct + BigInt(amount));
    expect(value(join(b, a))).toBe(distinct + BigInt(amount));
    // Issued again at A itself, past its window: a new dot, twice too, never lost.
    expect(value(increment(a, A, amount, id).state)).toBe(distinct + BigInt(amount));
    // Inside the window the same race counts once.
    let inside = increment(EMPTY_COUNTER, A, amount, id).state;
    for (let k = 1; k < LOG_MAX; k++) inside = increment(inside, A, 1, idOf(k, 1)).state;
    expect(value(join(inside, b))).toBe(BigInt(amount + LOG_MAX - 1));
  });

  it('keeps voids found inside the window after their ops leave the log', () => {
    const id = idOf(0, 5);
    const both = join(increment(EMPTY_COUNTER, A, 5, id).state, increment(EMPTY_COUNTER, B, 5, id).state);
    expect(value(both)).toBe(5n);
    let later = both;
    for (let k = 1; k <= LOG_MAX; k++) later = increment(later, C, 1, idOf(k, 1)).state;
    expect(later.log.some((o) => o.id === id)).toBe(false);
    expect(later.voids).toEqual([{ actor: B, counter: 1, amount: 5 }]);
    expect(value(later)).toBe(5n + BigInt(LOG_MAX));
    expect(decodeCounter(encodeCounter(later)).state).toEqual(later);
  });
});
