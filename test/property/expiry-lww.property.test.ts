/**
 * Expiry and last-writer-wins on the pure algebra (versions.ts), on random histories of
 * writes and merges across 3 replicas:
 *
 * - Expiry: puts carry random expiries, and replicas reclaim (withoutExpired: rewrite, or
 *   drop the whole record) at random times. After full anti-entropy every replica shows
 *   exactly the writes that nothing superseded and that have not expired: reclaiming
 *   never brings back a superseded value, and never loses a live one.
 * - lww: mergeLww is a join (idempotent, commutative, associative, to the byte through
 *   the codec), and after full anti-entropy every replica holds the one write greatest
 *   in (written at, dot) order, whatever the order of merges.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRecord, encodeRecord } from '../../src/kinds/versions/codec.js';
import {
  EMPTY_VERSIONS,
  liveValues,
  merge,
  mergeLww,
  sameVersions,
  update,
  updateLww,
  withoutExpired,
} from '../../src/kinds/versions/versions.js';
import type { Clock, Versions } from '../../src/kinds/versions/versions.js';

type Op =
  | { kind: 'put' | 'del'; at: number; readFrom: number; ttl: number; tick: number }
  | { kind: 'merge'; into: number; from: number; tick: number }
  | { kind: 'reclaim'; at: number; tick: number };

const tick = fc.nat(3);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('put' as const),
      at: fc.nat(2),
      readFrom: fc.nat(2),
      ttl: fc.nat(4),
      tick,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('del' as const),
      at: fc.nat(2),
      readFrom: fc.nat(2),
      ttl: fc.constant(0),
      tick,
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('merge' as const), into: fc.nat(2), from: fc.nat(2), tick }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('reclaim' as const), at: fc.nat(2), tick }) },
);
const historyArb = fc.array(opArb, { minLength: 1, maxLength: 60 });

const ACTORS = ['A', 'B', 'C'].map((c) => c.repeat(16));

const covers = (clock: Clock, actor: string, counter: number): boolean => (clock.get(actor) ?? 0) >= counter;
const encode = (v: Versions): Buffer => encodeRecord({ versions: v, ownerEpoch: undefined, deletedAt: undefined });

/** Full anti-entropy: every replica merges every other, twice round. */
function converge(replicas: Versions[], join: (a: Versions, b: Versions) => Versions): void {
  for (let round = 0; round < 2; round++)
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) replicas[i] = join(replicas[i]!, replicas[j]!);
}

/**
 * One history: every state canonical through the codec, and after full anti-entropy every
 * replica shows exactly the writes nothing superseded that have not expired `after` later.
 */
function expiryHistory(history: readonly Op[], after: number): void {
  const replicas: Versions[] = [EMPTY_VERSIONS, EMPTY_VERSIONS, EMPTY_VERSIONS];
  // Each replica's actor: the store moves to a new epoch before it reclaims (store.ts
  // reclaimExpired, actors.ts), since a dropped record's clock goes with it and its
  // next write must not issue a dot other replicas still hold.
  const epochs = [0, 0, 0];
  const actorOf = (i: number): string => `${epochs[i]}`.padStart(16, 'ABC'[i]!);
  const writes: { dot: [string, number]; value: string | null; expiresAt: number | undefined; context: Clock }[] = [];
  let now = 1;
  for (const [i, op] of history.entries()) {
    now += op.tick;
    if (op.kind === 'merge') replicas[op.into] = merge(replicas[op.into]!, replicas[op.from]!);
    else if (op.kind === 'reclaim') {
      epochs[op.at]!++;
      const r = withoutExpired(replicas[op.at]!, now);
      replicas[op.at] = r === 'drop' ? EMPTY_VERSIONS : r;
    } else {
      const context = replicas[op.readFrom]!.clock;
      const value = op.kind === 'put' ? `w${i}` : null;
      const expiresAt = value !== null && op.ttl > 0 ? now + op.ttl : undefined;
      const actor = actorOf(op.at);
      const next = update(replicas[op.at]!, context, actor, value === null ? null : Buffer.from(value), { expiresAt });
      writes.push({ dot: [actor, next.clock.get(actor)!], value, expiresAt, context });
      replicas[op.at] = next;
    }
    // Every state stays canonical through the codec.
    for (const v of replicas) expect(encode(decodeRecord(encode(v)).versions).equals(encode(v))).toBe(true);
  }
  converge(replicas, merge);
  const at = now + after;
  const expected = writes
    .filter((w) => w.value !== null && !writes.some((o) => o !== w && covers(o.context, w.dot[0], w.dot[1])))
    .filter((w) => w.expiresAt === undefined || w.expiresAt > at)
    .map((w) => w.value!)
    .sort();
  for (const v of replicas) expect(liveValues(v, at).map(String).sort()).toEqual(expected);
}

describe('expiry: reclaiming never resurrects and never loses', () => {
  it('after full anti-entropy, each replica shows exactly the writes nothing superseded that have not expired', () => {
    fc.assert(fc.property(historyArb, fc.nat(20), expiryHistory), { numRuns: 400, seed: 29, endOnFailure: true });
  });

  // Found on a random seed (-984137202, path 3100), an error of this test's model, not of
  // the store: replica 1 reclaimed (dropped) its only record, then wrote the key again
  // under the same actor, issuing B:1 a second time while replica 0 still held the first
  // B:1, so the new write merged away as seen. The store moves to a new epoch before it
  // reclaims, as the model now does; this history keeps it so.
  it('a record dropped by reclaiming, then written again at the same replica, is not lost', () => {
    const put = (at: number, readFrom: number, ttl: number, t: number): Op => ({
      kind: 'put',
      at,
      readFrom,
      ttl,
      tick: t,
    });
    expiryHistory(
      [
        put(1, 0, 1, 1),
        { kind: 'merge', into: 0, from: 1, tick: 5 },
        { kind: 'reclaim', at: 1, tick: 3 },
        { kind: 'del', at: 0, readFrom: 2, ttl: 0, tick: 2 },
        put(1, 2, 0, 0),
      ],
      14,
    );
  });
});

describe('lww: the merge is a join and the latest write wins', () => {
  type LwwOp =
    | { kind: 'put' | 'del'; at: number; readFrom: number; clock: number }
    | { kind: 'merge'; into: number; from: number };
  const lwwOp: fc.Arbitrary<LwwOp> = fc.oneof(
    // Write times from a few values: ties, and writers whose clocks run behind.
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constantFrom('put' as const, 'del' as const),
        at: fc.nat(2),
        readFrom: fc.nat(2),
        clock: fc.nat(6),
      }),
    },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('merge' as const), into: fc.nat(2), from: fc.nat(2) }) },
  );
  function play(history: readonly LwwOp[]): {
    replicas: Versions[];
    seen: Versions[];
    writes: { at: number; actor: string; counter: number; value: string | null }[];
  } {
    const replicas: Versions[] = [EMPTY_VERSIONS, EMPTY_VERSIONS, EMPTY_VERSIONS];
    const seen: Versions[] = [];
    const writes: { at: number; actor: string; counter: number; value: string | null }[] = [];
    for (const [i, op] of history.entries()) {
      if (op.kind === 'merge') replicas[op.into] = mergeLww(replicas[op.into]!, replicas[op.from]!);
      else {
        const value = op.kind === 'put' ? `w${i}` : null;
        const next = updateLww(
          replicas[op.at]!,
          replicas[op.readFrom]!.clock,
          ACTORS[op.at]!,
          value === null ? null : Buffer.from(value),
          op.clock,
        );
        const s = next.siblings[0]!;
        writes.push({ at: s.at!, actor: s.actor, counter: s.counter, value });
        replicas[op.at] = next;
      }
      seen.push(...replicas);
    }
    return { replicas, seen, writes };
  }
  const same = (a: Versions, b: Versions): boolean => sameVersions(a, b) && encode(a).equals(encode(b));
  const statesArb = fc.array(lwwOp, { minLength: 1, maxLength: 40 }).map((h) => play(h).seen);
  const pick = (states: Versions[], i: number): Versions => states[i % states.length]!;

  it('is idempotent, commutative and associative', () => {
    fc.assert(
      fc.property(statesArb, fc.nat(), fc.nat(), fc.nat(), (states, i, j, k) => {
        const [a, b, c] = [pick(states, i), pick(states, j), pick(states, k)];
        return (
          same(mergeLww(a, a), a) &&
          same(mergeLww(a, b), mergeLww(b, a)) &&
          same(mergeLww(mergeLww(a, b), c), mergeLww(a, mergeLww(b, c)))
        );
      }),
      { numRuns: 400, seed: 29, endOnFailure: true },
    );
  });

  it('converges on the greatest write by (written at, dot), and a write supersedes what its replica held whatever its clock', () => {
    fc.assert(
      fc.property(fc.array(lwwOp, { minLength: 1, maxLength: 40 }), (history) => {
        const { replicas, writes } = play(history);
        converge(replicas, mergeLww);
        if (writes.length === 0) return;
        const order = (x: (typeof writes)[0], y: (typeof writes)[0]): number =>
          x.at - y.at || (x.actor < y.actor ? -1 : x.actor > y.actor ? 1 : x.counter - y.counter);
        const winner = [...writes].sort(order).at(-1)!;
        for (const v of replicas) {
          expect(v.siblings).toHaveLength(1);
          expect(v.siblings[0]).toMatchObject({ actor: winner.actor, counter: winner.counter, at: winner.at });
          expect(liveValues(v, 0).map(String)).toEqual(winner.value === null ? [] : [winner.value]);
        }
      }),
      { numRuns: 400, seed: 29, endOnFailure: true },
    );
  });
});
