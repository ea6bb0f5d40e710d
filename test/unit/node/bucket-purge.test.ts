/**
 * A deleted bucket's keys reclaimed on one node (bucket-purge.ts), and the deletion as the
 * node serving it sees the members (bucket-sync.ts): the purge deletes that bucket's
 * records (a set's elements too) and hints and nothing else, records and gossips the
 * deletion done, survives a restart of its record, and is run again after one that did
 * not finish; a delete without purge is refused while any member holds a key or cannot
 * be asked; a deleted name is created again only once every member purged it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BucketTable, storedKey } from '../../../src/buckets/index.js';
import type { EndpointState } from '../../../src/membership/endpoint.js';
import type { Gossiper } from '../../../src/membership/gossiper.js';
import { BucketPurge, PURGED_FIELD, deletionId, keysHeld, loadPurged } from '../../../src/node/bucket-purge.js';
import { BucketSync } from '../../../src/node/bucket-sync.js';
import { MemoryEngine, Store } from '../../../src/storage/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'ringkv-purge-'));
  dirs.push(d);
  return d;
};
const quiet = { info: () => undefined, warn: () => undefined };
const B = (s: string): Buffer => Buffer.from(s);
const props = { n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'siblings' as const, type: 'kv' as const };

/** A gossiper of members `ids` (the first is this node), each field as the test sets it. */
function fakeGossip(ids: readonly string[]): Gossiper & { fields: Map<string, Map<string, string>> } {
  const fields = new Map(
    ids.map((id) => [
      id,
      new Map<string, string>([
        ['status', 'normal'],
        ['buckets', '0'],
      ]),
    ]),
  );
  const state = (id: string): EndpointState => ({
    id,
    generation: 1,
    heartbeat: 1,
    version: 1,
    fields: new Map([...fields.get(id)!].map(([k, value]) => [k, { value, version: 1 }])),
  });
  return {
    fields,
    set: (name: string, value: string) => void fields.get(ids[0]!)!.set(name, value),
    states: () => ids.map(state),
    state: (id: string) => (fields.has(id) ? state(id) : undefined),
    isUp: () => false, // no peer to wait for: a change returns at once
  } as unknown as Gossiper & { fields: Map<string, Map<string, string>> };
}

async function storeWith(): Promise<Store> {
  const store = await Store.open({ engine: new MemoryEngine() });
  for (let i = 0; i < 300; i++) await store.put(storedKey('carts', B(`k${i}`)), B('v'));
  for (let i = 0; i < 50; i++) await store.put(storedKey('keep', B(`k${i}`)), B('v'));
  for (let i = 0; i < 50; i++) await store.put(B(`plain${i}`), B('v'));
  // A set's element (a sub-key of its parent), and hints of both buckets for a down peer.
  const basket = storedKey('carts', B('basket'));
  await store.writeMany(basket, [{ op: 'add', path: { element: B('apple') } }]);
  expect((await store.readRange(basket, undefined, 10)).records).toHaveLength(1);
  const src = await Store.open({ engine: new MemoryEngine() });
  await store.hints.add(
    'n9',
    storedKey('carts', B('hinted')),
    (await src.put(storedKey('carts', B('hinted')), B('h'))).record,
  );
  await store.hints.add(
    'n9',
    storedKey('keep', B('hinted')),
    (await src.put(storedKey('keep', B('hinted')), B('h'))).record,
  );
  await src.close();
  return store;
}

describe('BucketPurge', () => {
  it("deletes a deleted bucket's records and hints, and nothing else; records and gossips it done", async () => {
    const d = dir();
    const store = await storeWith();
    const table = new BucketTable(3);
    table.create('carts', props, 1000, 'n1');
    table.create('keep', props, 1000, 'n1');
    expect(await keysHeld(store, 'carts', 1000)).toBeGreaterThanOrEqual(301);
    expect(await keysHeld(store, 'carts', 1)).toBe(1);
    const deletion = table.delete('carts', 2000, 'n1');
    const gossip = fakeGossip(['n1']);
    const purge = new BucketPurge({ dataDir: d, store, table, gossiper: gossip, log: quiet }, []);
    await purge.kick();
    expect(await keysHeld(store, 'carts', 1000)).toBe(0);
    expect((await store.readRange(storedKey('carts', B('basket')), undefined, 10)).records).toHaveLength(0);
    expect(await keysHeld(store, 'keep', 1000)).toBe(51); // 50 records and a hint
    expect((await store.get(B('plain7'))).values.map(String)).toEqual(['v']);
    expect(purge.status).toMatchObject({ current: undefined, done: [deletionId(deletion)] });
    expect(purge.status.keys).toBeGreaterThanOrEqual(300);
    expect(purge.status.hints).toBe(1);
    expect(gossip.fields.get('n1')!.get(PURGED_FIELD)).toBe('carts@2000');
    expect(await loadPurged(d)).toEqual(['carts@2000']);
    // Kicked again (another table change): nothing more to do, nothing rescanned.
    await purge.kick();
    expect(purge.status.keys).toBeGreaterThanOrEqual(300);
    await store.close();
  });

  it('purges again after a restart when the last run did not finish, and forgets deletions whose name was created again', async () => {
    const d = dir();
    const store = await storeWith();
    const table = new BucketTable(3);
    table.create('carts', props, 1000, 'n1');
    table.delete('carts', 2000, 'n1');
    // A run stopped before it was done records nothing: the next start finds the deletion to do.
    const first = new BucketPurge(
      { dataDir: d, store, table, gossiper: fakeGossip(['n1']), log: quiet },
      await loadPurged(d),
    );
    await first.stop();
    await first.kick();
    expect(await loadPurged(d)).toEqual([]);
    const second = new BucketPurge(
      { dataDir: d, store, table, gossiper: fakeGossip(['n1']), log: quiet },
      await loadPurged(d),
    );
    await second.kick();
    expect(await loadPurged(d)).toEqual(['carts@2000']);
    expect(await keysHeld(store, 'carts', 10)).toBe(0);
    // Created and deleted again: a second deletion, purged on its own; the first is forgotten.
    table.create('carts', props, 3000, 'n1');
    await store.put(storedKey('carts', B('new')), B('v'));
    table.delete('carts', 4000, 'n1');
    await second.kick();
    expect(await loadPurged(d)).toEqual(['carts@4000']);
    expect(await keysHeld(store, 'carts', 10)).toBe(0);
    writeFileSync(join(d, 'purged.json'), '{"purged": 3}');
    await expect(loadPurged(d)).rejects.toThrow(/purged\.json is damaged \(no list of deletions\): remove it/);
    expect(readFileSync(join(d, 'purged.json'), 'utf8')).toContain('3');
    await store.close();
  });
});

describe('BucketSync delete', () => {
  const sync = (
    gossip: Gossiper,
    table: BucketTable,
    held: Record<string, number | Error>,
    removed: ReadonlySet<string> = new Set(),
  ) =>
    new BucketSync({
      id: 'n1',
      dataDir: dir(),
      table,
      gossiper: gossip,
      now: () => 5000,
      fetch: async () => [],
      keysHeld: async (node) => {
        const h = held[node] ?? 0;
        if (h instanceof Error) throw h;
        return h;
      },
      changed: () => undefined,
      removed: () => removed,
      log: quiet,
    });

  it('without purge, refuses while a member holds keys or cannot be asked, naming them; with purge, deletes', async () => {
    const table = new BucketTable(3);
    table.create('carts', props, 1000, 'n1');
    const gossip = fakeGossip(['n1', 'n2', 'n3']);
    await expect(sync(gossip, table, { n2: 1 }).delete('carts', false)).rejects.toMatchObject({
      code: 'BK_NOT_EMPTY',
      message: expect.stringMatching(
        /^bucket carts holds keys \(on n2\): delete them first, or delete the bucket with --purge/,
      ),
    });
    await expect(sync(gossip, table, { n3: new Error('unreachable') }).delete('carts', false)).rejects.toMatchObject({
      code: 'BK_NOT_EMPTY',
      message: expect.stringMatching(/cannot tell whether bucket carts is empty: n3 did not answer/),
    });
    expect(table.props('carts')).toBeDefined();
    await expect(sync(gossip, table, {}).delete('default', true)).rejects.toMatchObject({ code: 'BK_BAD_NAME' });
    await expect(sync(gossip, table, {}).delete('nope', true)).rejects.toMatchObject({ code: 'BK_UNKNOWN' });
    const s = sync(gossip, table, { n2: 7 });
    const status = await s.delete('carts', true);
    expect(status).toEqual({ deletion: { name: 'carts', at: 5000, n: 3 }, purged: [], pending: ['n1', 'n2', 'n3'] });
    expect(table.props('carts')).toBeUndefined();
    // An empty bucket needs no purge.
    table.create('empty', props, 1000, 'n1');
    expect((await sync(gossip, table, {}).delete('empty', false)).pending).toEqual(['n1', 'n2', 'n3']);
  });

  it("creates a deleted bucket's name again only once every member purged it", async () => {
    const table = new BucketTable(3);
    table.create('carts', props, 1000, 'n1');
    const gossip = fakeGossip(['n1', 'n2', 'n3']);
    const s = sync(gossip, table, {});
    await s.delete('carts', true);
    gossip.fields.get('n1')!.set(PURGED_FIELD, 'carts@5000');
    gossip.fields.get('n2')!.set(PURGED_FIELD, 'other@1,carts@5000');
    expect(s.deletionStatus('carts')).toMatchObject({ purged: ['n1', 'n2'], pending: ['n3'] });
    await expect(s.create('carts', props)).rejects.toMatchObject({
      code: 'BK_DELETING',
      message: expect.stringMatching(/^bucket carts was deleted and n3 has not yet deleted its keys/),
    });
    // A member removed while down (its own gossip still says normal) is not waited for.
    expect(sync(gossip, table, {}, new Set(['n3'])).deletionStatus('carts')).toMatchObject({
      purged: ['n1', 'n2'],
      pending: [],
    });
    // Nor one that left.
    gossip.fields.get('n3')!.set('status', 'left');
    expect(s.deletionStatus('carts')).toMatchObject({ purged: ['n1', 'n2'], pending: [] });
    expect((await s.create('carts', props)).bucket.name).toBe('carts');
    expect(s.deletionStatus('carts')).toBeUndefined();
  });
});
