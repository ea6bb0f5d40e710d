/**
 * Five real `ringkv node` processes on 127.0.0.1 (zones a, b, c, a, b); one of them is
 * paused (SIGSTOP) for 5 s while clients keep 16 requests in flight, half gets of written
 * keys, half puts of new ones, with a 2 s deadline. With the client's defaults (hedging,
 * health-aware choice) not one request fails, and requests keep completing while the
 * node is stopped. The same load through a client with both turned off, alongside, does
 * see requests fail: what the defaults are for. A functional check: the throughput
 * figures are bench:gray's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, type ClientOptions } from '../../src/client/index.js';
import { TestCluster } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';
import { Load } from '../../testkit/load.js';

const ZONES = ['a', 'b', 'c', 'a', 'b'];
const IN_FLIGHT = 8;
const KEYS = 200;

let cluster: TestCluster;

beforeAll(async () => {
  cluster = await TestCluster.create(5, 3, [], (id) => ['--zone', ZONES[Number(id.slice(1)) - 1]!]);
  for (const n of cluster.nodes) n.start();
  await waitFor(
    'all 5 normal and up on every node',
    90_000,
    async () => {
      const views = await cluster.views();
      return views.every((v) => v?.members.length === 5 && v.members.every((m) => m.status === 'normal' && m.up));
    },
    250,
  );
}, 120_000);

afterAll(() => cluster?.destroy());

describe('one node of five paused for 5 s under client load', () => {
  it('fails not one request of a default client, which keeps being answered; a client without hedging and health does fail some', async () => {
    const nodes = cluster.nodes.map((n) => n.address);
    const mk = (o: Partial<ClientOptions>): Client => new Client({ nodes, deadlineMs: 2000, ...o });
    const tolerant = mk({});
    const plain = mk({ hedge: false, adaptive: false });
    let t: Load | undefined, p: Load | undefined;
    try {
      await Load.warm(tolerant, KEYS);
      await tolerant.refreshRing();
      await plain.refreshRing();
      t = Load.start(tolerant, { inFlight: IN_FLIGHT, warmKeys: KEYS, prefix: 'tolerant' });
      p = Load.start(plain, { inFlight: IN_FLIGHT, warmKeys: KEYS, prefix: 'plain' });
      await new Promise((r) => setTimeout(r, 3000));
      const victim = cluster.node('n4');
      victim.signal('SIGSTOP');
      const okAtPause = t.ok;
      await new Promise((r) => setTimeout(r, 5000));
      victim.signal('SIGCONT');
      // Requests of the default client answered while the node was stopped.
      const okWhilePaused = t.ok - okAtPause;
      await new Promise((r) => setTimeout(r, 3000));
      await Promise.all([t.stop(), p.stop()]);
      const s = tolerant.stats();
      const summary = t.summary({ okWhilePaused, plain: { ok: p.ok, failed: p.failed.slice(0, 3) } });
      expect(t.failed, summary).toEqual([]);
      expect(okWhilePaused, summary).toBeGreaterThan(100);
      expect(s.hedges + s.moved, summary).toBeGreaterThan(0);
      expect(p.failed.length, summary).toBeGreaterThan(0);
    } finally {
      cluster.node('n4').signal('SIGCONT');
      void t?.stop();
      void p?.stop();
      tolerant.close();
      plain.close();
    }
  }, 90_000);
});
