import { afterEach, describe, expect, it } from 'vitest';
import { KvError, MemoryEngine, Store, resolveReplies } from '../../../src/storage/index.js';

let stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.map((s) => s.close()));
  stores = [];
});
const open = async (): Promise<Store> => {
  const s = await Store.open({ engine: new MemoryEngine() });
  stores.push(s);
  return s;
};

describe('resolveReplies', () => {
  it('equal replies: their values and context, nothing stale', async () => {
    const [a, b] = [await open(), await open()];
    const { record } = await a.put('k', Buffer.from('v'));
    await b.merge('k', record);
    const r = resolveReplies('k', [await a.getRecord('k'), await b.getRecord('k')]);
    expect(r.values.map(String)).toEqual(['v']);
    expect(r.found).toBe(true);
    expect(r.stale).toEqual([false, false]);
    // The context supersedes the value on either replica.
    await b.put('k', Buffer.from('w'), r.context);
    expect((await b.get('k')).values.map(String)).toEqual(['w']);
  });

  it('a missing or older reply is stale; the merge holds every sibling', async () => {
    const [a, b, c] = [await open(), await open(), await open()];
    await a.put('k', Buffer.from('x'));
    await b.put('k', Buffer.from('y'));
    const r = resolveReplies('k', [await a.getRecord('k'), await b.getRecord('k'), await c.getRecord('k')]);
    expect(r.values.map(String).sort()).toEqual(['x', 'y']);
    expect(r.stale).toEqual([true, true, true]);
    await c.merge('k', r.record!);
    expect(resolveReplies('k', [await c.getRecord('k'), r.record]).stale).toEqual([false, false]);
  });

  it('nothing anywhere: not found, a context for a first write, nothing stale', () => {
    const r = resolveReplies('k', [undefined, undefined]);
    expect(r).toMatchObject({ found: false, values: [], record: undefined, stale: [false, false] });
    expect(r.context.length).toBeGreaterThan(0);
  });

  it('only tombstones: found=false', async () => {
    const a = await open();
    const { context } = await a.put('k', Buffer.from('v'));
    await a.delete('k', context);
    expect(resolveReplies('k', [await a.getRecord('k')]).found).toBe(false);
  });

  it('a reply that does not decode is refused with KV_BAD_RECORD, not read as empty', async () => {
    const a = await open();
    await a.put('k', Buffer.from('v'));
    const good = (await a.getRecord('k'))!;
    const bad = Buffer.from(good);
    bad[bad.length - 1]! ^= 0xff;
    expect(() => resolveReplies('k', [good, bad])).toThrow(KvError);
  });
});
