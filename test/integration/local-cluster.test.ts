/**
 * `ringkv local` (what `npm start` runs): three node processes form a cluster on
 * 127.0.0.1 that serves the client API, Ctrl-C stops every one of them cleanly, and a
 * restart finds the data again.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { waitFor } from '../../testkit/wait.js';
import { freeRun, killAll, startLocal, type Launcher } from './local-launcher.js';
import { AdminClient, Client } from '../../src/client/index.js';

const root = mkdtempSync(join(tmpdir(), 'ringkv-local-'));
const pids: number[] = [];
afterAll(() => {
  killAll(pids);
  rmSync(root, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const startAt = (base: number): Promise<Launcher> =>
  startLocal(['--base-port', String(base), '--data-dir', root], pids);

it('starts a 3-node cluster in zones a, b, c that serves puts and gets, stops every node on Ctrl-C, keeps the data for the next start, and adds and removes a node', async () => {
  const base = await freeRun(6, [1000]); // the fourth to sixth ports for `local add`
  const first = await startAt(base);
  expect(first.nodePids).toHaveLength(3);
  // Its progress lines only ever add nodes that are up: never "n1, n2" after "n3".
  const progress = [...first.out().matchAll(/^ringkv local: (?:(.*) up; )?waiting for (.*) to join$/gm)].map((m) =>
    (m[1] ?? '').split(', ').filter(Boolean),
  );
  for (let i = 1; i < progress.length; i++)
    expect(progress[i]!.length, first.out()).toBeGreaterThan(progress[i - 1]!.length);
  expect(first.out()).toMatch(new RegExp(`UN  127\\.0\\.0\\.1:${base + 2}`));
  expect(first.out()).toContain(`(zones a, b, c)`);
  expect(first.out()).toContain(`ringkv put greeting hello --node 127.0.0.1:${base}`);
  // A brand-new cluster has nothing to stream: its status shows ownership, no "(streaming 0/92 ranges)".
  expect(first.out()).not.toContain('streaming');
  expect(first.out()).toMatch(/^UN {2}127\.0\.0\.1:\d+ .* 100\.0% /m);
  const nodes = [0, 1, 2].map((i) => `127.0.0.1:${base + i}`);
  const client = new Client({ nodes });
  try {
    await client.put('greeting', 'hello');
    for (let i = 0; i < 100; i++) await client.put(`key-${i}`, `value-${i}`); // for n4 to take, and give back
    expect((await client.get('greeting', { r: 3 })).values.map(String)).toEqual(['hello']);
  } finally {
    client.close();
  }
  expect(await first.stop()).toBe(0);
  expect(first.nodePids.filter(alive)).toEqual([]);
  for (const id of ['n1', 'n2', 'n3'])
    expect(readFileSync(join(root, id, 'node.log'), 'utf8')).toContain('"msg":"node stopped"');

  const second = await startAt(base);
  const again = new Client({ nodes });
  try {
    expect((await again.get('greeting', { r: 3 })).values.map(String)).toEqual(['hello']);
  } finally {
    again.close();
  }
  // Two more nodes, then the last decommissioned, through the running launcher.
  {
    const added = await cli('local', 'add', '--data-dir', root);
    pids.push(...[...added.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1])));
    expect(added).toMatch(/^n4 started at 127\.0\.0\.1:\d+ \(pid \d+\); it joins the cluster$/m);
    expect(added).toContain('n4 is normal: it owns its ranges');
    const n4 = new Client({ nodes: [`127.0.0.1:${base + 3}`], tokenAware: false });
    try {
      expect((await n4.get('greeting', { r: 3 })).values.map(String)).toEqual(['hello']);
    } finally {
      n4.close();
    }
    // Once normal, its status says so within a gossip round or two, well before the 5 s
    // load refresh: no "(streaming 0/192 ranges)", and the load of what it streamed, not 0 B.
    const seen = new AdminClient(nodes[0]!, 2000);
    try {
      await waitFor(
        'n4 with its load and no streaming progress, as n1 sees it',
        4000,
        async () => {
          const m = (await seen.status().catch(() => undefined))?.members.find((x) => x.id === 'n4');
          return m !== undefined && m.loadBytes > 0 && m.progress === '';
        },
        100,
      );
    } finally {
      seen.close();
    }
    const status = await cli('status', '--node', nodes[0]!);
    const n4Row = status.split('\n').find((l) => l.includes(`127.0.0.1:${base + 3}`)) ?? '';
    expect(n4Row, status).toMatch(/^UN /);
    expect(n4Row, status).not.toContain('streaming');
    // --no-wait returns once the node has started, pointing at `transfers` to follow its join.
    const quick = await cli('local', 'add', '--no-wait', '--data-dir', root);
    pids.push(...[...quick.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1])));
    expect(quick).toMatch(
      /^n5 started at 127\.0\.0\.1:\d+ \(pid \d+\); it joins the cluster\nfollow it: npx ringkv transfers --node 127\.0\.0\.1:\d+$/m,
    );
    expect(quick).not.toContain('is normal');
    const a1 = new AdminClient(nodes[0]!, 2000);
    try {
      await waitFor(
        'n5 normal',
        60_000,
        async () =>
          (await a1.status().catch(() => undefined))?.members.some(
            (m) => m.id === 'n5' && m.status === 'normal' && m.up,
          ),
        250,
      );
    } finally {
      a1.close();
    }
    const removed = await cli('local', 'remove', 'n5', '--data-dir', root);
    expect(removed).toContain('n5 left the cluster and exited');
    // Its last progress line counts what moved: every range, and the keys n5 gave back.
    const lines = [...removed.matchAll(/^decommission n5: (\d+)\/(\d+) ranges, (\d+) keys/gm)];
    const [, done, total, keys] = lines.at(-1) ?? [];
    expect(Number(done), removed).toBe(Number(total));
    expect(Number(keys), removed).toBeGreaterThan(0);
    await waitFor(
      'the launcher reports n5 left',
      10_000,
      () => second.out().includes('node n5 left the cluster and exited'),
      100,
    );
  }
  // One node stopped and started again through the launcher, which keeps the others up.
  {
    expect(second.out()).toContain(`status page: http://127.0.0.1:${base + 1000}/`);
    expect((await fetch(`http://127.0.0.1:${base + 1001}/api/status`)).status).toBe(200);
    const stopped = await cli('local', 'stop', 'n2', '--data-dir', root);
    expect(stopped).toMatch(/^n2 \(pid \d+\) stopped; ringkv local start n2 starts it again with its data$/m);
    // The launcher's own line comes through its stdout pipe, which may lag the CLI's reply.
    await waitFor(
      'the launcher reports n2 stopped',
      10_000,
      () => second.out().includes('node n2 stopped (exit code 0)'),
      100,
    );
    const n1 = new Client({ nodes: [nodes[0]!], tokenAware: false });
    try {
      await n1.put('while-n2-was-down', 'hinted'); // W=2 of n1, n3: n2 gets it as a hint
      const started = await cli('local', 'start', 'n2', '--data-dir', root);
      pids.push(...[...started.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1])));
      expect(started).toMatch(/^n2 started at 127\.0\.0\.1:\d+ \(pid \d+\)\nn2 is up and serving$/m);
      await expect(cli('local', 'start', 'n2', '--data-dir', root)).rejects.toThrow(
        /n2 is running \(pid \d+\); ringkv local stop n2 first/,
      );
    } finally {
      n1.close();
    }
    // Serving once it is a normal member; it hears that n1 and n3 are up within a gossip round or two.
    const admin = new AdminClient(nodes[1]!, 2000);
    try {
      await waitFor(
        'n2 to see n1 and n3 up',
        20_000,
        async () => (await admin.status().catch(() => undefined))?.members.every((m) => m.status !== 'normal' || m.up),
        250,
      );
    } finally {
      admin.close();
    }
    const n2 = new Client({ nodes: [nodes[1]!], tokenAware: false });
    try {
      expect((await n2.get('greeting', { r: 3 })).values.map(String)).toEqual(['hello']);
      await waitFor(
        'the write made while n2 was down to read back at R=3 through n2',
        20_000,
        async () => (await n2.get('while-n2-was-down', { r: 3 })).values.map(String).join() === 'hinted',
        250,
      );
    } finally {
      n2.close();
    }
  }
  expect(await second.stop()).toBe(0);
  expect(second.nodePids.filter(alive)).toEqual([]);

  // After a restart, the next node added takes a new id: never n5, which left (its data
  // dir says so), and a node that left refuses to start again under its id.
  const third = await startAt(base);
  expect(third.nodePids).toHaveLength(4); // n1, n2, n3 and n4, added before the restart
  {
    const added = await cli('local', 'add', '--data-dir', root);
    pids.push(...[...added.matchAll(/\(pid (\d+)\)/g)].map((m) => Number(m[1])));
    expect(added).toMatch(/^n6 started at 127\.0\.0\.1:\d+ \(pid \d+\); it joins the cluster$/m);
    expect(added).toContain('n6 is normal: it owns its ranges');
  }
  await expect(cli('node', '--id', 'n5', '--listen', '127.0.0.1:0', '--data-dir', join(root, 'n5'))).rejects.toThrow(
    /node n5 decommissioned and left the cluster/,
  );
  expect(await third.stop()).toBe(0);
  expect(third.nodePids.filter(alive)).toEqual([]);
}, 360_000);

it('stops at once, saying which node, when a node it started exits before the cluster forms', async () => {
  const base = await freeRun(3, [1000]);
  // n2's port is taken: that node cannot start.
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(base + 1, '127.0.0.1', r));
  const dir = mkdtempSync(join(tmpdir(), 'ringkv-local-early-'));
  try {
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        join(import.meta.dirname, '../../src/cli/main.ts'),
        'local',
        '--base-port',
        String(base),
        '--data-dir',
        dir,
        '--timeout-ms',
        '120000',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    pids.push(child.pid!);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(1);
    expect(out).toMatch(/n2 exited before the cluster formed; stopping the others/);
    expect(Date.now() - started).toBeLessThan(60_000);
    for (const pid of [...out.matchAll(/n\d=(\d+)/g)].map((m) => Number(m[1]))) expect(alive(pid)).toBe(false);
  } finally {
    blocker.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

async function cli(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, '../../src/cli/main.ts'), ...args],
    { timeout: 180_000 },
  );
  return stdout;
}
