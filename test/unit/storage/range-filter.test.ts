/**
 * Range operations of one N class (storage/ranges.ts with a KeyFilter): a scan, a Merkle
 * tree, a leaf listing and a delete take only the keys the filter takes, and without a
 * filter every key, as before. Then a repair of one class between two replicas (repair/
 * exchange.ts over store sides) exchanges that class's keys only: an n=1 key held by one
 * replica is never copied to the other.
 */
import { describe, expect, it } from 'vitest';
import { BucketTable, DEFAULT_BUCKET, defaultProps, storedKey } from '../../../src/buckets/index.js';
import { keyClasses, deleteFilter, sendFilter } from '../../../src/cluster/n-classes.js';
import { MemoryEngine, Store, depthFor, type KeyFilter } from '../../../src/storage/index.js';
import { repairRange } from '../../../src/repair/exchange.js';
import { storeSide } from '../../../src/repair/store-side.js';

const WHOLE = { start: 0n, end: 0n };
const table = new BucketTable(3);
table.create('one', { ...defaultProps(3), n: 1 }, 1000, 'a');
table.create('five', { ...defaultProps(3), n: 5 }, 1000, 'a');
const classes = keyClasses(table);
const key = (bucket: string, i: number): Buffer => storedKey(bucket, Buffer.from(`k${i}`));
const BUCKETS = [DEFAULT_BUCKET, 'one', 'five'];

async function filled(count: number, buckets = BUCKETS): Promise<Store> {
  const s = await Store.open({ engine: new MemoryEngine() });
  for (const b of buckets) for (let i = 0; i < count; i++) await s.put(key(b, i), Buffer.from(`${b}-${i}`));
  return s;
}

async function keysOf(s: Store, only?: KeyFilter): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of s.ranges.scan(WHOLE, { batchCount: 7 }, undefined, only))
    for (const e of batch.entries) out.push(e.key.toString('hex'));
  return out.sort();
}

const hex = (bucket: string, count: number): string[] =>
  Array.from({ length: count }, (_, i) => key(bucket, i).toString('hex')).sort();

describe('range operations of one class', () => {
  it("scan, tree and leaf listing take the class's keys only; no filter takes every key", async () => {
    const s = await filled(30);
    try {
      expect(await keysOf(s)).toEqual([...hex(DEFAULT_BUCKET, 30), ...hex('one', 30), ...hex('five', 30)].sort());
      expect(await keysOf(s, sendFilter(classes, 1))).toEqual(hex('one', 30));
      expect(await keysOf(s, sendFilter(classes, 3))).toEqual(hex(DEFAULT_BUCKET, 30));
      const depth = depthFor(30);
      const whole = await s.ranges.tree(WHOLE, depth);
      const five = await s.ranges.tree(WHOLE, depth, sendFilter(classes, 5));
      expect(whole.digest(0, 0)).toBe((await s.ranges.hash(WHOLE)).hash);
      expect(five.digest(0, 0)).not.toBe(whole.digest(0, 0));
      // The class's tree holds its 30 keys, and is the tree of the store less every other key.
      const leaves = Array.from({ length: five.leaves }, (_, i) => i);
      expect(leaves.reduce((n, i) => n + five.count(i), 0)).toBe(30);
      const listed = await s.ranges.leafEntries(five, leaves, sendFilter(classes, 5));
      expect(listed.map((e) => e.key.toString('hex')).sort()).toEqual(hex('five', 30));
      await s.ranges.delete(WHOLE, {}, (k) => !sendFilter(classes, 5)(k));
      expect((await s.ranges.tree(WHOLE, depth)).digest(0, 0)).toBe(five.digest(0, 0));
    } finally {
      await s.close();
    }
  });

  it('a key of a bucket the table lacks ends the scan (BK_NOT_READY) rather than be sent unclassified', async () => {
    const s = await filled(3);
    try {
      await s.put(key('later', 1), Buffer.from('v'));
      await expect(keysOf(s, sendFilter(classes, 1))).rejects.toMatchObject({ code: 'BK_NOT_READY' });
      await expect(s.ranges.tree(WHOLE, 1, sendFilter(classes, 3))).rejects.toMatchObject({ code: 'BK_NOT_READY' });
    } finally {
      await s.close();
    }
  });

  it("delete takes the class's keys only, and keeps keys of unknown buckets", async () => {
    const s = await filled(20);
    try {
      await s.put(key('later', 1), Buffer.from('v'));
      const r = await s.ranges.delete(WHOLE, {}, deleteFilter(classes, 1));
      expect(r).toEqual({ deleted: 20, kept: 0 });
      expect(await keysOf(s, (k) => !k.equals(key('later', 1)))).toEqual(
        [...hex(DEFAULT_BUCKET, 20), ...hex('five', 20)].sort(),
      );
      expect(await s.ranges.delete(WHOLE, {}, deleteFilter(classes, undefined))).toEqual({ deleted: 40, kept: 0 });
      expect(await keysOf(s)).toEqual([key('later', 1).toString('hex')]);
    } finally {
      await s.close();
    }
  });

  it("a repair of one class exchanges that class's keys only: an n=1 key is never copied to a second replica", async () => {
    const a = await filled(10);
    const b = await Store.open({ engine: new MemoryEngine() });
    try {
      // b missed every n=5 write; a alone holds the n=1 keys (it is their replica), as it should.
      for (let i = 0; i < 10; i++) await b.put(key(DEFAULT_BUCKET, i), Buffer.from(`b-${i}`));
      const only = sendFilter(classes, 5);
      const depth = depthFor(10);
      const [ta, tb] = await Promise.all([a.ranges.tree(WHOLE, depth, only), b.ranges.tree(WHOLE, depth, only)]);
      const stats = await repairRange(ta, storeSide('a', a, ta, only), [storeSide('b', b, tb, only)]);
      expect(stats.keysExchanged).toBe(10);
      expect(await keysOf(b)).toEqual([...hex(DEFAULT_BUCKET, 10), ...hex('five', 10)].sort());
      // The default bucket's keys differ between a and b, but are another class's: untouched.
      expect(String((await b.get(key(DEFAULT_BUCKET, 0))).values[0])).toBe('b-0');
      expect(String((await a.get(key(DEFAULT_BUCKET, 0))).values[0])).toBe(`${DEFAULT_BUCKET}-0`);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
