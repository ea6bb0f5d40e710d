/**
 * Anti-entropy on real processes: a replica misses writes with no hint kept for it (it is
 * down, and the hint window is 0), comes back, and `ringkv repair` makes every replica
 * hold the same records without any read (each node's storage read directly).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { TestCluster, type NodeProcess } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';
import { contents, stopAll, upEverywhere } from './topology-check.js';

const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');

async function cli(...args: string[]): Promise<{ stdout: string; code: number }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', MAIN, ...args], {
      timeout: 120_000,
    });
    return { stdout, code: 0 };
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; code?: number };
    return { stdout: `${x.stdout ?? ''}${x.stderr ?? ''}`, code: x.code ?? -1 };
  }
}

describe('anti-entropy repair', () => {
  let cluster: TestCluster;
  afterEach(() => cluster?.destroy());

  it('a replica that missed writes with no hint gets them from `ringkv repair`, with no read; only the difference crosses', async () => {
    // No hints at all for a down replica: what it misses only repair can bring back.
    cluster = await TestCluster.create(3, 3, ['--request-timeout-ms', '3000', '--max-hint-window-ms', '0']);
    const [n1, n2, n3] = cluster.nodes as [NodeProcess, NodeProcess, NodeProcess];
    for (const n of cluster.nodes) n.start();
    await upEverywhere(cluster, () => true);
    // No hedging: the miss counters count coordinations, and a hedged write is coordinated
    // (and its miss counted) by each node it reached.
    const client = new Client({ nodes: [n1.address, n2.address], deadlineMs: 5000, hedge: false });
    try {
      for (let i = 0; i < 2000; i++) await client.put(`base-${i}`, `v${i}`, { w: 3 });
      n3.signal('SIGKILL');
      await n3.exit;
      await upEverywhere(cluster, (id) => id !== 'n3');
      for (let i = 0; i < 50; i++) await client.put(`missed-${i}`, `${i}`.padStart(100, 'm'), { w: 2 });
      for (let i = 0; i < 10; i++)
        await client.delete(`base-${i}`, { context: (await client.get(`base-${i}`, { r: 2 })).context, w: 2 });
      n3.start();
      await upEverywhere(cluster, () => true);
      const counters = await Promise.all([n1, n2].map(async (n) => (await n.admin().status()).counters));
      expect(
        counters.reduce((s, c) => s + (c.missedPastHintWindow ?? 0), 0),
        JSON.stringify(client.stats()),
      ).toBe(60);
      // A bad range is refused before anything starts.
      const bad = await cli('repair', '--node', n1.address, '--range', 'nope');
      expect(bad.code).not.toBe(0);
      expect(bad.stdout).toMatch(/--range.*expected START-END, two tokens of 16 hex digits/);
      const out = await cli('repair', '--node', n1.address);
      expect(out.code, out.stdout).toBe(0);
      expect(out.stdout).toMatch(/repair \w+: finished in/);
      const status = await n1.admin().repairStatus();
      expect(status).toMatchObject({ failed: 0, skipped: 0 });
      expect(status.done).toBe(status.ranges);
      expect(status.keysExchanged).toBeGreaterThanOrEqual(60);
      console.log(
        `repair: ${status.ranges} ranges, ${status.leavesDiffering} leaves differing, ${status.keysExchanged} keys exchanged, ${status.bytes} bytes on the wire for ${status.recordBytes} bytes of records (${(status.bytes / status.recordBytes).toFixed(2)}×)`,
      );
      expect(status.bytes / status.recordBytes).toBeLessThan(5);
      // Every replica, repairer or peer, counts each range repaired (what lets tombstones go).
      for (const n of [n1, n2, n3]) {
        const r = (await n.admin().repairStatus()).repaired;
        expect(r.length, n.id).toBe(status.ranges);
        expect(
          r.every((x) => x.atMs >= status.startedAtMs - 1000),
          n.id,
        ).toBe(true);
      }
      expect((await cli('repair', '--node', n2.address, '--status')).stdout).toMatch(
        /no repair has run on this node since it started\n  ranges this node replicates: 192; all repaired since it started/,
      );
      // --json lists when each range was last repaired.
      const listed = JSON.parse((await cli('repair', '--node', n3.address, '--status', '--json')).stdout) as {
        repaired: { start: string; end: string; atMs: number }[];
      };
      expect(listed.repaired).toHaveLength(192);
      expect(listed.repaired.every((x) => /^[0-9a-f]{16}$/.test(x.start) && x.atMs >= status.startedAtMs - 1000)).toBe(
        true,
      );
      // A second repair finds every range identical.
      await n1.admin().repair();
      const again = await waitFor(
        'the second repair done',
        60_000,
        async () => {
          const s = await n1.admin().repairStatus();
          return s.finishedAtMs > 0 && s.id !== status.id ? s : undefined;
        },
        200,
      );
      expect(again).toMatchObject({ keysExchanged: 0, identical: again.ranges });
    } finally {
      client.close();
    }
    await stopAll(cluster.nodes);
    const [a, b, c] = (await Promise.all(cluster.nodes.map(contents))) as [
      Map<string, string>,
      Map<string, string>,
      Map<string, string>,
    ];
    expect(a.size).toBe(2050); // deleted keys keep their tombstones
    expect(b).toEqual(a);
    expect(c).toEqual(a);
  }, 300_000);

  it('background repair (--repair-interval-ms) brings a replica that missed writes back in line by itself', async () => {
    cluster = await TestCluster.create(3, 3, [
      '--request-timeout-ms',
      '3000',
      '--max-hint-window-ms',
      '0',
      '--repair-interval-ms',
      '3000',
    ]);
    const [n1, n2, n3] = cluster.nodes as [NodeProcess, NodeProcess, NodeProcess];
    for (const n of cluster.nodes) n.start();
    await upEverywhere(cluster, () => true);
    const client = new Client({ nodes: [n1.address, n2.address], deadlineMs: 5000 });
    try {
      for (let i = 0; i < 200; i++) await client.put(`base-${i}`, `v${i}`, { w: 3 });
      n3.signal('SIGKILL');
      await n3.exit;
      await upEverywhere(cluster, (id) => id !== 'n3');
      for (let i = 0; i < 20; i++) await client.put(`missed-${i}`, `m${i}`, { w: 2 });
      const back = Date.now();
      n3.start();
      await upEverywhere(cluster, () => true);
      // Every range n3 replicates repaired since it came back, by n1, n2 or itself.
      await waitFor(
        "n3's ranges repaired in the background",
        90_000,
        async () => {
          const r = await n3.admin().repairStatus();
          return r.repaired.length > 0 && r.repaired.every((x) => x.atMs > back);
        },
        500,
      );
      const done = await Promise.all(cluster.nodes.map(async (n) => (await n.admin().repairStatus()).background));
      expect(done.reduce((s, b) => s + b.keysExchanged, 0)).toBeGreaterThanOrEqual(20);
    } finally {
      client.close();
    }
    await stopAll(cluster.nodes);
    const [a, b, c] = (await Promise.all(cluster.nodes.map(contents))) as [
      Map<string, string>,
      Map<string, string>,
      Map<string, string>,
    ];
    expect(a.size).toBe(220);
    expect(b).toEqual(a);
    expect(c).toEqual(a);
  }, 240_000);

  it('a replica away past the tombstone grace period does not bring a deleted value back: tombstones wait for a repair', async () => {
    cluster = await TestCluster.create(3, 3, [
      '--request-timeout-ms',
      '3000',
      '--max-hint-window-ms',
      '0',
      '--tombstone-grace-ms',
      '2000',
      '--repair-interval-ms',
      '0',
    ]);
    const [n1, n2, n3] = cluster.nodes as [NodeProcess, NodeProcess, NodeProcess];
    for (const n of cluster.nodes) n.start();
    await upEverywhere(cluster, () => true);
    const client = new Client({ nodes: [n1.address, n2.address], deadlineMs: 5000 });
    try {
      await client.put('gone', 'old value', { w: 3 });
      n3.signal('SIGKILL');
      await n3.exit;
      await upEverywhere(cluster, (id) => id !== 'n3');
      await client.delete('gone', { context: (await client.get('gone', { r: 2 })).context, w: 2 });
      // Past the grace period the purge runs on n1 and n2 (and may not drop it: no repair has confirmed it).
      const purgeRan = (n: NodeProcess): boolean =>
        n.lines.some((l) => Number(l.unconfirmed) > 0 || Number(l.purged) > 0);
      await waitFor('a purge past the grace period on n1 and n2', 30_000, () => [n1, n2].every(purgeRan), 250);
      n3.start(); // with the old value
      await upEverywhere(cluster, () => true);
      const out = await cli('repair', '--node', n1.address);
      expect(out.code, out.stdout).toBe(0);
      const after = await client.get('gone', { r: 3 });
      expect(after.values.map(String), 'the deleted value came back').toEqual([]);
      expect(after.found).toBe(false);
      expect(
        [n1, n2].every((n) => n.lines.some((l) => Number(l.unconfirmed) > 0)),
        'the purge kept the unconfirmed tombstone',
      ).toBe(true);
      // Now confirmed: n1 and n2 purge it, and the key stays deleted.
      await waitFor(
        'n1 and n2 purge the confirmed tombstone',
        30_000,
        () => [n1, n2].every((n) => n.lines.some((l) => Number(l.purged) > 0)),
        250,
      );
      expect((await client.get('gone', { r: 3 })).found).toBe(false);
    } finally {
      client.close();
    }
  }, 180_000);
});
