/**
 * The public entries `ringkv/ring`, `ringkv/storage` and `ringkv/client` as an outside user imports them:
 * from dist/, through package.json "exports". Needs `npm run build` first (CI builds before testing); on a
 * tree that has not been built this suite is skipped and says so.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const built = existsSync(new URL('../../dist/ring/index.js', import.meta.url));
if (!built) console.warn('package-export.test.ts skipped: run `npm run build` to test the built package entries');

describe.skipIf(!built)('ringkv/ring from dist', () => {
  it('exports the ring API through package.json "exports"', async () => {
    const ring = await import('ringkv/ring');
    const r = ring.claimRing(
      [
        { id: 'a', zone: 'x' },
        { id: 'b', zone: 'y' },
        { id: 'c', zone: 'z' },
      ],
      3,
    );
    expect(r.preferenceList('user:1', 3).sort()).toEqual(['a', 'b', 'c']);
    expect(ring.tokenOf('abc')).toBe(0x44bc2cf5ad770999n);
    expect(typeof ring.Ring.diff).toBe('function');
    expect(new ring.RingError('RING_EMPTY', 'x').code).toBe('RING_EMPTY');
  });
});

describe.skipIf(!built)('ringkv/storage from dist', () => {
  it('exports the store and its engines through package.json "exports"', async () => {
    const storage = await import('ringkv/storage');
    const store = await storage.Store.open({ engine: new storage.MemoryEngine() });
    await store.put('k', Buffer.from('v'));
    expect((await store.get('k')).values.map(String)).toEqual(['v']);
    await store.close();
    expect(typeof storage.LevelEngine).toBe('function');
    expect(new storage.KvError('KV_CLOSED', 'x').code).toBe('KV_CLOSED');
  });
});

describe.skipIf(!built)('ringkv/client from dist', () => {
  it('exports the typed client and the admin client through package.json "exports", with the protos they load', async () => {
    const client = await import('ringkv/client');
    // A deadline well past encoding 9 MiB on a loaded machine: the refusal, not the deadline, ends the call.
    const kv = new client.Client({ nodes: ['127.0.0.1:1'], deadlineMs: 5000 });
    // The built client finds proto/ from dist/ and refuses a request no node takes before sending it.
    await expect(kv.put('k', Buffer.alloc(9 << 20))).rejects.toMatchObject({ code: 3 });
    kv.close();
    const admin = new client.AdminClient('127.0.0.1:1', 200);
    admin.close();
  });
});
