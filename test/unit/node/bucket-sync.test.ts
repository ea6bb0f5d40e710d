import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BucketTable } from '../../../src/buckets/index.js';
import { loadBuckets, saveBuckets } from '../../../src/node/bucket-sync.js';

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
    await expect(loadBuckets(d, 3)).rejects.toThrow(/buckets\.json is damaged \(not JSON\): move it aside and restart; the node gets the bucket table from its peers/);
    writeFileSync(join(d, 'buckets.json'), '{"tables": []}');
    await expect(loadBuckets(d, 3)).rejects.toThrow(/damaged \(no buckets\)/);
  });
});
