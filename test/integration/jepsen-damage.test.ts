/**
 * The corrupt nemesis's damage (testkit/jepsen/disk.ts) on a real LevelDB store: a flip
 * changes one byte of one record (a value, or a key's last byte kept in order), so the
 * store reads every other key whole, never a wrong value, and LevelDB's own code neither
 * fails a read nor aborts; a removed table makes the database repair itself at open; a
 * cut log loses only what it held past the cut.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/ring/allocate-tokens.js';
import { Store } from '../../src/storage/index.js';
import { flipInTable, removeTable, truncateNewestLog } from '../../testkit/jepsen/disk.js';

const root = mkdtempSync(join(tmpdir(), 'rk-damage-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const quiet = { warn: () => {}, error: () => {}, info: () => {}, debug: () => {} };
const KEYS = 20_000;
const valueOf = (i: number): string => `value-${i}-${'x'.repeat(i % 40)}`;

/** A store of KEYS keys, flushed into table files (closed twice), closed. */
async function filled(dir: string): Promise<void> {
  for (let round = 0; round < 2; round++) {
    const s = await Store.open({ path: dir, logger: quiet });
    for (let i = round; i < KEYS; i += 2) await s.put(`key-${i}`, Buffer.from(valueOf(i)));
    await s.close();
  }
}

/** Every key read back: whole, absent, or refused as corrupt, and never another value. */
async function readBack(
  dir: string,
): Promise<{ whole: number; absent: number; corrupt: number; wrong: string[]; scanned: number; damaged: number }> {
  const s = await Store.open({ path: dir, logger: quiet });
  let whole = 0,
    absent = 0,
    corrupt = 0;
  const wrong: string[] = [];
  for (let i = 0; i < KEYS; i++) {
    try {
      const r = await s.get(`key-${i}`);
      if (r.values.length === 0) absent++;
      else if (r.values.length === 1 && String(r.values[0]) === valueOf(i)) whole++;
      else wrong.push(`key-${i}: ${r.values.map(String).join(',')}`);
    } catch (e) {
      if ((e as { code?: string }).code !== 'KV_CORRUPT_RECORD') throw e;
      corrupt++;
    }
  }
  let scanned = 0;
  for await (const b of s.ranges.scan({ start: 0n, end: 0n })) scanned += b.entries.length;
  await s.close();
  return { whole, absent, corrupt, wrong, scanned, damaged: s.damagedKeys };
}

describe('the corrupt nemesis on a LevelDB store', () => {
  it('flips bytes inside records only: other keys whole, no wrong value, no LevelDB failure', async () => {
    let keyFlips = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const dir = join(root, `flip${seed}`);
      await filled(dir);
      const did = flipInTable(join(dir), 6, mulberry32(seed))?.text;
      expect(did, `seed ${seed}`).toMatch(/^6 bytes flipped in table \d+\.ldb/);
      keyFlips += Number(/(\d+) in keys/.exec(did!)![1]);
      const r = await readBack(dir);
      expect(r.wrong, `seed ${seed}: ${did}`).toEqual([]);
      // Each flip takes at most one key away (a value refused as corrupt, or a key moved under a damaged name).
      expect(r.whole, `seed ${seed}: ${did}`).toBeGreaterThanOrEqual(KEYS - 6);
      expect(r.corrupt + r.absent, `seed ${seed}: ${did}`).toBe(KEYS - r.whole);
      expect(r.scanned + r.damaged, `seed ${seed}: ${did}`).toBeLessThanOrEqual(KEYS);
    }
    expect(keyFlips).toBeGreaterThan(0);
  }, 120_000);

  it('a removed table: the database repairs itself at open and keeps the rest; a cut log keeps what came before the cut', async () => {
    const dir = join(root, 'removed');
    await filled(dir);
    expect(removeTable(dir, mulberry32(7))).toMatch(/^table \d+\.ldb \(\d+ bytes\) removed$/);
    const r = await readBack(dir);
    expect(r.wrong).toEqual([]);
    expect(r.whole + r.absent).toBe(KEYS);
    expect(r.whole).toBeGreaterThan(0);
    const cut = join(root, 'cut');
    const s = await Store.open({ path: cut, logger: quiet });
    for (let i = 0; i < KEYS; i++) await s.put(`key-${i}`, Buffer.from(valueOf(i)));
    await s.close(); // the writes since the last flush stay in the newest log, read again at open
    expect(truncateNewestLog(cut, mulberry32(8))).toMatch(/^log \d+\.log cut from \d+ to \d+ bytes$/);
    const c = await readBack(cut);
    expect(c.wrong).toEqual([]);
    expect(c.whole + c.absent).toBe(KEYS);
  });
});
