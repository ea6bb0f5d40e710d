/**
 * Expiry on real processes, through hints, repair and a join's streaming: values written
 * with a TTL, some over older values that one replica (down at the time) still holds,
 * are gone everywhere once expired and reclaimed, and nothing brings them or what they
 * superseded back — not the down replica's return (its hints), not a repair, not the
 * ranges a joiner streams. Each node's own records are read through the Replica service
 * and decoded, so the test sees what is stored, not only what reads show.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { decodeRecord } from '../../src/kinds/versions/codec.js';
import { GrpcReplicas } from '../../src/transport/replica-wire.js';
import { TestCluster, type NodeProcess } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';

const COUNT = 100;
const TTL_MS = 3000;
const keys = (prefix: string): string[] => Array.from({ length: COUNT }, (_, i) => `${prefix}-${i}`);

async function normalEverywhere(cluster: TestCluster, ids: readonly string[], timeoutMs: number): Promise<void> {
  await waitFor(
    `${ids.join(', ')} normal and up on every node`,
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

/** What node `n` stores for each key: absent, or its siblings' count and live values. */
async function stored(n: NodeProcess, ks: readonly string[]): Promise<Map<string, { siblings: number } | undefined>> {
  const c = new GrpcReplicas(() => n.address, grpc.credentials.createInsecure());
  try {
    const out = new Map<string, { siblings: number } | undefined>();
    for (const k of ks) {
      const record = await c.call('node', { op: 'read', key: Buffer.from(k) }, Date.now() + 3000);
      out.set(k, record === undefined ? undefined : { siblings: decodeRecord(record).versions.siblings.length });
    }
    return out;
  } finally {
    c.close();
  }
}

/** Run a repair on `n` and wait until it finished with no range failed. */
async function repaired(n: NodeProcess): Promise<void> {
  const started = await n.admin().repair();
  const done = await waitFor(
    `${n.id}'s repair done`,
    90_000,
    async () => {
      const s = await n.admin().repairStatus();
      return s.id === started.id && s.finishedAtMs > 0 ? s : undefined;
    },
    250,
  );
  expect(done.failed).toBe(0);
}

describe('expiry through hints, repair and a join', () => {
  let cluster: TestCluster;
  let client: Client | undefined;
  afterAll(() => {
    client?.close();
    cluster?.destroy();
  });

  it('expired values, and the values they superseded, never come back on any node', async () => {
    cluster = await TestCluster.create(4, 3, ['--request-timeout-ms', '3000', '--stream-bytes-per-second', '0']);
    const [n1, n2, n3, n4] = cluster.nodes as [NodeProcess, NodeProcess, NodeProcess, NodeProcess];
    for (const n of [n1, n2, n3]) n.start();
    await normalEverywhere(cluster, ['n1', 'n2', 'n3'], 60_000);
    client = new Client({ nodes: [n1, n2].map((n) => n.address), deadlineMs: 5000 });
    const kv = client;
    const [gone, over, live] = [keys('gone'), keys('over'), keys('live')];
    // Old values everywhere, then n3 stops: it keeps them, and misses what supersedes them.
    for (const k of over) await kv.put(k, 'old', { w: 3 });
    n3.signal('SIGTERM');
    await n3.exit;
    for (const k of over) await kv.put(k, 'new', { w: 2, ttlMs: TTL_MS, context: (await kv.get(k, { r: 2 })).context });
    // Read back at once, the key written last: on a loaded machine the 300 puts take longer than the TTL.
    expect((await kv.get(over.at(-1)!, { r: 2 })).values.map(String)).toEqual(['new']);
    for (const k of gone) await kv.put(k, 'short', { w: 2, ttlMs: TTL_MS });
    for (const k of live) await kv.put(k, 'kept', { w: 2 });
    const written = Date.now();

    await new Promise((r) => setTimeout(r, Math.max(0, written + TTL_MS - Date.now())));
    for (const k of [...gone, ...over]) expect((await kv.get(k, { r: 2 })).values, k).toEqual([]);
    // n1 and n2 reclaim (every 10 s): the short values' records dropped, the superseding ones
    // left with no sibling (their clock kept: unit-tested in test/unit/storage/expiry.test.ts).
    await waitFor(
      'n1 and n2 reclaimed what expired',
      40_000,
      async () => {
        for (const n of [n1, n2]) {
          const s = await stored(n, [...gone, ...over]);
          if (gone.some((k) => s.get(k) !== undefined) || over.some((k) => (s.get(k)?.siblings ?? 0) !== 0))
            return false;
        }
        return true;
      },
      1000,
    );

    // n3 comes back holding the old values: its hints arrive, a repair runs, and n4 joins, streaming ranges.
    n3.start();
    await normalEverywhere(cluster, ['n1', 'n2', 'n3'], 60_000);
    await waitFor(
      'hints delivered to n3',
      60_000,
      async () =>
        (await n1.status())?.members.every((m) => m.hints === 0) &&
        (await n2.status())?.members.every((m) => m.hints === 0),
      500,
    );
    await repaired(n1);
    n4.start();
    await normalEverywhere(cluster, ['n1', 'n2', 'n3', 'n4'], 120_000);
    await repaired(n2);

    const everyone = [n1, n2, n3, n4];
    for (const k of [...gone, ...over]) expect((await kv.get(k, { r: 3 })).values.map(String), k).toEqual([]);
    for (const k of live) expect((await kv.get(k, { r: 3 })).values.map(String), k).toEqual(['kept']);
    // And in each node's own store: no copy of an old value, no live sibling of what expired.
    await waitFor(
      'every node holds no sibling of what expired',
      40_000,
      async () => {
        for (const n of everyone) {
          const s = await stored(n, [...gone, ...over]);
          if ([...s.values()].some((x) => x !== undefined && x.siblings > 0)) return false;
        }
        return true;
      },
      1000,
    );
    const onN4 = await stored(n4, gone);
    expect(
      [...onN4.values()].filter((x) => x !== undefined),
      'a join streamed an expired record',
    ).toEqual([]);
  }, 360_000);
});
