/**
 * A rolling restart on three real `ringkv node` processes (zones a, b, c; N = 3, R = W = 2)
 * while a default `ringkv/client` keeps 8 requests in flight, half gets of written keys,
 * half puts of new ones: each node in turn gets SIGTERM (it drains: tells its peers it
 * stops, serves a moment longer, finishes what is in flight, exits 0), starts again and
 * is waited for until it answers SERVING, which it does only once no peer holds hints for
 * it: at that moment it holds every write acknowledged while it was away. Its peers see
 * it down at once when it stops. Not one request fails, and every acknowledged put reads
 * back afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { checkHealth } from '../../src/cli/health-check.js';
import { TestCluster, type NodeProcess } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';
import { missingLocally } from '../../testkit/kv-client.js';
import { Load } from '../../testkit/load.js';

const IN_FLIGHT = 8;
const KEYS = 200;

let cluster: TestCluster;

async function allUp(): Promise<void> {
  await waitFor(
    'all 3 normal and up on every node',
    90_000,
    async () => {
      const views = await cluster.views();
      return views.every((v) => v?.members.length === 3 && v.members.every((m) => m.status === 'normal' && m.up));
    },
    250,
  );
}

beforeAll(async () => {
  cluster = await TestCluster.create(3, 3, [], (id) => ['--zone', ['a', 'b', 'c'][Number(id.slice(1)) - 1]!]);
  for (const n of cluster.nodes) n.start();
  await allUp();
}, 120_000);

afterAll(() => cluster?.destroy());

async function serving(n: NodeProcess): Promise<void> {
  await waitFor(
    `${n.id} SERVING`,
    60_000,
    async () => (await checkHealth({ node: n.address, deadlineMs: 1000 })).ok,
    100,
  );
}

describe('a rolling restart under client load', () => {
  it('restarts every node in turn with not one request failed and every acknowledged write readable', async () => {
    const client = new Client({ nodes: cluster.nodes.map((n) => n.address), deadlineMs: 5000 });
    let load: Load | undefined;
    try {
      await Load.warm(client, KEYS);
      load = Load.start(client, { inFlight: IN_FLIGHT, warmKeys: KEYS });
      const traffic = load;
      await new Promise((r) => setTimeout(r, 2000));
      const restarts: {
        id: string;
        exit: number | null;
        drained: boolean;
        caughtUp: string | undefined;
        okDuring: number;
        missed: number;
        missingAtServing: string[];
        downSeenMs: number;
      }[] = [];
      for (const n of cluster.nodes) {
        const before = traffic.ok;
        const from = n.lines.length;
        const stoppedAt = Date.now();
        n.signal('SIGTERM');
        // Its peers hold it down at once, well before the failure detector would (5 s).
        const peers = cluster.nodes.filter((p) => p !== n);
        await waitFor(
          `${n.id} down on its peers`,
          4000,
          async () =>
            (await Promise.all(peers.map((p) => p.status()))).every(
              (v) => v?.members.find((m) => m.id === n.id)?.up === false,
            ),
          20,
        );
        const downSeenMs = Date.now() - stoppedAt;
        const exit = await n.exit;
        const exitedAt = Date.now();
        await new Promise((r) => setTimeout(r, 1500)); // away a while, as a restart of a machine or container is
        const drained = n.lines.slice(from).some((l) => l.msg === 'draining: peers told this node stops');
        const restartAt = n.lines.length;
        const startedAt = Date.now();
        // What it missed while away: acknowledged by the others, kept as hints for it.
        const missed = traffic.acked.filter((a) => a.at > exitedAt && a.at <= startedAt).map((a) => a.key);
        n.start();
        await serving(n);
        // SERVING only once it holds them: peers delivered their hints first.
        const missingAtServing = await missingLocally(n.address, missed);
        await allUp();
        const caught = n.lines
          .slice(restartAt)
          .find((l) => l.msg.startsWith('caught up') || l.msg.startsWith('serving with hints'));
        restarts.push({
          id: n.id,
          exit,
          drained,
          caughtUp: caught?.msg,
          okDuring: traffic.ok - before,
          missed: missed.length,
          missingAtServing: missingAtServing.slice(0, 3),
          downSeenMs,
        });
        await new Promise((r) => setTimeout(r, 1000));
      }
      await traffic.stop();
      const summary = traffic.summary({ restarts });
      expect(traffic.failed, summary).toEqual([]);
      for (const r of restarts) {
        expect(r.exit, summary).toBe(0);
        expect(r.drained, summary).toBe(true);
        expect(r.caughtUp, summary).toMatch(/^caught up/);
        expect(r.okDuring, summary).toBeGreaterThan(50);
        expect(r.missed, summary).toBeGreaterThan(0);
        expect(r.missingAtServing, summary).toEqual([]);
      }
      expect(await traffic.lost(), summary).toEqual([]);
      console.log(
        `rolling restart: ${traffic.ok} requests, ${traffic.failed.length} failed, ${traffic.acked.length} acknowledged puts all read back; ${JSON.stringify(restarts)}; client ${JSON.stringify(client.stats())}`,
      );
    } finally {
      void load?.stop();
      client.close();
    }
  }, 240_000);
});
