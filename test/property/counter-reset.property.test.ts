/**
 * A counter's reset (src/kinds/counter/counter.ts: reset, seenEntries) on random histories across
 * 3 replicas: increments and decrements at any replica, each delta delivered, dropped,
 * delivered twice or late (a replica with a gap takes the issuer's full state), and resets
 * of what one replica held, applied at any replica and sent on as full states, as the
 * coordinator does. The oracle is the table of every dot issued and of what each reset saw:
 *  - at every step every replica counts exactly the dots its entries cover and no reset it
 *    holds saw;
 *  - after a full exchange the replicas are byte-equal and count exactly the dots no reset
 *    saw: an increment concurrent with a reset (not in what it read) survives it;
 *  - join is commutative, associative and idempotent to the byte on every state reached,
 *    and every record decodes to the state it was encoded from.
 */
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_COUNTER,
  applyDelta,
  counterWriteId,
  increment,
  join,
  reset,
  resetAboveEntry,
  value,
} from '../../src/kinds/counter/counter.js';
import { decodeCounter, encodeCounter } from '../../src/kinds/counter/counter-record.js';
import type { CounterDelta, CounterState } from '../../src/kinds/counter/counter.js';

const ACTORS = ['A', 'B', 'C'].map((c) => c.repeat(16));
const SETTINGS = { seed: 44, numRuns: 300, endOnFailure: true } as const;

type Step =
  | { readonly kind: 'inc'; readonly at: number; readonly amount: number }
  | { readonly kind: 'deliver'; readonly pick: number; readonly twice: boolean }
  | { readonly kind: 'drop'; readonly pick: number }
  | { readonly kind: 'reset'; readonly from: number; readonly at: number };

const amountArb = fc.integer({ min: -50, max: 50 }).filter((n) => n !== 0);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('inc' as const), at: fc.nat(2), amount: amountArb }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('deliver' as const), pick: fc.nat(), twice: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset' as const), from: fc.nat(2), at: fc.nat(2) }) },
);

const bytes = (s: CounterState): Buffer => encodeCounter(s);
const same = (a: CounterState, b: CounterState): boolean => bytes(a).equals(bytes(b));

interface Dot {
  readonly actor: string;
  readonly counter: number;
  readonly amount: number;
}

/** What the oracle says `s` counts: the dots its entries cover that none of its resets saw. */
function expected(s: CounterState, dots: readonly Dot[]): bigint {
  const floor = (list: readonly { actor: string; floor: number }[] | undefined, actor: string): number =>
    list?.find((e) => e.actor === actor)?.floor ?? 0;
  let v = 0n;
  for (const d of dots)
    if (d.counter <= floor(s.entries, d.actor) && d.counter > floor(s.resets, d.actor)) v += BigInt(d.amount);
  return v;
}

function play(history: readonly Step[]): {
  replicas: CounterState[];
  seen: CounterState[];
  dots: Dot[];
  resets: CounterState['entries'][];
} {
  const replicas: CounterState[] = [EMPTY_COUNTER, EMPTY_COUNTER, EMPTY_COUNTER];
  const inFlight: { to: number; delta: CounterDelta; full: CounterState }[] = [];
  const dots: Dot[] = [];
  const seen: CounterState[] = [];
  const resets: CounterState['entries'][] = [];
  const check = (): void => {
    for (const r of replicas) {
      expect(value(r)).toBe(expected(r, dots));
      expect(same(decodeCounter(bytes(r)).state, r), 'a record decodes to its state').toBe(true);
    }
  };
  for (const step of history) {
    if (step.kind === 'inc') {
      const r = increment(replicas[step.at]!, ACTORS[step.at]!, step.amount);
      const e = r.state.entries.find((x) => x.actor === ACTORS[step.at])!;
      dots.push({ actor: e.actor, counter: e.floor, amount: step.amount });
      replicas[step.at] = r.state;
      seen.push(r.state, r.delta.state);
      for (const to of [0, 1, 2]) if (to !== step.at) inFlight.push({ to, delta: r.delta, full: r.state });
    } else if (step.kind === 'reset') {
      // The coordinator read `from`'s state and writes the reset of what it saw at `at`, then on to the others.
      const saw = replicas[step.from]!;
      if (saw.entries.length === 0) continue;
      resets.push(saw.entries);
      replicas[step.at] = reset(replicas[step.at]!, saw);
      if (step.from === step.at) expect(value(replicas[step.at]!), 'a replica reset of all it holds counts 0').toBe(0n);
      seen.push(replicas[step.at]!);
      for (const to of [0, 1, 2])
        if (to !== step.at) inFlight.push({ to, delta: { state: replicas[step.at]! }, full: replicas[step.at]! });
    } else if (inFlight.length > 0) {
      const i = step.pick % inFlight.length;
      const m = inFlight[i]!;
      if (step.kind === 'drop' || !step.twice) inFlight.splice(i, 1);
      if (step.kind === 'deliver')
        replicas[m.to] = applyDelta(replicas[m.to]!, m.delta) ?? join(replicas[m.to]!, m.full);
    }
    check();
  }
  return { replicas, seen, dots, resets };
}

describe('counter reset', () => {
  it('counts exactly what no reset saw, at every step and after a full exchange', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 40 }), (history) => {
        const { replicas, dots, resets } = play(history);
        const all = replicas.reduce(join);
        for (let i = 0; i < 3; i++) replicas[i] = join(replicas[i]!, all);
        expect(same(replicas[0]!, replicas[1]!) && same(replicas[1]!, replicas[2]!)).toBe(true);
        const sawDot = (d: Dot): boolean =>
          resets.some((r) => r.some((e) => e.actor === d.actor && d.counter <= e.floor));
        expect(value(replicas[0]!)).toBe(dots.filter((d) => !sawDot(d)).reduce((v, d) => v + BigInt(d.amount), 0n));
      }),
      SETTINGS,
    );
  });

  it('with request ids issued at several replicas: after a full exchange, a request counts once unless the reset saw its least copy, and a retry the reset saw is a duplicate where the reset landed', () => {
    const reqStep: fc.Arbitrary<Step | { kind: 'req'; at: number; req: number }> = fc.oneof(
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('req' as const), at: fc.nat(2), req: fc.nat(5) }) },
      {
        weight: 4,
        arbitrary: fc.record({ kind: fc.constant('deliver' as const), pick: fc.nat(), twice: fc.boolean() }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset' as const), from: fc.nat(2), at: fc.nat(2) }) },
    );
    fc.assert(
      fc.property(
        fc.array(amountArb, { minLength: 6, maxLength: 6 }),
        fc.array(reqStep, { minLength: 1, maxLength: 40 }),
        (amounts, history) => {
          const replicas: CounterState[] = [EMPTY_COUNTER, EMPTY_COUNTER, EMPTY_COUNTER];
          const inFlight: { to: number; delta: CounterDelta; full: CounterState }[] = [];
          const copies = new Map<number, { actor: string; counter: number }[]>();
          const floors = new Map<string, number>(); // the greatest reset floor per actor
          for (const step of history) {
            if (step.kind === 'req') {
              const amount = amounts[step.req]!;
              const r = increment(
                replicas[step.at]!,
                ACTORS[step.at]!,
                amount,
                counterWriteId(Buffer.from([step.req]), amount),
              );
              if (!r.duplicate) {
                const e = r.state.entries.find((x) => x.actor === ACTORS[step.at])!;
                copies.set(step.req, [...(copies.get(step.req) ?? []), { actor: e.actor, counter: e.floor }]);
              }
              replicas[step.at] = r.state;
              for (const to of [0, 1, 2]) if (to !== step.at) inFlight.push({ to, delta: r.delta, full: r.state });
            } else if (step.kind === 'reset') {
              const saw = replicas[step.from]!;
              if (saw.entries.length === 0) continue;
              for (const e of saw.entries) floors.set(e.actor, Math.max(floors.get(e.actor) ?? 0, e.floor));
              replicas[step.at] = reset(replicas[step.at]!, saw);
              expect(resetAboveEntry(replicas[step.at]!)).toBeUndefined();
              // A request the reset saw, sent again to the replica that took it: a duplicate, counted no more.
              for (const op of saw.log)
                expect(increment(replicas[step.at]!, ACTORS[step.at]!, op.amount, op.id).duplicate).toBe(true);
              for (const to of [0, 1, 2])
                if (to !== step.at)
                  inFlight.push({ to, delta: { state: replicas[step.at]! }, full: replicas[step.at]! });
            } else if (step.kind === 'deliver' && inFlight.length > 0) {
              const i = step.pick % inFlight.length;
              const m = inFlight[i]!;
              if (!step.twice) inFlight.splice(i, 1);
              replicas[m.to] = applyDelta(replicas[m.to]!, m.delta) ?? join(replicas[m.to]!, m.full);
            }
          }
          const all = replicas.reduce(join);
          let expected = 0n;
          for (const [req, cs] of copies) {
            const least = [...cs].sort((x, y) =>
              x.actor < y.actor ? -1 : x.actor > y.actor ? 1 : x.counter - y.counter,
            )[0]!;
            if (least.counter > (floors.get(least.actor) ?? 0)) expected += BigInt(amounts[req]!);
          }
          expect(value(all)).toBe(expected);
        },
      ),
      SETTINGS,
    );
  });

  it('join stays commutative, associative and idempotent with resets', () => {
    fc.assert(
      fc.property(
        fc.array(stepArb, { minLength: 1, maxLength: 30 }),
        fc.nat(),
        fc.nat(),
        fc.nat(),
        (history, i, j, k) => {
          const { seen } = play(history);
          if (seen.length === 0) return;
          const a = seen[i % seen.length]!,
            b = seen[j % seen.length]!,
            c = seen[k % seen.length]!;
          expect(same(join(a, b), join(b, a))).toBe(true);
          expect(same(join(join(a, b), c), join(a, join(b, c)))).toBe(true);
          expect(same(join(a, a), a)).toBe(true);
        },
      ),
      SETTINGS,
    );
  });

  it('an increment after a reset counts; a reset of nothing new changes nothing', () => {
    const a = ACTORS[0]!;
    let s = increment(increment(EMPTY_COUNTER, a, 5).state, a, -2).state;
    s = reset(s, s);
    expect(value(s)).toBe(0n);
    const again = reset(s, s);
    expect(same(again, s)).toBe(true);
    s = increment(s, a, 7).state;
    expect(value(s)).toBe(7n);
    expect(value(decodeCounter(encodeCounter(s)).state)).toBe(7n);
  });

  it('an increment issued at two replicas (one request) and seen by the reset under its lesser dot counts 0', () => {
    const id = counterWriteId(Buffer.from('req'), 4);
    const onA = increment(EMPTY_COUNTER, ACTORS[0]!, 4, id).state;
    const onB = increment(EMPTY_COUNTER, ACTORS[1]!, 4, id).state;
    // The reset saw A's copy (the lesser dot: the join voids B's); B's copy arrives after.
    const afterReset = join(reset(onA, onA), onB);
    expect(value(join(onA, onB))).toBe(4n);
    expect(value(afterReset)).toBe(0n);
  });

  it('one seen only under its greater dot counts once after the reset, never twice', () => {
    const id = counterWriteId(Buffer.from('req'), 4);
    const onA = increment(EMPTY_COUNTER, ACTORS[0]!, 4, id).state;
    const onB = increment(EMPTY_COUNTER, ACTORS[1]!, 4, id).state;
    const afterReset = join(reset(onB, onB), onA);
    expect(value(afterReset)).toBe(4n);
  });

  it('refuses a record whose reset is above its entry, or an empty resets section', () => {
    const a = ACTORS[0]!;
    const once = increment(EMPTY_COUNTER, a, 3).state;
    const twice = increment(reset(once, once), a, 1).state;
    const good = encodeCounter(twice);
    expect(value(decodeCounter(good).state)).toBe(1n);
    // The record ends: resets count 1, actor index 0, floor 1, p 3, n 0, then the CRC.
    const withCrc = (b: Buffer): Buffer => (b.writeUInt32BE(crc32(b.subarray(0, b.length - 4)), b.length - 4), b);
    const above = Buffer.from(good);
    expect([...above.subarray(above.length - 9, above.length - 4)]).toEqual([1, 0, 1, 3, 0]);
    above[above.length - 7] = 3; // floor 3, past the entry's 2
    expect(() => decodeCounter(withCrc(above))).toThrow(/above its actor's entry/);
    const empty = Buffer.concat([good.subarray(0, good.length - 9), Buffer.from([0]), Buffer.alloc(4)]);
    expect(() => decodeCounter(withCrc(empty))).toThrow(/empty resets section/);
  });
});
