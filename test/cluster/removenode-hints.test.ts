/**
 * removenode restores N copies, the removed node's hints included (issue 29 point 5), on
 * real processes with background repair off (`--repair-interval-ms 0`): only the
 * removal's own repair step can bring a copy back.
 *
 * 1. 4 nodes, N=3, W=2. n2 stops; keys for which n4 stands in for n2 (a fallback, its
 *    hint counted toward W; checked with getendpoints) are written through n1; n4 is
 *    killed with kill -9, taking those hints with it; n2 comes back (it lacks the keys);
 *    `ringkv removenode n4`: every acknowledged key is then on each of its N replicas,
 *    read from each node's own store (testkit missingLocally, not a quorum read).
 * 2. 5 nodes: the driver is killed with kill -9 in the middle of the repair step;
 *    restarted, it resumes from removal-repair.json (fewer units pending than the step
 *    has) and ends the removal; every key on its N replicas. With 4 nodes left, some
 *    units are not the driver's: their replicas repair them when it asks (Control
 *    RepairRange).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { TestCluster, type NodeProcess } from '../../testkit/node-cluster.js';
import { localValues, missingLocally } from '../../testkit/kv-client.js';
import { waitFor } from '../../testkit/wait.js';
import { loadKeys, replicasOf } from './topology-check.js';

const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');
const ARGS = ['--request-timeout-ms', '3000', '--repair-interval-ms', '0', '--catch-up-ms', '2000'];

async function cli(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    timeout: 240_000,
  });
  return stdout;
}

/** Every live node sees `id` with `status` (and up or down when `up` is given). */
async function seen(
  cluster: TestCluster,
  id: string,
  what: { status?: string; up?: boolean },
  timeoutMs = 60_000,
): Promise<void> {
  await waitFor(
    `${id} ${JSON.stringify(what)} on every running node`,
    timeoutMs,
    async () => {
      const views = await Promise.all(cluster.nodes.filter((n) => n.running).map((n) => n.status()));
      return views.every((v) => {
        const m = v?.members.find((x) => x.id === id);
        return (
          m !== undefined &&
          (what.status === undefined || m.status === what.status) &&
          (what.up === undefined || m.up === what.up)
        );
      });
    },
    200,
  );
}

async function kill9(n: NodeProcess): Promise<void> {
  n.signal('SIGKILL');
  await n.exit;
}

/** Of `keys`, each "key@node" where a replica of the ring `via` reports lacks it in its own store. */
async function missing(cluster: TestCluster, via: NodeProcess, keys: readonly string[]): Promise<string[]> {
  const ring = await via.admin().ring(3);
  const out: string[] = [];
  for (const n of cluster.nodes.filter((x) => x.running)) {
    const mine = keys.filter((k) => replicasOf(ring, k).includes(n.id));
    for (const k of await missingLocally(n.address, mine)) out.push(`${k}@${n.id}`);
  }
  return out;
}

describe("removenode restores N copies, the removed node's hints included", () => {
  let cluster: TestCluster | undefined;
  afterEach(() => {
    cluster?.destroy();
    cluster = undefined;
  });

  it('writes acknowledged through the dead node as a fallback are back on their N replicas once it is removed', async () => {
    cluster = await TestCluster.create(4, 4, ARGS);
    for (const n of cluster.nodes) n.start();
    for (const id of ['n1', 'n2', 'n3', 'n4']) await seen(cluster, id, { status: 'normal', up: true }, 90_000);
    const [n1, n2, , n4] = ['n1', 'n2', 'n3', 'n4'].map((id) => cluster!.node(id));
    n2!.signal('SIGTERM');
    await n2!.exit;
    await seen(cluster, 'n2', { up: false });
    // Keys whose writes go to n4 in n2's place (n1 coordinates them, so its view is the one asked).
    const candidates = Array.from({ length: 400 }, (_, i) => `fb-${i}`);
    const standIn: string[] = [];
    for (const k of candidates) {
      const e = await n1!.admin().endpoints(k);
      if (e.targets.some((t) => t.id === 'n4' && t.hintFor === 'n2')) standIn.push(k);
    }
    expect(standIn.length, 'keys for which n4 stands in for n2').toBeGreaterThan(20);
    const client = new Client({ nodes: [n1!.address], deadlineMs: 5000 });
    const acked: string[] = [];
    try {
      for (const k of standIn) {
        try {
          await client.put(k, `v-${k}`, { w: 2 });
          acked.push(k);
        } catch {
          // not acknowledged
        }
      }
    } finally {
      client.close();
    }
    expect(acked.length).toBe(standIn.length);
    // n4 holds the hints for n2; it dies with them.
    for (const k of acked.slice(0, 5))
      expect(await localValues(n4!.address, k, 'n2'), `n4's hint of ${k} for n2`).toEqual([`v-${k}`]);
    await kill9(n4!);
    await seen(cluster, 'n4', { up: false });
    n2!.start();
    await seen(cluster, 'n2', { status: 'normal', up: true }, 60_000);
    // Without the removal's repair, n2 lacks every one of them: the only hint was on n4.
    const lacking = await missingLocally(n2!.address, acked);
    expect(lacking.length, 'keys n2 lacks before the removal').toBe(acked.length);
    const out = await cli('removenode', 'n4', '--node', n1!.address);
    expect(out).toContain(
      'removing n4: the nodes that gain its ranges pull them from the surviving replicas, then its ranges and the writes it held hints for are repaired',
    );
    expect(out).toContain(
      'n4 removed: every range it held is back on N replicas, and the writes it held hints for repaired.',
    );
    await seen(cluster, 'n4', { status: 'removed' });
    expect(await missing(cluster, n1!, acked), 'acknowledged keys missing from a replica after the removal').toEqual(
      [],
    );
    const log = n1!.lines.find(
      (l) =>
        l.msg ===
        'ranges pulled: repairing the units whose copies the removed node took (its replicas, and the writes it held hints for)',
    );
    expect(log, 'the removal took its repair step').toBeDefined();
  }, 420_000);

  it('a driver killed with kill -9 in the middle of the repair step resumes it at restart and ends the removal; units it does not hold are repaired by their replicas', async () => {
    // Many tokens: many units, so that the kill lands in the middle of the step.
    cluster = await TestCluster.create(5, 3, [...ARGS, '--tokens', '128']);
    for (const n of cluster.nodes) n.start();
    for (const id of ['n1', 'n2', 'n3', 'n4', 'n5']) await seen(cluster, id, { status: 'normal', up: true }, 90_000);
    const n1 = cluster.node('n1');
    const n5 = cluster.node('n5'); // the node removed
    const client = new Client({ nodes: cluster.nodes.slice(0, 3).map((n) => n.address), deadlineMs: 5000 });
    let acked: string[];
    try {
      acked = await loadKeys(client, 'k-', 3000);
    } finally {
      client.close();
    }
    await kill9(n5);
    await seen(cluster, 'n5', { up: false });
    const { move } = await n1.admin().removeNode('n5');
    let phase = '';
    await waitFor(
      'n1 in the middle of the repair step',
      120_000,
      async () => {
        const d = (await n1.admin().transfers()).drive;
        phase = d?.phase ?? '';
        const m = /^repairing: (\d+)\/(\d+) units/.exec(phase);
        // Well into the step (a tenth of it), not at its end.
        return m !== null && Number(m[1]) >= Number(m[2]) / 10 && Number(m[1]) < Number(m[2]);
      },
      20,
    );
    await kill9(n1);
    const before = /^repairing: (\d+)\/(\d+)/.exec(phase)!;
    n1.lines.length = 0;
    n1.start();
    await seen(cluster, 'n5', { status: 'removed' }, 180_000);
    const resumed = n1.lines.find(
      (l) =>
        l.msg ===
        'ranges pulled: repairing the units whose copies the removed node took (its replicas, and the writes it held hints for)',
    ) as { units?: number; pending?: number; move?: string } | undefined;
    expect(resumed?.move).toBe(move);
    expect(resumed?.units).toBe(Number(before[2]));
    expect(resumed!.pending!, `units pending at restart (the kill was at ${phase})`).toBeLessThanOrEqual(
      Number(before[2]) - Number(before[1]),
    );
    console.log(
      `removal repair: killed at "${phase}", ${resumed!.pending} of ${resumed!.units} units pending at restart`,
    );
    expect(n1.lines.some((l) => l.msg === 'removed: every range of the node is back on N replicas')).toBe(true);
    const askedBy = cluster.nodes
      .filter((n) => n.lines.some((l) => l.msg === 'asked by a peer' && l.method === 'repairRange' && l.peer === 'n1'))
      .map((n) => n.id);
    expect(askedBy.length, 'nodes n1 asked to repair units it does not hold').toBeGreaterThan(0);
    expect(await missing(cluster, n1, acked), 'acknowledged keys missing from a replica after the removal').toEqual([]);
  }, 420_000);
});
