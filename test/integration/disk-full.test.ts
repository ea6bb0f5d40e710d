/**
 * A store on LevelDB whose disk fills, for real: its data directory on a 16 MiB tmpfs this
 * test mounts (root only; it says so and skips otherwise), filled by puts of 4 KiB random
 * values until one fails for want of space. LevelDB then fails every write with the same
 * error, even once the space is back, until it is opened again: the store refuses writes
 * (KV_DISK_FULL, never KV_IO), serves reads, and once the tmpfs is grown it reopens its
 * engine on checkDisk and takes writes, with every acknowledged put readable, then and
 * after a close and open. The test unmounts what it mounted.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KvError, Store } from '../../src/storage/index.js';

const root = process.getuid?.() === 0;
const dir = mkdtempSync(join(tmpdir(), 'ringkv-disk-full-'));
let mounted = false;

afterAll(() => {
  if (mounted) execFileSync('umount', ['-l', dir]);
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!root)('a store whose disk fills (tmpfs; needs root)', () => {
  it('refuses writes once one fails for want of space, serves reads, and reopens by itself when space is back, losing nothing acknowledged', async () => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dir]);
    mounted = true;
    const path = join(dir, 'data');
    let store = await Store.open({ path, disk: { floorBytes: 0, label: 'n3' } });
    const acked: Buffer[] = [];
    let failure: unknown;
    for (let i = 0; i < 20_000 && failure === undefined; i++) {
      const key = Buffer.from(`k${i}`);
      try {
        await store.put(key, randomBytes(4096));
        acked.push(key);
      } catch (e) {
        failure = e;
      }
    }
    expect(failure, 'a put failed before 20,000').toBeInstanceOf(KvError);
    expect((failure as KvError).code).toBe('KV_DISK_FULL');
    expect((failure as KvError).message).toMatch(/No space left on device/);
    expect(acked.length).toBeGreaterThan(1000);
    // Still full: refused, and no reopen.
    expect(await store.checkDisk()).toMatchObject({ failed: true, reopens: 0 });
    const held = await store.put(Buffer.from('held'), Buffer.from('x')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((held as KvError).code).toBe('KV_DISK_FULL');
    expect((await store.get(acked[0]!)).values).toHaveLength(1);

    execFileSync('mount', ['-o', 'remount,size=64m', dir]);
    expect(await store.checkDisk()).toMatchObject({ failed: false, reopens: 1 });
    await store.put(Buffer.from('after'), Buffer.from('space is back'));
    const missing = async (s: Store): Promise<number> => {
      let n = 0;
      for (const k of acked) if ((await s.get(k)).values.length !== 1) n++;
      return n;
    };
    expect(await missing(store)).toBe(0);
    await store.close();
    store = await Store.open({ path, disk: { floorBytes: 0 } });
    expect(await missing(store)).toBe(0);
    expect((await store.get(Buffer.from('after'))).values.map(String)).toEqual(['space is back']);
    await store.close();
    execFileSync('umount', [dir]);
    mounted = false;
  }, 120_000);
});

if (!root) console.log('disk-full.test: skipped, not root (it mounts a tmpfs)');
