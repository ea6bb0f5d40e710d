/**
 * The container image, end to end, with testcontainers: build the image from the
 * Dockerfile, run three nodes in zones a, b and c with host networking (each on its own
 * free 127.0.0.1 port, so the test's traffic stays on this machine), wait for their HEALTHCHECK, write 100 keys, kill one container,
 * read every key back at the default quorum, then start a fourth container that
 * joins and becomes a normal member owning data.
 *
 * Run by `npm run test:docker` (scripts/test-docker.sh: it finds or starts an engine and
 * builds the image, RINGKV_IMAGE). Run alone without RINGKV_IMAGE it builds the image
 * itself; without a Docker engine it prints one line saying so and skips.
 */
import { join } from 'node:path';
import { GenericContainer } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/client/admin.js';
import { Client } from '../../src/client/kv.js';
import { freePort } from '../../testkit/ports.js';
import { noEngine, normal, startNode, type NodeContainer } from './containers.js';

const ROOT = join(import.meta.dirname, '../..');
const KEYS = 100;

const skip = await noEngine();
if (skip !== undefined) process.stdout.write(`test:docker: skipped — ${skip}\n`);

describe.skipIf(skip !== undefined)('the ringkv image: a 3-node cluster in containers', () => {
  let image: string;
  /** gRPC address of each node, n1..n4: free 127.0.0.1 ports picked up front (n1..n3 are the seeds). */
  const addresses = new Map<string, string>();
  const nodes = new Map<string, NodeContainer>();

  async function start(name: string, zone: string, env: Record<string, string> = {}): Promise<NodeContainer> {
    const node = await startNode({
      name,
      image,
      address: addresses.get(name)!,
      seeds: ['n1', 'n2', 'n3'].map((n) => addresses.get(n)!),
      zone,
      env,
    });
    nodes.set(name, node);
    return node;
  }

  beforeAll(async () => {
    image = process.env.RINGKV_IMAGE ?? `ringkv-docker-test:${Date.now()}`;
    if (process.env.RINGKV_IMAGE === undefined)
      await GenericContainer.fromDockerfile(ROOT).build(image, { deleteOnExit: true });
    for (const n of ['n1', 'n2', 'n3', 'n4']) addresses.set(n, `127.0.0.1:${await freePort()}`);
    // Started together, as docker compose up does: they find each other through the seeds.
    await Promise.all([start('n1', 'a'), start('n2', 'b'), start('n3', 'c')]);
  }, 15 * 60_000);

  afterAll(async () => {
    await Promise.allSettled([...nodes.values()].map((n) => n.container.stop({ timeout: 30_000 })));
  }, 5 * 60_000);

  it('forms one cluster of three normal members, each in its zone, at the address it advertises', async () => {
    const s = await normal(nodes.get('n1')!.address, ['n1', 'n2', 'n3'], 60_000);
    expect(s.members.map((m) => [m.id, m.zone, m.address]).sort()).toEqual([
      ['n1', 'a', addresses.get('n1')],
      ['n2', 'b', addresses.get('n2')],
      ['n3', 'c', addresses.get('n3')],
    ]);
  });

  it(
    `keeps all ${KEYS} keys readable at the default quorum with one container killed`,
    async () => {
      const all = [...nodes.values()].map((n) => n.address);
      const writer = new Client({ nodes: all, deadlineMs: 10_000 });
      try {
        for (let i = 0; i < KEYS; i++) await writer.put(`key-${i}`, `value-${i}`);
      } finally {
        writer.close();
      }
      // Killed, not stopped: no grace (docker stop -t 0 sends SIGKILL at once), so nothing
      // the node had not yet made durable can be flushed on the way out.
      const n3 = nodes.get('n3')!;
      await n3.container.stop({ timeout: 0 });
      nodes.delete('n3');
      expect(n3.log.some((l) => l.includes('"msg":"node stopped"'))).toBe(false);

      const reader = new Client({ nodes: [nodes.get('n1')!.address, nodes.get('n2')!.address], deadlineMs: 10_000 });
      try {
        const missing: string[] = [];
        for (let i = 0; i < KEYS; i++) {
          const r = await reader.get(`key-${i}`); // R: the default quorum, 2 of 3
          if (!r.found || r.values.map(String).join() !== `value-${i}`)
            missing.push(`key-${i}: ${r.values.map(String).join('|') || 'not found'}`);
        }
        expect(missing).toEqual([]);
      } finally {
        reader.close();
      }
    },
    5 * 60_000,
  );

  it(
    'starts a fourth container that joins and becomes a normal member owning data',
    async () => {
      // n3 is down: a range n4 would take from it is pulled from the replicas that keep it
      // after 5 s instead of a minute. In zone a, n4 takes half of n1's copies.
      const n4 = await start('n4', 'a', { RINGKV_LEAVER_WAIT_MS: '5000' });
      const s = await normal(nodes.get('n1')!.address, ['n1', 'n2', 'n4'], 120_000);
      const member = s.members.find((m) => m.id === 'n4')!;
      expect(member).toMatchObject({ status: 'normal', up: true, zone: 'a', address: addresses.get('n4') });
      expect(member.ownership).toBeGreaterThan(0);

      const admin = new AdminClient(n4.address, 5000);
      try {
        const pull = (await admin.transfers()).pulls.find((p) => p.move.startsWith('join-n4'));
        const streamed = pull?.ranges.reduce((sum, r) => sum + r.keys, 0) ?? 0;
        expect(
          streamed,
          `keys streamed to n4 for its join; n4's log:\n${n4.log.slice(-30).join('\n')}`,
        ).toBeGreaterThan(0);
        let replicaOf = 0;
        for (let i = 0; i < KEYS; i++)
          if ((await admin.endpoints(`key-${i}`)).preferenceList.some((e) => e.id === 'n4')) replicaOf++;
        expect(replicaOf).toBeGreaterThan(0);
      } finally {
        admin.close();
      }

      // n4 coordinates reads like any member.
      const kv = new Client({ nodes: [n4.address], deadlineMs: 10_000 });
      try {
        expect((await kv.get('key-7')).values.map(String)).toEqual(['value-7']);
      } finally {
        kv.close();
      }
    },
    5 * 60_000,
  );
});
