/**
 * The laws the rest of ringkv relies on (DESIGN.md decision 5): merge is idempotent,
 * commutative and associative, and nothing acknowledged is lost — on random
 * interleavings of puts, deletes and merges across 3 replicas, first on the pure
 * algebra, then through real stores (actors, codec, locks) on the memory engine.
 *
 * The oracle: a write is superseded exactly when another write's context (what its
 * read saw) covers it. After every replica has merged every other, each replica must
 * hold exactly the writes that nothing superseded.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clockBytes, contextFromClock, decodeContext, decodeRecord, encodeRecord } from '../../src/storage/codec.js';
import { MemoryEngine, Store } from '../../src/storage/index.js';
import { EMPTY_VERSIONS, liveValues, merge, sameVersions, update } from '../../src/storage/versions.js';
import type { Clock, Versions } from '../../src/storage/versions.js';

const ACTORS = ['A', 'B', 'C'].map((c) => c.repeat(16));

type Op = { kind: 'put' | 'del'; at: number; readFrom: number } | { kind: 'merge'; into: number; from: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('put' as const), at: fc.nat(2), readFrom: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('del' as const), at: fc.nat(2), readFrom: fc.nat(2) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('merge' as const), into: fc.nat(2), from: fc.nat(2) }) },
);
const historyArb = fc.array(opArb, { minLength: 1, maxLength: 60 });

interface Write {
  readonly id: string;
  readonly context: Clock;
}

function covers(clock: Clock, actor: string, counter: number): boolean {
  return (clock.get(actor) ?? 0) >= counter;
}

/** Run a history on the pure algebra; return every replica state seen and the writes. */
function play(history: readonly Op[]): { replicas: Versions[]; seen: Versions[]; writes: Map<string, Write> } {
  const replicas: Versions[] = [EMPTY_VERSIONS, EMPTY_VERSIONS, EMPTY_VERSIONS];
  const seen: Versions[] = [];
  const writes = new Map<string, Write>(); // key: "actor/counter"
  for (const [i, op] of history.entries()) {
    if (op.kind === 'merge') replicas[op.into] = merge(replicas[op.into]!, replicas[op.from]!);
    else {
      const context = replicas[op.readFrom]!.clock;
      const next = update(replicas[op.at]!, context, ACTORS[op.at]!, op.kind === 'put' ? Buffer.from(`w${i}`) : null);
      const counter = next.clock.get(ACTORS[op.at]!)!;
      writes.set(`${ACTORS[op.at]}/${counter}`, { id: `w${i}`, context });
      replicas[op.at] = next;
    }
    seen.push(...replicas);
  }
  return { replicas, seen, writes };
}

function same(a: Versions, b: Versions): boolean {
  return sameVersions(a, b) && encodeRecord({ versions: a, ownerEpoch: undefined, deletedAt: undefined }).equals(encodeRecord({ versions: b, ownerEpoch: undefined, deletedAt: undefined }));
}

describe('versions: merge laws', () => {
  const statesArb = historyArb.map((h) => play(h).seen);
  const pick = (states: Versions[], i: number) => states[i % states.length]!;

  it('is idempotent', () => {
    fc.assert(fc.property(statesArb, fc.nat(), (states, i) => same(merge(pick(states, i), pick(states, i)), pick(states, i))), { numRuns: 300 });
  });

  it('is commutative (to the byte)', () => {
    fc.assert(
      fc.property(statesArb, fc.nat(), fc.nat(), (states, i, j) => same(merge(pick(states, i), pick(states, j)), merge(pick(states, j), pick(states, i)))),
      { numRuns: 300 },
    );
  });

  it('is associative', () => {
    fc.assert(
      fc.property(statesArb, fc.nat(), fc.nat(), fc.nat(), (states, i, j, k) => {
        const [a, b, c] = [pick(states, i), pick(states, j), pick(states, k)];
        return same(merge(merge(a, b), c), merge(a, merge(b, c)));
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips through the codec, and contexts through theirs', () => {
    fc.assert(
      fc.property(statesArb, fc.nat(), fc.option(fc.nat({ max: 2 ** 40 }), { nil: undefined }), fc.integer({ min: 0, max: 0xffffffff }), (states, i, epoch, check) => {
        const v = pick(states, i);
        const bytes = encodeRecord({ versions: v, ownerEpoch: epoch, deletedAt: undefined });
        const rec = decodeRecord(bytes);
        expect(rec.ownerEpoch).toBe(epoch);
        expect(same(rec.versions, v)).toBe(true);
        expect(liveValues(rec.versions).map(String)).toEqual(liveValues(v).map(String));
        expect([...decodeContext(contextFromClock(check, clockBytes(bytes)), check)].sort()).toEqual([...v.clock].sort());
      }),
      { numRuns: 200 },
    );
  });
});

describe('versions: nothing acknowledged is lost (3 replicas)', () => {
  it('after full anti-entropy every replica holds exactly the writes nothing superseded', () => {
    fc.assert(
      fc.property(historyArb, (history) => {
        const { replicas, writes } = play(history);
        let all = EMPTY_VERSIONS;
        for (const r of replicas) all = merge(all, r);
        for (const r of replicas) expect(same(merge(r, all), all)).toBe(true);
        const survivors = [...writes.entries()]
          .filter(([dot]) => {
            const [actor, counter] = [dot.slice(0, 16), Number(dot.slice(17))];
            return ![...writes.entries()].some(([other, w]) => other !== dot && covers(w.context, actor, counter));
          })
          .map(([, w]) => w.id)
          .sort();
        const held = all.siblings.map((s) => {
          const w = writes.get(`${s.actor}/${s.counter}`)!;
          expect(s.value === null ? null : String(s.value)).toBe(history[Number(w.id.slice(1))]!.kind === 'del' ? null : w.id);
          return w.id;
        });
        expect(held.sort()).toEqual(survivors);
      }),
      { numRuns: 500 },
    );
  });
});

describe('stores: nothing acknowledged is lost (3 replicas, memory engine)', () => {
  it('holds for puts, deletes and record merges through the full store', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, async (history) => {
        const stores = await Promise.all([0, 1, 2].map(() => Store.open({ engine: new MemoryEngine() })));
        const key = 'k';
        /** For each write: its id and the ids its read saw (those it supersedes). */
        const superseded = new Set<string>();
        const written: string[] = [];
        for (const [i, op] of history.entries()) {
          if (op.kind === 'merge') {
            const rec = await stores[op.from]!.getRecord(key);
            if (rec) await stores[op.into]!.merge(key, rec);
            continue;
          }
          const read = await stores[op.readFrom]!.get(key);
          const readRec = await stores[op.readFrom]!.getRecord(key);
          // What the read saw: the live values and the tombstones (ids of deletes).
          const sawIds = readRec ? decodeRecord(readRec).versions.siblings.map((s) => tombIds.get(`${s.actor}/${s.counter}`) ?? String(s.value)) : [];
          for (const id of sawIds) superseded.add(id);
          const id = `w${i}`;
          written.push(id);
          if (op.kind === 'put') await stores[op.at]!.put(key, Buffer.from(id), read.context);
          else {
            const w = await stores[op.at]!.delete(key, read.context);
            const mine = decodeRecord(w.record).versions.siblings.filter((s) => s.value === null && !tombIds.has(`${s.actor}/${s.counter}`));
            for (const s of mine) tombIds.set(`${s.actor}/${s.counter}`, id);
          }
        }
        for (let round = 0; round < 2; round++)
          for (const from of stores)
            for (const into of stores) {
              const rec = await from.getRecord(key);
              if (rec) await into.merge(key, rec);
            }
        const records = await Promise.all(stores.map((s) => s.getRecord(key)));
        const expected = written.filter((id) => !superseded.has(id)).sort();
        for (const rec of records) {
          const ids = rec ? decodeRecord(rec).versions.siblings.map((s) => tombIds.get(`${s.actor}/${s.counter}`) ?? String(s.value)) : [];
          expect(ids.sort()).toEqual(expected);
        }
        tombIds.clear();
        await Promise.all(stores.map((s) => s.close()));
      }),
      { numRuns: 60 },
    );
  });
});

/** Tombstones carry no value: remember which delete issued each tombstone dot. */
const tombIds = new Map<string, string>();
