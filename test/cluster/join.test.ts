/**
 * Growing a live cluster on real processes: a node joins a cluster that holds data while
 * clients keep writing; afterwards every acknowledged key, old or written during the
 * join, is in the store of each of its replicas per the new ring (read from LevelDB
 * directly), and the joiner received about its share. The old owners clean up by
 * themselves shortly after (--cleanup-after-ms), so then each key is on exactly its N
 * replicas.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { TestCluster } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';
import {
  extraCopies,
  loadKeys,
  missingCopies,
  replicasOf,
  stopAll,
  storedKeys,
  writeDuring,
} from './topology-check.js';

const KEYS = Number(process.env.JOIN_KEYS ?? 50_000);

async function normalEverywhere(cluster: TestCluster, ids: readonly string[], timeoutMs: number): Promise<void> {
  const running = (): TestCluster['nodes'] => cluster.nodes.filter((n) => n.running);
  try {
    await waitFor(
      `${ids.join(', ')} normal and up on every node`,
      timeoutMs,
      async () => {
        const views = await Promise.all(running().map((n) => n.status()));
        return views.every(
          (v) =>
            v !== undefined && ids.every((id) => v.members.some((m) => m.id === id && m.status === 'normal' && m.up)),
        );
      },
      250,
    );
  } catch (e) {
    // What each node saw, and its last warnings: a join that never ends (once in a CI rehearsal) needs them to be read.
    const seen = await Promise.all(
      running().map(async (n) => {
        const members = (await n.status())?.members
          .map((m) => `${m.id} ${m.status}${m.up ? '' : ' down'}${m.progress ? ` (${m.progress})` : ''}`)
          .join('; ');
        const warnings = n.lines
          .filter((l) => typeof l.level === 'number' && l.level >= 40)
          .slice(-8)
          .map((l) => `  ${String(l.msg)} ${JSON.stringify(l).slice(0, 300)}`);
        return [`${n.id} sees: ${members ?? 'no status'}`, ...warnings].join('\n');
      }),
    );
    throw new Error(`${(e as Error).message}\n${seen.join('\n')}`);
  }
}

describe('a node joins a cluster that holds data', () => {
  let cluster: TestCluster;
  afterAll(() => cluster?.destroy());

  it(`joins a 3-node cluster loaded with ${KEYS} keys while clients write: every key on exactly its N replicas once old owners cleaned up`, async () => {
    cluster = await TestCluster.create(4, 3, [
      '--request-timeout-ms',
      '3000',
      '--stream-bytes-per-second',
      '0',
      '--cleanup-after-ms',
      '3000',
    ]);
    const [n1, n2, n3, n4] = cluster.nodes;
    for (const n of [n1!, n2!, n3!]) n.start();
    await normalEverywhere(cluster, ['n1', 'n2', 'n3'], 60_000);
    const client = new Client({ nodes: [n1!, n2!, n3!].map((n) => n.address), deadlineMs: 5000 });
    try {
      const loaded = await loadKeys(client, 'old-', KEYS);
      expect(loaded.length).toBe(KEYS);
      const writer = writeDuring(client, 'new-', { maxOps: 200_000, maxMs: 120_000 });
      n4!.start();
      await normalEverywhere(cluster, ['n1', 'n2', 'n3', 'n4'], 120_000);
      // Status right after the join: n4 shows the data it streamed, and no "streaming" left
      // over (both used to wait for the 5 s refresh).
      await waitFor(
        'n4 shown done with its load',
        3000,
        async () => {
          const m = (await n4!.status())?.members.find((x) => x.id === 'n4');
          return m !== undefined && m.progress === '' && m.loadBytes > 0;
        },
        100,
      );
      const during = await writer.stop();
      const ring = await n1!.admin().ring(3);
      const pull = (await n4!.admin().transfers()).pulls.find((p) => p.move.startsWith('join-n4'));
      const streamed = pull?.ranges.reduce((s, r) => s + r.keys, 0) ?? 0;
      // Each old owner deletes what it gave n4 by itself, once the ring stood still for 3 s.
      await waitFor('n1..n3 cleaned up by themselves', 60_000, async () =>
        [n1!, n2!, n3!].every((n) =>
          n.lines.some(
            (l) => l.msg === 'cleanup: data of ranges this node no longer replicates deleted' && Number(l.deleted) > 0,
          ),
        ),
      );
      await stopAll(cluster.nodes);
      const stored = new Map<string, Set<string>>();
      for (const n of cluster.nodes) stored.set(n.id, await storedKeys(n));
      const acked = [...loaded, ...during.acked];
      expect(missingCopies(ring, acked, stored).slice(0, 20), 'acknowledged keys missing from a replica').toEqual([]);
      expect(extraCopies(ring, stored).slice(0, 20), 'keys left on a node that is not their replica').toEqual([]);
      // What n4 received against its share of the old keys under the new ring.
      const ideal = loaded.filter((k) => replicasOf(ring, k).includes('n4')).length;
      const got = loaded.filter((k) => stored.get('n4')!.has(k)).length;
      console.log(
        `join: ${loaded.length} keys loaded, ${during.acked.length} written during the join (${during.failed} failed); ` +
          `streamed to n4 ${streamed} keys, its share of the old keys ${ideal} (moved ÷ ideal ${(streamed / ideal).toFixed(3)}); n4 holds ${got} of them`,
      );
      expect(got).toBe(ideal);
    } finally {
      client.close();
    }
  }, 420_000);
});
