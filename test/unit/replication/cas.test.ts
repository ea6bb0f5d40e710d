/**
 * Compare-and-set through the coordinator (issue 31): Paxos rounds among a key's replicas
 * on the in-memory network — the outcomes (applied, not applied with the current value,
 * unknown), the cost uncontended, replicas down and slow, contention, a retry by request
 * id, a replica that missed a commit, a range that moves, and bad input.
 */
import { decodeRegister } from '../../../src/kinds/index.js';
import { HISTORY_LENGTH } from '../../../src/kinds/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { storedKey, type BucketProps } from '../../../src/buckets/index.js';
import { claimRing } from '../../../src/ring/index.js';
import type { CasOutcome } from '../../../src/replication/cas.js';
import { FakeCluster, codeOf, eventually } from './fake-cluster.js';

const B = (s: string): Buffer => Buffer.from(s);
const EMPTY = Buffer.alloc(0);
const bucket: BucketProps = { n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'siblings', type: 'consistent' };
const o = { bucket };
const keyOf = (k: string): Buffer => storedKey('locks', B(k));

let cluster: FakeCluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

const applied = (r: CasOutcome): Buffer => {
  expect(r.applied).toBe(true);
  return r.context;
};

/** The committed value replica `id` holds for `key` (undefined: none committed). */
async function committedAt(c: FakeCluster, id: string, key: Buffer): Promise<string | null | undefined> {
  const rec = await c.store(id).getRecord(key);
  if (rec === undefined) return undefined;
  const p = decodeRegister(rec).register.committed;
  return p === undefined ? undefined : p.value === null ? null : String(p.value);
}

describe('compare-and-set', () => {
  it('writes only if absent, then only on the version read, and deletes only that version', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster.coordinator('n1');
    const k = keyOf('user:ann');
    const v1 = applied(await c.putIf(k, B('owner-1'), EMPTY, o));
    // Present now: a second "if absent" is not applied, and says what is there.
    expect(await c.putIf(k, B('owner-2'), EMPTY, o)).toEqual({ applied: false, value: B('owner-1'), context: v1 });
    expect(await c.consistentGet(k, o)).toEqual({ value: B('owner-1'), context: v1 });
    // Through another coordinator, on the version read.
    const v2 = applied(await cluster.coordinator('n2').putIf(k, B('owner-2'), v1, o));
    // A stale version is refused, with the current one.
    expect(await c.putIf(k, B('owner-3'), v1, o)).toEqual({ applied: false, value: B('owner-2'), context: v2 });
    expect(await c.putIf(k, null, v1, o)).toMatchObject({ applied: false });
    const gone = applied(await c.putIf(k, null, v2, o));
    expect(await c.consistentGet(k, o)).toEqual({ value: null, context: gone });
    expect(await c.get(k, o)).toEqual({ values: [], context: gone, found: false });
    // Absent again: "if absent" applies.
    applied(await c.putIf(k, B('owner-4'), EMPTY, o));
    expect((await c.get(k, o)).values).toEqual([B('owner-4')]);
    expect(c.counters.casWrites).toBe(6);
    expect(c.counters.casNotApplied).toBe(3);
  });

  it('costs a prepare and a proposal to the replicas uncontended, a read only a prepare; the commit goes to every replica', async () => {
    cluster = await FakeCluster.create(4);
    const k = keyOf('k1');
    const outsider = cluster.outsider(String(k));
    // The outsider coordinates: every call crosses the network.
    const c = cluster.coordinator(outsider);
    await c.putIf(k, B('v'), EMPTY, o);
    const owners = cluster.ring.preferenceList(k, 3);
    await eventually(async () =>
      (await Promise.all(owners.map((id) => committedAt(cluster!, id, k)))).every((v) => v === 'v'),
    );
    expect(cluster.net.calls).toMatchObject({ paxosPrepare: 3, paxosPropose: 3, paxosCommit: 3, apply: 0, merge: 0 });
    await c.consistentGet(k, o);
    expect(cluster.net.calls).toMatchObject({ paxosPrepare: 6, paxosPropose: 3, paxosCommit: 3 });
  });

  it('counts the commits it sends after answering until they end (what a caller waits on to see the node idle)', async () => {
    cluster = await FakeCluster.create(4);
    const k = keyOf('k-commits');
    const outsider = cluster.outsider(String(k));
    for (const id of cluster.owners(String(k)))
      cluster.net.faults.set(`*>${id}`, { delayMs: 150, delayOnly: ['paxosCommit'] });
    const c = cluster.coordinator(outsider);
    applied(await c.putIf(k, B('v'), EMPTY, o));
    // Answered, yet each replica's commit is still on its way.
    expect(c.inFlight).toBe(0);
    expect(c.casCommitsInFlight).toBe(3);
    await eventually(() => c.casCommitsInFlight === 0);
    expect(await committedAt(cluster, cluster.owners(String(k))[0]!, k)).toBe('v');
  });

  it('runs with one replica of three down, and refuses with two down, writing nothing', async () => {
    cluster = await FakeCluster.create(3);
    const k = keyOf('k2');
    const [a, b, x] = cluster.ring.preferenceList(k, 3) as [string, string, string];
    cluster.down.add(x);
    cluster.net.faults.set(`*>${x}`, { unreachable: true });
    applied(await cluster.coordinator(a).putIf(k, B('one'), EMPTY, o));
    cluster.down.add(b);
    cluster.net.faults.set(`*>${b}`, { unreachable: true });
    expect(await codeOf(cluster.coordinator(a).putIf(k, B('two'), EMPTY, o))).toBe('RK_UNAVAILABLE');
    expect(await codeOf(cluster.coordinator(a).consistentGet(k, o))).toBe('RK_UNAVAILABLE');
    // A detector that still thinks b up: the round fails for want of answers, and nothing was proposed.
    cluster.down.delete(b);
    expect(await codeOf(cluster.coordinator(a).putIf(k, B('two'), EMPTY, o))).toBe('RK_UNAVAILABLE');
    expect(cluster.net.calls.paxosPropose).toBe(1); // the first write's, to b (x was known down)
    // Replicas that do not answer are not contention: it fails at once, not at its deadline.
    expect(cluster.coordinator(a).counters.casRetries).toBe(0);
  });

  it('answers unknown when its proposal may have been accepted without a quorum, and a read then finishes it', async () => {
    cluster = await FakeCluster.create(3, { timeoutMs: 300 });
    const k = keyOf('k3');
    const [a, b, x] = cluster.ring.preferenceList(k, 3) as [string, string, string];
    const c = cluster.coordinator(a);
    const v1 = applied(await c.putIf(k, B('v1'), EMPTY, o));
    // b and x answer too late: the prepare fails, nothing proposed, so it is a definite no.
    cluster.net.faults.set(`*>${b}`, { delayMs: 1000 });
    cluster.net.faults.set(`*>${x}`, { delayMs: 1000 });
    expect(await codeOf(c.putIf(k, B('v2'), v1, o))).toBe('RK_UNAVAILABLE');
    // Only proposals slow: a accepts its own (locally), b and x time out. It may have applied.
    cluster.net.faults.set(`*>${b}`, { delayMs: 1000, delayOnly: ['paxosPropose'] });
    cluster.net.faults.set(`*>${x}`, { delayMs: 1000, delayOnly: ['paxosPropose'] });
    await expect(c.putIf(k, B('v2'), v1, o)).rejects.toMatchObject({
      code: 'RK_CAS_UNKNOWN',
      message: expect.stringMatching(/unknown outcome.*read the key/),
    });
    expect(c.counters.casUnknown).toBe(1);
    cluster.net.faults.clear();
    // The late proposals land, or a read finishes the one a accepted: either way it applied, once.
    await new Promise((r) => setTimeout(r, 1100));
    expect((await cluster.coordinator(b).consistentGet(k, o)).value).toEqual(B('v2'));
    // Its retry (the same request id would say applied; a new write on v1 is stale).
    expect(await c.putIf(k, B('v3'), v1, o)).toMatchObject({ applied: false, value: B('v2') });
  });

  it('takes a proposal whose answer was lost (a stream that broke with it on) as maybe accepted: unknown, never "nothing was written"', async () => {
    cluster = await FakeCluster.create(4);
    const k = keyOf('k9');
    const replicas = cluster.ring.preferenceList(k, 3);
    const [a, b, x] = replicas as [string, string, string];
    // A coordinator that holds no copy: every acceptance it could hear of is a remote one.
    const c = cluster.coordinator(['n1', 'n2', 'n3', 'n4'].find((id) => !replicas.includes(id))!);
    const v1 = applied(await c.putIf(k, B('v1'), EMPTY, o));
    // a and b accept, and their answers are lost; x is down. Chosen, though the coordinator heard no yes.
    for (const id of [a, b]) cluster.net.faults.set(`*>${id}`, { lostReply: ['paxosPropose'] });
    cluster.down.add(x);
    cluster.net.faults.set(`*>${x}`, { unreachable: true });
    await expect(c.putIf(k, B('v2'), v1, o)).rejects.toMatchObject({ code: 'RK_CAS_UNKNOWN' });
    cluster.net.faults.clear();
    cluster.down.delete(x);
    expect((await cluster.coordinator(a).consistentGet(k, o)).value).toEqual(B('v2'));
  });

  it('answers applied to a retry of a write that applied (same request id) while the replicas remember it, and not applied to a new write on the old version', async () => {
    cluster = await FakeCluster.create(3);
    const k = keyOf('k4');
    const c = cluster.coordinator('n1');
    const requestId = B('request-1');
    const v1 = applied(await c.putIf(k, B('a'), EMPTY, { ...o, requestId }));
    expect(await cluster.coordinator('n3').putIf(k, B('a'), EMPTY, { ...o, requestId })).toEqual({
      applied: true,
      context: v1,
    });
    expect(await c.putIf(k, B('a'), EMPTY, { ...o, requestId: B('request-2') })).toMatchObject({ applied: false });
    // Writes follow it: the replicas remember the last HISTORY_LENGTH commits before the latest, so the retry still answers applied.
    let v = (await c.consistentGet(k, o)).context;
    for (let i = 0; i < HISTORY_LENGTH; i++) v = applied(await c.putIf(k, B(`later-${i}`), v, o));
    expect(await cluster.coordinator('n2').putIf(k, B('a'), EMPTY, { ...o, requestId })).toEqual({
      applied: true,
      context: v1,
    });
    // Past what they remember, a retry is a new write (docs/limits.md): here "if absent", not applied.
    for (let i = 0; i < 2; i++) v = applied(await c.putIf(k, B(`later-still-${i}`), v, o));
    expect(await c.putIf(k, B('a'), EMPTY, { ...o, requestId })).toMatchObject({
      applied: false,
      value: B('later-still-1'),
    });
  });

  it('lets exactly one of many writers on one version apply; the others see it, or (preempted mid-proposal) do not know', async () => {
    cluster = await FakeCluster.create(5);
    const k = keyOf('k5');
    const v0 = applied(await cluster.coordinator('n1').putIf(k, B('start'), EMPTY, o));
    const ids = [...cluster.coordinators.keys()];
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        cluster!
          .coordinator(ids[i % ids.length]!)
          .putIf(k, B(`w${i}`), v0, o)
          .then(
            (r) => r,
            (e: unknown) => ({ error: (e as { code: string }).code }),
          ),
      ),
    );
    const winners = outcomes.flatMap((r, i) => ('applied' in r && r.applied ? [`w${i}`] : []));
    const unknown = outcomes.flatMap((r, i) => ('error' in r ? [`w${i}`] : []));
    expect(winners.length).toBeLessThanOrEqual(1);
    const now = String((await cluster.coordinator('n2').consistentGet(k, o)).value);
    // The one that applied: the winner, or one whose outcome is unknown (another round finished its proposal).
    expect(winners.length === 1 ? [now] : unknown).toContain(winners[0] ?? now);
    for (const r of outcomes) if ('applied' in r && !r.applied) expect(String(r.value)).toBe(now);
    // Contention is met by retrying above the higher ballot; a writer preempted after a replica accepted its proposal learns
    // from the winner's base that its own is dead (paxos.ts decide), so none is left not knowing.
    expect(outcomes.filter((r) => 'error' in r)).toEqual([]);
  });

  it('a replica that missed a commit is sent it by the next round that reads it', async () => {
    cluster = await FakeCluster.create(3);
    const k = keyOf('k6');
    const [a, b, x] = cluster.ring.preferenceList(k, 3) as [string, string, string];
    cluster.net.faults.set(`*>${x}`, { unreachable: true });
    applied(await cluster.coordinator(a).putIf(k, B('v'), EMPTY, o));
    await eventually(async () => (await committedAt(cluster!, b, k)) === 'v');
    expect(await committedAt(cluster, x, k)).toBeUndefined();
    cluster.net.faults.clear();
    // b promises with the commit; x promises with nothing: lagging, so it is sent the commit.
    cluster.net.faults.set(`*>${a}`, { unreachable: true });
    cluster.down.add(a);
    expect((await cluster.coordinator(b).consistentGet(k, o)).value).toEqual(B('v'));
    await eventually(async () => (await committedAt(cluster!, x, k)) === 'v');
  });

  it('while the range moves, needs a majority of the replicas now and of those it moves to, and writes to both', async () => {
    cluster = await FakeCluster.create(4, {}, 3);
    const k = keyOf('k7');
    // n4 joins: find a key it takes.
    cluster.target = claimRing(
      ['n1', 'n2', 'n3', 'n4'].map((id) => ({ id, zone: FakeCluster.zoneOf(id) })),
      3,
      { tokensPerNode: 16, seed: 'fake' },
    );
    let key = k;
    for (let i = 0; !cluster.target.preferenceList(key, 3).includes('n4'); i++) key = keyOf(`k7-${i}`);
    applied(await cluster.coordinator('n1').putIf(key, B('moving'), EMPTY, o));
    await eventually(async () => (await committedAt(cluster!, 'n4', key)) === 'moving');
    expect(cluster.coordinator('n1').counters.pendingWrites).toBe(1);
    // The future replicas without a majority up: refused, though the current ones are all up.
    const future = cluster.target.preferenceList(key, 3).filter((id) => id !== 'n4');
    const gone = future.find((id) => !cluster!.ring.preferenceList(key, 3).includes(id)) ?? future[0]!;
    cluster.down.add('n4');
    cluster.down.add(gone);
    expect(
      await codeOf(
        cluster
          .coordinator(cluster.ring.preferenceList(key, 3).find((id) => id !== gone)!)
          .putIf(key, B('x'), EMPTY, o),
      ),
    ).toBe('RK_UNAVAILABLE');
  });

  it('refuses bad input with what to do', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster.coordinator('n1');
    const k = keyOf('k8');
    await expect(c.putIf(k, B('v'), B('not a context'), o)).rejects.toMatchObject({
      code: 'RK_BAD_ARGUMENT',
      message: expect.stringMatching(/not a consistent key's: pass the context a Get or PutIf/),
    });
    await expect(c.putIf(k, null, EMPTY, o)).rejects.toMatchObject({
      code: 'RK_BAD_ARGUMENT',
      message: expect.stringMatching(/needs the context of the version it deletes/),
    });
    await expect(c.putIf(k, EMPTY, EMPTY, o)).rejects.toMatchObject({ code: 'RK_BAD_ARGUMENT' });
    await expect(c.putIf(k, B('v'), EMPTY, { ...o, ttlMs: 1000 })).rejects.toMatchObject({
      code: 'RK_BAD_ARGUMENT',
      message: expect.stringMatching(/does not expire/),
    });
    await expect(c.putIf(k, B('v'), EMPTY, { ...o, quorum: 1 })).rejects.toMatchObject({
      code: 'RK_BAD_ARGUMENT',
      message: expect.stringMatching(/majority/),
    });
    await expect(c.consistentGet(k, { ...o, quorum: 3 })).rejects.toMatchObject({ code: 'RK_BAD_ARGUMENT' });
    await expect(c.putIf(keyOf('k'.repeat(5000)), B('v'), EMPTY, o)).rejects.toMatchObject({
      code: 'KV_KEY_TOO_LARGE',
    });
    // Nothing was written by any of them.
    for (const id of cluster.stores.keys()) expect(await cluster.store(id).getRecord(k)).toBeUndefined();
  });
});
