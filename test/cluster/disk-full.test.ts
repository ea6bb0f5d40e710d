/**
 * A full disk on one node of three (root only: n3's data directory is a 64 MiB tmpfs the
 * test mounts; it says so and skips otherwise). The default client writes 4 KiB values
 * through every node until n3's disk is below its floor, and on: every write is
 * acknowledged (n3 refuses to write, and another replica issues what n3 coordinates).
 * `status` names n3's disk, its `ringkv.writes` health is NOT_SERVING, and its reads go
 * on. Once the tmpfs is grown n3 takes writes again by itself; a repair then brings it
 * every key it refused, and with the nodes stopped every acknowledged key is on every
 * replica. The test unmounts what it mounted.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { checkHealth } from '../../src/cli/health-check.js';
import { Client } from '../../src/client/index.js';
import { TestCluster } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';
import { contents, stopAll } from './topology-check.js';

const root = process.getuid?.() === 0;
let cluster: TestCluster | undefined;
let mounted: string | undefined;

afterAll(async () => {
  cluster?.destroy();
  if (mounted !== undefined) execFileSync('umount', ['-l', mounted]);
});

/** The `ringkv.writes` health of the node at `address` (`ringkv health --service ringkv.writes`). */
async function writesHealth(address: string): Promise<string> {
  return (await checkHealth({ node: address, service: 'ringkv.writes', deadlineMs: 3000 })).status;
}

describe.skipIf(!root)('a full disk on one node of three (tmpfs; needs root)', () => {
  it('fails no write while the disk is full, says so in status and health, and takes writes again with every acknowledged key on every replica after a repair', async () => {
    cluster = await TestCluster.create(3, 3, ['--request-timeout-ms', '3000']);
    const n3 = cluster.node('n3');
    mkdirSync(n3.dataDir, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', n3.dataDir]);
    mounted = n3.dataDir;
    for (const n of cluster.nodes) n.start();
    await cluster.formed();
    const client = new Client({ nodes: cluster.nodes.map((n) => n.address), deadlineMs: 5000 });
    const acked: string[] = [];
    const failed: string[] = [];
    const diskOf = async (): Promise<string> =>
      (await cluster!.node('n1').status())?.members.find((m) => m.id === 'n3')?.disk ?? '';
    try {
      // Until n3 refuses writes, and 500 writes more; bounded in count and time.
      let after = -1;
      const until = Date.now() + 120_000;
      for (let i = 0; i < 30_000 && Date.now() < until && after !== 0; i++) {
        const key = `k${i}`;
        await client.put(key, randomBytes(4096), { requestId: randomBytes(16) }).then(
          () => acked.push(key),
          (e: grpc.ServiceError) => failed.push(`${key}: ${e.details}`),
        );
        if (after > 0) after--;
        else if (after < 0 && i % 100 === 99 && (await diskOf()) !== 'ok' && (await diskOf()) !== '') after = 500;
      }
      expect(after, 'n3 refused writes within 30,000 puts').toBe(0);
      expect(failed, 'every write acknowledged').toEqual([]);
      const status = await cluster.node('n1').status();
      const m3 = status!.members.find((m) => m.id === 'n3')!;
      expect(['low', 'failed']).toContain(m3.disk);
      expect(m3.diskTotalBytes).toBe(64 << 20);
      expect(await writesHealth(n3.address)).toBe('NOT_SERVING');
      expect(await writesHealth(cluster.node('n1').address)).toBe('SERVING');
      // Its reads go on: a read at R=3 needs n3's answer.
      expect((await client.get(acked[0]!, { r: 3 })).found).toBe(true);

      execFileSync('mount', ['-o', 'remount,size=512m', n3.dataDir]);
      await waitFor(
        'n3 takes writes again',
        30_000,
        async () => (await diskOf()) === 'ok' && (await writesHealth(n3.address)) === 'SERVING',
        250,
      );
      for (let i = 0; i < 50; i++) {
        await client.put(`later-${i}`, 'v', { w: 3 });
        acked.push(`later-${i}`);
      }
      await cluster.node('n1').admin().repair();
      const repaired = await waitFor(
        'the repair done',
        120_000,
        async () => {
          const s = await cluster!.node('n1').admin().repairStatus();
          return s.finishedAtMs > 0 ? s : undefined;
        },
        250,
      );
      expect(repaired.failed).toBe(0);
    } finally {
      client.close();
    }
    await stopAll(cluster.nodes);
    const held = await Promise.all(cluster.nodes.map(contents));
    for (const [i, keys] of held.entries()) {
      const missing = acked.filter((k) => !keys.has(k));
      expect(
        missing.length,
        `${cluster.nodes[i]!.id} lacks ${missing.length} acknowledged keys, such as ${missing.slice(0, 3).join(', ')}`,
      ).toBe(0);
    }
    execFileSync('umount', [n3.dataDir]);
    mounted = undefined;
  }, 400_000);
});

if (!root) console.log('disk-full cluster test: skipped, not root (it mounts a tmpfs)');
