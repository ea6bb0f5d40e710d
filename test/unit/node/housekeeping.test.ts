import { describe, expect, it } from 'vitest';
import type { Logger } from 'pino';
import { Housekeeping } from '../../../src/node/housekeeping.js';
import { Gossiper } from '../../../src/membership/gossiper.js';
import { MemoryEngine, Store } from '../../../src/storage/index.js';

function recorder(): { log: Logger; lines: { level: string; obj: Record<string, unknown>; msg: string }[] } {
  const lines: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) => void lines.push({ level, obj, msg });
  return { log: { info: at('info'), warn: at('warn') } as unknown as Logger, lines };
}

describe('housekeeping', () => {
  it('purges a tombstone only past its grace period and once a repair confirmed it on every replica, and says how many', async () => {
    let now = 1_000_000;
    let confirmed = 0;
    const store = await Store.open({ engine: new MemoryEngine(), tombstoneGraceMs: 1000, now: () => now });
    try {
      const { context } = await store.put('k', Buffer.from('v'));
      await store.delete('k', context);
      const deletedAt = now;
      const { log, lines } = recorder();
      const gossiper = new Gossiper({
        id: 'a',
        clusterName: 'c',
        generation: 1,
        fields: { addr: '127.0.0.1:1' },
        seeds: [],
        random: Math.random,
        now: 0,
      });
      const h = new Housekeeping({
        store,
        gossiper,
        replicas: 3,
        closing: () => false,
        confirmedBefore: () => confirmed,
        log,
      });
      await h.purgeTombstones();
      expect(lines).toEqual([]); // still within its grace period
      now += 2000;
      await h.purgeTombstones(); // past its grace period, but no repair yet: a replica may still hold the value
      expect(lines).toEqual([
        {
          level: 'info',
          obj: { component: 'storage', purged: 0, unconfirmed: 1 },
          msg: 'tombstones purged; some past their grace period wait for a repair of their range (ringkv repair)',
        },
      ]);
      expect(await store.getRecord('k')).toBeDefined();
      confirmed = deletedAt; // a repair whose tree was built at the very moment of the delete does not cover it
      await h.purgeTombstones();
      expect(await store.getRecord('k')).toBeDefined();
      confirmed = deletedAt + 1;
      lines.length = 0;
      await h.purgeTombstones();
      expect(lines).toEqual([
        {
          level: 'info',
          obj: { component: 'storage', purged: 1, unconfirmed: 0 },
          msg: 'tombstones past their grace period, confirmed on every replica by a repair, purged',
        },
      ]);
      expect(await store.getRecord('k')).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
