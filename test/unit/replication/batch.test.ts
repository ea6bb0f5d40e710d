import { afterEach, describe, expect, it } from 'vitest';
import { type KeyOutcome } from '../../../src/replication/coordinator.js';
import { MAX_BATCH_KEYS, MAX_BATCH_VALUE_BYTES } from '../../../src/common/batch-limits.js';
import { ReplicationError } from '../../../src/replication/replication-errors.js';
import { FakeCluster } from './fake-cluster.js';

const B = (s: string): Buffer => Buffer.from(s);
const EMPTY = Buffer.alloc(0);
const keys = (n: number, prefix = 'k'): Buffer[] => Array.from({ length: n }, (_, i) => B(`${prefix}${i}`));

let cluster: FakeCluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

function codeOf(o: KeyOutcome<unknown>): string {
  return o.ok ? 'OK' : (o.error as { code: string }).code;
}

async function refused(p: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ReplicationError);
  expect((e as ReplicationError).code).toBe(code);
  expect((e as ReplicationError).message).toMatch(message);
}

describe('coordinator: batches', () => {
  it('putMany then getMany: every key its own result, in the order asked; a missing key is not found', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster.coordinator('n1');
    const ks = keys(50);
    const put = await c.putMany(
      ks.map((key, i) => ({ key, value: B(`v${i}`), context: EMPTY })),
      { quorum: 3 },
    );
    expect(put.map(codeOf)).toEqual(ks.map(() => 'OK'));
    const got = await cluster.coordinator('n4').getMany([...ks, B('absent')], { quorum: 2 });
    expect(got.map((o) => (o.ok ? (o.value.found ? o.value.values.map(String).join() : 'absent') : 'error'))).toEqual([
      ...ks.map((_, i) => `v${i}`),
      'absent',
    ]);
    // Each value is on its key's own replicas, as a single put would have left it.
    for (const k of ['k0', 'k17', 'k49'])
      for (const id of cluster.owners(k)) expect(await cluster.values(id, k)).toEqual([`v${k.slice(1)}`]);
    // Contexts work as a single put's: a put with one replaces the value.
    const ctx = got[3]!.ok ? got[3]!.value.context : EMPTY;
    await c.putMany([{ key: ks[3]!, value: B('new'), context: ctx }], { quorum: 3 });
    expect((await c.get(ks[3]!, { quorum: 3 })).values.map(String)).toEqual(['new']);
    expect(c.counters.puts).toBe(51);
  });

  it('a bad key, a repeated key and a bad value are refused on their own; the rest of the batch runs', async () => {
    cluster = await FakeCluster.create(3, { maxKeyBytes: 10, maxValueBytes: 8 });
    const c = cluster.coordinator('n1');
    const items = [
      { key: B('a'), value: B('1'), context: EMPTY },
      { key: EMPTY, value: B('2'), context: EMPTY },
      { key: B('x'.repeat(11)), value: B('3'), context: EMPTY },
      { key: B('a'), value: B('4'), context: EMPTY },
      { key: B('b'), value: B('123456789'), context: EMPTY },
      { key: B('c'), value: EMPTY, context: EMPTY },
      { key: B('d'), value: B('5'), context: EMPTY, requestId: Buffer.alloc(65) },
      { key: B('e'), value: B('6'), context: EMPTY },
    ];
    const out = await c.putMany(items);
    expect(out.map(codeOf)).toEqual([
      'OK',
      'KV_KEY_EMPTY',
      'KV_KEY_TOO_LARGE',
      'RK_BAD_ARGUMENT',
      'KV_VALUE_TOO_LARGE',
      'RK_BAD_ARGUMENT',
      'KV_BAD_REQUEST_ID',
      'OK',
    ]);
    const message = (i: number): string => (out[i] as { error: Error }).error.message;
    expect(message(1)).toMatch(/at least one byte/);
    expect(message(2)).toMatch(/11 bytes is over the limit of 10/);
    expect(message(3)).toMatch(/appears more than once in this batch.*this repeat did not/);
    expect(message(4)).toMatch(/value of 9 bytes is over the limit of 8/);
    expect(message(5)).toMatch(/value must have at least one byte/);
    expect(message(6)).toMatch(/request id must be 1 to 64 bytes, got 65 bytes/);
    // The first 'a' ran, its repeat did not; only the two good items were counted.
    expect((await c.get(B('a'), { quorum: 3 })).values.map(String)).toEqual(['1']);
    expect(c.counters.puts).toBe(2);
    const read = await c.getMany([B('a'), B('e'), B('a'), EMPTY]);
    expect(read.map(codeOf)).toEqual(['OK', 'OK', 'RK_BAD_ARGUMENT', 'KV_KEY_EMPTY']);
  });

  it('refuses a malformed batch whole: no keys, too many, too many bytes, a bad R or W', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster.coordinator('n1');
    await refused(c.getMany([]), 'RK_BAD_ARGUMENT', /at least one key/);
    await refused(c.getMany(keys(MAX_BATCH_KEYS + 1)), 'RK_BAD_ARGUMENT', /batch of 101 keys is over the limit of 100/);
    await refused(c.putMany([]), 'RK_BAD_ARGUMENT', /at least one item/);
    await refused(
      c.putMany(keys(MAX_BATCH_KEYS + 1).map((key) => ({ key, value: B('v'), context: EMPTY }))),
      'RK_BAD_ARGUMENT',
      /101 items is over the limit of 100/,
    );
    const big = Buffer.alloc(1 << 20, 1);
    await refused(
      c.putMany(keys(5).map((key) => ({ key, value: big, context: EMPTY }))),
      'RK_BAD_ARGUMENT',
      new RegExp(`${5 << 20} bytes, over the limit of ${MAX_BATCH_VALUE_BYTES}`),
    );
    await refused(c.getMany(keys(3), { quorum: 4 }), 'RK_BAD_ARGUMENT', /r must be 1 to N=3/);
    await refused(
      c.putMany([{ key: B('k'), value: B('v'), context: EMPTY }], { quorum: 4 }),
      'RK_BAD_ARGUMENT',
      /w must be 1 to N=3/,
    );
    expect(c.counters.gets + c.counters.puts).toBe(0);
    expect(cluster.net.calls).toEqual({
      apply: 0,
      merge: 0,
      read: 0,
      digest: 0,
      counterUpdate: 0,
      writeMany: 0,
      readRange: 0,
      paxosPrepare: 0,
      paxosPropose: 0,
      paxosCommit: 0,
    });
    // Exactly at the limits is fine.
    const full = await c.putMany(
      keys(4).map((key) => ({ key, value: big, context: EMPTY })),
      { quorum: 1 },
    );
    expect(full.every((o) => o.ok)).toBe(true);
  });

  it('a replica that cannot be reached fails the keys it is needed for, and only those', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster.coordinator('n1');
    const ks = keys(60);
    await c.putMany(
      ks.map((key) => ({ key, value: B('v'), context: EMPTY })),
      { quorum: 3 },
    );
    // n4 shares its zone with n1, so it holds some keys' replicas and not others'.
    cluster.net.faults.set('*>n4', { unreachable: true });
    const needsN4 = ks.map((k) => cluster!.owners(k.toString()).includes('n4'));
    expect(needsN4.some(Boolean) && !needsN4.every(Boolean)).toBe(true);
    const read = await c.getMany(ks, { quorum: 3 });
    expect(read.map(codeOf)).toEqual(needsN4.map((x) => (x ? 'RK_UNAVAILABLE' : 'OK')));
    const write = await c.putMany(
      ks.map((key) => ({ key, value: B('w'), context: EMPTY })),
      { quorum: 3 },
    );
    expect(write.map(codeOf)).toEqual(needsN4.map((x) => (x ? 'RK_UNAVAILABLE' : 'OK')));
    expect(c.counters.unavailable).toBe(2 * needsN4.filter(Boolean).length);
  });

  it('a slow replica times keys out, not the batch: at R=1 the others answer', async () => {
    cluster = await FakeCluster.create(3, { timeoutMs: 300 });
    const c = cluster.coordinator('n1');
    await c.putMany(
      keys(10).map((key) => ({ key, value: B('v'), context: EMPTY })),
      { quorum: 3 },
    );
    cluster.net.faults.set('*>n2', { delayMs: 2000 });
    cluster.net.faults.set('*>n3', { delayMs: 2000 });
    const fast = await cluster.coordinator('n2').getMany(keys(10), { quorum: 1 });
    expect(fast.map(codeOf)).toEqual(keys(10).map(() => 'OK'));
    const slow = await c.getMany(keys(10), { quorum: 2 });
    expect(slow.map(codeOf)).toEqual(keys(10).map(() => 'RK_TIMEOUT'));
    expect(c.counters.timeouts).toBe(10);
  });

  it('a batch takes one place per key while it runs, and is refused only when the node is full', async () => {
    cluster = await FakeCluster.create(3, { maxInFlight: 10 });
    const c = cluster.coordinator('n1');
    cluster.net.faults.set('*>n2', { delayMs: 100 });
    cluster.net.faults.set('*>n3', { delayMs: 100 });
    // 100 keys on a node that takes 10 requests: admitted, as one request would be.
    const running = c.getMany(keys(100), { quorum: 3 });
    expect(c.inFlight).toBe(100);
    // While it runs the node is over its limit: the next request, single or batch, is refused.
    await refused(c.get(B('x')), 'RK_OVERLOADED', /already coordinates 100 requests/);
    await refused(c.getMany(keys(1)), 'RK_OVERLOADED', /retry the batch/);
    expect((await running).every((o) => o.ok)).toBe(true);
    expect(c.inFlight).toBe(0);
    expect(c.counters.overloaded).toBe(2);
    expect(c.counters.gets).toBe(100);
    // A node that is not serving refuses the batch whole.
    cluster.notServing = 'joining';
    await refused(
      c.putMany([{ key: B('k'), value: B('v'), context: EMPTY }]),
      'RK_NOT_READY',
      /not serving requests \(joining\)/,
    );
  });
});
