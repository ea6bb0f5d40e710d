/**
 * `ringkv bucket delete` on real node processes: refused while the bucket holds keys
 * unless --purge; with --purge its name is gone at once and every member deletes its
 * keys and the hints it holds of them, a member that was down when it was deleted and
 * one that was paused through it included, once they are back; the name is created again
 * only after that, and the new bucket shows none of the old keys.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/index.js';
import { TestCluster } from '../../testkit/node-cluster.js';
import { localValues, statusOf } from '../../testkit/kv-client.js';
import { waitFor } from '../../testkit/wait.js';

const MAIN = join(import.meta.dirname, '../../src/cli/main.ts');

async function cli(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  return promisify(execFile)(process.execPath, ['--import', 'tsx', MAIN, ...args], { timeout: 90_000 }).then(
    ({ stdout, stderr }) => ({ stdout, stderr, code: 0 }),
    (e: { stdout: string; stderr: string; code: number }) => ({ stdout: e.stdout, stderr: e.stderr, code: e.code }),
  );
}

describe('deleting a bucket', () => {
  let cluster: TestCluster;
  let client: Client;

  beforeAll(async () => {
    cluster = await TestCluster.create(3, 3, ['--request-timeout-ms', '2000']);
    for (const n of cluster.nodes) n.start();
    await cluster.formed();
    client = new Client({ nodes: cluster.nodes.map((n) => n.address) });
  }, 90_000);

  afterAll(() => {
    client?.close();
    cluster?.destroy();
  });

  it('refuses without --purge while it holds keys; with it, deletes them on every member, a down and a paused one included, and frees the name after', async () => {
    const [n1, n2, n3] = cluster.nodes as [
      (typeof cluster.nodes)[0],
      (typeof cluster.nodes)[0],
      (typeof cluster.nodes)[0],
    ];
    const admin = n1.admin();
    await admin.createBucket('tmp', { n: 3 });
    await admin.createBucket('kept', { n: 3 });
    await admin.createBucket('tags', { type: 'set' });
    for (let i = 0; i < 100; i++) await client.put(`k${i}`, `v${i}`, { bucket: 'tmp', w: 3 });
    await client.put('k0', 'stays', { bucket: 'kept', w: 3 });
    await client.setAdd('t', ['a', 'b'], { bucket: 'tags', w: 3 });

    const refused = await cli('bucket', 'delete', 'tmp', '--node', n1.address);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /bucket tmp holds keys \(on n1, n2, n3\): delete them first, or delete the bucket with --purge/,
    );
    expect((await client.get('k1', { bucket: 'tmp' })).values.map(String)).toEqual(['v1']);

    // n3 down while more keys are written: n1 and n2 keep hints for it.
    n3.signal('SIGTERM');
    await waitFor(
      'n1 to see n3 down',
      20_000,
      async () => (await n1.status())?.members.find((m) => m.id === 'n3')?.up === false,
      200,
    );
    const coordinated = new Client({ nodes: [n1.address], tokenAware: false });
    for (let i = 100; i < 120; i++) await coordinated.put(`k${i}`, `v${i}`, { bucket: 'tmp', w: 2 });
    coordinated.close();
    expect(await localValues(n1.address, 'k105', 'n3', 'tmp')).toEqual(['v105']);

    // n2 paused through the deletion: it hears of it only when it runs again.
    n2.signal('SIGSTOP');
    const deleted = await cli('bucket', 'delete', 'tmp', '--purge', '--no-wait', '--node', n1.address);
    expect(deleted.stderr).toBe('');
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toMatch(
      /^bucket tmp deleted: its name is gone; every member deletes its keys\npurged on \d of 3 members \(pending: .*n3.*\); run it again to follow the purge$/m,
    );
    // The name is gone at once for requests, and cannot be taken again while n3 holds its keys.
    const gone = await statusOf(client.get('k1', { bucket: 'tmp' }));
    expect(gone?.code).toBe(grpc.status.NOT_FOUND);
    await waitFor('n1 to purge', 20_000, async () => (await admin.bucketDeletion('tmp')).purged.includes('n1'), 100);
    expect(await localValues(n1.address, 'k1', '', 'tmp')).toEqual([]);
    expect(await localValues(n1.address, 'k105', 'n3', 'tmp')).toEqual([]); // its hint too
    expect((await client.get('k0', { bucket: 'kept', r: 1 })).values.map(String)).toEqual(['stays']);
    const early = await statusOf(admin.createBucket('tmp', { n: 3 }));
    expect(early?.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(early?.details).toMatch(/bucket tmp was deleted and .*n3.* not yet deleted its keys/);

    n2.signal('SIGCONT');
    n3.start();
    // Following it (the command again) ends once every member has purged.
    const followed = await cli('bucket', 'delete', 'tmp', '--node', n1.address);
    expect(followed.code).toBe(0);
    expect(followed.stdout).toMatch(/^bucket tmp was deleted before; its purge:$/m);
    expect(followed.stdout).toMatch(/^bucket tmp: its keys are deleted on every member; the name can be used again$/m);
    for (const n of [n2, n3]) {
      expect(await localValues(n.address, 'k1', '', 'tmp')).toEqual([]);
      expect(await localValues(n.address, 'k119', '', 'tmp')).toEqual([]);
    }
    expect(await localValues(n2.address, 'k105', 'n3', 'tmp')).toEqual([]);

    // Created again: a new, empty bucket.
    await waitFor(
      'the name free on n1',
      20_000,
      async () => (await statusOf(admin.createBucket('tmp', { n: 3 }))) === undefined,
      250,
    );
    expect((await client.get('k1', { bucket: 'tmp', r: 3 })).found).toBe(false);
    expect((await client.get('k105', { bucket: 'tmp', r: 3 })).found).toBe(false);
    await client.put('k1', 'new', { bucket: 'tmp', w: 3 });
    expect((await client.get('k1', { bucket: 'tmp', r: 3 })).values.map(String)).toEqual(['new']);

    // A set bucket: its elements go too.
    expect((await cli('bucket', 'delete', 'tags', '--purge', '--node', n2.address)).stdout).toMatch(
      /its keys are deleted on every member/,
    );
    const list = await cli('bucket', 'list', '--node', n3.address);
    expect(list.stdout).not.toMatch(/^tags /m);
    await admin.createBucket('tags', { type: 'set' });
    expect((await client.setRead('t', { bucket: 'tags', r: 3 })).elements).toEqual([]);
    admin.close();
  }, 180_000);
});
