import { afterEach, describe, expect, it } from 'vitest';
import { HintDelivery, hintRoute } from '../../../src/hints/delivery.js';
import { BucketTable, DEFAULT_BUCKET, defaultProps, storedKey, subKey } from '../../../src/buckets/index.js';
import { keyClasses } from '../../../src/cluster/n-classes.js';
import { claimRing } from '../../../src/ring/index.js';
import { ReplicaFailure } from '../../../src/replication/replica-api.js';
import { MemoryEngine, Store } from '../../../src/storage/index.js';

const quiet = { debug() {}, info() {}, warn() {} };
let stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.map((s) => s.close()));
  stores = [];
});

async function open(): Promise<Store> {
  const s = await Store.open({ engine: new MemoryEngine() });
  stores.push(s);
  return s;
}

/** `count` hints on `holder` for node 'b', each a real record written on `source`. */
async function hintsFor(holder: Store, source: Store, count: number, valueBytes = 100): Promise<void> {
  for (let i = 0; i < count; i++) {
    const { record } = await source.put(`k${i}`, Buffer.alloc(valueBytes, i));
    await holder.hints.add('b', `k${i}`, record);
  }
}

describe('hint delivery', () => {
  it('delivers every hint to its target once it is up, then deletes it', async () => {
    const [holder, source, b] = [await open(), await open(), await open()];
    await hintsFor(holder, source, 20);
    let up = false;
    const d = new HintDelivery(
      { self: 'a', bytesPerSecond: 1 << 30 },
      { hints: holder.hints, isUp: () => up, send: (_t, key, record) => b.merge(key, record), log: quiet },
    );
    await d.run();
    expect(holder.hints.stats().count).toBe(20); // target down: nothing sent
    up = true;
    await d.run();
    expect(holder.hints.stats().count).toBe(0);
    expect(d.delivered).toBe(20);
    for (let i = 0; i < 20; i++) expect((await b.get(`k${i}`)).values).toHaveLength(1);
  });

  it('keeps the hints a target failed to take, and stops sending to it for this run', async () => {
    const [holder, source] = [await open(), await open()];
    await hintsFor(holder, source, 30);
    let calls = 0;
    const d = new HintDelivery(
      { self: 'a', bytesPerSecond: 1 << 30, concurrency: 1 },
      {
        hints: holder.hints,
        isUp: () => true,
        send: async () => {
          if (++calls > 5) throw new Error('connection reset');
        },
        log: quiet,
      },
    );
    await d.run();
    expect(d.delivered).toBe(5);
    expect(d.failed).toBe(1);
    expect(calls).toBe(6);
    expect(holder.hints.stats().count).toBe(25);
  });

  it('skips a hint its target refuses (kept for later, warned about once) and delivers the ones behind it', async () => {
    const [holder, source] = [await open(), await open()];
    await hintsFor(holder, source, 10);
    const warnings: string[] = [];
    const d = new HintDelivery(
      { self: 'a', bytesPerSecond: 1 << 30, concurrency: 1 },
      {
        hints: holder.hints,
        isUp: () => true,
        send: async (_t, key) => {
          if (String(key) === 'k3') throw new ReplicaFailure('refused', 'KV_TOO_MANY_SIBLINGS', 'too many siblings');
        },
        log: { ...quiet, warn: (_o: object, m: string) => void warnings.push(m) },
      },
    );
    await d.run();
    expect(d.delivered).toBe(9);
    expect(d.refused).toBe(1);
    expect(d.failed).toBe(0);
    expect(holder.hints.stats().count).toBe(1);
    await d.run();
    expect(d.refused).toBe(2);
    expect(warnings).toEqual(['a hint was refused by its target; kept, and retried every run']);
  });

  it('is throttled to bytesPerSecond', async () => {
    const [holder, source] = [await open(), await open()];
    await hintsFor(holder, source, 40, 1000);
    let clock = 0;
    const slept: number[] = [];
    const d = new HintDelivery(
      { self: 'a', bytesPerSecond: 10_000, concurrency: 4 },
      {
        hints: holder.hints,
        isUp: () => true,
        send: async () => undefined,
        log: quiet,
        now: () => clock,
        sleep: async (ms) => {
          slept.push(ms);
          clock += ms;
        },
      },
    );
    await d.run();
    expect(d.delivered).toBe(40);
    // ~40 KB at 10 KB/s: about 4 s of (fake) time, in steps of one group of 4 hints.
    expect(clock).toBeGreaterThan(3900);
    expect(clock).toBeLessThan(4300);
    expect(slept.length).toBe(10);
  });
});

describe('hints while the ring changes, and when a node leaves', () => {
  it("a hint whose target gives up the key goes to the key's future replicas instead; others wait for their target", async () => {
    const [holder, source, c, d] = [await open(), await open(), await open(), await open()];
    await hintsFor(holder, source, 10);
    const sent: string[] = [];
    const stores: Record<string, Store> = { c, d };
    const delivery = new HintDelivery(
      { self: 'a', bytesPerSecond: 1 << 30 },
      {
        hints: holder.hints,
        isUp: (x) => x !== 'b', // the target itself is down
        send: async (to, key, record) => {
          sent.push(`${to}:${key}`);
          await stores[to]!.merge(key, record);
        },
        // Even keys move away from b (to c and d); odd keys stay b's.
        redirect: () => (key) => (Number(String(key).slice(1)) % 2 === 0 ? ['c', 'd'] : undefined),
        log: quiet,
      },
    );
    await delivery.run();
    expect(holder.hints.stats().count).toBe(5); // the odd ones wait for b
    expect(sent.filter((s) => s.startsWith('c:'))).toHaveLength(5);
    for (const i of [0, 2, 4, 6, 8]) for (const s of [c, d]) expect((await s.get(`k${i}`)).values).toHaveLength(1);
  });

  it('a leaving node hands its hints over: to the target when it is up, else as a hint on a live replica', async () => {
    const [holder, source, b, keeper] = [await open(), await open(), await open(), await open()];
    await hintsFor(holder, source, 6);
    let bUp = false;
    const delivery = new HintDelivery(
      { self: 'a', bytesPerSecond: 1 << 30 },
      {
        hints: holder.hints,
        isUp: (x) => x !== 'b' || bUp,
        send: (_to, key, record) => b.merge(key, record),
        keepOn: (_holder, target, key, record) => keeper.hints.add(target, key, record),
        log: quiet,
      },
    );
    expect(await delivery.handOver(() => undefined)).toBe(6); // nowhere to put them: all stay
    expect(await delivery.handOver(() => 'keeper')).toBe(0);
    expect(holder.hints.stats().count).toBe(0);
    expect(keeper.hints.targets().get('b')?.count).toBe(6);
    await hintsFor(holder, source, 2);
    bUp = true;
    expect(await delivery.handOver(() => 'keeper')).toBe(0);
    expect((await b.get('k0')).values.length).toBeGreaterThan(0); // delivered to b itself, not kept elsewhere
    expect(keeper.hints.targets().get('b')?.count).toBe(6);
  });
});

describe('hint routes per bucket n', () => {
  const ring = claimRing(
    ['a', 'b', 'c', 'd', 'e', 'f'].map((id) => ({ id })),
    3,
    { tokensPerNode: 8 },
  );
  const table = new BucketTable(3);
  table.create('one', { ...defaultProps(3), n: 1 }, 1000, 'a');
  table.create('five', { ...defaultProps(3), n: 5 }, 1000, 'a');
  const { nOf } = keyClasses(table);
  const keys = (bucket: string): Buffer[] =>
    Array.from({ length: 200 }, (_, i) => storedKey(bucket, Buffer.from(`k${i}`)));

  it("a gone target's hints go to the key's replicas for its own bucket's n", () => {
    const route = hintRoute(ring, 'b', true, nOf);
    for (const [bucket, n] of [
      [DEFAULT_BUCKET, 3],
      ['one', 1],
      ['five', 5],
    ] as const)
      for (const k of keys(bucket)) expect(route(k)).toEqual(ring.preferenceList(k, n));
  });

  it("a target that stays a replica for the key's n keeps its hint; one that does not sends it to the replicas", () => {
    const route = hintRoute(ring, 'b', false, nOf);
    for (const [bucket, n] of [
      [DEFAULT_BUCKET, 3],
      ['one', 1],
      ['five', 5],
    ] as const)
      for (const k of keys(bucket)) {
        const replicas = ring.preferenceList(k, n);
        expect(route(k)).toEqual(replicas.includes('b') ? undefined : replicas);
      }
    // An n=5 key b replicates that an n=1 routing would have sent away (and the other way round) exists.
    expect(keys('five').some((k) => route(k) === undefined && !ring.preferenceList(k, 1).includes('b'))).toBe(true);
  });

  it("a sub-key's hint goes to its parent's replicas, for its bucket's n", () => {
    const route = hintRoute(ring, 'b', true, nOf);
    for (const bucket of ['one', 'five'] as const)
      for (const parent of keys(bucket))
        expect(route(subKey(parent, { element: `e:${parent.length}` }))).toEqual(route(parent));
    // Placed by their own bytes, some would go elsewhere: the test could fail.
    expect(
      keys('five').some(
        (p) => ring.preferenceList(subKey(p, { element: 'x' }), 5).join() !== ring.preferenceList(p, 5).join(),
      ),
    ).toBe(true);
  });

  it('a key of a bucket this node does not know yet goes nowhere (the hint is kept)', () => {
    expect(hintRoute(ring, 'b', true, nOf)(storedKey('later', Buffer.from('k')))).toEqual([]);
  });
});
