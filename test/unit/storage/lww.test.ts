/**
 * Last-writer-wins keys (a bucket's `siblings: 'lww'`, given to the store as `policyOf`):
 * a write replaces what its replica holds, concurrent writes resolve to the latest by
 * write time (ties by dot) in every merge, and other keys keep their siblings.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryEngine, Store, resolveReplies } from '../../../src/storage/index.js';
import { decodeRecord, versionBytes } from '../../../src/kinds/versions/codec.js';

let stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.map((s) => s.close()));
  stores = [];
});

const T0 = 1_796_000_000_000;
/** A store whose keys starting with "lww" are last-writer-wins, on a clock the test sets. */
async function open(start = T0): Promise<{ store: Store; clock: { now: number } }> {
  const clock = { now: start };
  const store = await Store.open({
    engine: new MemoryEngine(),
    now: () => clock.now,
    policyOf: (k) => (k.toString().startsWith('lww') ? 'lww' : 'siblings'),
  });
  stores.push(store);
  return { store, clock };
}
const v = (s: string): Buffer => Buffer.from(s);
const values = async (s: Store, key: string): Promise<string[]> => (await s.get(key)).values.map(String).sort();

describe('last-writer-wins keys', () => {
  it('a blind write replaces what the replica holds (no siblings), where a siblings key keeps both', async () => {
    const { store, clock } = await open();
    for (const key of ['lww-k', 'k']) {
      await store.put(key, v('a'));
      clock.now++;
      await store.put(key, v('b'));
    }
    expect(await values(store, 'lww-k')).toEqual(['b']);
    expect(await values(store, 'k')).toEqual(['a', 'b']);
  });

  it('a write on a replica whose clock is behind what it holds still supersedes it there (its time is one past)', async () => {
    const { store, clock } = await open();
    await store.put('lww-k', v('a'));
    clock.now -= 60_000;
    await store.put('lww-k', v('b'));
    const s = decodeRecord((await store.getRecord('lww-k'))!).versions.siblings;
    expect(s).toHaveLength(1);
    expect(s[0]).toMatchObject({ at: T0 + 1 });
    expect(await values(store, 'lww-k')).toEqual(['b']);
  });

  it('concurrent writes on two replicas resolve to the later one on both, in either merge order, and in a read of both', async () => {
    const [a, b] = [await open(T0 + 5), await open(T0)];
    const wa = await a.store.put('lww-k', v('later'));
    const wb = await b.store.put('lww-k', v('earlier'));
    const read = resolveReplies('lww-k', [wa.record, wb.record], { policy: 'lww', now: T0 });
    expect(read.values.map(String)).toEqual(['later']);
    expect(resolveReplies('lww-k', [wa.record, wb.record], { now: T0 }).values.map(String).sort()).toEqual([
      'earlier',
      'later',
    ]);
    await a.store.merge('lww-k', wb.record);
    await b.store.merge('lww-k', wa.record);
    expect(await values(a.store, 'lww-k')).toEqual(['later']);
    expect(await values(b.store, 'lww-k')).toEqual(['later']);
    // The same versions, to the byte (what anti-entropy compares), on both replicas.
    expect(
      versionBytes((await a.store.getRecord('lww-k'))!).equals(versionBytes((await b.store.getRecord('lww-k'))!)),
    ).toBe(true);
  });

  it('a delete is a write like any other: the later of a delete and a put wins', async () => {
    const [a, b] = [await open(T0 + 5), await open(T0)];
    const del = await a.store.delete('lww-k');
    const put = await b.store.put('lww-k', v('v'));
    await b.store.merge('lww-k', del.record);
    expect((await b.store.get('lww-k')).values).toEqual([]);
    await a.store.merge('lww-k', put.record);
    expect((await a.store.get('lww-k')).deleted).toBe(true);
  });

  it('a record of siblings from a replica that did not yet know the policy is resolved on arrival', async () => {
    const plain = await Store.open({ engine: new MemoryEngine(), now: () => T0 + 9 });
    stores.push(plain);
    await plain.put('lww-k', v('x'));
    const both = await plain.put('lww-k', v('y'));
    expect(both.versions).toBe(2);
    const { store } = await open();
    const r = await store.merge('lww-k', both.record);
    expect(r.versions).toBe(1);
    expect((await values(store, 'lww-k')).length).toBe(1);
  });
});
