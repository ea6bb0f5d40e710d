import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_TOKEN } from '../../../src/ring/index.js';
import { RangeHash } from '../../../src/storage/range-hash.js';
import { RangeTree, depthFor, differingLeaves } from '../../../src/storage/range-tree.js';
import { MemoryEngine, Store } from '../../../src/storage/index.js';

const RING = 1n << 64n;
const token = fc.bigInt({ min: 0n, max: MAX_TOKEN });
const inRange = (t: bigint, s: bigint, e: bigint): boolean =>
  s === e ? true : s < e ? t > s && t <= e : t > s || t <= e;

/** A range and entries whose tokens fall in it: [token, key, versions]. */
const rangeWithEntries = fc
  .tuple(
    token,
    token,
    fc.array(fc.tuple(token, fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.uint8Array({ maxLength: 12 })), {
      maxLength: 60,
    }),
  )
  .map(([start, end, raw]) => ({
    range: { start, end },
    entries: raw
      .filter(([t]) => inRange(t, start, end))
      .map(([t, k, v], i) => [t, Buffer.concat([Buffer.from([i]), k]), v] as const),
  }));

function build(
  range: { start: bigint; end: bigint },
  depth: number,
  entries: ReadonlyArray<readonly [bigint, Uint8Array, Uint8Array]>,
): RangeTree {
  const tree = new RangeTree(range, depth);
  for (const [t, k, v] of entries) tree.add(t, k, v);
  return tree;
}

describe('RangeTree', () => {
  it('puts every token of the range in exactly one leaf, whose range holds it; leaves tile the range', () => {
    fc.assert(
      fc.property(
        token,
        token,
        fc.integer({ min: 0, max: 3 }),
        fc.array(token, { maxLength: 30 }),
        (start, end, depth, probes) => {
          const tree = new RangeTree({ start, end }, depth);
          for (const t of [...probes, start + 1n, end].map((x) => x % RING)) {
            if (!inRange(t, start, end)) continue;
            const leaf = tree.leafOf(t);
            expect(leaf).toBeGreaterThanOrEqual(0);
            expect(leaf).toBeLessThan(tree.leaves);
            const r = tree.leafRange(leaf)!;
            expect(inRange(t, r.start, r.end), `token ${t} in leaf ${leaf} (${r.start}, ${r.end}]`).toBe(true);
          }
          // Consecutive leaves meet, and the last that holds tokens ends where the range does.
          const ranges = Array.from({ length: tree.leaves }, (_, i) => tree.leafRange(i)).filter(
            (r) => r !== undefined,
          );
          for (let i = 0; i + 1 < ranges.length; i++) expect(ranges[i]!.end).toBe(ranges[i + 1]!.start);
          expect(ranges[0]!.start).toBe(start);
          expect(ranges.at(-1)!.end).toBe(end);
        },
      ),
    );
  });

  it('root is the range hash, every node the sum of its leaves, whatever the order entries come in', () => {
    fc.assert(
      fc.property(rangeWithEntries, fc.integer({ min: 0, max: 3 }), ({ range, entries }, depth) => {
        const tree = build(range, depth, entries);
        const whole = new RangeHash();
        for (const [, k, v] of entries) whole.add(k, v);
        expect(tree.digest(0, 0)).toBe(whole.hex);
        expect(build(range, depth, [...entries].reverse()).digest(0, 0)).toBe(whole.hex);
        // Each leaf: the hash of exactly the entries in its token range.
        for (let i = 0; i < tree.leaves; i++) {
          const h = new RangeHash();
          const r = tree.leafRange(i);
          for (const [t, k, v] of entries) if (r !== undefined && inRange(t, r.start, r.end)) h.add(k, v);
          expect(tree.digest(depth, i)).toBe(h.hex);
          expect(tree.count(i)).toBe(h.count);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('compared top-down, finds exactly the leaves whose entries differ (brute force), asking few digests', async () => {
    await fc.assert(
      fc.asyncProperty(
        rangeWithEntries,
        fc.integer({ min: 0, max: 3 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        async ({ range, entries }, depth, changes) => {
          // The other replica: some entries changed, some missing.
          const other = entries
            .map((e, i) =>
              changes.includes(i) ? ([e[0], e[1], Buffer.concat([Buffer.from(e[2]), Buffer.from([1])])] as const) : e,
            )
            .filter((_, i) => !changes.includes(i + 1000) && !(changes.includes(i) && i % 2 === 1));
          const a = build(range, depth, entries);
          const b = build(range, depth, other);
          const expected: number[] = [];
          for (let i = 0; i < a.leaves; i++) if (a.digest(depth, i) !== b.digest(depth, i)) expected.push(i);
          const found = await differingLeaves(a, (level, indices) => indices.map((i) => b.digest(level, i)));
          expect(found.leaves).toEqual(expected);
          // Asked: the root, then 16 children of each differing node, level by level.
          if (expected.length === 0) expect(found.digests).toBe(1);
          else expect(found.digests).toBeLessThanOrEqual(1 + 16 * depth * expected.length);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('depthFor aims at about 16 keys per leaf, at most 16^4 leaves; a bad depth or token is refused', () => {
    expect([0, 16, 17, 256, 257, 4096, 10 ** 6, 10 ** 9].map(depthFor)).toEqual([0, 0, 1, 1, 2, 2, 4, 4]);
    expect(() => new RangeTree({ start: 0n, end: 10n }, 5)).toThrow(/depth must be a whole number from 0 to 4/);
    expect(() => new RangeTree({ start: 0n, end: 10n }, 1).leafOf(11n)).toThrow(/outside the tree's range/);
  });

  it('a store builds the tree of a range with the range hash as its root; replicas with the same records agree', async () => {
    const a = await Store.open({ engine: new MemoryEngine() });
    const b = await Store.open({ engine: new MemoryEngine() });
    try {
      for (let i = 0; i < 300; i++) {
        const { record } = await a.put(`k${i}`, Buffer.from(`v${i}`));
        if (i !== 7) await b.merge(`k${i}`, record);
      }
      const range = { start: 1n << 62n, end: 3n << 62n };
      const depth = depthFor(300);
      const ta = await a.ranges.tree(range, depth);
      const tb = await b.ranges.tree(range, depth);
      expect(ta.digest(0, 0)).toBe((await a.ranges.hash(range)).hash);
      const found = await differingLeaves(ta, (level, indices) => indices.map((i) => tb.digest(level, i)));
      const full = await differingLeaves(await a.ranges.tree({ start: 0n, end: 0n }, depth), async (level, indices) => {
        const t = await b.ranges.tree({ start: 0n, end: 0n }, depth);
        return indices.map((i) => t.digest(level, i));
      });
      expect(full.leaves).toHaveLength(1); // k7, the one key b lacks
      expect(found.leaves.length).toBeLessThanOrEqual(1);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
