/**
 * The laws the rest of ringkv relies on: merge is idempotent,
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
import {
  clockBytes,
  contextFromClock,
  decodeContext,
  decodeRecord,
  encodeRecord,
} from '../../src/kinds/versions/codec.js';
import { MemoryEngine, Store } from '../../src/storage/index.js';
import { EMPTY_VERSIONS, liveValues, merge, sameVersions, update } from '../../src/kinds/versions/versions.js';
import type { Clock, Versions } from '../../src/kinds/versions/versions.js';

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
  return (
    sameVersions(a, b) &&
    encodeRecord({ versions: a, ownerEpoch: undefined, deletedAt: undefined }).equals(
      encodeRecord({ versions: b, ownerEpoch: undefined, deletedAt: undefined }),
    )
  );
}

describe('versions: merge laws', () => {
  const statesArb = historyArb.map((h) => play(h).seen);
  const pick = (states: Versions[], i: number) => states[i % states.length]!;

  it('is idempotent', () => {
    fc.assert(
      fc.property(statesArb, fc.nat(), (states, i) => same(merge(pick(states, i), pick(states, i)), pick(states, i))),
      { numRuns: 300 },
    );
  });

  it('is commutative (to the byte)', () => {
    fc.assert(
      fc.property(statesArb, fc.nat(), fc.nat(), (states, i, j) =>
        same(merge(pick(states, i), pick(states, j)), merge(pick(states, j), pick(states, i))),
      ),
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
      fc.property(
        statesArb,
        fc.nat(),
        fc.option(fc.nat({ max: 2 ** 40 }), { nil: undefined }),
        fc.integer({ min: 0, max: 0xffffffff }),
        (states, i, epoch, check) => {
          const v = pick(states, i);
          const bytes = encodeRecord({ versions: v, ownerEpoch: epoch, deletedAt: undefined });
          const rec = decodeRecord(bytes);
          expect(rec.ownerEpoch).toBe(epoch);
          expect(same(rec.versions, v)).toBe(true);
          expect(liveValues(rec.versions, 0).map(String)).toEqual(liveValues(v, 0).map(String));
          const causal = clockBytes(bytes);
          expect([...decodeContext(contextFromClock(check, causal.clock, causal.format), check).clock].sort()).toEqual(
            [...v.clock].sort(),
          );
        },
      ),
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
          expect(s.value === null ? null : String(s.value)).toBe(
            history[Number(w.id.slice(1))]!.kind === 'del' ? null : w.id,
          );
          return w.id;
        });
        expect(held.sort()).toEqual(survivors);
      }),
      { numRuns: 500 },
    );
  });
});

/** Store-level histories add what drops records, and restarts. */
type StoreOp =
  | Op
  | { kind: 'purge'; at: number } // converge all replicas, then purge tombstones on one
  | { kind: 'handoff'; from: number; to: number } // stream a replica's range to another, then delete it
  | { kind: 'restart'; at: number; clean: boolean };

const storeOpArb: fc.Arbitrary<StoreOp> = fc.oneof(
  { weight: 8, arbitrary: opArb },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('purge' as const), at: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('handoff' as const), from: fc.nat(2), to: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const), at: fc.nat(2), clean: fc.boolean() }) },
);

describe('stores: nothing acknowledged is lost (3 replicas, memory engine)', () => {
  const KEY = 'k';
  const ALL = { start: 0n, end: 0n };

  /** The id of each sibling of a record: a put's value is its id; a tombstone is looked up. */
  function idsOf(rec: Buffer | undefined, tombIds: Map<string, string>): string[] {
    return rec
      ? decodeRecord(rec).versions.siblings.map((s) => tombIds.get(`${s.actor}/${s.counter}`) ?? String(s.value))
      : [];
  }

  async function converge(stores: Store[]): Promise<void> {
    for (let round = 0; round < 2; round++)
      for (const from of stores)
        for (const into of stores) {
          const rec = await from.getRecord(KEY);
          if (rec) await into.merge(KEY, rec);
        }
  }

  /**
   * Run a history on three stores; check that after full anti-entropy each holds exactly
   * the writes no other write's read saw. Purges happen only once every replica holds the
   * tombstones (what the grace period is for), handoffs delete a range only after
   * streaming it: neither may lose anything, and a key written again after it was dropped
   * must get dots no replica has seen (actors.ts).
   */
  async function run(history: readonly StoreOp[]): Promise<void> {
    let t = 0;
    const now = () => t;
    const engines = [0, 1, 2].map(() => new MemoryEngine());
    const open = (e: MemoryEngine) => Store.open({ engine: e, now, tombstoneGraceMs: 1 });
    const stores = await Promise.all(engines.map(open));
    const tombIds = new Map<string, string>();
    const superseded = new Set<string>();
    const written: string[] = [];
    for (const [i, op] of history.entries()) {
      if (op.kind === 'merge') {
        const rec = await stores[op.from]!.getRecord(KEY);
        if (rec) await stores[op.into]!.merge(KEY, rec);
      } else if (op.kind === 'purge') {
        await converge(stores);
        t += 10;
        await stores[op.at]!.purgeTombstones();
      } else if (op.kind === 'handoff') {
        if (op.from === op.to) continue;
        for await (const b of stores[op.from]!.ranges.scan(ALL))
          for (const e of b.entries) await stores[op.to]!.merge(e.key, e.record);
        await stores[op.from]!.ranges.delete(ALL);
      } else if (op.kind === 'restart') {
        if (op.clean) await stores[op.at]!.close();
        stores[op.at] = await open(engines[op.at]!); // unclean: the old store is simply abandoned
      } else {
        const read = await stores[op.readFrom]!.get(KEY);
        for (const id of idsOf(await stores[op.readFrom]!.getRecord(KEY), tombIds)) superseded.add(id);
        const id = `w${i}`;
        written.push(id);
        if (op.kind === 'put') await stores[op.at]!.put(KEY, Buffer.from(id), read.context);
        else {
          const w = await stores[op.at]!.delete(KEY, read.context);
          for (const sib of decodeRecord(w.record).versions.siblings)
            if (sib.value === null && !tombIds.has(`${sib.actor}/${sib.counter}`))
              tombIds.set(`${sib.actor}/${sib.counter}`, id);
        }
      }
    }
    await converge(stores);
    // A purge may have dropped tombstones everywhere they were held: those were superseded
    // by nothing but are gone on purpose, once every replica had them.
    const expected = written.filter((id) => !superseded.has(id));
    const held = await Promise.all(stores.map(async (s) => idsOf(await s.getRecord(KEY), tombIds).sort()));
    for (const ids of held) expect(ids).toEqual(held[0]);
    const deletes = new Set(tombIds.values());
    expect(held[0]!.filter((id) => !deletes.has(id))).toEqual(expected.filter((id) => !deletes.has(id)).sort());
    for (const id of held[0]!) expect(expected).toContain(id);
    await Promise.all(stores.map((s) => s.close()));
  }

  it('holds for puts, deletes and record merges through the full store', async () => {
    await fc.assert(fc.asyncProperty(historyArb, run), { numRuns: 60 });
  });

  it('holds across tombstone purges, handoffs with range deletes, and clean and unclean restarts', async () => {
    await fc.assert(fc.asyncProperty(fc.array(storeOpArb, { minLength: 1, maxLength: 60 }), run), { numRuns: 100 });
  });
});
