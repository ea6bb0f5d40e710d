/**
 * A store's disk guard (src/storage/disk.ts) with the filesystem's figures injected and an
 * engine that fails as LevelDB does when a compaction hits ENOSPC (every later write fails
 * until the database is opened again): writes refused below the floor and after such a
 * failure (KV_DISK_FULL, nothing written), reads served throughout, and the engine reopened
 * by checkDisk once space is back, with every acknowledged write kept. The real thing, on
 * a tmpfs that fills, is test/integration/disk-full.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { KvError, MemoryEngine, Store } from '../../../src/storage/index.js';
import type { Engine, WriteOp } from '../../../src/storage/index.js';
import { DiskGuard, isNoSpace, MAX_DEFAULT_FLOOR_BYTES, RECOVER_MARGIN_BYTES } from '../../../src/storage/disk.js';

const MiB = 1 << 20;
const v = (s: string): Buffer => Buffer.from(s);

/** A memory engine that, once `fill()`ed, fails writes with LevelDB's ENOSPC error until reopened. */
class FillingEngine extends MemoryEngine implements Engine {
  full = false;
  reopens = 0;
  fill(): void {
    this.full = true;
  }
  override write(ops: readonly WriteOp[], sync: boolean): Promise<void> {
    if (this.full) return Promise.reject(new Error('IO error: /data/000012.ldb: No space left on device'));
    return super.write(ops, sync);
  }
  async reopen(): Promise<void> {
    this.reopens++;
    this.full = false;
  }
}

async function refused(p: Promise<unknown>): Promise<KvError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(KvError);
  expect((e as KvError).code).toBe('KV_DISK_FULL');
  return e as KvError;
}

function setup(floorBytes?: number) {
  const space = { free: 500 * MiB, total: 1000 * MiB };
  const engine = new FillingEngine();
  const open = () =>
    Store.open({ engine, disk: { path: '/data', floorBytes, label: 'n3', statfs: async () => ({ ...space }) } });
  return { space, engine, open };
}

describe('disk guard', () => {
  it('tells ENOSPC apart, through causes too', () => {
    expect(isNoSpace(new Error('IO error: x.ldb: No space left on device'))).toBe(true);
    expect(isNoSpace(Object.assign(new Error('write failed'), { code: 'ENOSPC' }))).toBe(true);
    expect(
      isNoSpace(new KvError('KV_IO', 'leveldb write failed', { cause: new Error('No space left on device') })),
    ).toBe(true);
    expect(isNoSpace(new Error('IO error: x.ldb: Permission denied'))).toBe(false);
    expect(isNoSpace('No space left on device')).toBe(false);
  });

  it('takes 5% of the filesystem as the floor by default, at most 1 GiB, and refuses a bad one', async () => {
    const g = new DiskGuard('/d', undefined, undefined, async () => ({ free: 10 * MiB, total: 100 * MiB }));
    expect((await g.check()).floorBytes).toBe(5 * MiB);
    const big = new DiskGuard('/d', undefined, undefined, async () => ({ free: 0, total: 2 ** 40 }));
    expect((await big.check()).floorBytes).toBe(MAX_DEFAULT_FLOOR_BYTES);
    expect(() => new DiskGuard('/d', -1, undefined)).toThrow(/whole number of bytes/);
  });

  it('with a floor of 0, reopens only once free space has grown by the margin since the least seen after the failure', async () => {
    let free = 0;
    const g = new DiskGuard('/d', 0, undefined, async () => ({ free, total: 100 * MiB }));
    await g.check();
    expect(g.noteFailure(new Error('No space left on device'))).toBe(true);
    expect(g.noteFailure(new Error('Permission denied'))).toBe(false);
    free = RECOVER_MARGIN_BYTES - 1;
    await g.check();
    expect(g.recoverable()).toBe(false);
    free = RECOVER_MARGIN_BYTES;
    await g.check();
    expect(g.recoverable()).toBe(true);
    g.recovered();
    expect(g.state).toMatchObject({ failed: false, reopens: 1 });
  });

  it('refuses new writes below the floor, saying where and how much is free, and serves reads; takes them again above it', async () => {
    const { space, open } = setup(100 * MiB);
    const store = await open();
    await store.put(v('k'), v('before'));
    const record = (await store.getRecord(v('k')))!;
    space.free = 60 * MiB;
    expect((await store.checkDisk())?.low).toBe(true);
    const e = await refused(store.put(v('k2'), v('x')));
    expect(e.message).toMatch(
      /^disk nearly full on n3: 60 MiB free of 1000 MiB, below the floor of 100 MiB \(--min-free-disk\); nothing was written here/,
    );
    await refused(store.merge(v('k3'), record));
    await refused(store.counterUpdate(v('c'), 1));
    await refused(store.hints.add('n1', v('h'), record));
    expect((await store.get(v('k'))).values.map(String)).toEqual(['before']);
    expect((await store.get(v('k2'))).values).toEqual([]);
    space.free = 200 * MiB;
    expect((await store.checkDisk())?.low).toBe(false);
    await store.put(v('k2'), v('after'));
    expect((await store.get(v('k2'))).values.map(String)).toEqual(['after']);
    await store.close();
  });

  it('after a write fails for want of space: refuses writes (not KV_IO), keeps reads, reopens once space is back, and loses nothing acknowledged', async () => {
    const { space, engine, open } = setup(10 * MiB);
    const store = await open();
    const acked: string[] = [];
    for (let i = 0; i < 50; i++) {
      await store.put(v(`k${i}`), v(`v${i}`));
      acked.push(`k${i}`);
    }
    engine.fill();
    const first = await refused(store.put(v('lost'), v('x')));
    expect(first.message).toMatch(/No space left on device/);
    // The engine would write again, but the guard holds writes until space is back and the engine reopens.
    engine.full = false;
    space.free = 0;
    expect(await store.checkDisk()).toMatchObject({ failed: true, low: true });
    const held = await refused(store.put(v('lost'), v('x')));
    expect(held.message).toMatch(
      /^a write on n3 failed for want of disk space \(0\.0 MiB free of 1000 MiB when last measured\)/,
    );
    expect(engine.reopens).toBe(0);
    // Some space back, but below the floor: no reopen yet.
    space.free = 5 * MiB;
    expect((await store.checkDisk())?.failed).toBe(true);
    space.free = 10 * MiB + RECOVER_MARGIN_BYTES;
    const after = await store.checkDisk();
    expect(after).toMatchObject({ failed: false, low: false, reopens: 1 });
    expect(engine.reopens).toBe(1);
    await store.put(v('later'), v('ok'));
    for (const k of [...acked, 'later']) expect((await store.get(v(k))).values.length, k).toBe(1);
    expect((await store.get(v('lost'))).values).toEqual([]);
    await store.close();
  });

  it('closes the engine even when the last writes of a close fail, so the next open works', async () => {
    const { engine, open } = setup(0);
    const store = await open();
    await store.put(v('k'), v('v'));
    engine.fill();
    await expect(store.close()).rejects.toThrow(/No space left on device/);
    engine.full = false;
    const again = await open();
    expect((await again.get(v('k'))).values.map(String)).toEqual(['v']);
    await again.close();
  });
});
