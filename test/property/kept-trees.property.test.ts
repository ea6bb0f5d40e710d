/**
 * Trees kept on write (storage/kept-trees.ts) against trees built by a scan (fast-check):
 * random puts (some with a TTL), deletes, merges and mergeMany of another store's
 * records, counter increments and merged counter deltas (record format 4), set adds and
 * removes on sub-keys (Store.writeMany), range deletes, tombstone purges, reclaims of expired records, corrupt records
 * set aside by the next write, units tracked and untracked (builds running while the
 * writes go on), and crashes that lose the last batches (MemoryEngine.crashed, as a power
 * cut loses a suffix of LevelDB's batches). After every run, and again after a crash and
 * a reopen: every ready kept tree equals the scan-built tree of its unit, hashing what is
 * stored, leaf by leaf, counts too. KT_DEBUG=1 also checks after every step (which
 * settles the builds, so it hides races between builds and writes: use it to locate).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryEngine, Store } from '../../src/storage/index.js';
import type { KeptUnit } from '../../src/storage/index.js';
import { dataKey, tokenHalves } from '../../src/storage/keys.js';
import { storedKey, subKey } from '../../src/buckets/index.js';

const DEPTH = 2;
const KEYS = ['a1', 'b2', 'c3', 'd4', 'e5', 'f6', 'g7', 'h8', 'i9', 'j10'];
/** Counters (their own keys), and two sets whose elements are sub-keys on their parents' tokens. */
const COUNTERS = ['n1', 'n2', 'n3'];
const PARENTS = [storedKey('s', Buffer.from('p1')), storedKey('s', Buffer.from('p2'))];
const ELEMENTS = ['x', 'y', 'z'];
const Q = 1n << 62n;
const RANGES = [
  { start: 0n, end: Q },
  { start: Q, end: 2n * Q },
  { start: 2n * Q, end: 3n * Q },
  { start: 3n * Q, end: 0n }, // wraps past 2^64 − 1
];
/** Class 0 (every key) of each range, and classes 1 and 2 of each: 12 units. */
const UNITS: KeptUnit[] = [0, 1, 2].flatMap((n) => RANGES.map((r) => ({ n, ...r })));
const classOf = (k: Buffer): number => (k[0]! % 2) + 1;
const GRACE = 100;

type Step =
  | { kind: 'put'; key: number; ttl: boolean }
  | { kind: 'delete'; key: number }
  | { kind: 'merge'; key: number }
  | { kind: 'mergeMany'; keys: number[] }
  | { kind: 'rangeDelete'; range: number }
  | { kind: 'purge' }
  | { kind: 'reclaim' }
  | { kind: 'corrupt'; key: number; then: 'put' | 'merge' | 'mergeMany' }
  | { kind: 'track'; units: boolean[] }
  | { kind: 'burst'; keys: number[] }
  | { kind: 'crash'; lose: number }
  | { kind: 'incr'; key: number; amount: number }
  | { kind: 'counterMerge'; key: number; many: boolean }
  | { kind: 'setOps'; parent: number; adds: number[]; removes: number[] };

const key = fc.nat(KEYS.length - 1);
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('put' as const), key, ttl: fc.boolean() }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('delete' as const), key }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('merge' as const), key }), weight: 2 },
  {
    arbitrary: fc.record({
      kind: fc.constant('mergeMany' as const),
      keys: fc.array(key, { minLength: 1, maxLength: 5 }),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('rangeDelete' as const), range: fc.nat(RANGES.length - 1) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('purge' as const) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('reclaim' as const) }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('corrupt' as const),
      key,
      then: fc.constantFrom('put' as const, 'merge' as const, 'mergeMany' as const),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('track' as const),
      units: fc.array(fc.boolean(), { minLength: UNITS.length, maxLength: UNITS.length }),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('burst' as const), keys: fc.array(key, { minLength: 2, maxLength: 8 }) }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('crash' as const), lose: fc.nat(3) }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('incr' as const),
      key: fc.nat(COUNTERS.length - 1),
      amount: fc.integer({ min: -3, max: 3 }).filter((a) => a !== 0),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('counterMerge' as const),
      key: fc.nat(COUNTERS.length - 1),
      many: fc.boolean(),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('setOps' as const),
      parent: fc.nat(PARENTS.length - 1),
      adds: fc.uniqueArray(fc.nat(ELEMENTS.length - 1), { maxLength: 2 }),
      removes: fc.uniqueArray(fc.nat(ELEMENTS.length - 1), { maxLength: 2 }),
    }),
    weight: 2,
  },
);

const quiet = { warn: () => {}, error: () => {} };

async function expectKeptEqualsScan(store: Store): Promise<number> {
  const trees = store.trees!;
  await trees.settled();
  let compared = 0;
  for (const u of trees.readyUnits()) {
    const kept = trees.tree(u)!;
    const scan = await store.ranges.tree(u, DEPTH, u.n === 0 ? undefined : (k) => classOf(k) === u.n, true);
    for (let i = 0; i < kept.leaves; i++)
      expect(kept.leaf(i), `unit ${u.n}:${u.start}-${u.end} leaf ${i}`).toEqual(scan.leaf(i));
    compared++;
  }
  return compared;
}

async function run(steps: readonly Step[]): Promise<void> {
  let now = 1_000_000;
  const clock = () => now;
  let engine = new MemoryEngine({ journal: 4 });
  const open = (e: MemoryEngine) =>
    Store.open({
      engine: e,
      now: clock,
      tombstoneGraceMs: GRACE,
      logger: quiet,
      keptTrees: { depth: DEPTH, classOf, checkpointBatches: 3 },
    });
  let store = await open(engine);
  let tracked = UNITS.map(() => true);
  const track = () => store.trees!.track(UNITS.filter((_, i) => tracked[i]));
  await track();
  // Another replica, whose records are merged in.
  const peer = await Store.open({ engine: new MemoryEngine(), now: clock, logger: quiet });
  let n = 0;
  const record = async (k: number) => (await peer.put(KEYS[k]!, Buffer.from(`peer${n++}`))).record;
  for (const s of steps) {
    now += 7;
    switch (s.kind) {
      case 'put': {
        const ctx = (await store.get(KEYS[s.key]!).catch(() => undefined))?.context;
        await store.put(KEYS[s.key]!, Buffer.from(`v${n++}`), ctx, s.ttl ? { expiresAt: now + 20 } : {});
        break;
      }
      case 'delete':
        await store.delete(KEYS[s.key]!, (await store.get(KEYS[s.key]!).catch(() => undefined))?.context);
        break;
      case 'merge':
        await store.merge(KEYS[s.key]!, await record(s.key));
        break;
      case 'mergeMany': {
        const entries = [];
        for (const k of s.keys) entries.push({ key: KEYS[k]!, record: await record(k) });
        await store.mergeMany(entries);
        break;
      }
      case 'rangeDelete':
        await store.ranges.delete(RANGES[s.range]!);
        break;
      case 'purge':
        now += GRACE + 1;
        await store.purgeTombstones();
        break;
      case 'reclaim':
        now += 50;
        await store.reclaimExpired();
        break;
      case 'corrupt': {
        // Bit rot reaches the disk without a write, so no tree knows of it: rebuild every
        // unit (as the long-schedule rebuild would), then the next write sets it aside.
        const k = Buffer.from(KEYS[s.key]!);
        const [hi, lo] = tokenHalves(k);
        const dk = dataKey(hi, lo, k);
        const bytes = await engine.get(dk);
        if (bytes === undefined) break;
        bytes[bytes.length - 6]! ^= 0xff;
        await store.trees!.track([]);
        await engine.write([{ type: 'put', key: dk, value: bytes }], false);
        await track();
        await store.trees!.settled(); // every unit counts the corrupt bytes: the next write must take them out
        if (s.then === 'put') await store.put(KEYS[s.key]!, Buffer.from(`after-corrupt${n++}`));
        else if (s.then === 'merge') await store.merge(KEYS[s.key]!, await record(s.key));
        else
          await store.mergeMany([
            { key: KEYS[s.key]!, record: await record(s.key) },
            { key: KEYS[(s.key + 1) % KEYS.length]!, record: await record((s.key + 1) % KEYS.length) },
          ]);
        break;
      }
      case 'track':
        tracked = s.units;
        await track(); // builds run in the background while the next steps write
        break;
      case 'burst':
        await Promise.all(
          s.keys.map((k, i) =>
            i % 2 === 0
              ? store.put(KEYS[k]!, Buffer.from(`b${n++}`))
              : store.merge(KEYS[k]!, Buffer.alloc(0)).catch(() => undefined),
          ),
        );
        break;
      case 'incr':
        await store.counterUpdate(COUNTERS[s.key]!, s.amount, { requestId: Buffer.from(`r${n++ % 4}`) }); // some repeated: duplicates
        break;
      case 'counterMerge': {
        const { delta } = await peer.counterUpdate(COUNTERS[s.key]!, 1);
        if (s.many)
          await store.mergeMany([
            { key: COUNTERS[s.key]!, record: delta },
            { key: KEYS[s.key]!, record: await record(s.key) },
          ]);
        else await store.merge(COUNTERS[s.key]!, delta);
        break;
      }
      case 'setOps': {
        // Removes with the context of a read of each element; an element both added and removed is added.
        const removes = s.removes.filter((e) => !s.adds.includes(e));
        const ops = [
          ...s.adds.map((e) => ({ op: 'add' as const, path: { element: ELEMENTS[e]! } })),
          ...(await Promise.all(
            removes.map(async (e) => ({
              op: 'remove' as const,
              path: { element: ELEMENTS[e]! },
              context: (await store.get(subKey(PARENTS[s.parent]!, { element: ELEMENTS[e]! }))).context,
            })),
          )),
        ];
        if (ops.length > 0) await store.writeMany(PARENTS[s.parent]!, ops);
        break;
      }
      case 'crash': {
        await store.trees!.settled();
        engine = engine.crashed(s.lose);
        store = await open(engine);
        await track();
        break;
      }
    }
    if (process.env.KT_DEBUG)
      await expectKeptEqualsScan(store).catch((e) => {
        throw new Error(`after ${JSON.stringify(s)}: ${(e as Error).message}`);
      });
  }
  await expectKeptEqualsScan(store);
  // A clean reopen loads the trees as they were.
  const before = store.trees!.readyUnits().length;
  await store.close();
  store = await open(engine);
  expect(store.trees!.readyUnits().length).toBe(before);
  await expectKeptEqualsScan(store);
  // And a crash that loses batches: the leaves on disk still equal the records on disk.
  await store.put(KEYS[0]!, Buffer.from('last'));
  await store.delete(KEYS[1]!);
  engine = engine.crashed(1);
  store = await open(engine);
  await expectKeptEqualsScan(store);
  await store.close();
  await peer.close();
}

describe('kept trees (property)', () => {
  it('equal the scan-built tree of every unit after any writes, ring changes and crashes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 40 }), (steps) => run(steps)),
      { numRuns: 60, seed: 29, endOnFailure: true },
    );
  }, 60_000);
});
