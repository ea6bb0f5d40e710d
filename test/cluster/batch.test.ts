/**
 * Batches on real processes while a node joins: writers send PutMany batches of 100 new
 * keys (and readers GetMany batches of loaded ones) to a 3-node cluster while n4 joins;
 * afterwards GetMany reads back every key any PutMany acknowledged, with its value, and
 * every loaded key. A batch is not atomic: a key the batch reported failed is not
 * expected, one it acknowledged must be there.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { TestCluster } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';
import { replicasOf } from './topology-check.js';

const LOADED = 3000;
const BATCH = 100;

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

const value = (k: string): string => `value of ${k}`;

/** Every key of `keys` read back in batches: the keys not found with their value, and the errors. */
async function readBack(client: Client, keys: readonly string[]): Promise<{ missing: string[]; errors: string[] }> {
  const missing: string[] = [],
    errors: string[] = [];
  for (let i = 0; i < keys.length; i += BATCH) {
    for (const r of await client.getMany(keys.slice(i, i + BATCH))) {
      const k = r.key.toString();
      if (!r.ok) errors.push(`${k}: ${r.error.details}`);
      else if (!r.value.found || !r.value.values.some((v) => v.toString() === value(k))) missing.push(k);
    }
  }
  return { missing, errors };
}

describe('batches during a join', () => {
  let cluster: TestCluster;
  afterAll(() => cluster?.destroy());

  it('every key a PutMany acknowledged during the join is read back by GetMany after it', async () => {
    cluster = await TestCluster.create(4, 3, ['--request-timeout-ms', '3000', '--stream-bytes-per-second', '0']);
    const [n1, n2, n3, n4] = cluster.nodes;
    for (const n of [n1!, n2!, n3!]) n.start();
    await normalEverywhere(cluster, ['n1', 'n2', 'n3'], 60_000);
    const client = new Client({ nodes: [n1!, n2!, n3!].map((n) => n.address), deadlineMs: 5000 });
    try {
      const loaded = Array.from({ length: LOADED }, (_, i) => `old-${i}`);
      for (let i = 0; i < LOADED; i += BATCH) {
        const out = await client.putMany(
          loaded.slice(i, i + BATCH).map((key) => ({ key, value: value(key) })),
          { w: 3 },
        );
        expect(out.filter((r) => !r.ok)).toEqual([]);
      }
      // Writers and readers in closed loops, bounded in batches and time, until the join is done.
      let stopping = false,
        next = 0,
        batches = 0,
        readBatches = 0,
        failedKeys = 0,
        failedCalls = 0,
        readFailures = 0;
      const acked: string[] = [];
      const whyFailed: string[] = [];
      const end = Date.now() + 120_000;
      const going = (): boolean => !stopping && Date.now() < end && batches < 5000;
      const writers = Array.from({ length: 2 }, async () => {
        while (going()) {
          const keys = Array.from({ length: BATCH }, () => `new-${next++}`);
          try {
            const out = await client.putMany(keys.map((key) => ({ key, value: value(key) })));
            batches++;
            for (const r of out) r.ok ? acked.push(r.key.toString()) : failedKeys++;
          } catch (e) {
            failedCalls++;
            whyFailed.push(`PutMany: ${(e as Error).message}`);
          }
        }
      });
      const readers = Array.from({ length: 2 }, async (_, w) => {
        for (let i = w; going(); i += 2) {
          const keys = loaded.slice((i * BATCH) % LOADED, ((i * BATCH) % LOADED) + BATCH);
          try {
            const out = await client.getMany(keys);
            readBatches++;
            readFailures += out.filter((r) => !r.ok || !r.value.found).length;
          } catch (e) {
            readFailures += keys.length;
            whyFailed.push(`GetMany: ${(e as Error).message}`);
          }
        }
      });
      await waitFor('some batches written before the join', 30_000, () => batches >= 5 || undefined);
      n4!.start();
      await normalEverywhere(cluster, ['n1', 'n2', 'n3', 'n4'], 120_000);
      const before = batches;
      await waitFor('batches written after the join completed', 30_000, () => batches >= before + 5 || undefined);
      stopping = true;
      await Promise.all([...writers, ...readers]);
      console.log(
        `batches during a join: ${batches} PutMany (${acked.length} keys acknowledged, ${failedKeys} keys failed, ${failedCalls} calls failed); ${readBatches} GetMany (${readFailures} keys failed or not found)${whyFailed.length > 0 ? `; calls that failed whole: ${whyFailed.slice(0, 3).join('; ')}` : ''}`,
      );
      expect(acked.length).toBeGreaterThan(10 * BATCH);
      // After the join: every acknowledged key, and every loaded one, with its value.
      const back = await readBack(client, [...loaded, ...acked]);
      expect(back.errors.slice(0, 10)).toEqual([]);
      expect(back.missing.slice(0, 10), 'acknowledged keys not read back').toEqual([]);
      // Routing: a batch goes first to the node that is a replica of the most of its keys.
      const ring = await n1!.admin().ring(3);
      await client.refreshRing();
      const addressOf = new Map(cluster.nodes.map((n) => [n.id, n.address]));
      for (const id of ['n1', 'n2', 'n3', 'n4']) {
        const theirs = acked.filter((k) => replicasOf(ring, k).includes(id)).slice(0, 90);
        const others = acked.filter((k) => !replicasOf(ring, k).includes(id)).slice(0, 10);
        const batch = [...theirs, ...others];
        const count = (node: string): number => batch.filter((k) => replicasOf(ring, k).includes(node)).length;
        const best = Math.max(...['n1', 'n2', 'n3', 'n4'].map(count));
        const first = [...addressOf].find(([, a]) => a === client.batchCandidates(batch)[0])![0];
        expect(count(first), `${id}'s batch went first to ${first}`).toBe(best);
        expect(best).toBeGreaterThanOrEqual(90);
      }
    } finally {
      client.close();
    }
  }, 300_000);
});
