/**
 * A write's confirmations on the in-memory replica network: node_confirms (distinct
 * nodes, fallbacks included), zone_confirms (distinct zones) and pw (primaries, not
 * fallbacks), each met, each refused at once when the up targets cannot meet it, each
 * failing when the acknowledgements fall short, and their bad values.
 *
 * FakeCluster's nodes are in zones z0, z1, z2 in turn (n1 z0, n2 z1, n3 z2, n4 z0, n5 z1),
 * and a key's three primaries in three zones.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ReplicationError } from '../../../src/replication/replication-errors.js';
import { defaultProps } from '../../../src/buckets/index.js';
import { toStatus } from '../../../src/transport/status.js';
import * as grpc from '@grpc/grpc-js';
import { FakeCluster, eventually } from './fake-cluster.js';

const B = (s: string): Buffer => Buffer.from(s);
const EMPTY = Buffer.alloc(0);

const clusters: FakeCluster[] = [];
afterEach(async () => {
  await Promise.all(clusters.splice(0).map((c) => c.close()));
});

/** FakeCluster.create, closed after the test. */
async function create(...args: Parameters<typeof FakeCluster.create>): Promise<FakeCluster> {
  const c = await FakeCluster.create(...args);
  clusters.push(c);
  return c;
}

async function failure(p: Promise<unknown>): Promise<ReplicationError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e, 'expected a rejection').toBeInstanceOf(ReplicationError);
  return e as ReplicationError;
}

/** Take `ids` down: every coordinator's detector sees it, and calls to it fail. */
function takeDown(c: FakeCluster, ...ids: string[]): void {
  for (const id of ids) {
    c.down.add(id);
    c.net.faults.set(`*>${id}`, { unreachable: true });
  }
}

describe('confirmations: the Riak case (5 nodes, N=3, two primaries of a key down)', () => {
  it('pw=2 fails at once with UNAVAILABLE naming the rule; w=2 node_confirms=2 succeeds on a primary and a fallback, and reads back', async () => {
    const c = await create(5);
    const key = 'riak';
    const [primary, ...gone] = c.owners(key);
    takeDown(c, ...gone);
    const from = c.coordinator(primary!);
    const calls = { ...c.net.calls };
    const e = await failure(from.put(B(key), B('v'), EMPTY, { quorum: 2, pw: 2 }));
    expect(e.code).toBe('RK_UNAVAILABLE');
    expect(toStatus(e).code).toBe(grpc.status.UNAVAILABLE);
    expect(e.message).toMatch(/cannot meet pw=2 \(only 1 primary up\)/);
    expect(e.message).toContain(`primaries down: ${gone.join(', ')}`);
    expect(e.message).toMatch(/fallbacks \(not primaries, so not counted by pw\): n\d for n\d, n\d for n\d/);
    expect(e.message).toMatch(/node_confirms counts distinct nodes, fallbacks included/);
    // Refused before anything was written.
    expect(c.net.calls).toEqual(calls);
    expect(await c.values(primary!, key)).toEqual([]);
    // The delete is held to the same rule.
    expect((await failure(from.delete(B(key), EMPTY, { quorum: 2, pw: 2 }))).code).toBe('RK_UNAVAILABLE');

    await from.put(B(key), B('v'), EMPTY, { quorum: 2, nodeConfirms: 2 });
    expect((await from.get(B(key), { quorum: 2 })).values.map(String)).toEqual(['v']);
    // Three distinct nodes are up among the targets: node_confirms=3 is met too.
    await from.put(B(key), B('w'), (await from.get(B(key), { quorum: 2 })).context, { quorum: 2, nodeConfirms: 3 });
    expect((await from.get(B(key), { quorum: 2 })).values.map(String)).toEqual(['w']);
  });

  it('with a third node of the key down, node_confirms=3 fails at once, naming what is up', async () => {
    const c = await create(5);
    const key = 'riak';
    const [primary, ...gone] = c.owners(key);
    takeDown(c, ...gone);
    const fallback = c.ring.targets(key, 3, (id) => !c.down.has(id)).find((t) => t.for !== undefined)!.id;
    takeDown(c, fallback);
    const e = await failure(c.coordinator(primary!).put(B(key), B('v'), EMPTY, { quorum: 1, nodeConfirms: 3 }));
    expect(e.code).toBe('RK_UNAVAILABLE');
    expect(e.message).toMatch(/cannot meet node_confirms=3 \(only 2 distinct nodes up\)/);
    expect(e.message).toContain(`Up: ${primary} (`);
  });
});

describe('confirmations: each rule waits for what it counts', () => {
  it('w=1 with pw=3 or node_confirms=3 answers only once all three replicas hold the write, with zone_confirms=2 once two zones do', async () => {
    const c = await create(3);
    // The two other replicas answer 50 ms late: w=1 alone would answer before them.
    c.net.faults.set('*>n2', { delayMs: 50 });
    c.net.faults.set('*>n3', { delayMs: 50 });
    await c.coordinator('n1').put(B('a'), B('v'), EMPTY, { quorum: 1, pw: 3 });
    for (const id of ['n1', 'n2', 'n3']) expect(await c.values(id, 'a')).toEqual(['v']);
    await c.coordinator('n1').put(B('b'), B('v'), EMPTY, { quorum: 1, nodeConfirms: 3 });
    for (const id of ['n1', 'n2', 'n3']) expect(await c.values(id, 'b')).toEqual(['v']);
    // zone_confirms=2: a replica in another zone than the issuer's (n2 answers first).
    c.net.faults.set('*>n3', { delayMs: 500 });
    await c.coordinator('n1').put(B('z'), B('v'), EMPTY, { quorum: 1, zoneConfirms: 2 });
    expect(await c.values('n2', 'z')).toEqual(['v']);
    expect(await c.values('n3', 'z')).toEqual([]);
    // Without a rule, w=1 answers with the write on the coordinator only.
    await c.coordinator('n1').put(B('c'), B('v'), EMPTY, { quorum: 1 });
    expect(await c.values('n2', 'c')).toEqual([]);
  });

  it('the replica that issued the version counts once: w=1 node_confirms=2 fails when no other replica can take the write', async () => {
    const c = await create(3);
    // Up to the detector, but unreachable: the rule becomes impossible once both calls failed.
    c.net.faults.set('*>n2', { unreachable: true });
    c.net.faults.set('*>n3', { unreachable: true });
    const e = await failure(c.coordinator('n1').put(B('k'), B('v'), EMPTY, { quorum: 1, nodeConfirms: 2 }));
    expect(e.code).toBe('RK_UNAVAILABLE');
    expect(e.message).toMatch(
      /got 1 of W=1 replies, and not node_confirms=2 \(only 1 distinct node acknowledged\) \(n\d: no connection to n\d; n\d: no connection to n\d\)/,
    );
    expect(e.message).toMatch(/applied on 1 replica/);
    // The replicas that missed it get hints, as for any failed write.
    await eventually(() => c.coordinator('n1').counters.hintsOnFailure === 2);
  });

  it('a slow replica is stood in for by a speculative fallback: it counts toward node_confirms, not toward pw (which times out naming pw)', async () => {
    const c = await create(5, { timeoutMs: 1500 });
    const key = 'slow';
    const [a, b, slow] = c.owners(key);
    c.net.faults.set(`*>${slow}`, { delayMs: 5000 });
    await c.coordinator(a!).put(B(key), B('v'), EMPTY, { quorum: 1, nodeConfirms: 3 });
    expect(c.coordinator(a!).counters.speculativeWrites).toBe(1);
    expect(await c.values(b!, key)).toEqual(['v']);
    const e = await failure(
      c.coordinator(a!).put(B(key), B('w'), EMPTY, { quorum: 1, pw: 3, deadline: Date.now() + 600 }),
    );
    expect(e.code).toBe('RK_TIMEOUT');
    expect(toStatus(e).code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(e.message).toMatch(
      /reached \d of the 1 replicas it needs, and not pw=3 \(only 2 primaries acknowledged\), before the deadline/,
    );
    expect(c.coordinator(a!).counters.speculativeWrites).toBe(2);
  });

  it('a write to a moving range counts each node once, whichever set it is in', async () => {
    const c = await create(5);
    c.target = c.ring.withoutMember('n5'); // n5 leaves: its ranges have heirs
    const key = Array.from({ length: 200 }, (_, i) => `k${i}`).find((k) => c.owners(k).includes('n5'))!;
    const gainer = c.target.preferenceList(key, 3).find((x) => !c.owners(key).includes(x))!;
    // Four distinct nodes take the write: the three current replicas and the gainer.
    await c.coordinator('n1').put(B(key), B('v'), EMPTY, { quorum: 3, nodeConfirms: 3 });
    await eventually(async () => (await c.values(gainer, key)).join() === 'v');
    // The gainer is no primary yet: pw counts the current replicas. With one of them
    // unreachable, the leaver, the other one and the gainer take the write: pw=2, not pw=3.
    const stay = c.owners(key).find((x) => x !== 'n5')!;
    c.net.faults.set(`*>${stay}`, { unreachable: true });
    await c.coordinator('n5').put(B(key), B('w'), EMPTY, { quorum: 1, pw: 2 });
    const e = await failure(c.coordinator('n5').put(B(key), B('x'), EMPTY, { quorum: 1, pw: 3 }));
    expect(e.code).toBe('RK_UNAVAILABLE');
    expect(e.message).toMatch(/not pw=3 \(only [12] primar(y|ies) acknowledged\)/);
  });
});

describe('confirmations: zones', () => {
  it('zone_confirms=2 succeeds with one zone down, and fails at once when the up targets are all in one zone', async () => {
    const c = await create(5);
    const key = 'zoned';
    takeDown(c, 'n3'); // z2
    const from = c.coordinator(c.owners(key).find((id) => id !== 'n3')!);
    await from.put(B(key), B('v'), EMPTY, { zoneConfirms: 2 });
    takeDown(c, 'n2', 'n5'); // z1: only z0 (n1, n4) is left
    const e = await failure(c.coordinator('n1').put(B(key), B('w'), EMPTY, { zoneConfirms: 2 }));
    expect(e.code).toBe('RK_UNAVAILABLE');
    expect(e.message).toMatch(/cannot meet zone_confirms=2 \(only 1 zone up\)/);
    expect(e.message).toMatch(/Up: n\d \(z0(, for n\d)?\), n\d \(z0(, for n\d)?\)/);
    // zone_confirms=1 asks one zone: met.
    await c.coordinator('n1').put(B(key), B('w'), EMPTY, { zoneConfirms: 1 });
  });

  it('a zone_confirms over the zones the cluster has is INVALID_ARGUMENT, saying how many there are', async () => {
    const cluster = await create(5);
    const bucket = { ...defaultProps(3), n: 5 };
    const e = await failure(cluster.coordinator('n1').put(B('k'), B('v'), EMPTY, { bucket, zoneConfirms: 4 }));
    expect(e.code).toBe('RK_BAD_ARGUMENT');
    expect(toStatus(e).code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(e.message).toBe(
      "zone_confirms=4 is more than the 3 zone(s) the cluster's nodes are in (z0, z1, z2); ask for at most 3, or start nodes in more zones (ringkv node --zone)",
    );
    // A bucket of N=5 on these five nodes spans the three zones: zone_confirms=3 is met.
    await cluster.coordinator('n1').put(B('k'), B('v'), EMPTY, { bucket, zoneConfirms: 3 });
  });
});

describe('confirmations: bad values', () => {
  it.each([
    ['pw', { pw: 4 }, 'pw must be 0 (no rule) to N=3, got 4'],
    ['node_confirms', { nodeConfirms: 4 }, 'node_confirms must be 0 (no rule) to N=3, got 4'],
    ['zone_confirms', { zoneConfirms: 4 }, 'zone_confirms must be 0 (no rule) to N=3, got 4'],
    ['a negative one', { nodeConfirms: -1 }, 'node_confirms must be 0 (no rule) to N=3, got -1'],
    ['a fraction', { pw: 1.5 }, 'pw must be 0 (no rule) to N=3, got 1.5'],
  ])('%s is refused with INVALID_ARGUMENT on put and delete, before any replica call', async (_, rules, message) => {
    const cluster = await create(3);
    const c = cluster.coordinator('n1');
    for (const p of [c.put(B('k'), B('v'), EMPTY, rules), c.delete(B('k'), EMPTY, rules)]) {
      const e = await failure(p);
      expect(e.code).toBe('RK_BAD_ARGUMENT');
      expect(toStatus(e).code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(e.message).toBe(message);
    }
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

  it("takes the bucket's N as the bound", async () => {
    const cluster = await create(5);
    const e = await failure(
      cluster.coordinator('n1').put(B('k'), B('v'), EMPTY, { bucket: { ...defaultProps(3), n: 2 }, pw: 3 }),
    );
    expect(e.message).toBe('pw must be 0 (no rule) to N=2, got 3');
  });
});
