/**
 * Node and zone confirmations on five real `ringkv node` processes on 127.0.0.1, N=3,
 * zones a, a, a, b, b — Riak's node_confirms_vs_pw test (riak_kv docs/Node-Diversity.md)
 * and its zone counterpart, on one key whose primaries include both zone-b nodes:
 *
 * - all up: zone_confirms=2 and pw=3 succeed; zone_confirms=3 is INVALID_ARGUMENT (two zones);
 * - the key's two zone-b primaries killed (and seen down): pw=2 fails with UNAVAILABLE at
 *   once, while w=2 node_confirms=2 succeeds on the primary left and a fallback, and reads
 *   back; zone_confirms=2 fails clearly (every node up is in zone a); node_confirms=4 is
 *   INVALID_ARGUMENT (N=3); the same through unary calls and the CLI's flags;
 * - a fallback killed too (two of the key's targets left): node_confirms=3 fails.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { TestCluster, type NodeProcess } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';
import { statusOf } from '../../testkit/kv-client.js';

const S = grpc.status;
const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');
const ZONES: Record<string, string> = { n1: 'a', n2: 'a', n3: 'a', n4: 'b', n5: 'b' };

/** Run the ringkv CLI: its exit code, stdout and stderr. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', MAIN, ...args], {
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

async function killAndSeeDown(cluster: TestCluster, n: NodeProcess): Promise<void> {
  n.signal('SIGKILL');
  await n.exit;
  await waitFor(
    `${n.id} down on every running node`,
    30_000,
    async () => {
      const views = await Promise.all(cluster.nodes.filter((x) => x.running).map((x) => x.status()));
      return views.every((v) => v?.members.find((m) => m.id === n.id)?.up === false);
    },
    100,
  );
}

describe('confirmations on a 5-node cluster in two zones (N=3)', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.create(5, 3, ['--request-timeout-ms', '2000'], (id) => ['--zone', ZONES[id]!]);
    for (const n of cluster.nodes) n.start();
    await cluster.formed();
  }, 120_000);

  afterAll(() => cluster?.destroy());

  it('pw=2 fails with two primaries down where w=2 node_confirms=2 succeeds; zone_confirms=2 fails once one zone is left', async () => {
    // A key whose primaries are n4 and n5 (zone b) and one node of zone a.
    const admin = cluster.node('n1').admin();
    let key: string | undefined,
      primaries: string[] = [];
    for (let i = 0; i < 300 && key === undefined; i++) {
      const ends = await admin.endpoints(`confirm:${i}`);
      const ids = ends.preferenceList.map((e) => e.id);
      if (ids.includes('n4') && ids.includes('n5')) [key, primaries] = [`confirm:${i}`, ids];
    }
    expect(key, 'a key with both zone-b nodes among its primaries').toBeDefined();
    const k = key!;
    const left = primaries.find((id) => ZONES[id] === 'a')!;
    const coordinator = cluster.node(left);
    const client = new Client({ nodes: [coordinator.address], tokenAware: false, deadlineMs: 5000 });
    try {
      // All up: both zones and all three primaries acknowledge.
      await client.put(k, 'v1', { zoneConfirms: 2, pw: 3 });
      const tooMany = await statusOf(client.put(k, 'x', { zoneConfirms: 3 }));
      expect(tooMany?.code).toBe(S.INVALID_ARGUMENT);
      expect(tooMany?.details).toMatch(
        /zone_confirms=3 is more than the 2 zone\(s\) the cluster's nodes are in \(a, b\)/,
      );

      for (const id of ['n4', 'n5']) await killAndSeeDown(cluster, cluster.node(id));
      const targets = (await coordinator.admin().endpoints(k)).targets;
      const fallbacks = targets.filter((t) => t.hintFor !== '');
      expect(fallbacks.map((t) => t.hintFor).sort()).toEqual(['n4', 'n5']);

      // Riak's pw=2: refused, though the write could be on two machines.
      const pw = await statusOf(client.put(k, 'pw', { w: 2, pw: 2 }));
      expect(pw?.code).toBe(S.UNAVAILABLE);
      expect(pw?.details).toMatch(
        /cannot meet pw=2 \(only 1 primary up\), even if every target that is up acknowledges/,
      );
      expect(pw?.details).toMatch(/primaries down: n[45], n[45]/);
      // node_confirms=2: a primary and a fallback are two distinct nodes.
      const read = await client.get(k, { r: 2 });
      expect(read.values.map(String)).toEqual(['v1']);
      await client.put(k, 'v2', { context: read.context, w: 2, nodeConfirms: 2 });
      expect((await client.get(k, { r: 2 })).values.map(String)).toEqual(['v2']);
      const bad = await statusOf(client.put(k, 'x', { nodeConfirms: 4 }));
      expect(bad?.code).toBe(S.INVALID_ARGUMENT);
      expect(bad?.details).toBe('node_confirms must be 0 (no rule) to N=3, got 4');

      // Zone b is gone: every target up is in zone a.
      const zone = await statusOf(client.put(k, 'z', { zoneConfirms: 2 }));
      expect(zone?.code).toBe(S.UNAVAILABLE);
      expect(zone?.details).toMatch(
        /cannot meet zone_confirms=2 \(only 1 zone up\).*Up: n\d \(a\), n\d \(a, for n[45]\), n\d \(a, for n[45]\)/,
      );
      // The delete is held to the same rules.
      expect((await statusOf(client.delete(k, { pw: 2 })))?.code).toBe(S.UNAVAILABLE);
      // And the unary calls as the stream.
      const unary = new Client({ nodes: [coordinator.address], tokenAware: false, streaming: false });
      try {
        expect((await statusOf(unary.put(k, 'u', { pw: 2 })))?.details).toMatch(
          /cannot meet pw=2 \(only 1 primary up\)/,
        );
        expect((await statusOf(unary.delete(k, { zoneConfirms: 2 })))?.details).toMatch(
          /cannot meet zone_confirms=2 \(only 1 zone up\)/,
        );
        expect((await statusOf(unary.put(k, 'u', { nodeConfirms: 4 })))?.code).toBe(S.INVALID_ARGUMENT);
      } finally {
        unary.close();
      }

      // The same through the CLI's flags.
      const viaCli = await cli('put', k, 'cli', '--node', coordinator.address, '--pw', '2');
      expect(viaCli.code).not.toBe(0);
      expect(viaCli.stderr).toMatch(/cannot meet pw=2 \(only 1 primary up\)/);
      const ok = await cli(
        'put',
        k,
        'cli',
        '--node',
        coordinator.address,
        '--w',
        '2',
        '--node-confirms',
        '3',
        '--context',
        (await client.get(k, { r: 2 })).context.toString('base64'),
      );
      expect(ok.code, ok.stderr).toBe(0);
      expect((await client.get(k, { r: 2 })).values.map(String)).toEqual(['cli']);
      const flag = await cli('put', k, 'x', '--node', coordinator.address, '--zone-confirms', 'two');
      expect(flag.code).not.toBe(0);
      expect(flag.stderr).toMatch(/expected 0 \(no rule\) or a whole number from 1 to N, got "two"/);

      // A fallback down too: two targets are left, and node_confirms=3 cannot be met.
      await killAndSeeDown(cluster, cluster.node(fallbacks[0]!.id));
      const three = await statusOf(client.put(k, 'x', { w: 1, nodeConfirms: 3 }));
      expect(three?.code).toBe(S.UNAVAILABLE);
      expect(three?.details).toMatch(/cannot meet node_confirms=3 \(only 2 distinct nodes up\)/);
      await client.put(k, 'two', { w: 1, nodeConfirms: 2 });
    } finally {
      client.close();
    }
  }, 180_000);
});
