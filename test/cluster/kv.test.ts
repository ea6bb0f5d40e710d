/**
 * Reads and writes on real `ringkv node` processes on 127.0.0.1: quorums through a killed
 * replica, sloppy quorum and hinted handoff, siblings, delete vs put, read repair, and the
 * status code of every kind of bad input.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { TestCluster, type NodeProcess } from '../../testkit/node-cluster.js';
import { freePort } from '../../testkit/ports.js';
import { waitFor } from '../../testkit/wait.js';
import { localValues, statusOf } from '../../testkit/kv-client.js';

const S = grpc.status;
const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');

/** Run the ringkv CLI; its stdout, or the error with its stderr. */
async function cli(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    timeout: 20_000,
  });
  return stdout;
}

async function formed(cluster: TestCluster): Promise<void> {
  const n = cluster.nodes.length;
  await waitFor(
    `all ${n} normal and up on every node`,
    60_000,
    async () => {
      const views = await cluster.views();
      return views.every((v) => v?.members.length === n && v.members.every((m) => m.status === 'normal' && m.up));
    },
    250,
  );
}

async function seenDown(cluster: TestCluster, id: string, up = false): Promise<void> {
  await waitFor(
    `${id} ${up ? 'up' : 'down'} on every running node`,
    20_000,
    async () => {
      const views = await Promise.all(cluster.nodes.filter((n) => n.id !== id && n.running).map((n) => n.status()));
      return views.every((v) => v?.members.find((m) => m.id === id)?.up === up);
    },
    100,
  );
}

async function kill(n: NodeProcess): Promise<void> {
  n.signal('SIGKILL');
  await n.exit;
}

describe('a 3-node cluster', () => {
  let cluster: TestCluster;
  let client: Client;

  beforeAll(async () => {
    cluster = await TestCluster.create(3, 3, ['--request-timeout-ms', '2000']);
    for (const n of cluster.nodes) n.start();
    await formed(cluster);
    client = new Client({ nodes: cluster.nodes.map((n) => n.address) });
  }, 90_000);

  afterAll(() => {
    client?.close();
    cluster?.destroy();
  });

  it('concurrent blind writes become siblings on every replica; a write with the read context resolves them', async () => {
    const [a, b, c] = cluster.nodes.map((n) => new Client({ nodes: [n.address], tokenAware: false }));
    try {
      await Promise.all([a!.put('sib', 'x', { w: 3 }), b!.put('sib', 'y', { w: 3 }), c!.put('sib', 'z', { w: 3 })]);
      const read = await a!.get('sib', { r: 3 });
      expect(read.values.map(String).sort()).toEqual(['x', 'y', 'z']);
      await b!.put('sib', 'resolved', { context: read.context, w: 3 });
      for (const n of cluster.nodes) expect(await localValues(n.address, 'sib')).toEqual(['resolved']);
    } finally {
      for (const x of [a, b, c]) x!.close();
    }
  });

  it('the client fails over to the next node when one does not answer', async () => {
    const nowhere = `127.0.0.1:${await freePort()}`;
    const c = new Client({ nodes: [nowhere, cluster.node('n2').address] });
    try {
      for (let i = 0; i < 3; i++) await c.put(`fo${i}`, 'v'); // whichever node a call starts from
      expect((await c.get('fo0')).values.map(String)).toEqual(['v']);
    } finally {
      c.close();
    }
    const only = new Client({ nodes: [nowhere], deadlineMs: 1000, tokenAware: false });
    expect((await statusOf(only.get('fo0')))?.code).toBe(S.UNAVAILABLE);
    only.close();
  });

  it('the CLI puts, shows siblings with a context, resolves them, deletes, and shows endpoints', async () => {
    const [n1, n2] = [cluster.node('n1').address, cluster.node('n2').address];
    await cli('put', 'cli:k', 'one', '--node', n1);
    await cli('put', 'cli:k', 'two', '--node', n2);
    const got = JSON.parse(await cli('get', 'cli:k', '--node', n1, '--json', '--r', '3')) as {
      found: boolean;
      values: string[];
      context: string;
    };
    expect(got.values.sort()).toEqual(['one', 'two']);
    const text = await cli('get', 'cli:k', '--node', n2);
    expect(text).toContain('cli:k: 2 siblings (concurrent writes); put with the context to resolve them');
    await cli('put', 'cli:k', 'three', '--context', got.context, '--w', '3', '--node', n2);
    expect(await cli('get', 'cli:k', '--node', n1)).toMatch(/^three\ncontext: \S+\n$/);
    const ends = await cli('getendpoints', 'cli:k', '--node', n1);
    expect(ends).toMatch(/^key cli:k: token [0-9a-f]{16}, N=3$/m);
    for (const id of ['n1', 'n2', 'n3'])
      expect(ends).toMatch(new RegExp(`^${id} +127\\.0\\.0\\.1:\\d+ +- +up +${id}$`, 'm'));
    await cli('del', 'cli:k', '--node', n1);
    const gone = await promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      MAIN,
      'get',
      'cli:k',
      '--node',
      n2,
      '--r',
      '3',
    ]).catch((e: { stdout: string; code: number }) => e);
    expect(gone).toMatchObject({ code: 2, stdout: expect.stringMatching(/^cli:k: not found/) }); // exit 2: not found
    const err = await promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      MAIN,
      'put',
      'cli:k',
      'v',
      '--w',
      '3',
      '--node',
      `127.0.0.1:${await freePort()}`,
    ]).catch((e: { stderr: string; code: number }) => e);
    expect((err as { code: number }).code).toBe(1);
    expect((err as { stderr: string }).stderr).toMatch(
      /no ringkv node answers at 127\.0\.0\.1:\d+ \(connection refused\); is it running, and is that its --listen address\? Pass --node host:port of a running node \(or several, comma-separated\), or set RINGKV_NODES \(gRPC UNAVAILABLE\)/,
    );
  }, 60_000);

  it('a delete concurrent with a put keeps the put', async () => {
    await client.put('dp', 'before', { w: 3 });
    const seen = await client.get('dp', { r: 3 });
    await Promise.all([client.delete('dp', { context: seen.context, w: 3 }), client.put('dp', 'concurrent', { w: 3 })]);
    const after = await client.get('dp', { r: 3 });
    expect(after.found).toBe(true);
    expect(after.values.map(String)).toEqual(['concurrent']);
    // And a delete that saw everything removes the key.
    await client.delete('dp', { context: after.context, w: 3 });
    expect((await client.get('dp', { r: 3 })).found).toBe(false);
  });

  it('every kind of bad input gets its status code and a message that says what to do', async () => {
    const ctxOfOther = (await client.get('other')).context;
    const cases: [string, () => Promise<unknown>, grpc.status, RegExp][] = [
      ['empty key', () => client.put('', 'v'), S.INVALID_ARGUMENT, /key must have at least one byte/],
      ['key over 4 KiB', () => client.get(Buffer.alloc(4097, 97)), S.INVALID_ARGUMENT, /over the limit of 4096/],
      ['empty value', () => client.put('k', ''), S.INVALID_ARGUMENT, /value must have at least one byte/],
      [
        'value over 1 MiB',
        () => client.put('k', Buffer.alloc((1 << 20) + 1)),
        S.INVALID_ARGUMENT,
        /over the limit of 1048576 bytes; split it/,
      ],
      [
        'value of 5 MiB, past the message limit',
        () => client.put('k', Buffer.alloc(5 << 20)),
        S.INVALID_ARGUMENT,
        /value of 5242880 bytes is over the limit of 1048576 bytes; split it/,
      ],
      ['w over N', () => client.put('k', 'v', { w: 4 }), S.INVALID_ARGUMENT, /w must be 1 to N=3/],
      ['r over N', () => client.get('k', { r: 7 }), S.INVALID_ARGUMENT, /r must be 1 to N=3/],
      [
        'a context that is not one',
        () => client.put('k', 'v', { context: Buffer.from('junk') }),
        S.INVALID_ARGUMENT,
        /bad causal context.*pass the context returned by a get/,
      ],
      [
        'a context of another key',
        () => client.delete('k', { context: ctxOfOther }),
        S.INVALID_ARGUMENT,
        /read from a different key/,
      ],
    ];
    for (const [what, call, code, message] of cases) {
      const s = await statusOf(call());
      expect(s?.code, what).toBe(code);
      expect(s?.details, what).toMatch(message);
    }
    // Nothing was written by any of them.
    expect((await client.get('k', { r: 3 })).found).toBe(false);
  });

  it('a replica that stops answering: UNAVAILABLE at W=3 once it has been silent a second, saying the write may have applied', async () => {
    const n3 = cluster.node('n3');
    const c1 = new Client({ nodes: [cluster.node('n1').address], tokenAware: false });
    n3.signal('SIGSTOP');
    try {
      // Not at the 3 s deadline: once n3 has had calls in flight for 1 s unanswered, the
      // coordinator stops waiting for it (coordinator.ts: #giveUpOnSilence).
      const s = await statusOf(c1.put('slow', 'v', { w: 3, deadlineMs: 3000 }));
      expect(s?.code).toBe(S.UNAVAILABLE);
      expect(s?.details).toMatch(
        /got 2 of W=3 replies: n3 stopped answering this node\. The write was applied on 2 replica\(s\) and may still appear in reads/,
      );
      // W=2 still succeeds meanwhile.
      await c1.put('slow', 'v2', { w: 2 });
    } finally {
      n3.signal('SIGCONT');
      c1.close();
    }
  });

  it('writes at W=2 succeed with a replica killed and read back at R=2; the restarted replica gets the five writes it missed from hints the coordinators kept', async () => {
    const n3 = cluster.node('n3');
    await kill(n3);
    await seenDown(cluster, 'n3');
    await client.put('rr', 'while-n3-down', { w: 2 });
    for (let i = 1; i <= 4; i++) await client.put(`rr${i}`, `missed-${i}`, { w: 2 });
    expect((await client.get('rr', { r: 2 })).values.map(String)).toEqual(['while-n3-down']);
    // Two of three replicas down: W=2 cannot be met (a 3-node cluster has no fallback).
    await kill(cluster.node('n2'));
    await seenDown(cluster, 'n2');
    const s = await statusOf(
      new Client({ nodes: [cluster.node('n1').address], tokenAware: false }).put('rr', 'x', { w: 2 }),
    );
    expect(s?.code).toBe(S.UNAVAILABLE);
    expect(s?.details).toMatch(
      /needs W=2 of N=3 replicas, but only 1 is up \(down: .*\)\. Retry when nodes are back, or use a smaller w/,
    );
    cluster.node('n2').start();
    n3.start();
    await formed(cluster);
    // n3 was no target of the write (down, and a 3-node cluster has no fallback): the
    // coordinator kept a hint for it, delivered once n3 is back, without any read.
    await waitFor(
      'n3 gets the writes it missed, by hint',
      20_000,
      async () => {
        const got = await Promise.all(
          ['rr', 'rr1', 'rr2', 'rr3', 'rr4'].map(async (k) => (await localValues(n3.address, k)).join()),
        );
        return got.join() === 'while-n3-down,missed-1,missed-2,missed-3,missed-4';
      },
      250,
    );
    const counters = await Promise.all(cluster.nodes.map(async (n) => (await n.admin().status()).counters));
    expect(counters.reduce((a, c) => a + (c.hintsOnFailure ?? 0), 0)).toBeGreaterThanOrEqual(1); // n2 restarted: its counters began again
    expect((await client.get('rr', { r: 3 })).values.map(String)).toEqual(['while-n3-down']);
  }, 90_000);
});

describe('a 5-node cluster', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.create(5, 3);
    for (const n of cluster.nodes) n.start();
    await formed(cluster);
  }, 90_000);

  afterAll(() => cluster?.destroy());

  it('with two of three replicas down, W=2 succeeds through sloppy quorum; hints reach the owners when they are back', async () => {
    const key = 'sloppy:1';
    const ends = await cluster.node('n1').admin().endpoints(key);
    const [primary, ...down] = ends.preferenceList.map((e) => e.id);
    const coordinator = cluster.nodes.find((n) => n.id === primary)!;
    for (const id of down) await kill(cluster.node(id));
    for (const id of down) await seenDown(cluster, id);
    const client = new Client({ nodes: [coordinator.address], tokenAware: false });
    try {
      await client.put(key, 'sloppy', { w: 2 });
      expect((await client.get(key, { r: 2 })).values.map(String)).toEqual(['sloppy']);
      // The fallbacks hold it as hints for the down owners, visible in status.
      const targets = (await coordinator.admin().endpoints(key)).targets.filter((t) => t.hintFor !== '');
      expect(targets.map((t) => t.hintFor).sort()).toEqual([...down].sort());
      for (const t of targets) expect(await localValues(t.address, key, t.hintFor)).toEqual(['sloppy']);
      await waitFor(
        'hints gossiped',
        10_000,
        async () => {
          const s = await coordinator.admin().status();
          return s.members.filter((m) => m.hints > 0).length === targets.length;
        },
        250,
      );
      // The owners come back: hints are delivered, then deleted.
      for (const id of down) cluster.node(id).start();
      await formed(cluster);
      for (const id of down) {
        await waitFor(
          `${id} holds the value`,
          15_000,
          async () => (await localValues(cluster.node(id).address, key)).join() === 'sloppy',
          250,
        );
      }
      for (const t of targets)
        await waitFor(
          `hint on ${t.id} deleted`,
          10_000,
          async () => (await localValues(t.address, key, t.hintFor)).length === 0,
          250,
        );
      const delivered = await Promise.all(
        targets.map(async (t) => (await cluster.node(t.id).admin().status()).counters.hintsDelivered),
      );
      expect(delivered.every((d) => d! >= 1)).toBe(true);
    } finally {
      client.close();
    }
  }, 120_000);
});

describe('a node at its in-flight bound', () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await TestCluster.create(1, 1, ['--replicas', '1', '--max-in-flight', '2']);
    cluster.nodes[0]!.start();
    await formed(cluster);
  }, 60_000);

  afterAll(() => cluster?.destroy());

  it('refuses the excess with RESOURCE_EXHAUSTED and serves again after', async () => {
    const client = new Client({ nodes: [cluster.nodes[0]!.address] });
    try {
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => statusOf(client.put(`k${i}`, 'v'))));
      const refused = results.filter((r) => r?.code === S.RESOURCE_EXHAUSTED);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]!.details).toMatch(/already coordinates 2 requests \(the limit\); back off and retry/);
      expect(results.filter((r) => r !== undefined && r.code !== S.RESOURCE_EXHAUSTED)).toEqual([]);
      await expect(client.put('after', 'v')).resolves.toBeDefined();
    } finally {
      client.close();
    }
  });
});
