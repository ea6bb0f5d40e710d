import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BucketTable } from '../../../src/buckets/index.js';
import type { Gossiper } from '../../../src/membership/gossiper.js';
import { BucketSync, loadBuckets, saveBuckets } from '../../../src/node/bucket-sync.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'ringkv-buckets-'));
  dirs.push(d);
  return d;
};

describe('buckets.json', () => {
  it('is absent on a new node: the table has the default bucket only', async () => {
    const t = await loadBuckets(dir(), 3);
    expect(t.list().map((b) => b.name)).toEqual(['default']);
  });

  it('keeps every write of every property across a save and a load', async () => {
    const d = dir();
    const t = new BucketTable(3);
    t.create('carts', { n: 5, r: 0, w: 2, ttlMs: 60_000, siblings: 'lww' }, 1000, 'n1');
    t.set('default', { ttl_ms: '5000' }, 2000, 'n2');
    await saveBuckets(d, t);
    const back = await loadBuckets(d, 3);
    expect(back.entries()).toEqual(t.entries());
    expect(back.digest()).toBe(t.digest());
    expect(JSON.parse(readFileSync(join(d, 'buckets.json'), 'utf8')).buckets).toHaveLength(2);
  });

  it('refuses to start from a damaged file, saying what to do', async () => {
    const d = dir();
    writeFileSync(join(d, 'buckets.json'), '{"buckets": [');
    await expect(loadBuckets(d, 3)).rejects.toThrow(
      /buckets\.json is damaged \(not JSON\): move it aside and restart; the node gets the bucket table from its peers/,
    );
    writeFileSync(join(d, 'buckets.json'), '{"tables": []}');
    await expect(loadBuckets(d, 3)).rejects.toThrow(/damaged \(no buckets\)/);
  });
});

describe('BucketSync', () => {
  /** A node alone in its cluster: nothing to wait for. */
  const alone = { set: () => undefined, states: () => [], isUp: () => false } as unknown as Gossiper;
  const quiet = { info: () => undefined, warn: () => undefined };

  it('saves a later change after an earlier save failed (a failed save does not stop the ones after it)', async () => {
    const d = join(dir(), 'not-yet');
    const sync = new BucketSync({
      id: 'n1',
      dataDir: d,
      table: new BucketTable(3),
      gossiper: alone,
      now: () => 1000,
      fetch: async () => [],
      keysHeld: async () => 0,
      changed: () => undefined,
      removed: () => new Set(),
      log: quiet,
    });
    await expect(sync.create('carts', { n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'siblings' })).rejects.toThrow(/ENOENT/);
    mkdirSync(d);
    await sync.create('orders', { n: 2, r: 0, w: 0, ttlMs: 0, siblings: 'lww' });
    expect((await loadBuckets(d, 3)).list().map((b) => b.name)).toEqual(['default', 'carts', 'orders']);
  });
});
