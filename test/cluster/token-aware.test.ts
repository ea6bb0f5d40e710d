/**
 * The token-aware client on real processes (N=2 on 3, then 4 nodes, so that each key has
 * replicas and non-replicas): requests go to a replica of their key, a killed replica is
 * failed over, and a node that joins is used once the client fetched the ring again.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { TestCluster } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';

async function normalEverywhere(cluster: TestCluster, ids: readonly string[], timeoutMs: number): Promise<void> {
  await waitFor(
    `${ids.join(', ')} normal and up on every running node`,
    timeoutMs,
    async () => {
      const views = await Promise.all(cluster.nodes.filter((n) => n.running).map((n) => n.status()));
      return views.every(
        (v) =>
          v !== undefined && ids.every((id) => v.members.some((m) => m.id === id && m.status === 'normal' && m.up)),
      );
    },
    250,
  );
}

describe('the token-aware client', () => {
  let cluster: TestCluster;
  let client: Client | undefined;
  afterAll(() => {
    client?.close();
    cluster?.destroy();
  });

  it('sends each request to a replica of its key, fails over a killed one, and uses a node that joined', async () => {
    cluster = await TestCluster.create(4, 1, [
      '--replicas',
      '2',
      '--request-timeout-ms',
      '2000',
      '--stream-bytes-per-second',
      '0',
    ]);
    const [n1, n2, n3, n4] = cluster.nodes as [
      (typeof cluster.nodes)[0],
      (typeof cluster.nodes)[0],
      (typeof cluster.nodes)[0],
      (typeof cluster.nodes)[0],
    ];
    for (const n of [n1, n2, n3]) n.start();
    await normalEverywhere(cluster, ['n1', 'n2', 'n3'], 60_000);
    // Given n1 only: the ring tells it of the others.
    client = new Client({ nodes: [n1.address], deadlineMs: 5000, ringRefreshMs: 300 });
    await client.refreshRing();
    const byAddress = new Map(cluster.nodes.map((n) => [n.address, n.id]));
    const admin = n1.admin();
    const keys = Array.from({ length: 60 }, (_, i) => `ta-${i}`);
    const replicas = new Map<string, string[]>();
    for (const k of keys)
      replicas.set(
        k,
        (await admin.endpoints(k)).preferenceList.map((e) => e.id),
      );
    for (const k of keys)
      expect(
        client
          .candidates(k)
          .slice(0, 2)
          .map((a) => byAddress.get(a))
          .sort(),
      ).toEqual([...replicas.get(k)!].sort());

    // Keys n1 does not replicate: n1 coordinates none of their puts.
    const elsewhere = keys.filter((k) => !replicas.get(k)!.includes('n1'));
    expect(elsewhere.length).toBeGreaterThan(5);
    const puts = async (): Promise<number[]> =>
      Promise.all([n1, n2, n3].map(async (n) => (await n.status())!.counters.puts ?? 0));
    const before = await puts();
    for (const k of elsewhere) await client.put(k, 'v', { w: 2 });
    const after = await puts();
    expect(after[0]).toBe(before[0]);
    expect(after[1]! - before[1]! + after[2]! - before[2]!).toBe(elsewhere.length);

    // n3 killed: requests for its keys go to their other replica (or, failing that, to n1).
    n3.signal('SIGKILL');
    await n3.exit;
    await waitFor(
      'n1 and n2 to see n3 down',
      30_000,
      async () => {
        const views = await Promise.all([n1, n2].map((n) => n.status()));
        return views.every((v) => v?.members.some((m) => m.id === 'n3' && !m.up)) || undefined;
      },
      250,
    );
    // W=2 with n3 down: the other replica and n3's fallback (a hint) both hold the write, so
    // a read at R=1 sees it whichever it asks. (W=1 and R=1 on N=2 promise no such thing: a
    // read once reached the fallback before the write's hint did.)
    const n3keys = keys.filter((k) => replicas.get(k)!.includes('n3'));
    for (const k of n3keys) await client.put(k, 'after-kill', { w: 2 });
    for (const k of n3keys) expect((await client.get(k, { r: 1 })).values.map(String)).toContain('after-kill');
    n3.start();
    await normalEverywhere(cluster, ['n1', 'n2', 'n3'], 60_000);

    // n4 joins: once normal, the client's next ring fetch sends its keys there.
    n4.start();
    await normalEverywhere(cluster, ['n1', 'n2', 'n3', 'n4'], 120_000);
    await waitFor(
      'the client routes some keys to n4',
      20_000,
      async () => {
        await client!.get('poke', { r: 1 }); // a request lets a stale ring be fetched again
        return keys.some((k) => client!.candidates(k).slice(0, 2).includes(n4.address)) || undefined;
      },
      200,
    );
  }, 300_000);
});
