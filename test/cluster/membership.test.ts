/**
 * Five real `ringkv node` processes on 127.0.0.1 at 1 s gossip: they form one cluster,
 * stay all up while healthy, see a kill -9 and then the restart (new generation, same
 * tokens), and take back a node paused with SIGSTOP for 10 s. The outcomes are asserted
 * with bounds that hold on a loaded machine (30 s); how fast detection is, is a figure of
 * `npm run bench:detection` (docs/benchmarks.md), and is only logged here.
 * HEALTHY_MS (default 120 s, the figure) sets the healthy run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster, type NodeProcess } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';
import type { StatusReply } from '../../src/client/admin.js';

const HEALTHY_MS = Number(process.env.HEALTHY_MS ?? 120_000);

let cluster: TestCluster;

function memberOf(view: StatusReply | undefined, id: string) {
  return view?.members.find((m) => m.id === id);
}

/** True when every running node other than `id` has opinion `up` of `id`. */
async function allSee(id: string, up: boolean): Promise<boolean> {
  const others = cluster.nodes.filter((n) => n.id !== id && n.running);
  const views = await Promise.all(others.map((n) => n.status()));
  return views.every((v) => memberOf(v, id)?.up === up);
}

function downLines(n: NodeProcess, since = 0): unknown[] {
  return n.lines.filter((l) => l.msg === 'peer down' && (l.time as number) >= since);
}

describe('a 5-node cluster of real processes', () => {
  beforeAll(async () => {
    cluster = await TestCluster.create(5, 3);
    for (const n of cluster.nodes) n.start();
  });

  afterAll(() => {
    cluster?.destroy();
  });

  it('forms one cluster: every node sees all 5 normal and up, and derives the same ring', async () => {
    await waitFor(
      'all 5 normal and up on every node',
      60_000,
      async () => {
        const views = await cluster.views();
        return views.every(
          (v) => v?.members.length === 5 && v.members.every((m) => m.status === 'normal' && m.up && m.tokens === 64),
        );
      },
      250,
    );
    const rings = await Promise.all(cluster.nodes.map((n) => n.admin().ring(3)));
    for (const r of rings) expect(r).toEqual(rings[0]);
    expect(rings[0]!.ranges.length).toBe(5 * 64);
    // Effective ownership with N=3 adds up to 3 and is spread over all five.
    const view = (await cluster.nodes[0]!.status())!;
    const total = view.members.reduce((s, m) => s + m.ownership, 0);
    expect(total).toBeCloseTo(3, 6);
    for (const m of view.members) expect(m.ownership).toBeGreaterThan(0.45);
  }, 90_000);

  it(
    `marks no node down while healthy (${HEALTHY_MS / 1000} s)`,
    async () => {
      const since = Date.now();
      const end = since + HEALTHY_MS;
      let polls = 0;
      while (Date.now() < end) {
        const views = await cluster.views();
        for (const [i, v] of views.entries()) {
          expect(v, `${cluster.nodes[i]!.id} answers`).toBeDefined();
          for (const m of v!.members) expect(m.up, `${cluster.nodes[i]!.id} sees ${m.id} up`).toBe(true);
        }
        polls++;
        await new Promise((r) => setTimeout(r, 1000));
      }
      expect(polls).toBeGreaterThan(HEALTHY_MS / 2000);
      for (const n of cluster.nodes) expect(downLines(n, since)).toEqual([]);
    },
    HEALTHY_MS + 60_000,
  );

  it('sees a kill -9 everywhere, and then the restart, with a new generation and the same tokens', async () => {
    const victim = cluster.node('n5');
    const before = memberOf(await cluster.nodes[0]!.status(), 'n5')!;
    const tokensBefore = (await cluster.nodes[0]!.admin().ring(1)).ranges
      .filter((r) => r.replicas[0] === 'n5')
      .map((r) => r.end);
    const killedAt = Date.now();
    victim.signal('SIGKILL');
    await victim.exit;
    await waitFor('n5 down everywhere', 30_000, () => allSee('n5', false), 100);
    console.log(`kill -9 detected everywhere after ${Date.now() - killedAt} ms`);

    victim.start();
    await waitFor('n5 process started', 30_000, () => victim.lines.some((l) => l.msg === 'node started'));
    const startedAt = Date.now();
    await waitFor('n5 up everywhere', 30_000, () => allSee('n5', true), 100);
    console.log(`restart seen everywhere ${Date.now() - startedAt} ms after the node started`);
    const after = memberOf(await cluster.nodes[0]!.status(), 'n5')!;
    expect(after.generation).toBeGreaterThan(before.generation);
    expect(after.status).toBe('normal');
    const tokensAfter = (await cluster.nodes[0]!.admin().ring(1)).ranges
      .filter((r) => r.replicas[0] === 'n5')
      .map((r) => r.end);
    expect(tokensAfter).toEqual(tokensBefore);
  }, 120_000);

  it('takes back a node paused with SIGSTOP for 10 s: up everywhere again, and it convicts no one for good', async () => {
    const paused = cluster.node('n4');
    const since = Date.now();
    paused.signal('SIGSTOP');
    await new Promise((r) => setTimeout(r, 10_000));
    paused.signal('SIGCONT');
    await waitFor('n4 up everywhere', 15_000, () => allSee('n4', true), 200);
    await waitFor('n4 sees everyone up', 15_000, async () => (await paused.status())?.members.every((m) => m.up));
    // The paused node noticed its own stall instead of convicting its peers.
    expect(paused.lines.some((l) => l.msg.startsWith('this process stalled') && (l.time as number) >= since)).toBe(
      true,
    );
    expect(downLines(paused, since)).toEqual([]);
  }, 60_000);

  it('stops cleanly on SIGTERM: exit code 0, store closed', async () => {
    for (const n of cluster.nodes) n.signal('SIGTERM');
    const codes = await Promise.all(cluster.nodes.map((n) => n.exit));
    expect(codes).toEqual([0, 0, 0, 0, 0]);
    for (const n of cluster.nodes) expect(n.lines.some((l) => l.msg === 'node stopped')).toBe(true);
  }, 30_000);
});
