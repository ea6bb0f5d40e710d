/**
 * The counter's algebra (src/kinds/counter/counter.ts) on random histories across 3 replicas:
 * increments and decrements with write ids drawn from a few requests (so one request is
 * issued again, at the replica that issued it or at another), increments without ids,
 * deltas delivered, dropped, delivered twice or reordered (applied by applyDelta: a replica
 * with a gap gets the issuer's full state instead, as the coordinator sends it), hints
 * (which keep full states), and full-state joins; then a full exchange. Histories stay inside the log window, but for
 * one test whose bursts of new requests push old ones out of the logs.
 *
 * The oracle is a table of every dot issued and the request it carried:
 *  - at every step, every replica and hint counts each dot its entries cover once, less
 *    its voids; voids fall only on covered dots of a request covered under a lesser dot
 *    too, so no request it holds is lost (its least covered dot counts);
 *  - inside the log window, at every step, no replica, hint or join of two replicas (a read
 *    at R=2) counts a request twice;
 *  - a request issued again where the log holds it issues nothing;
 *  - after the full exchange the replicas are byte-equal and count each request once
 *    (past the window: at least once, at most once per copy issued, never lost).
 * And the laws: join commutative, associative and idempotent to the byte on every state
 * the histories reach (replicas, deltas, hints), join(state, delta) = the new state, and
 * every delta in any order, any number of times, equals the full state's join.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EMPTY_COUNTER,
  LOG_MAX,
  applyDelta,
  counterWriteId,
  increment,
  join,
  trim,
  value,
} from '../../src/kinds/counter/counter.js';
import { encodeCounter } from '../../src/kinds/counter/counter-record.js';
import { amountArb, checkHeld, historyArb, stepArb, takeMessage } from '../../testkit/counter-histories.js';
import type { IssuedDot, Step } from '../../testkit/counter-histories.js';
import type { CounterDelta, CounterState, LoggedOp } from '../../src/kinds/counter/counter.js';

const ACTORS = ['A', 'B', 'C'].map((c) => c.repeat(16));
const SETTINGS = { seed: 29, endOnFailure: true } as const;

/** Histories past the log window: bursts of new requests at one replica push older ones out of its log. */
const burstArb: fc.Arbitrary<Step> = fc.record({
  kind: fc.constant('burst' as const),
  at: fc.nat(2),
  n: fc.integer({ min: 100, max: LOG_MAX }),
});
const pastWindowArb = fc.tuple(
  fc.array(amountArb, { minLength: 6, maxLength: 6 }),
  fc.array(fc.oneof({ weight: 6, arbitrary: stepArb }, { weight: 1, arbitrary: burstArb }), {
    minLength: 1,
    maxLength: 25,
    size: 'max',
  }),
);

const bytes = (s: CounterState): Buffer => encodeCounter(s);
const same = (a: CounterState, b: CounterState): boolean => bytes(a).equals(bytes(b));

interface Played {
  readonly replicas: CounterState[];
  /** Every state reached: replicas, hints and deltas. */
  readonly seen: CounterState[];
  readonly dots: IssuedDot[];
}

/** Run a history; `checked`: check every replica and hint at every step (the law tests only collect states). */
function play(amounts: readonly number[], history: readonly Step[], checked = true): Played {
  const once = !history.some((s) => s.kind === 'burst'); // inside the log window
  const replicas: CounterState[] = [EMPTY_COUNTER, EMPTY_COUNTER, EMPTY_COUNTER];
  const hints: CounterState[] = [EMPTY_COUNTER, EMPTY_COUNTER, EMPTY_COUNTER];
  // Each message: the delta, and the issuer's full state then (what the coordinator sends on a gap).
  const inFlight: { to: number; delta: CounterDelta; full: CounterState }[] = [];
  const dots: IssuedDot[] = [];
  const seen: CounterState[] = [];
  const issue = (at: number, amount: number, op: string, id?: string): boolean => {
    const before = replicas[at]!;
    const r = increment(before, ACTORS[at]!, amount, id);
    seen.push(r.delta.state);
    if (r.duplicate) {
      // The issuer holds it: nothing new here, and the delta brings it anywhere.
      expect(same(r.state, before)).toBe(true);
      expect(id !== undefined && before.log.some((o) => o.id === id)).toBe(true);
    } else {
      expect(same(applyDelta(before, r.delta)!, r.state), 'applyDelta(state, delta) is the new state').toBe(true);
      const e = r.state.entries.find((x) => x.actor === ACTORS[at])!;
      dots.push({ actor: e.actor, counter: e.floor, op, amount });
    }
    replicas[at] = r.state;
    for (const to of [0, 1, 2]) if (to !== at) inFlight.push({ to, delta: r.delta, full: r.state });
    return r.duplicate;
  };
  for (const [i, step] of history.entries()) {
    switch (step.kind) {
      case 'inc': {
        const amount = amounts[step.req]!;
        const id = counterWriteId(Buffer.from([step.req]), amount);
        const logged = replicas[step.at]!.log.some((o) => o.id === id);
        expect(issue(step.at, amount, `r${step.req}`, id), 'a duplicate exactly when the issuer logs the id').toBe(
          logged,
        );
        break;
      }
      case 'blind':
        issue(step.at, step.amount, `b${i}`);
        break;
      case 'burst': {
        // n new requests, their deltas sent as one (joined) message to each other replica:
        // contiguous, so one delta from the floor before the first.
        let delta = EMPTY_COUNTER;
        const base = {
          actor: ACTORS[step.at]!,
          floor: replicas[step.at]!.entries.find((x) => x.actor === ACTORS[step.at])?.floor ?? 0,
        };
        for (let k = 0; k < step.n; k++) {
          const r = increment(
            replicas[step.at]!,
            ACTORS[step.at]!,
            1,
            counterWriteId(Buffer.from(`burst ${i} ${k}`), 1),
          );
          const e = r.state.entries.find((x) => x.actor === ACTORS[step.at])!;
          dots.push({ actor: e.actor, counter: e.floor, op: `burst ${i} ${k}`, amount: 1 });
          ((replicas[step.at] = r.state), (delta = join(delta, r.delta.state)));
        }
        for (const to of [0, 1, 2])
          if (to !== step.at) inFlight.push({ to, delta: { state: delta, base }, full: replicas[step.at]! });
        break;
      }
      case 'deliver': {
        const m = takeMessage(step, inFlight);
        if (m) replicas[m.to] = applyDelta(replicas[m.to]!, m.delta) ?? join(replicas[m.to]!, m.full);
        break;
      }
      case 'drop':
        takeMessage(step, inFlight);
        break;
      case 'hint': {
        const m = takeMessage(step, inFlight);
        if (m) {
          hints[m.to] = join(hints[m.to]!, m.full);
          seen.push(hints[m.to]!);
        }
        break;
      }
      case 'handoff':
        replicas[step.to] = join(replicas[step.to]!, hints[step.to]!);
        break;
      case 'merge':
        replicas[step.into] = join(replicas[step.into]!, replicas[step.from]!);
        break;
    }
    if (checked) {
      for (const s of [...replicas, ...hints]) checkHeld(s, dots, once);
      for (let x = 0; x < 3; x++)
        for (let y = x + 1; y < 3; y++) checkHeld(join(replicas[x]!, replicas[y]!), dots, once);
    }
    seen.push(...replicas);
  }
  return { replicas, seen, dots };
}

/** Play a history, then every replica joins every other (twice round); check they hold the same bytes and lose nothing. */
function playAndExchange(
  amounts: readonly number[],
  history: readonly Step[],
): { state: CounterState; dots: IssuedDot[] } {
  const { replicas, dots } = play(amounts, history);
  for (let round = 0; round < 2; round++)
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) replicas[i] = join(replicas[i]!, replicas[j]!);
  for (const r of replicas) checkHeld(r, dots, !history.some((s) => s.kind === 'burst'));
  expect(bytes(replicas[1]!).equals(bytes(replicas[0]!))).toBe(true);
  expect(bytes(replicas[2]!).equals(bytes(replicas[0]!))).toBe(true);
  return { state: replicas[0]!, dots };
}

describe('counter: histories with requests sent twice, lost and reordered deltas', () => {
  it('never loses a request at any step, and after a full exchange counts each request once, byte-equal everywhere', () => {
    fc.assert(
      fc.property(historyArb, ([amounts, history]) => {
        const { state, dots } = playAndExchange(amounts, history);
        const ops = new Map(dots.map((d) => [d.op, d.amount]));
        expect(value(state)).toBe([...ops.values()].reduce((t, a) => t + BigInt(a), 0n));
      }),
      { numRuns: 200, ...SETTINGS },
    );
  });

  it('issues nothing for a request whose id the issuer logs', () => {
    fc.assert(
      fc.property(historyArb, fc.nat(2), fc.nat(5), ([amounts, history], at, req) => {
        const { replicas } = play(amounts, history, false);
        const id = counterWriteId(Buffer.from([req]), amounts[req]!);
        const s = increment(replicas[at]!, ACTORS[at]!, amounts[req]!, id).state;
        const again = increment(s, ACTORS[at]!, amounts[req]!, id);
        expect(again.duplicate).toBe(true);
        expect(same(again.state, s)).toBe(true);
        expect(value(again.state)).toBe(value(s));
      }),
      { numRuns: 100, ...SETTINGS },
    );
  });
});

describe('counter: past the log window', () => {
  // checkHeld, at every step and after the exchange: each request counted at least once, and at
  // most once per dot issued for it (a request whose copies never shared a log counts twice).
  it('never loses a request, and converges byte-equal after a full exchange, with logs trimmed', () => {
    fc.assert(
      fc.property(pastWindowArb, ([amounts, history]) => {
        expect(playAndExchange(amounts, history).state.log.length).toBeLessThanOrEqual(LOG_MAX);
      }),
      { numRuns: 12, ...SETTINGS },
    );
  });
});

describe('counter: join laws on reachable states (to the byte)', () => {
  const statesArb = historyArb.map(([amounts, history]) => play(amounts, history, false).seen);
  const pick = (states: CounterState[], i: number): CounterState => states[i % states.length]!;

  it('is idempotent', () => {
    fc.assert(
      fc.property(statesArb, fc.nat(), (states, i) => same(join(pick(states, i), pick(states, i)), pick(states, i))),
      { numRuns: 200, ...SETTINGS },
    );
  });

  it('is commutative', () => {
    fc.assert(
      fc.property(statesArb, fc.nat(), fc.nat(), (states, i, j) =>
        same(join(pick(states, i), pick(states, j)), join(pick(states, j), pick(states, i))),
      ),
      { numRuns: 200, ...SETTINGS },
    );
  });

  it('is associative', () => {
    fc.assert(
      fc.property(statesArb, fc.nat(), fc.nat(), fc.nat(), (states, i, j, k) => {
        const [a, b, c] = [pick(states, i), pick(states, j), pick(states, k)];
        return same(join(join(a, b), c), join(a, join(b, c)));
      }),
      { numRuns: 200, ...SETTINGS },
    );
  });

  it('takes every delta, in any order and any number of times, to what the full state brings', () => {
    const run = fc.record({
      amounts: fc.array(amountArb, { minLength: 1, maxLength: 40 }),
      reqs: fc.array(fc.nat(9), { minLength: 40, maxLength: 40 }),
      order: fc.array(fc.nat(), { minLength: 1, maxLength: 80 }),
      start: fc.nat(40),
    });
    fc.assert(
      fc.property(run, ({ amounts, reqs, order, start }) => {
        // A replica B that issued a few of the same requests first, then A issues them all.
        let b = EMPTY_COUNTER;
        for (let i = 0; i < Math.min(start, amounts.length) % 4; i++)
          b = increment(b, ACTORS[1]!, amounts[i]!, counterWriteId(Buffer.from([reqs[i]!]), amounts[i]!)).state;
        let a = EMPTY_COUNTER;
        const deltas: CounterState[] = [];
        const applied: CounterDelta[] = [];
        for (const [i, amount] of amounts.entries()) {
          const r = increment(
            a,
            ACTORS[0]!,
            amount,
            i % 5 === 4 ? undefined : counterWriteId(Buffer.from([reqs[i]!]), amount),
          );
          ((a = r.state), deltas.push(r.delta.state), applied.push(r.delta));
        }
        let viaDeltas = b;
        for (const k of order) viaDeltas = join(viaDeltas, deltas[k % deltas.length]!);
        for (const d of deltas) viaDeltas = join(viaDeltas, d); // every delta at least once
        // In order (applyDelta), every delta applies, twice over changes nothing, and ends the same.
        let inOrder = b;
        for (const d of applied) inOrder = applyDelta(applyDelta(inOrder, d)!, d)!;
        return same(viaDeltas, join(b, a)) && same(inOrder, join(b, a));
      }),
      { numRuns: 300, ...SETTINGS },
    );
  });
});

describe('counter: the log window', () => {
  const opArb = fc.record({
    actor: fc.constantFrom(...ACTORS),
    counter: fc.integer({ min: 1, max: 30 }),
    seq: fc.integer({ min: 1, max: 40 }),
  });
  const byDot = (x: LoggedOp, y: LoggedOp): number =>
    x.actor < y.actor ? -1 : x.actor > y.actor ? 1 : x.counter - y.counter;
  /** Two logs drawn from one set of ops (a dot names one op, with one seq, wherever it is held). */
  const logsArb = fc
    .uniqueArray(opArb, { selector: (o) => `${o.actor}/${o.counter}`, maxLength: 60 })
    .chain((ops) => fc.tuple(fc.subarray(ops), fc.subarray(ops)))
    .map(
      ([x, y]) =>
        [x, y].map((ops) => ops.map((o): LoggedOp => ({ ...o, id: 'i'.repeat(8), amount: 1 })).sort(byDot)) as [
          LoggedOp[],
          LoggedOp[],
        ],
    );
  const union = (x: readonly LoggedOp[], y: readonly LoggedOp[]): LoggedOp[] => {
    const out = [...x];
    for (const o of y) if (!out.some((p) => p.actor === o.actor && p.counter === o.counter)) out.push(o);
    return out.sort(byDot);
  };

  it('trim keeps the greatest by (seq, dot), so trim(trim(X) ∪ Y) = trim(X ∪ Y)', () => {
    fc.assert(
      fc.property(logsArb, fc.integer({ min: 0, max: 12 }), ([x, y], max) => {
        const whole = trim(union(x, y), max);
        expect(trim(union(trim(x, max), y), max)).toEqual(whole);
        expect(whole.length).toBe(Math.min(max, union(x, y).length));
        const before = (d: LoggedOp, k: LoggedOp): boolean =>
          d.seq < k.seq || (d.seq === k.seq && (d.actor < k.actor || (d.actor === k.actor && d.counter < k.counter)));
        const dropped = union(x, y).filter((o) => !whole.includes(o));
        for (const d of dropped)
          for (const k of whole) expect(before(d, k), 'trim dropped an op more recent than one it kept').toBe(true);
      }),
      { numRuns: 500, ...SETTINGS },
    );
  });
});
