/**
 * Per-bucket N on real `ringkv node` processes (issue 28): a bucket with n=5 and one with
 * n=1 beside the default bucket (N=3) on a 5-node cluster. After a 6th node joins, after a
 * cleanup, after a repair on every node, and after a node decommissions (the join and the
 * decommission under writes to all three buckets at W = n), and after a dead node is
 * removed (its n=1 keys, whose only copy it held, are lost, and do not hold it up), every key is on
 * exactly its bucket's n replicas per the ring of that n: each node's own copy is read
 * directly (the Replica service's local read, not a quorum read, which would repair).
 * The joiner pulls only the keys it gains for their own n, cleanup removes exactly the
 * copies of nodes no longer replicas for the key's n, and a repair never copies an n=1
 * key to a second node.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { AdminClient, Client } from '../../src/client/index.js';
import { TestCluster, type NodeProcess } from '../../testkit/node-cluster.js';
import { missingLocally } from '../../testkit/kv-client.js';
import { waitFor } from '../../testkit/wait.js';
import { bucketReplicasOf, placementErrors } from './topology-check.js';

const KEYS = Number(process.env.BUCKET_N_KEYS ?? 200);
/** Bucket name ('' : the default one), its n, and the W that puts an acknowledged key on all n. */
const BUCKETS = [
  { name: '', n: 3 },
  { name: 'five', n: 5 },
  { name: 'one', n: 1 },
] as const;

describe('per-bucket N through a join, cleanup, repair and a decommission', () => {
  let cluster: TestCluster | undefined;
  let client: Client | undefined;
  afterAll(() => {
    client?.close();
    cluster?.destroy();
  });

  const running = (): NodeProcess[] => cluster!.nodes.filter((n) => n.running);

  /** Every running node sees exactly `ids` as normal and up, and nothing moves. */
  async function settled(ids: readonly string[]): Promise<void> {
    let last = '';
    try {
      await waitFor(
        `${ids.join(', ')} normal and up everywhere, nothing moving`,
        90_000,
        async () => {
          const views = await Promise.all(running().map((n) => n.status()));
          const off = views.flatMap((v, i) => {
            if (v === undefined) return [`${running()[i]!.id}: no answer`];
            const normal = v.members
              .filter((m) => m.status === 'normal' && m.up)
              .map((m) => m.id)
              .sort();
            return normal.join() === [...ids].sort().join()
              ? []
              : [`${running()[i]!.id} sees ${normal.join(',')} normal and up`];
          });
          if (off.length === 0) {
            const ring = await running()[0]!.admin().ring(3);
            if (ring.pending.length > 0) off.push('ranges still pending');
          }
          last = off.join('; ');
          return off.length === 0;
        },
        250,
      );
    } catch (e) {
      throw new Error(`${(e as Error).message} (last: ${last})`);
    }
  }

  /**
   * For each bucket, where its keys are not on exactly their replicas (each running node
   * read directly); `lostOne`: keys of bucket "one" not checked (their only copy was lost).
   */
  async function placement(
    all: readonly string[],
    lostOne: ReadonlySet<string> = new Set(),
  ): Promise<Record<string, string[]>> {
    const out: Record<string, string[]> = {};
    for (const b of BUCKETS) {
      const keys = b.name === 'one' ? all.filter((k) => !lostOne.has(k)) : all;
      const ring = await running()[0]!.admin().ring(b.n);
      const nodes = running();
      const missing = await Promise.all(nodes.map(async (n) => new Set(await missingLocally(n.address, keys, b.name))));
      const held = new Map(nodes.map((n, i) => [n.id, new Set(keys.filter((k) => !missing[i]!.has(k)))]));
      // Every replica the ring names is running: a node that left holds nothing.
      expect(new Set(ring.ranges.flatMap((r) => r.replicas)).size).toBe(running().length);
      out[b.name || 'default'] = placementErrors(ring, b.name, keys, held).slice(0, 10);
    }
    return out;
  }

  const exact = { default: [], five: [], one: [] };

  /**
   * placement() once it passes `ok`, or its last result after 20 s: a write acknowledged
   * through a speculative fallback reaches its slow replica a moment later.
   */
  async function placementWhen(
    keys: readonly string[],
    ok: (p: Record<string, string[]>) => boolean,
    lostOne?: ReadonlySet<string>,
  ): Promise<Record<string, string[]>> {
    const until = Date.now() + 20_000;
    for (;;) {
      const p = await placement(keys, lostOne);
      if (ok(p) || Date.now() > until) return p;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  const isExact = (p: Record<string, string[]>): boolean => Object.values(p).every((e) => e.length === 0);

  /**
   * Write fresh keys `${prefix}${i}` into every bucket at W = its n until stopped (at most
   * 150 keys and 90 s): a key counts when all three buckets acknowledged it.
   */
  function writeDuring(prefix: string): { stop(): Promise<string[]> } {
    const acked: string[] = [];
    let next = 0,
      stopping = false;
    const end = Date.now() + 90_000;
    const workers = Array.from({ length: 4 }, async () => {
      while (!stopping && next < 150 && Date.now() < end) {
        const k = `${prefix}${next++}`;
        const ok = await Promise.all(
          BUCKETS.map((b) =>
            client!.put(k, `${b.name}-${k}`, { bucket: b.name, w: b.n }).then(
              () => true,
              () => false,
            ),
          ),
        );
        if (ok.every(Boolean)) acked.push(k);
      }
    });
    return {
      async stop() {
        stopping = true;
        await Promise.all(workers);
        return acked;
      },
    };
  }

  it("keeps every key on exactly its bucket's n replicas", async () => {
    cluster = await TestCluster.create(6, 3, ['--request-timeout-ms', '3000']);
    for (const n of cluster.nodes.slice(0, 5)) n.start();
    await settled(['n1', 'n2', 'n3', 'n4', 'n5']);
    // Create returns once every node has the bucket: on a loaded machine that can take over the test kit's 2 s.
    const admin = new AdminClient(cluster.node('n1').address, 30_000);
    try {
      expect((await admin.createBucket('five', { n: 5 })).lagging).toEqual([]);
      expect((await admin.createBucket('one', { n: 1 })).lagging).toEqual([]);
    } finally {
      admin.close();
    }

    client = new Client({ nodes: cluster.nodes.slice(0, 5).map((n) => n.address), deadlineMs: 5000 });
    const keys: string[] = Array.from({ length: KEYS }, (_, i) => `k${i}`);
    for (const b of BUCKETS) {
      // W = n: an acknowledged key is on every one of its replicas.
      for (let i = 0; i < keys.length; i += 20)
        await Promise.all(
          keys.slice(i, i + 20).map((k) => client!.put(k, `${b.name}-${k}`, { bucket: b.name, w: b.n })),
        );
    }
    expect(await placement(keys)).toEqual(exact);

    // A 6th node joins under writes: it pulls, per class, the keys it gains for their own n.
    const joinWriter = writeDuring('j');
    cluster.node('n6').start();
    await settled(['n1', 'n2', 'n3', 'n4', 'n5', 'n6']);
    keys.push(...(await joinWriter.stop()));
    const joined = await placementWhen(keys, (p) =>
      Object.values(p).every((e) => e.every((x) => x.endsWith(' extra'))),
    );
    // The old replicas still hold their copies (no cleanup yet): only "extra" may show, never
    // "missing", and never on n6, which holds exactly what it is a replica of.
    for (const errors of Object.values(joined)) for (const e of errors) expect(e).toMatch(/@n[1-5] extra$/);
    expect(joined.one!.length + joined.default!.length).toBeGreaterThan(0); // old copies of both classes are left
    const n6 = cluster.node('n6');
    for (const b of BUCKETS) {
      const ring = await n6.admin().ring(b.n);
      const missing = new Set(await missingLocally(n6.address, keys, b.name));
      const held = new Map([['n6', new Set(keys.filter((k) => !missing.has(k)))]]);
      expect(placementErrors(ring, b.name, keys, held), `n6's keys of bucket ${b.name || 'default'}`).toEqual([]);
    }

    // Cleanup on every old node removes exactly the copies it no longer replicates for the key's n.
    let deleted = 0;
    for (const n of cluster.nodes.slice(0, 5)) deleted += (await n.admin().cleanup()).deleted;
    expect(deleted).toBeGreaterThan(0);
    expect(await placement(keys)).toEqual(exact);

    // A repair on every node, one after another: an n=1 key is never copied to a second node,
    // and nothing else changes either (every replica already held its keys).
    for (const n of running()) {
      const started = await n.admin().repair();
      await waitFor(
        `${n.id}'s repair done`,
        60_000,
        async () => {
          const s = await n.admin().repairStatus();
          return s.id === started.id && s.finishedAtMs > 0 ? s : undefined;
        },
        200,
      );
      const s = await n.admin().repairStatus();
      expect(s.failed, `${n.id}'s repair: ${s.lastProblem}`).toBe(0);
      expect(s.skipped).toBe(0);
    }
    expect(await placement(keys)).toEqual(exact);

    // n2 decommissions under writes: its heirs pull, per class, what they gain; n2 exits.
    const n2 = cluster.node('n2');
    const leaveWriter = writeDuring('l');
    await n2.admin().decommission(false);
    expect(await n2.exit).toBe(0);
    await settled(['n1', 'n3', 'n4', 'n5', 'n6']);
    const during = await leaveWriter.stop();
    expect(during.length).toBeGreaterThan(0);
    keys.push(...during);
    expect(await placementWhen(keys, isExact)).toEqual(exact);
    // Every key still reads back whole through a quorum.
    for (const b of BUCKETS)
      for (const k of keys.slice(0, 50))
        expect((await client.get(k, { bucket: b.name })).values.map(String)).toEqual([`${b.name}-${k}`]);

    // n6 dies for good and is removed: the survivors pull its ranges per class. Its n=1 keys
    // had no other copy: their ranges are done with nothing to pull, and the removal completes.
    const ringOne = await cluster.node('n1').admin().ring(1);
    const lostOne = new Set(keys.filter((k) => bucketReplicasOf(ringOne, k, 'one').includes('n6')));
    expect(lostOne.size).toBeGreaterThan(0);
    n6.signal('SIGKILL');
    await n6.exit;
    await waitFor(
      'n6 down everywhere',
      30_000,
      async () =>
        (await Promise.all(running().map((n) => n.status()))).every(
          (v) => v?.members.find((m) => m.id === 'n6')?.up === false,
        ),
      200,
    );
    await cluster.node('n1').admin().removeNode('n6');
    await settled(['n1', 'n3', 'n4', 'n5']);
    expect(await placementWhen(keys, isExact, lostOne)).toEqual(exact);
    expect(
      cluster.node('n1').lines.some((l) => l.msg === 'removed: every range of the node is back on N replicas'),
    ).toBe(true);
  }, 420_000); // the budget allows for a machine running at a third of its speed
});
