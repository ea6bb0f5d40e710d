/**
 * Buckets on real `ringkv node` processes: a bucket created on one node reaches every
 * node (gossiped digest, tables fetched and merged), survives a restart (buckets.json),
 * reaches a node that joins later, and two operators changing it at once end with one
 * table everywhere; requests in a bucket take its properties; bad input gets its code.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient, Client } from '../../src/client/index.js';
import { MARK } from '../../src/buckets/index.js';
import { TestCluster } from '../../testkit/node-cluster.js';
import { localValues, statusOf } from '../../testkit/kv-client.js';
import { waitFor } from '../../testkit/wait.js';

const S = grpc.status;
const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');

/** Run the ringkv CLI: its stdout, stderr and exit code. */
async function cli(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', MAIN, ...args], { timeout: 20_000 }).then(
    (r) => ({ ...r, code: 0 }),
    (e: { stdout: string; stderr: string; code: number }) => ({ stdout: e.stdout, stderr: e.stderr, code: e.code }),
  );
}

describe('buckets on a cluster', () => {
  let cluster: TestCluster;
  let client: Client;

  const tables = async (): Promise<string[]> =>
    Promise.all(cluster.nodes.filter((n) => n.running).map(async (n) => JSON.stringify(await n.admin().listBuckets())));

  beforeAll(async () => {
    cluster = await TestCluster.create(4, 3, ['--request-timeout-ms', '2000']);
    for (const n of cluster.nodes.slice(0, 3)) n.start();
    await waitFor(
      '3 normal and up on every node',
      60_000,
      async () => {
        const views = (await cluster.views()).slice(0, 3);
        return views.every((v) => v?.members.length === 3 && v.members.every((m) => m.status === 'normal' && m.up));
      },
      250,
    );
    client = new Client({ nodes: cluster.nodes.slice(0, 3).map((n) => n.address) });
  }, 90_000);

  afterAll(() => {
    client?.close();
    cluster?.destroy();
  });

  it('a bucket created on one node is on every node when the call returns, and requests take its N and W', async () => {
    const admin = cluster.node('n1').admin();
    const made = await admin.createBucket('carts', { w: 3, ttlMs: 0 });
    expect(made.lagging).toEqual([]);
    expect(made.bucket).toMatchObject({
      name: 'carts',
      props: { n: 3, r: 0, w: 3, ttlMs: 0, siblings: 'siblings' },
      changedBy: 'n1',
    });
    for (const n of cluster.nodes.slice(0, 3)) expect((await n.admin().getBucket('carts')).props.w).toBe(3);
    expect((await cluster.node('n3').admin().listBuckets()).map((b) => b.name)).toEqual(['default', 'carts']);

    // The bucket's W=3 is every replica: acknowledged means on all three.
    await client.put('k1', 'in-carts', { bucket: 'carts' });
    for (const n of cluster.nodes.slice(0, 3))
      expect(await localValues(n.address, 'k1', '', 'carts')).toEqual(['in-carts']);
    // The same key in the default bucket is another key.
    expect((await client.get('k1')).found).toBe(false);
    await client.put('k1', 'in-default');
    expect((await client.get('k1', { bucket: 'carts' })).values.map(String)).toEqual(['in-carts']);
    expect((await client.get('k1')).values.map(String)).toEqual(['in-default']);
    const ends = await admin.endpoints('k1', 'carts');
    expect(ends.replicas).toBe(3);
    expect(ends.token).not.toBe((await admin.endpoints('k1')).token);
  }, 60_000);

  it('the CLI creates, sets, shows and lists buckets, and status shows them', async () => {
    const node = ['--node', cluster.node('n2').address];
    const made = await cli('bucket', 'create', 'sessions', '--ttl', '30m', '--siblings', 'lww', '--r', '1', ...node);
    expect(made.code).toBe(0);
    expect(made.stdout).toMatch(
      /^bucket sessions created\nBucket +Type +N +R +W +TTL +Siblings +Changed\nsessions +kv +3 +1 +quorum \(2\) +30m +lww +\S+ on n2\n$/,
    );
    expect((await cli('bucket', 'set', 'sessions', '--ttl', '2h', ...node)).stdout).toMatch(
      /^sessions +kv +3 +1 +quorum \(2\) +2h +lww/m,
    );
    expect(
      JSON.parse((await cli('bucket', 'show', 'sessions', '--json', '--node', cluster.node('n1').address)).stdout),
    ).toMatchObject({ name: 'sessions', props: { n: 3, r: 1, w: 0, ttlMs: 7_200_000, siblings: 'lww' } });
    expect((await cli('bucket', 'list', ...node)).stdout).toMatch(
      /^default +kv +3 +quorum \(2\) +quorum \(2\) +none +siblings +- *$/m,
    );
    const status = await cli('status', ...node);
    expect(status.stdout).toMatch(/\nBuckets:\nBucket +Type +N[^\n]*\ndefault [^\n]*\ncarts [^\n]*\nsessions /);
    const bad = await cli('bucket', 'set', 'sessions', '--n', '5', ...node);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/the n of bucket sessions is 3 and cannot change/);
    const none = await cli('bucket', 'set', 'sessions', ...node);
    expect([none.code, none.stderr]).toEqual([1, expect.stringContaining('name a property to change')]);
    expect((await cli('put', 'cli-key', 'in sessions', '--bucket', 'sessions', ...node)).code).toBe(0);
    expect((await cli('get', 'cli-key', '--bucket', 'sessions', ...node)).stdout).toMatch(/^in sessions\n/);
    expect((await cli('get', 'cli-key', ...node)).stdout).toMatch(/^cli-key: not found/);
    expect((await cli('del', 'cli-key', '--bucket', 'sessions', ...node)).stdout).toBe('deleted cli-key\n');
    expect((await cli('getendpoints', 'cli-key', '--bucket', 'sessions', ...node)).stdout).toMatch(
      /^key cli-key: token [0-9a-f]{16}, N=3$/m,
    );
    const unknown = await cli('get', 'cli-key', '--bucket', 'nope', ...node);
    expect([unknown.code, unknown.stderr]).toEqual([
      1,
      expect.stringContaining('there is no bucket nope: create it first'),
    ]);
    const ttl = await cli('bucket', 'create', 'x', '--ttl', '3 weeks', ...node);
    expect([ttl.code, ttl.stderr]).toEqual([1, expect.stringContaining('must be a duration like 30s')]);
    // A bare number says no unit: 7 ms, 7 s or 7 days? Refused, with the choices.
    const bare = await cli('bucket', 'create', 'x', '--ttl', '7', ...node);
    expect([bare.code, bare.stderr]).toEqual([
      1,
      expect.stringContaining('must say its unit: 7s, 7m, 7h, 7d, or 7ms if milliseconds are meant'),
    ]);
  }, 90_000);

  it('refuses bad buckets and bad properties with clear codes', async () => {
    const admin = cluster.node('n2').admin();
    const code = async (p: Promise<unknown>): Promise<[number | undefined, string]> => {
      const s = await statusOf(p);
      return [s?.code, s?.details ?? ''];
    };
    expect(await code(admin.createBucket('carts'))).toEqual([
      S.ALREADY_EXISTS,
      expect.stringContaining('bucket carts already exists'),
    ]);
    expect(await code(admin.createBucket('Bad Name'))).toEqual([
      S.INVALID_ARGUMENT,
      expect.stringContaining('is not valid'),
    ]);
    expect(await code(admin.createBucket('x'.repeat(65)))).toEqual([
      S.INVALID_ARGUMENT,
      expect.stringContaining('over the limit of 64'),
    ]);
    // The client refuses what no node would take before sending it; the node checks what it alone can.
    expect(await code(admin.createBucket('big', { n: 10 }))).toEqual([
      S.INVALID_ARGUMENT,
      'createBucket: option n must be a whole number from 1 to 9, got 10',
    ]);
    expect(await code(admin.createBucket('wide', { n: 5 }))).toEqual([
      S.FAILED_PRECONDITION,
      expect.stringContaining("n 5 is more replicas than the cluster's 3 members: each key would have only 3"),
    ]);
    expect(await code(admin.createBucket('wide', { n: 2, w: 3 }))).toEqual([
      S.INVALID_ARGUMENT,
      expect.stringContaining('w must be at most n'),
    ]);
    expect(await code(admin.createBucket('sib', { siblings: 'some' as 'lww' }))).toEqual([
      S.INVALID_ARGUMENT,
      expect.stringContaining('option siblings must be'),
    ]);
    expect(await code(admin.setBucket('carts', { n: 5 }))).toEqual([
      S.FAILED_PRECONDITION,
      expect.stringContaining('cannot change'),
    ]);
    expect(await code(admin.setBucket('nope', { r: 1 }))).toEqual([
      S.NOT_FOUND,
      expect.stringContaining('there is no bucket nope'),
    ]);
    expect(await code(admin.getBucket('nope'))).toEqual([
      S.NOT_FOUND,
      expect.stringContaining('there is no bucket nope'),
    ]);
    expect(await code(admin.setBucket('carts', {}))).toEqual([
      S.INVALID_ARGUMENT,
      expect.stringContaining('name the properties to change'),
    ]);
    expect(await code(client.put('k', 'v', { bucket: 'nope' }))).toEqual([
      S.NOT_FOUND,
      expect.stringContaining('there is no bucket nope: create it first'),
    ]);
    expect(await code(client.get('k', { bucket: 'Nope!' }))).toEqual([
      S.INVALID_ARGUMENT,
      expect.stringContaining('bucket name "Nope!" is not valid'),
    ]);
    expect(await code(client.put(Buffer.concat([MARK, Buffer.from('x')]), 'v'))).toEqual([
      S.INVALID_ARGUMENT,
      expect.stringContaining('may not begin with the bytes 00 62 6b 74'),
    ]);
    expect(await code(client.put('x'.repeat(4097), 'v', { bucket: 'carts' }))).toEqual([
      S.INVALID_ARGUMENT,
      expect.stringContaining('key of 4097 bytes is over the limit of 4096'),
    ]);
    await client.put('x'.repeat(4096), 'v', { bucket: 'carts' });
  }, 60_000);

  it('two operators changing a bucket at once on two nodes end with one table everywhere: each property the later write', async () => {
    await Promise.all([
      cluster.node('n1').admin().setBucket('carts', { r: 2, ttlMs: 1000 }),
      cluster.node('n3').admin().setBucket('carts', { r: 1 }),
    ]);
    await waitFor('one bucket table on every node', 20_000, async () => new Set(await tables()).size === 1, 100);
    const carts = await cluster.node('n2').admin().getBucket('carts');
    expect([1, 2]).toContain(carts.props.r);
    expect(carts.props.ttlMs).toBe(1000);
    await cluster.node('n1').admin().setBucket('carts', { ttlMs: 0 });
  }, 60_000);

  it('a restarted node keeps its buckets (buckets.json) and gets those made while it was down; a node that joins later gets them all', async () => {
    const n2 = cluster.node('n2');
    n2.signal('SIGTERM');
    await n2.exit;
    await cluster.node('n1').admin().createBucket('while-down', { n: 2 });
    n2.start();
    await waitFor('n2 answers', 30_000, async () => (await n2.status()) !== undefined, 100);
    expect((await n2.admin().listBuckets()).map((b) => b.name)).toContain('carts');
    await waitFor(
      'n2 has the bucket created while it was down',
      20_000,
      async () => (await n2.admin().listBuckets()).some((b) => b.name === 'while-down'),
      100,
    );

    const n4 = cluster.node('n4');
    n4.start();
    await waitFor(
      'n4 has every bucket',
      60_000,
      async () =>
        (
          await n4
            .admin()
            .listBuckets()
            .catch(() => [])
        )
          .map((b) => b.name)
          .join() === 'default,carts,sessions,while-down',
      200,
    );
    await waitFor('one bucket table on every node', 20_000, async () => new Set(await tables()).size === 1, 100);
  }, 120_000);
});
