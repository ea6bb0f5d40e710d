/**
 * Ranges.holdsAny, the node's periodic "empty" look: whether any data record is held, read
 * without counting in recordsRead — a repair's cost, which a cluster test asserts is 0 on
 * ranges in sync, and which this look made 1 when it fell during that repair.
 */
import { describe, expect, it } from 'vitest';
import { MemoryEngine, Store } from '../../../src/storage/index.js';

const quiet = { warn: () => {}, error: () => {} };

describe('whether a store holds any record', () => {
  it('false when empty, true once a key is written, and it reads nothing a repair would count', async () => {
    const store = await Store.open({ engine: new MemoryEngine(), logger: quiet });
    try {
      expect(await store.ranges.holdsAny()).toBe(false);
      await store.put('a', Buffer.from('1'));
      expect(await store.ranges.holdsAny()).toBe(true);
      expect(store.ranges.recordsRead).toBe(0);
    } finally {
      await store.close();
    }
    await expect(store.ranges.holdsAny()).rejects.toMatchObject({ code: 'KV_CLOSED' });
  });
});
