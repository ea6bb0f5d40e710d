/**
 * A store whose LevelDB table file is gone (a disk that lost it, an operator's mistake):
 * LevelDB refuses to open ("Corruption: 1 missing files"). The store repairs the database
 * (LevelDB's RepairDB), says so in its log, opens, and serves what the other files hold;
 * what the missing file held is gone from this replica (the others give it back through
 * reads, the verification pass and repair). Without the repair the node did not start.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/storage/index.js';

const root = mkdtempSync(join(tmpdir(), 'ringkv-repair-db-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a store whose table file is missing', () => {
  it('repairs the database, says so, opens, and serves what the other files hold', async () => {
    const path = join(root, 'data');
    let store = await Store.open({ path });
    const keys = Array.from({ length: 3000 }, (_, i) => Buffer.from(`k${i}`));
    for (const k of keys) await store.put(k, randomBytes(4096));
    await store.close();
    const tables = readdirSync(path).filter((f) => f.endsWith('.ldb'));
    expect(tables.length).toBeGreaterThan(1);
    rmSync(join(path, tables[0]!));
    const errors: { o: unknown; msg: string }[] = [];
    store = await Store.open({
      path,
      logger: { warn: () => {}, error: (o, msg) => void errors.push({ o, msg: msg ?? '' }) },
    });
    try {
      expect(errors.map((e) => e.msg)).toContain(
        'the database does not open, its files are damaged: repairing it (LevelDB RepairDB); what it cannot recover comes back from the other replicas',
      );
      expect(JSON.stringify(errors[0]!.o)).toMatch(/missing files/);
      let held = 0;
      for (const k of keys) if ((await store.get(k)).values.length === 1) held++;
      expect(held).toBeGreaterThan(0);
      expect(held).toBeLessThan(keys.length);
      await store.put(Buffer.from('after'), Buffer.from('v'));
    } finally {
      await store.close();
    }
  }, 60_000);
});
