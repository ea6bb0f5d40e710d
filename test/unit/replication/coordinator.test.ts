import { afterEach, describe, expect, it } from 'vitest';
import { ReplicationError } from '../../../src/replication/replication-errors.js';
import { leaveRing } from '../../../src/ring/index.js';
import { ReplicaFailure } from '../../../src/replication/replica-api.js';
import { toStatus } from '../../../src/transport/status.js';
import { FakeCluster, codeOf, eventually } from './fake-cluster.js';

const B = (s: string): Buffer => Buffer.from(s);
const EMPTY = Buffer.alloc(0);

let cluster: FakeCluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

async function rejectsWith(p: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e, 'expected a rejection').toBeInstanceOf(ReplicationError);
  expect((e as ReplicationError).code).toBe(code);
  expect((e as ReplicationError).message).toMatch(message);
}

describe('coordinator: quorum writes and reads', () => {
  it('a put at W=2 reaches all three replicas and a get at R=2 returns it, from any node', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    const key = 'user:1';
    const from = c.outsider(key); // not a replica: the version is issued on a primary
    await c.coordinator(from).put(B(key), B('v1'), EMPTY, { quorum: 2 });
    await eventually(async () =>
      (await Promise.all(c.owners(key).map((id) => c.values(id, key)))).every((v) => v.join() === 'v1'),
    );
    expect(await c.values(from, key)).toEqual([]); // nothing on a non-replica
    for (const id of ['n1', 'n2', 'n3', 'n4', 'n5']) {
      const got = await c.coordinator(id).get(B(key), { quorum: 2 });
      expect(got.found).toBe(true);
      expect(got.values.map(String)).toEqual(['v1']);
    }
  });

  it('a put on a replica issues the version there: no apply call crosses the network', async () => {
    cluster = await FakeCluster.create(3);
    await cluster.coordinator('n2').put(B('k'), B('v'), EMPTY);
    expect(cluster.net.calls.apply).toBe(0);
    expect(cluster.net.calls.merge).toBe(2);
  });

  it('concurrent blind writes become siblings; a write with the read context resolves them', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    await Promise.all([
      c.coordinator('n1').put(B('k'), B('a'), EMPTY, { quorum: 3 }),
      c.coordinator('n2').put(B('k'), B('b'), EMPTY, { quorum: 3 }),
    ]);
    const read = await c.coordinator('n3').get(B('k'), { quorum: 3 });
    expect(read.values.map(String).sort()).toEqual(['a', 'b']);
    await c.coordinator('n3').put(B('k'), B('c'), read.context, { quorum: 3 });
    expect((await c.coordinator('n1').get(B('k'), { quorum: 3 })).values.map(String)).toEqual(['c']);
  });

  it('a delete concurrent with a put keeps the put', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    await c.coordinator('n1').put(B('k'), B('old'), EMPTY, { quorum: 3 });
    const seen = await c.coordinator('n1').get(B('k'), { quorum: 3 });
    // Both start from the same read: the put does not see the delete, the delete does not see the put.
    await Promise.all([
      c.coordinator('n2').delete(B('k'), seen.context, { quorum: 3 }),
      c.coordinator('n3').put(B('k'), B('new'), EMPTY, { quorum: 3 }),
    ]);
    const after = await c.coordinator('n1').get(B('k'), { quorum: 3 });
    expect(after.found).toBe(true);
    expect(after.values.map(String)).toEqual(['new']);
  });

  it('a delete with the read context removes the key: found=false, and a later put with its context is the only value', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster.coordinator('n1');
    await c.put(B('k'), B('v'), EMPTY);
    await c.delete(B('k'), (await c.get(B('k'), { quorum: 3 })).context, { quorum: 3 });
    const gone = await c.get(B('k'), { quorum: 3 });
    expect(gone).toMatchObject({ found: false, values: [] });
    await c.put(B('k'), B('again'), gone.context, { quorum: 3 });
    expect((await c.get(B('k'), { quorum: 3 })).values.map(String)).toEqual(['again']);
  });
});

describe('coordinator: failures', () => {
  it("a coordinator whose disk refuses writes (KV_DISK_FULL) has the next primary issue them; the others' quorum acknowledges, and it refuses the merge without failing the write", async () => {
    const MiB = 1 << 20;
    cluster = await FakeCluster.create(3, {}, 3, (id) => ({
      disk: {
        path: '/data',
        label: id,
        floorBytes: 100 * MiB,
        statfs: async () => ({ free: id === 'n1' ? 10 * MiB : 900 * MiB, total: 1000 * MiB }),
      },
    }));
    const c = cluster;
    await c.store('n1').checkDisk();
    const keys = Array.from({ length: 20 }, (_, i) => B(`full-${i}`));
    for (const k of keys) await c.coordinator('n1').put(k, B('v'), EMPTY, { quorum: 2 });
    expect(c.coordinator('n1').counters.unavailable).toBe(0);
    for (const k of keys) {
      expect((await c.coordinator('n2').get(k, { quorum: 2 })).values.map(String)).toEqual(['v']);
      expect(await c.store('n1').getRecord(k)).toBeUndefined(); // nothing written on the full disk
    }
    // W=3 cannot be met with n1 refusing: the error names n1's disk.
    const e = await c
      .coordinator('n2')
      .put(B('all'), B('v'), EMPTY, { quorum: 3 })
      .then(
        () => undefined,
        (x: unknown) => x,
      );
    expect((e as Error).message).toMatch(/disk nearly full on n1: 10 MiB free of 1000 MiB/);
  });

  it('W=2 succeeds with one replica unreachable; the coordinator keeps a hint for it', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    cluster.net.faults.set('*>n3', { unreachable: true });
    await c.coordinator('n1').put(B('k'), B('v'), EMPTY, { quorum: 2 });
    await eventually(() => c.coordinator('n1').counters.hintsOnFailure === 1);
    expect(c.store('n1').hints.targets().get('n3')?.count).toBe(1);
    expect((await c.coordinator('n2').get(B('k'), { quorum: 2 })).values.map(String)).toEqual(['v']);
  });

  it('a replica down with no fallback gets a hint from the coordinator, unless it has been down past the hint window', async () => {
    cluster = await FakeCluster.create(3, { maxHintWindowMs: 60_000 });
    const c = cluster;
    c.down.add('n3');
    c.net.faults.set('*>n3', { unreachable: true });
    c.downFor.set('n3', 59_000);
    await c.coordinator('n1').put(B('a'), B('v'), EMPTY, { quorum: 2 });
    await eventually(() => c.coordinator('n1').counters.hintsOnFailure === 1);
    expect(c.store('n1').hints.targets().get('n3')?.count).toBe(1);
    // Past the window: no hint, counted, left to anti-entropy.
    c.downFor.set('n3', 61_000);
    await c.coordinator('n1').put(B('b'), B('v'), EMPTY, { quorum: 2 });
    await eventually(() => c.coordinator('n1').counters.missedPastHintWindow === 1);
    expect(c.coordinator('n1').counters.hintsOnFailure).toBe(1);
    expect(c.store('n1').hints.targets().get('n3')?.count).toBe(1);
  });

  it('a hint the coordinator cannot keep (its hint store is full) is counted as a miss', async () => {
    cluster = await FakeCluster.create(3, {}, 3, { hints: { maxCount: 1 } });
    const c = cluster;
    c.down.add('n3');
    c.net.faults.set('*>n3', { unreachable: true });
    const { record } = await c.store('n2').put('other', B('x'));
    await c.store('n1').hints.add('n2', 'other', record); // the one hint n1 may hold
    await c.coordinator('n1').put(B('a'), B('v'), EMPTY, { quorum: 2 });
    await eventually(() => c.coordinator('n1').counters.missedNoHint === 1);
    expect(c.store('n1').hints.targets().get('n3')).toBeUndefined();
    expect(c.coordinator('n1').counters.hintsOnFailure).toBe(0);
  });

  it('sloppy quorum: with two of three replicas down, W=2 succeeds through a fallback that keeps a hint, and R=2 reads it back', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    const key = 'cart:9';
    const [, b, d] = c.owners(key);
    c.down.add(b!).add(d!);
    for (const id of [b!, d!]) c.net.faults.set(`*>${id}`, { unreachable: true });
    const coord = c.outsider(key);
    await c.coordinator(coord).put(B(key), B('v'), EMPTY, { quorum: 2 });
    const hinted = [...c.stores.entries()].filter(([, s]) => s.hints.stats().count > 0).map(([id]) => id);
    expect(hinted.length).toBeGreaterThanOrEqual(1);
    expect(hinted).not.toContain(b);
    expect(c.coordinator(coord).counters.sloppyWrites).toBe(2);
    const got = await c.coordinator(coord).get(B(key), { quorum: 2 });
    expect(got.values.map(String)).toEqual(['v']);
  });

  it("a read at R=1 coordinated by a primary's stand-in is not settled by the stand-in's own not-found while a live primary can answer", async () => {
    cluster = await FakeCluster.create(4); // three replicas of each key, and one stand-in
    const c = cluster;
    const key = 'item:3';
    await c.coordinator('n1').put(B(key), B('v'), EMPTY, { quorum: 3 });
    const [a, b, d] = c.owners(key);
    const standIn = c.outsider(key);
    c.down.add(b!);
    c.net.faults.set(`*>${b}`, { unreachable: true });
    // The live primaries answer after the stand-in's own (local) read: without the rule, its empty reply would be the one R=1 takes.
    for (const p of [a!, d!]) c.net.faults.set(`*>${p}`, { delayMs: 15 });
    for (let i = 0; i < 10; i++)
      expect((await c.coordinator(standIn).get(B(key), { quorum: 1 })).values.map(String)).toEqual(['v']);
    expect(c.coordinator(standIn).counters.readsAwaitingPrimary).toBe(10);
    // A key no write reached is still not found, once a primary says so.
    expect((await c.coordinator(standIn).get(B('never-written'), { quorum: 1 })).found).toBe(false);
    // With every primary down, the stand-in's reply is all there is: it answers (the hint it holds, or not found).
    c.down.add(a!).add(d!);
    for (const p of [a!, d!]) c.net.faults.set(`*>${p}`, { unreachable: true });
    expect((await c.coordinator(standIn).get(B(key), { quorum: 1 })).found).toBe(false);
  });

  it('reads during an outage leave no hints on fallbacks: only writes make hints', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    const key = 'user:7';
    await c.coordinator('n1').put(B(key), B('v'), EMPTY, { quorum: 3 });
    const [, down] = c.owners(key);
    c.down.add(down!);
    c.net.faults.set(`*>${down}`, { unreachable: true });
    for (let i = 0; i < 5; i++)
      expect((await c.coordinator('n1').get(B(key), { quorum: 2 })).values.map(String)).toEqual(['v']);
    await new Promise((r) => setTimeout(r, 20)); // let read repair run
    expect([...c.stores.values()].map((s) => s.hints.stats().count)).toEqual([0, 0, 0, 0, 0]);
    expect(c.coordinator('n1').counters.readRepairs).toBe(0);
  });

  it('fewer live replicas than W: UNAVAILABLE naming how many were needed and are up', async () => {
    cluster = await FakeCluster.create(3);
    cluster.down.add('n2').add('n3');
    await rejectsWith(
      cluster.coordinator('n1').put(B('k'), B('v'), EMPTY, { quorum: 2 }),
      'RK_UNAVAILABLE',
      /needs W=2 of N=3 replicas, but only 1 is up \(down: n[23], n[23]/,
    );
    await rejectsWith(cluster.coordinator('n1').get(B('k'), { quorum: 3 }), 'RK_UNAVAILABLE', /needs R=3 of N=3/);
    expect(cluster.coordinator('n1').counters.unavailable).toBe(2);
  });

  it('replicas that are "up" but fail: UNAVAILABLE with who failed and that the write may have applied', async () => {
    cluster = await FakeCluster.create(3);
    cluster.net.faults.set('*>n2', { unreachable: true }).set('*>n3', { unreachable: true });
    await rejectsWith(
      cluster.coordinator('n1').put(B('k'), B('v'), EMPTY, { quorum: 2 }),
      'RK_UNAVAILABLE',
      /got 1 of W=2 replies \(n[23]: .*applied on 1 replica/,
    );
  });

  it('quorum not reached before the deadline: DEADLINE_EXCEEDED that says the write may have applied', async () => {
    cluster = await FakeCluster.create(3, { timeoutMs: 100 });
    cluster.net.faults.set('*>n2', { delayMs: 400 }).set('*>n3', { delayMs: 400 });
    await rejectsWith(
      cluster.coordinator('n1').put(B('k'), B('v'), EMPTY, { quorum: 3 }),
      'RK_TIMEOUT',
      /before the deadline.*may have been applied/,
    );
    await rejectsWith(cluster.coordinator('n1').get(B('k'), { quorum: 2 }), 'RK_TIMEOUT', /reached 1 of the 2/);
    expect(cluster.coordinator('n1').counters.timeouts).toBe(2);
  });

  it("the client's deadline wins when it is shorter than the node's timeout", async () => {
    cluster = await FakeCluster.create(3, { timeoutMs: 10_000 });
    cluster.net.faults.set('*>n2', { delayMs: 1000 }).set('*>n3', { delayMs: 1000 });
    const t0 = Date.now();
    await rejectsWith(
      cluster.coordinator('n1').get(B('k'), { quorum: 2, deadline: Date.now() + 80 }),
      'RK_TIMEOUT',
      /deadline/,
    );
    expect(Date.now() - t0).toBeLessThan(800);
  });

  it('a node that is not serving refuses with RK_NOT_READY', async () => {
    cluster = await FakeCluster.create(3);
    cluster.notServing = 'it is shutting down';
    await rejectsWith(
      cluster.coordinator('n1').get(B('k')),
      'RK_NOT_READY',
      /not serving requests \(it is shutting down\); send the request to another node/,
    );
  });

  it('requests it refuses (not serving, overloaded) are not counted as puts, gets or deletes it served', async () => {
    cluster = await FakeCluster.create(3, { maxInFlight: 1 });
    const c = cluster.coordinator('n1');
    cluster.notServing = 'it is joining, not yet a member';
    await rejectsWith(c.put(B('k'), B('v'), EMPTY), 'RK_NOT_READY', /not serving/);
    await rejectsWith(c.get(B('k')), 'RK_NOT_READY', /not serving/);
    await rejectsWith(c.delete(B('k'), EMPTY), 'RK_NOT_READY', /not serving/);
    expect(c.counters).toMatchObject({ puts: 0, gets: 0, deletes: 0 });
    cluster.notServing = undefined;
    cluster.net.faults.set('*>n2', { delayMs: 100 }).set('*>n3', { delayMs: 100 });
    const slow = c.put(B('a'), B('1'), EMPTY);
    await rejectsWith(c.get(B('b')), 'RK_OVERLOADED', /already coordinates 1 requests/);
    await slow;
    expect(c.counters).toMatchObject({ puts: 1, gets: 0, deletes: 0, overloaded: 1 });
  });

  it('more requests in flight than the bound: RK_OVERLOADED, and the bound frees up after', async () => {
    cluster = await FakeCluster.create(3, { maxInFlight: 2 });
    cluster.net.faults.set('*>n2', { delayMs: 100 }).set('*>n3', { delayMs: 100 });
    const c = cluster.coordinator('n1');
    const slow = [c.put(B('a'), B('1'), EMPTY), c.put(B('b'), B('1'), EMPTY)];
    await rejectsWith(c.get(B('c')), 'RK_OVERLOADED', /already coordinates 2 requests/);
    await Promise.all(slow);
    cluster.net.faults.clear();
    await expect(c.get(B('a'))).resolves.toMatchObject({ found: true });
  });
});

describe('coordinator: bad input', () => {
  it.each([
    ['an empty value', () => cluster!.coordinator('n1').put(B('k'), EMPTY, EMPTY), /value must have at least one byte/],
    [
      'w = 4 with N = 3',
      () => cluster!.coordinator('n1').put(B('k'), B('v'), EMPTY, { quorum: 4 }),
      /w must be 1 to N=3/,
    ],
    ['r = 1.5', () => cluster!.coordinator('n1').get(B('k'), { quorum: 1.5 }), /r must be 1 to N=3/],
  ])('%s: RK_BAD_ARGUMENT, nothing written', async (_, call, message) => {
    cluster = await FakeCluster.create(3);
    await rejectsWith(call(), 'RK_BAD_ARGUMENT', message);
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
  });

  it.each([
    [
      'an empty key',
      () => cluster!.coordinator('n1').put(EMPTY, B('v'), EMPTY),
      'KV_KEY_EMPTY',
      /key must have at least one byte/,
    ],
    [
      'a key over 4 KiB',
      () => cluster!.coordinator('n1').get(Buffer.alloc(4097, 1)),
      'KV_KEY_TOO_LARGE',
      /key of 4097 bytes is over the limit of 4096 bytes; use a shorter key/,
    ],
    [
      'a request id over 64 bytes',
      () => cluster!.coordinator('n1').put(B('k'), B('v'), EMPTY, { requestId: Buffer.alloc(65) }),
      'KV_BAD_REQUEST_ID',
      /request id must be 1 to 64 bytes, got 65 bytes/,
    ],
  ])("%s: the store's check, before any replica call", async (_, call, code, message) => {
    cluster = await FakeCluster.create(3);
    await expect(call()).rejects.toMatchObject({ code, message: expect.stringMatching(message) });
    expect(Object.values(cluster.net.calls).every((n) => n === 0)).toBe(true);
  });

  it("a value over 1 MiB: the store's KV_VALUE_TOO_LARGE, with its limit, before any replica call", async () => {
    cluster = await FakeCluster.create(3);
    await expect(cluster.coordinator('n1').put(B('k'), Buffer.alloc((1 << 20) + 1), EMPTY)).rejects.toMatchObject({
      code: 'KV_VALUE_TOO_LARGE',
      message: 'value of 1048577 bytes is over the limit of 1048576 bytes; split it into several keys',
    });
    expect(Object.values(cluster.net.calls).every((n) => n === 0)).toBe(true);
  });

  it('a context from another key: the replica refuses it, passed through as INVALID_ARGUMENT, nothing written', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    const ctx = (await c.coordinator('n1').get(B('a'))).context;
    const e = (await c
      .coordinator(c.outsider('b'))
      .put(B('b'), B('v'), ctx)
      .catch((x: unknown) => x)) as ReplicaFailure;
    expect(e).toMatchObject({
      kind: 'refused',
      code: 'KV_BAD_CONTEXT',
      message: expect.stringMatching(/context was read from a different key/),
    });
    expect(toStatus(e)).toMatchObject({
      code: 3,
      details: expect.stringMatching(/context was read from a different key/),
    });
    expect((await c.coordinator('n1').get(B('b'), { quorum: 3 })).found).toBe(false);
  });
});

describe('coordinator: read repair', () => {
  it('a replica whose copy is corrupt on disk is sent the join of the others, and serves the key again', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    const key = B('damaged');
    await c.coordinator('n1').put(key, B('v'), EMPTY, { quorum: 3 });
    await c.damage('n3', key);
    expect(await codeOf(c.store('n3').get(key))).toBe('KV_CORRUPT_RECORD');
    // R=2 answers from the good replicas; every primary was asked, and n3's error brings it the join.
    expect((await c.coordinator('n1').get(key, { quorum: 2 })).values.map(String)).toEqual(['v']);
    await eventually(
      async () =>
        (
          await c
            .store('n3')
            .get(key)
            .then(
              (r) => r.values.map(String),
              () => [],
            )
        ).join() === 'v',
    );
    expect((await c.coordinator('n3').get(key, { quorum: 3 })).values.map(String)).toEqual(['v']);
  });

  it('a replica that missed a write is sent the merged versions by a read; counted', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    await c.store('n1').put('k', B('only-on-n1')); // as if n2 and n3 missed it
    const got = await c.coordinator('n2').get(B('k'), { quorum: 2 });
    // R=2 may have been met by n2 and n3 (both empty); the late reply from n1 still repairs.
    expect(got.values.length).toBeLessThanOrEqual(1);
    await eventually(
      async () =>
        (await c.values('n2', 'k')).join() === 'only-on-n1' && (await c.values('n3', 'k')).join() === 'only-on-n1',
    );
    expect(c.coordinator('n2').counters.readRepairs).toBe(2);
    // Repaired: the next read needs no repair.
    await c.coordinator('n2').get(B('k'), { quorum: 3 });
    await new Promise((r) => setTimeout(r, 20));
    expect(c.coordinator('n2').counters.readRepairs).toBe(2);
  });

  it('siblings split over replicas are merged into one answer and repaired everywhere', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    await c.store('n1').put('k', B('x'));
    await c.store('n2').put('k', B('y'));
    const got = await c.coordinator('n3').get(B('k'), { quorum: 3 });
    expect(got.values.map(String).sort()).toEqual(['x', 'y']);
    await eventually(async () =>
      (await Promise.all(['n1', 'n2', 'n3'].map((id) => c.values(id, 'k')))).every((v) => v.join() === 'x,y'),
    );
  });
});

describe('coordinator: digest reads', () => {
  const resetCalls = (c: FakeCluster): void =>
    void Object.assign(c.net.calls, {
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

  it('a get reads R replicas in full and asks the others for a digest; --read-mode full reads them all', async () => {
    for (const fullReads of [false, true]) {
      cluster = await FakeCluster.create(5, { fullReads });
      const c = cluster;
      const from = c.coordinator(c.outsider('k'));
      await from.put(B('k'), B('v'), EMPTY, { quorum: 3 });
      resetCalls(c);
      expect((await from.get(B('k'), { quorum: 2 })).values.map(String)).toEqual(['v']);
      await eventually(() => c.net.calls.read + c.net.calls.digest === 3);
      expect(c.net.calls).toMatchObject(fullReads ? { read: 3, digest: 0 } : { read: 2, digest: 1 });
      expect(from.counters.digestMismatches).toBe(0);
      await c.close();
    }
  });

  it('a digest that differs is read in full: its versions reach the answer and every stale replica', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    const [o1, o2, o3] = c.owners('k') as [string, string, string];
    // Only the replica asked for a digest (the last in preference order) holds the key, and
    // its digest is among the first R=2 replies (o2 is slow).
    await c.store(o3).put('k', B('only-on-o3'));
    c.net.faults.set(`*>${o2}`, { delayMs: 50 });
    const from = c.coordinator(c.outsider('k'));
    expect((await from.get(B('k'), { quorum: 2 })).values.map(String)).toEqual(['only-on-o3']);
    expect(from.counters.digestMismatches).toBeGreaterThan(0);
    await eventually(
      async () =>
        (await c.values(o1, 'k')).join() === 'only-on-o3' && (await c.values(o2, 'k')).join() === 'only-on-o3',
    );
  });

  it('read repair reaches a stale replica that was only asked for a digest', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    const [o1, o2, o3] = c.owners('k') as [string, string, string];
    await c.store(o1).put('k', B('x'));
    await c.store(o2).merge('k', (await c.store(o1).getRecord(B('k')))!);
    const from = c.coordinator(c.outsider('k'));
    expect((await from.get(B('k'), { quorum: 2 })).values.map(String)).toEqual(['x']);
    await eventually(async () => (await c.values(o3, 'k')).join() === 'x');
    expect(from.counters.readRepairs).toBe(1);
  });

  it('a replica read in full that fails is made up for by a matching digest', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    const from = c.coordinator(c.outsider('k'));
    await from.put(B('k'), B('v'), EMPTY, { quorum: 3 });
    c.net.faults.set(`*>${c.owners('k')[0]}`, { unreachable: true });
    expect((await from.get(B('k'), { quorum: 2 })).values.map(String)).toEqual(['v']);
  });
});

describe('coordinator: writes while the ring changes (pending ranges)', () => {
  it('a write to a moving range also reaches its future replica, and needs W of the current replicas and W of the future ones', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    c.target = c.ring.withoutMember('n5'); // n5 leaves: its ranges have heirs
    const key = Array.from({ length: 200 }, (_, i) => `k${i}`).find((k) => c.owners(k).includes('n5'))!;
    const after = c.target.preferenceList(key, 3);
    const gainer = after.find((x) => !c.owners(key).includes(x))!;
    await c.coordinator('n1').put(B(key), B('v1'), EMPTY, { quorum: 2 });
    await eventually(async () => (await c.values(gainer, key)).join() === 'v1');
    expect(c.coordinator('n1').counters.pendingWrites).toBe(1);
    // The gainer and one replica that stays cannot be reached: W=2 of the future set is out of reach,
    // though W=2 of the current set (n5 and the other one that stays) is not.
    const stayers = after.filter((x) => x !== gainer);
    c.net.faults.set(`*>${gainer}`, { unreachable: true });
    c.net.faults.set(`*>${stayers[0]}`, { unreachable: true });
    await rejectsWith(
      c.coordinator('n5').put(B(key), B('v2'), EMPTY, { quorum: 2 }),
      'RK_UNAVAILABLE',
      new RegExp(`range is moving to ${gainer}: a write needs W of its current replicas and W of its future ones`),
    );
  });

  it('a node that is leaving stands in for no down replica: its hints would leave with it', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    // A key n5 does not replicate, whose first fallback for a down primary would be n5.
    const key = Array.from({ length: 500 }, (_, i) => `f${i}`).find(
      (k) => !c.owners(k).includes('n5') && c.ring.targets(k, 3, (x) => x !== c.owners(k)[0])[0]?.id === 'n5',
    )!;
    expect(key).toBeDefined();
    c.down.add(c.owners(key)[0]!);
    c.target = leaveRing(c.ring, 'n5', 3);
    const from = c.owners(key)[1]!;
    await c.coordinator(from).put(B(key), B('v'), EMPTY, { quorum: 2 });
    const hinted = () => [...c.stores.entries()].filter(([, st]) => st.hints.stats().count > 0).map(([id]) => id);
    await eventually(() => hinted().length > 0);
    expect(hinted()).not.toContain('n5');
  });

  it('a key whose replicas do not change is written as usual; reads use the current replicas only', async () => {
    cluster = await FakeCluster.create(5);
    const c = cluster;
    c.target = c.ring.withoutMember('n5');
    const key = Array.from({ length: 200 }, (_, i) => `k${i}`).find((k) => !c.owners(k).includes('n5'))!;
    await c.coordinator('n2').put(B(key), B('v'), EMPTY, { quorum: 3 });
    expect(c.coordinator('n2').counters.pendingWrites).toBe(0);
    const moving = Array.from({ length: 200 }, (_, i) => `m${i}`).find((k) => c.owners(k).includes('n5'))!;
    await c.coordinator('n2').put(B(moving), B('v'), EMPTY, { quorum: 3 });
    const reads = c.net.calls.read;
    await c.coordinator('n1').get(B(moving), { quorum: 3 });
    expect(c.net.calls.read - reads).toBeLessThanOrEqual(3); // the three current replicas, never the gainer
  });
});

describe('coordinator: a slow replica does not cost the deadline', () => {
  it('a write whose replicas are slow to answer goes to fallbacks with hints once they are past their p99, and W is met', async () => {
    cluster = await FakeCluster.create(5, { timeoutMs: 3000 });
    const c = cluster;
    const key = 'slow:1';
    const [a, b, d] = c.owners(key);
    c.net.faults.set(`*>${b}`, { delayMs: 1500 }).set(`*>${d}`, { delayMs: 1500 });
    const t0 = Date.now();
    await c.coordinator(a!).put(B(key), B('v'), EMPTY, { quorum: 2 });
    expect(Date.now() - t0).toBeLessThan(600); // not the 1.5 s the slow replicas take
    expect(c.coordinator(a!).counters.speculativeWrites).toBeGreaterThanOrEqual(1);
    const hinted = [...c.stores.entries()].filter(([, s]) => s.hints.stats().count > 0).map(([id]) => id);
    expect(hinted.some((id) => id !== a && id !== b && id !== d)).toBe(true); // a fallback holds the hint
  });

  it('without the fallbacks (only three nodes) the same write waits for the slow replicas', async () => {
    cluster = await FakeCluster.create(3, { timeoutMs: 3000 });
    const c = cluster;
    c.net.faults.set('*>n2', { delayMs: 600 }).set('*>n3', { delayMs: 600 });
    const t0 = Date.now();
    await c.coordinator('n1').put(B('k'), B('v'), EMPTY, { quorum: 2 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(550);
    expect(c.coordinator('n1').counters.speculativeWrites).toBe(0);
  });

  it('a coordinator that is not a replica issues the version on the next primary when the first is slow; with a request id it stays one write', async () => {
    cluster = await FakeCluster.create(5, { timeoutMs: 3000 });
    const c = cluster;
    const key = 'slow:2';
    const owners = c.owners(key);
    const from = c.outsider(key);
    // The first primary in the preference list is slow: the coordinator tries it first.
    c.net.faults.set(`*>${owners[0]}`, { delayMs: 800 });
    const t0 = Date.now();
    await c.coordinator(from).put(B(key), B('v'), EMPTY, { quorum: 2, requestId: B('req-1') });
    expect(Date.now() - t0).toBeLessThan(700);
    expect(c.coordinator(from).counters.speculativeApplies).toBe(1);
    // The slow primary applies it too, later: the same write, shown once.
    await new Promise((r) => setTimeout(r, 900));
    c.net.faults.clear();
    for (const id of owners) {
      const rec = await c.store(id).getRecord(key);
      if (rec) for (const o of owners) await c.store(o).merge(key, rec);
    }
    const got = await c.coordinator(from).get(B(key), { quorum: 3 });
    expect(got.values.map(String)).toEqual(['v']);
  });
});

describe('coordinator: reads ask the fastest replicas for data', () => {
  it('a replica that answers slowly is asked only for a digest, a fast one for the record', async () => {
    cluster = await FakeCluster.create(5, { timeoutMs: 3000 });
    const c = cluster;
    const key = 'fast:1';
    const [a, b, d] = c.owners(key);
    await c.coordinator(a!).put(B(key), B('v'), EMPTY, { quorum: 3 });
    c.net.faults.set(`*>${b}`, { delayMs: 40 });
    for (let i = 0; i < 5; i++) await c.coordinator(a!).get(B(key), { quorum: 3 }); // it learns who is slow
    await new Promise((r) => setTimeout(r, 100));
    const before = { b: { ...c.net.callsTo.get(b!)! }, d: { ...c.net.callsTo.get(d!)! } };
    for (let i = 0; i < 10; i++)
      expect((await c.coordinator(a!).get(B(key), { quorum: 2 })).values.map(String)).toEqual(['v']);
    await new Promise((r) => setTimeout(r, 100));
    const to = (id: string, was: { read: number; digest: number }) => ({
      read: c.net.callsTo.get(id)!.read - was.read,
      digest: c.net.callsTo.get(id)!.digest - was.digest,
    });
    expect(to(b!, before.b)).toEqual({ read: 0, digest: 10 });
    expect(to(d!, before.d)).toEqual({ read: 10, digest: 0 });
  });
});

describe('coordinator: replicas that stop answering mid-request', () => {
  it('a request whose pending replicas all turn down or silent gives up with UNAVAILABLE (retry elsewhere), not at its deadline', async () => {
    cluster = await FakeCluster.create(3, { timeoutMs: 8000 });
    const c = cluster;
    await c.coordinator('n1').put(B('k'), B('v'), EMPTY, { quorum: 3 });
    c.net.faults.set('*>n2', { delayMs: 7000 }).set('*>n3', { delayMs: 7000 });
    const t0 = Date.now();
    const read = c.coordinator('n1').get(B('k'), { quorum: 2 });
    const write = c.coordinator('n1').put(B('k2'), B('v'), EMPTY, { quorum: 2 });
    await new Promise((r) => setTimeout(r, 200));
    c.down.add('n2').add('n3'); // as reachability does once a peer is silent for 1 s
    await rejectsWith(
      read,
      'RK_UNAVAILABLE',
      /got 1 of R=2 replies: n[23], n[23] stopped answering this node\. Retry on another node/,
    );
    await rejectsWith(write, 'RK_UNAVAILABLE', /got 1 of W=2 replies: .*stopped answering.*applied on 1 replica/);
    expect(Date.now() - t0).toBeLessThan(4000); // not the 8 s deadline
    expect(toStatus(new ReplicationError('RK_UNAVAILABLE', 'x')).code).toBe(14);
  });

  it('a coordinator that is not a replica gives up issuing the version once every primary it asked went silent', async () => {
    cluster = await FakeCluster.create(5, { timeoutMs: 8000 });
    const c = cluster;
    const key = 'gone:1';
    const owners = c.owners(key);
    for (const id of owners) c.net.faults.set(`*>${id}`, { delayMs: 7000 });
    const t0 = Date.now();
    const write = c.coordinator(c.outsider(key)).put(B(key), B('v'), EMPTY, { quorum: 2, requestId: B('r') });
    await new Promise((r) => setTimeout(r, 200));
    for (const id of owners) c.down.add(id);
    await rejectsWith(
      write,
      'RK_UNAVAILABLE',
      /stopped answering this node before issuing the new version, which may still be applied\. Retry on another node/,
    );
    expect(Date.now() - t0).toBeLessThan(4000); // not the 8 s deadline
  });

  it('keeps waiting while a pending replica is still up: it may answer', async () => {
    cluster = await FakeCluster.create(3, { timeoutMs: 8000 });
    const c = cluster;
    c.net.faults.set('*>n2', { delayMs: 1600 }).set('*>n3', { delayMs: 7000 });
    c.down.add('n3');
    const t0 = Date.now();
    await c.coordinator('n1').put(B('k'), B('v'), EMPTY, { quorum: 2 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1500);
  });
});
