/**
 * Staged changes on real processes (Riak's plan / commit / clear): a standby started with
 * --join manual waits; `ringkv plan join` prints what would move and changes nothing;
 * a commit after the ring changed is refused (ABORTED); the stage survives a restart of
 * the node holding it; `ringkv commit` admits the standby and follows its join to the
 * end; every key is on its N replicas afterwards.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { TestCluster } from '../../testkit/node-cluster.js';
import { waitFor } from '../../testkit/wait.js';
import { loadKeys, missingCopies, stopAll, storedKeys } from './topology-check.js';

const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');

async function cli(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    timeout: 240_000,
  });
  return stdout;
}

describe('staged changes: plan, commit, clear', () => {
  let cluster: TestCluster;
  afterAll(() => cluster?.destroy());

  it('a standby waits; plan changes nothing; a stale plan is refused; the plan survives a restart; commit admits it and the join streams', async () => {
    cluster = await TestCluster.create(5, 3, ['--request-timeout-ms', '3000']);
    const [n1, n2, n3, n4, n5] = cluster.nodes;
    for (const n of [n1!, n2!, n3!]) n.start();
    await waitFor(
      '3 normal',
      90_000,
      async () => (await n1!.status())?.members.filter((m) => m.status === 'normal' && m.up).length === 3,
      250,
    );
    const client = new Client({ nodes: [n1!, n2!, n3!].map((n) => n.address), deadlineMs: 5000 });
    try {
      const keys = await loadKeys(client, 'k-', 3000);
      // n4 is a standby: it shows itself and waits.
      n4!.args.push('--join', 'manual');
      n4!.start();
      await waitFor(
        'n4 seen as a standby',
        30_000,
        async () => (await n1!.status())?.members.some((m) => m.id === 'n4' && m.status === 'joining'),
        200,
      );
      const a = n1!.admin();
      await expect(a.plan([{ kind: 'join', node: 'n1' }])).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: expect.stringMatching(/n1 is not a standby/),
      });
      await expect(a.plan([{ kind: 'leave', node: 'nope' }])).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: expect.stringMatching(/nope is not a member/),
      });
      await expect(a.commit()).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: expect.stringMatching(/nothing is staged/),
      });
      const text = await cli('plan', 'join', 'n4', '--node', n1!.address);
      expect(text).toMatch(/^1\. n4 joins$/m);
      expect(text).toMatch(/-> n4: \d+ ranges, [\d.]+% of the keys, ~\d+ keys/);
      expect(text).toMatch(/^ {2}n4 +0\.0% +[\d.]+%$/m);
      expect(text).toContain('Nothing has changed yet');
      // Nothing changed: n4 is still a standby a few rounds later.
      await new Promise((r) => setTimeout(r, 3000));
      expect((await n1!.status())!.members.find((m) => m.id === 'n4')).toMatchObject({ status: 'joining', tokens: 0 });
      // The ring changes (n5 joins by itself): the plan is stale, commit refuses.
      n5!.start();
      await waitFor(
        'n5 normal',
        90_000,
        async () => (await n1!.status())?.members.find((m) => m.id === 'n5')?.status === 'normal',
        250,
      );
      await expect(a.commit()).rejects.toMatchObject({
        code: grpc.status.ABORTED,
        details: expect.stringMatching(/the ring changed since the plan/),
      });
      expect((await cli('clear', '--node', n1!.address)).trim()).toBe('staged changes discarded');
      expect(await cli('plan', '--node', n1!.address)).toContain('Nothing is staged');
      const staged = await cli('plan', 'join', 'n4', '--node', n1!.address);
      // The node holding the stage restarts: the plan is still there (stage.json), and commit works.
      n1!.signal('SIGTERM');
      expect(await n1!.exit).toBe(0);
      n1!.start();
      await waitFor(
        'n1 back, seeing 4 normal',
        90_000,
        async () => (await n1!.status())?.members.filter((m) => m.status === 'normal' && m.up).length === 4,
        250,
      );
      // The same plan: steps, ranges and ownership (key and byte estimates follow the gossiped load).
      const stable = (text: string): string => text.replace(/, ~\d+ keys, ~.*$/gm, '');
      expect(stable(await cli('plan', '--node', n1!.address))).toBe(stable(staged));
      // The commit runs a join to its end; if it does not end, what the CLI printed and each node's last warnings say where it stood.
      const out = await cli('commit', '--node', n1!.address).catch(
        (e: { stdout?: string; stderr?: string; message: string }) => {
          const warnings = cluster.nodes.map(
            (n) =>
              `${n.id}: ${n.lines
                .filter((l) => Number(l['level']) >= 40)
                .slice(-5)
                .map((l) => `${l.msg}${l['err'] ? ` (${JSON.stringify(l['err']).slice(0, 200)})` : ''}`)
                .join(' | ')}`,
          );
          throw new Error(
            `${e.message}\nstdout: ${e.stdout ?? ''}\nstderr: ${e.stderr ?? ''}\nlast warnings:\n${warnings.join('\n')}`,
          );
        },
      );
      expect(out).toContain('every staged change is done');
      expect((await n1!.status())!.members.find((m) => m.id === 'n4')!.status).toBe('normal');
      const ring = await n1!.admin().ring(3);
      await stopAll(cluster.nodes);
      const stored = new Map<string, Set<string>>();
      for (const n of cluster.nodes) stored.set(n.id, await storedKeys(n));
      expect(missingCopies(ring, keys, stored).slice(0, 20)).toEqual([]);
    } finally {
      client.close();
    }
  }, 420_000);
});
