/**
 * Data types on real `ringkv node` processes (issue 30): every operation is sent through
 * two coordinators at once with one request id, and one coordinator is killed -9 while
 * operations are in flight; a counter still counts each increment exactly once, a set
 * holds each element added, and removes take, and a map's update applies once, whole; a
 * counter reset, a set drop and a map drop with a replica killed take out what they saw
 * on every replica and nothing they did not see. The typed buckets refuse other operations,
 * and bad input gets its status.
 */
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketName, storedKey } from '../../src/buckets/index.js';
import { Client, type MapOp } from '../../src/client/index.js';
import { KeyRouter } from '../../src/client/key-router.js';
import { TestCluster, type NodeProcess } from '../../testkit/node-cluster.js';
import { statusOf } from '../../testkit/kv-client.js';
import { waitFor } from '../../testkit/wait.js';

const S = grpc.status;
const COUNTERS = 'hits',
  SETS = 'carts',
  MAPS = 'profiles';

describe('counters, sets and maps on a cluster', () => {
  let cluster: TestCluster;
  let client: Client;
  const pinned: Client[] = [];

  /** A client that sends only to `n` (no routing, no hedge): that node coordinates. */
  const through = (n: NodeProcess): Client => {
    const c = new Client({ nodes: [n.address], tokenAware: false, hedge: false, deadlineMs: 3000 });
    pinned.push(c);
    return c;
  };

  const allUp = async (ids: readonly string[]): Promise<void> => {
    await waitFor(
      `${ids.join(', ')} normal and up on every running node`,
      60_000,
      async () => {
        const views = await Promise.all(cluster.nodes.filter((n) => n.running).map((n) => n.status()));
        return views.every(
          (v) =>
            v !== undefined && ids.every((id) => v.members.some((m) => m.id === id && m.status === 'normal' && m.up)),
        );
      },
      200,
    );
  };

  /** Kill `n` -9 now; `restart` brings it back and waits until every node sees it up. */
  const kill = (n: NodeProcess): { restart(): Promise<void> } => {
    n.signal('SIGKILL');
    return {
      async restart() {
        await n.exit;
        n.start();
        await allUp(cluster.nodes.map((x) => x.id));
      },
    };
  };

  /** Send `op` until it is acknowledged (bounded): what a client does with an outcome it does not know. */
  const untilAcked = async (op: () => Promise<unknown>): Promise<void> => void (await retried(op, () => true));

  /** `op`'s answer, sent again while it fails as `again` says (bounded: 20 tries, 250 ms apart). */
  const retried = async <T>(op: () => Promise<T>, again: (e: unknown) => boolean): Promise<T> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await op();
      } catch (e) {
        if (attempt >= 20 || !again(e)) throw e;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  };
  /** Reads at R=3 right after a restart: a coordinator may still count the restarted node out for a moment (UNAVAILABLE). */
  const unavailable = (e: unknown): boolean => (e as { code?: number }).code === S.UNAVAILABLE;

  beforeAll(async () => {
    cluster = await TestCluster.create(4, 3, ['--request-timeout-ms', '2000']);
    for (const n of cluster.nodes) n.start();
    await allUp(['n1', 'n2', 'n3', 'n4']);
    const admin = cluster.node('n1').admin();
    await admin.createBucket(COUNTERS, { type: 'counter' });
    await admin.createBucket(SETS, { type: 'set' });
    await admin.createBucket(MAPS, { type: 'map' });
    await waitFor('every node knows the typed buckets', 30_000, async () =>
      (
        await Promise.all(
          cluster.nodes.map((n) =>
            Promise.all([COUNTERS, SETS, MAPS].map((b) => n.admin().getBucket(b))).then(
              () => true,
              () => false,
            ),
          ),
        )
      ).every(Boolean),
    );
    client = new Client({ nodes: cluster.nodes.map((n) => n.address), deadlineMs: 5000 });
  }, 120_000);

  afterAll(() => {
    for (const c of pinned) c.close();
    client?.close();
    cluster?.destroy();
  });

  it('an increment sent through two coordinators, one killed -9 mid-run, counts once', async () => {
    const [a, b] = [through(cluster.node('n2')), through(cluster.node('n3'))];
    const ids: Buffer[] = [],
      amounts: number[] = [];
    let killed: { restart(): Promise<void> } | undefined;
    const sent: Promise<PromiseSettledResult<unknown>[]>[] = [];
    for (let i = 0; i < 60; i++) {
      const requestId = randomBytes(16),
        amount = (i % 7) + 1;
      ids.push(requestId);
      amounts.push(amount);
      sent.push(
        Promise.allSettled([
          a.counterUpdate('page', amount, { bucket: COUNTERS, requestId }),
          b.counterUpdate('page', amount, { bucket: COUNTERS, requestId }),
        ]),
      );
      if (i === 25) killed = kill(cluster.node('n2')); // with increments 0..25 in flight through it
      if (i % 5 === 4) await sent[sent.length - 1];
    }
    const outcomes = await Promise.all(sent);
    expect(outcomes.slice(30).every((o) => o[0]!.status === 'rejected')).toBe(true); // n2 was gone for these
    // An increment neither coordinator acknowledged is sent again, with its request id, until one does.
    for (const [i, o] of outcomes.entries())
      if (o.every((x) => x.status === 'rejected'))
        await untilAcked(() => b.counterUpdate('page', amounts[i]!, { bucket: COUNTERS, requestId: ids[i]! }));
    const sum = BigInt(amounts.reduce((x, y) => x + y, 0));
    expect((await b.counterGet('page', { bucket: COUNTERS, r: 2 })).value).toBe(sum);
    await killed!.restart();
    // Every replica ends with the same count, the restarted coordinator included.
    for (const n of cluster.nodes)
      expect((await retried(() => through(n).counterGet('page', { bucket: COUNTERS, r: 3 }), unavailable)).value).toBe(
        sum,
      );
  }, 120_000);

  it('adds and removes sent through two coordinators, one killed -9 mid-run, each take once', async () => {
    const [a, b] = [through(cluster.node('n4')), through(cluster.node('n1'))];
    const elements = Array.from({ length: 40 }, (_, i) => `item-${String(i).padStart(2, '0')}`);
    let killed: { restart(): Promise<void> } | undefined;
    const sent: Promise<PromiseSettledResult<unknown>[]>[] = [];
    const requestIds = elements.map(() => randomBytes(16));
    for (const [i, e] of elements.entries()) {
      sent.push(
        Promise.allSettled([
          a.setAdd('cart', [e], { bucket: SETS, requestId: requestIds[i]! }),
          b.setAdd('cart', [e], { bucket: SETS, requestId: requestIds[i]! }),
        ]),
      );
      if (i === 15) killed = kill(cluster.node('n4'));
      if (i % 5 === 4) await sent[sent.length - 1];
    }
    for (const [i, o] of (await Promise.all(sent)).entries())
      if (o.every((x) => x.status === 'rejected'))
        await untilAcked(() => b.setAdd('cart', [elements[i]!], { bucket: SETS, requestId: requestIds[i]! }));
    const read = async (c: Client, r: number): Promise<string[]> => {
      const out: string[] = [];
      for await (const e of c.setElements('cart', { bucket: SETS, r, limit: 7 })) out.push(String(e.element));
      return out;
    };
    expect(await read(b, 2)).toEqual(elements);
    await killed!.restart();
    // Remove every other element through two coordinators at once, each with the context of a read that saw it.
    const [c, d] = [through(cluster.node('n2')), through(cluster.node('n3'))];
    const gone = elements.filter((_, i) => i % 2 === 0);
    await Promise.all(
      gone.map(async (e) => {
        const seen = await retried(() => c.setContains('cart', e, { bucket: SETS, r: 3 }), unavailable);
        expect(seen.present).toBe(true);
        const requestId = randomBytes(16);
        const both = await Promise.allSettled([
          c.setRemove('cart', [{ element: e, context: seen.context }], { bucket: SETS, requestId }),
          d.setRemove('cart', [{ element: e, context: seen.context }], { bucket: SETS, requestId }),
        ]);
        expect(both.some((x) => x.status === 'fulfilled')).toBe(true);
      }),
    );
    const kept = elements.filter((_, i) => i % 2 === 1);
    for (const n of cluster.nodes) expect(await retried(() => read(through(n), 3), unavailable)).toEqual(kept);
    expect(await c.setContains('cart', gone[0]!, { bucket: SETS })).toMatchObject({ present: false });
  }, 120_000);

  it('map updates (a counter, a set and a register at once) sent through two coordinators, one killed -9 mid-run, each apply once and whole', async () => {
    const [a, b] = [through(cluster.node('n3')), through(cluster.node('n4'))];
    const ops = (i: number): MapOp[] => [
      { op: 'increment', path: [{ name: 'visits', type: 'counter' }], amount: i + 1 },
      {
        op: 'add',
        path: [
          { name: 'seen', type: 'map' },
          { name: 'pages', type: 'set' },
        ],
        element: `page-${String(i).padStart(2, '0')}`,
      },
      { op: 'assign', path: [{ name: 'last', type: 'register' }], value: `page-${i}` },
    ];
    const requestIds = Array.from({ length: 30 }, () => randomBytes(16));
    let killed: { restart(): Promise<void> } | undefined;
    const sent: Promise<PromiseSettledResult<unknown>[]>[] = [];
    for (let i = 0; i < 30; i++) {
      const o = { bucket: MAPS, requestId: requestIds[i]! };
      sent.push(Promise.allSettled([a.mapUpdate('visitor', ops(i), o), b.mapUpdate('visitor', ops(i), o)]));
      if (i === 12) killed = kill(cluster.node('n3'));
      if (i % 5 === 4) await sent[sent.length - 1];
    }
    for (const [i, o] of (await Promise.all(sent)).entries())
      if (o.every((x) => x.status === 'rejected'))
        await untilAcked(() => b.mapUpdate('visitor', ops(i), { bucket: MAPS, requestId: requestIds[i]! }));
    await killed!.restart();
    const sum = BigInt((30 * 31) / 2);
    const pages = Array.from({ length: 30 }, (_, i) => `page-${String(i).padStart(2, '0')}`);
    for (const n of cluster.nodes) {
      const m = await retried(() => through(n).mapGet('visitor', { bucket: MAPS, r: 3, limit: 7 }), unavailable);
      expect(m.counters.visits, n.id).toBe(sum);
      expect(m.maps.seen!.sets.pages!.map(String), n.id).toEqual(pages);
      // Last writer wins among the assigns: one of them, the same on every replica.
      expect(String(m.registers.last), n.id).toMatch(/^page-\d+$/);
      expect(String(m.registers.last)).toBe(
        String((await through(cluster.node('n1')).mapGet('visitor', { bucket: MAPS, r: 3 })).registers.last),
      );
    }
  }, 120_000);

  it('a counter reset, a set drop and a map drop, with a replica killed -9 mid-run and increments racing the reset: what each saw is gone on every replica, what it did not see stays', async () => {
    const admin = cluster.node('n1').admin();
    const router = new KeyRouter(await admin.ring(), await admin.status());
    const byAddress = new Map(cluster.nodes.map((n) => [n.address, n]));
    // A replica of the counter that is not its first primary (the issuer): killed while the reset runs.
    const victim = byAddress.get(router.replicasOf(storedKey(bucketName(COUNTERS), Buffer.from('laps')))[1]!)!;
    let before = 0n;
    for (let i = 1; i <= 20; i++) before = (await client.counterUpdate('laps', i, { bucket: COUNTERS })).value;
    expect(before).toBe(210n);
    const elements = Array.from({ length: 30 }, (_, i) => `e${String(i).padStart(2, '0')}`);
    await client.setAdd('bin', elements, { bucket: SETS });
    await client.mapUpdate(
      'card',
      [
        { op: 'increment', path: [{ name: 'points', type: 'counter' }], amount: 9 },
        { op: 'enable', path: [{ name: 'gold', type: 'flag' }] },
        {
          op: 'assign',
          path: [
            { name: 'owner', type: 'map' },
            { name: 'name', type: 'register' },
          ],
          value: 'Ada',
        },
        ...elements
          .slice(0, 5)
          .map((element): MapOp => ({ op: 'add', path: [{ name: 'tags', type: 'set' }], element })),
      ],
      { bucket: MAPS },
    );
    // Increments of 1 race the reset: each acknowledged before the reset began is taken out, each begun after it answered stays.
    const racer = through(cluster.node(victim.id === 'n1' ? 'n2' : 'n1'));
    let stop = false,
      afterReset = 0n,
      racing = 0n,
      resetDone = false;
    const race = (async () => {
      for (let i = 0; i < 400 && !stop; i++) {
        const startedAfter = resetDone;
        try {
          await racer.counterUpdate('laps', 1, { bucket: COUNTERS, requestId: randomBytes(16) });
          if (startedAfter) afterReset++;
          else racing++;
        } catch {
          // Unknown outcome: the bound below allows for it as racing.
          racing++;
        }
      }
    })();
    await new Promise((r) => setTimeout(r, 100));
    const killed = kill(victim);
    const reset = await retried(() => client.counterReset('laps', { bucket: COUNTERS }), unavailable);
    resetDone = true;
    expect(reset.found).toBe(true);
    expect(
      reset.value >= before && reset.value <= before + racing,
      `took out ${reset.value}: the 210 before it and some of the ${racing} racing`,
    ).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await race;
    expect(afterReset > 0n, 'some increments began after the reset answered').toBe(true);
    expect((await retried(() => client.setDrop('bin', { bucket: SETS }), unavailable)).removed).toBe(30);
    expect((await retried(() => client.mapDrop('card', { bucket: MAPS }), unavailable)).removed).toBe(8); // points, gold, owner.name, 5 tags
    await killed.restart();
    const values = new Set<bigint>();
    for (const n of cluster.nodes) {
      const v = (await retried(() => through(n).counterGet('laps', { bucket: COUNTERS, r: 3 }), unavailable)).value;
      // What the reset did not take out: every increment begun after it, and those racing it that its read missed.
      expect(
        v >= afterReset && v <= afterReset + racing - (reset.value - before),
        `${n.id} reads ${v}: ${afterReset} after, ${racing} racing`,
      ).toBe(true);
      values.add(v);
      const left: string[] = [];
      for await (const e of through(n).setElements('bin', { bucket: SETS, r: 3 })) left.push(String(e.element));
      expect(left, n.id).toEqual([]);
      expect(await retried(() => through(n).mapRead('card', { bucket: MAPS, r: 3 }), unavailable), n.id).toEqual({
        entries: [],
        next: undefined,
      });
    }
    expect(values.size, 'every coordinator reads one value').toBe(1);
    // The restarted replica comes to hold the reset too (hints, read repair): read it alone.
    await waitFor(
      `${victim.id} alone reads ${[...values][0]}`,
      30_000,
      async () =>
        (
          await through(victim)
            .counterGet('laps', { bucket: COUNTERS, r: 1 })
            .catch(() => undefined)
        )?.value === [...values][0],
      200,
    );
  }, 120_000);

  it("a routing client sends a key's increments to its first primary, which issues them, so none makes an extra hop", async () => {
    const admin = cluster.node('n1').admin();
    // Routing, not hedging, is what this counts: a hedge (a slow moment on 2 busy cores) would send one increment to a second node.
    const client = new Client({ nodes: cluster.nodes.map((n) => n.address), deadlineMs: 5000, hedge: false });
    pinned.push(client);
    await client.refreshRing();
    const [ring, status] = await Promise.all([admin.ring(), admin.status()]);
    const router = new KeyRouter(ring, status);
    const byAddress = new Map(cluster.nodes.map((n) => [n.address, n]));
    const updates = async (): Promise<Map<string, number>> =>
      new Map(
        await Promise.all(
          cluster.nodes.map(async (n) => [n.id, Number((await n.status())?.counters.counterUpdates ?? 0)] as const),
        ),
      );
    const keys = Array.from({ length: 8 }, (_, i) => `leader-${i}`);
    for (const k of keys) {
      const first = byAddress.get(router.replicasOf(storedKey(bucketName(COUNTERS), Buffer.from(k)))[0]!)!;
      const before = await updates();
      for (let i = 0; i < 5; i++) await client.counterIncrement(k, 1, { bucket: COUNTERS });
      const after = await updates();
      const moved = cluster.nodes.map((n) => `${n.id}: ${after.get(n.id)! - before.get(n.id)!}`).join(', ');
      for (const n of cluster.nodes)
        expect(after.get(n.id)! - before.get(n.id)!, `${k} (first primary ${first.id}; ${moved})`).toBe(
          n === first ? 5 : 0,
        );
    }
  });

  it('typed buckets refuse other operations, and bad input gets its status', async () => {
    const refused = async (p: Promise<unknown>, code: number, message: RegExp): Promise<void> => {
      const s = await statusOf(p);
      expect(s?.code, s?.details).toBe(code);
      expect(s!.details).toMatch(message);
    };
    await refused(client.put('k', 'v', { bucket: COUNTERS }), S.FAILED_PRECONDITION, /counter/);
    await refused(client.get('k', { bucket: SETS }), S.FAILED_PRECONDITION, /set/);
    await refused(client.counterUpdate('k', 1, { bucket: SETS }), S.FAILED_PRECONDITION, /set/);
    await refused(client.setAdd('k', ['e'], { bucket: COUNTERS }), S.FAILED_PRECONDITION, /counter/);
    await refused(client.counterUpdate('k', 1), S.FAILED_PRECONDITION, /default/);
    await refused(client.counterUpdate('k', 0, { bucket: COUNTERS }), S.INVALID_ARGUMENT, /nonzero/);
    await refused(
      client.setRemove('k', [{ element: 'e', context: Buffer.alloc(0) }], { bucket: SETS }),
      S.INVALID_ARGUMENT,
      /context/,
    );
    await refused(client.setAdd('k', ['x'.repeat(1025)], { bucket: SETS }), S.INVALID_ARGUMENT, /1024/);
    await refused(client.setRead('k', { bucket: SETS, limit: 1001 }), S.INVALID_ARGUMENT, /1000/);
    await refused(
      client.mapUpdate(
        'k',
        [
          {
            op: 'enable',
            path: ['a', 'b', 'c', 'd']
              .map((name) => ({ name, type: 'map' as const }))
              .concat({ name: 'e', type: 'flag' as never }),
          },
        ],
        { bucket: MAPS },
      ),
      S.INVALID_ARGUMENT,
      /over the limit of 4/,
    );
    await refused(
      client.mapUpdate('k', [{ op: 'increment', path: [{ name: 'r', type: 'register' }], amount: 1 }], {
        bucket: MAPS,
      }),
      S.INVALID_ARGUMENT,
      /increment applies to a counter field/,
    );
    await refused(client.mapRead('k', { bucket: SETS }), S.FAILED_PRECONDITION, /set/);
    await refused(
      cluster
        .node('n1')
        .admin()
        .createBucket('hlls', { type: 'hll' as never }),
      S.INVALID_ARGUMENT,
      /createBucket: option type must be one of "kv", "counter", "set", "map", "consistent", got "hll"/,
    );
  }, 60_000);
});
