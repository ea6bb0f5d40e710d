/**
 * The load a store reports (what `ringkv status` shows): LevelDB's size estimate reads
 * only its table files, so writes still in the memtable must be counted on top of it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryEngine, Store } from '../../../src/storage/index.js';

const root = mkdtempSync(join(tmpdir(), 'ringkv-load-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ALL = { start: 0n, end: 0n };
const MiB = 1 << 20;

async function write(store: Store, count: number, bytes: number): Promise<void> {
  for (let i = 0; i < count; i++) await store.put(`k${i}`, randomBytes(bytes));
}

describe('store load', () => {
  it('on LevelDB counts what is still in the memtable, and does not count it twice once it is on disk', async () => {
    const path = join(root, 'level');
    let store = await Store.open({ path });
    await write(store, 11, 100 * 1024); // 1.07 MiB: under the 4 MiB memtable, nothing flushed
    expect(await store.ranges.approximateBytes(ALL)).toBeLessThan(MiB); // what status used to show
    const load = await store.approximateLoad();
    expect(load).toBeGreaterThanOrEqual(11 * 100 * 1024);
    expect(load).toBeLessThan(1.3 * MiB);
    await store.close();
    // Reopening writes the log to a table file: the estimate has it now (LevelDB's estimate
    // leaves out part of the last block), and only once.
    store = await Store.open({ path });
    const again = await store.approximateLoad();
    expect(again).toBeGreaterThanOrEqual(0.9 * MiB);
    expect(again).toBeLessThan(1.3 * MiB);
    await store.close();
  });

  it('stays bounded by the memtables when far more is written than they hold', async () => {
    const store = await Store.open({ path: join(root, 'level-many') });
    await write(store, 120, 100 * 1024); // 12 MiB: several flushes
    const load = await store.approximateLoad();
    expect(load).toBeGreaterThanOrEqual(6 * MiB);
    expect(load).toBeLessThan(20 * MiB);
    await store.close();
  });

  it('on the memory engine is its exact size, nothing added', async () => {
    const store = await Store.open({ engine: new MemoryEngine() });
    await write(store, 5, 1000);
    expect(await store.approximateLoad()).toBe(await store.ranges.approximateBytes(ALL));
    await store.close();
  });
});
