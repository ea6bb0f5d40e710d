/**
 * The coordinator's part of expiry: a put's TTL (or its bucket's default) becomes one
 * absolute expiry, by the coordinator's clock, that every replica's copy carries; a read
 * leaves out what expired by the reading coordinator's clock; a bad TTL is refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_TTL_MS, type BucketProps } from '../../../src/buckets/index.js';
import { decodeRecord } from '../../../src/kinds/versions/codec.js';
import { toStatus } from '../../../src/transport/status.js';
import { FakeCluster, eventually } from './fake-cluster.js';

let cluster: FakeCluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

const bucket = (ttlMs: number): BucketProps => ({ n: 3, r: 0, w: 0, ttlMs, siblings: 'siblings' });
const key = Buffer.from('k');

/** Each replica's sibling expiries of the key, once every replica holds it. */
async function expiries(c: FakeCluster): Promise<(number | undefined)[][]> {
  await eventually(async () =>
    (await Promise.all(c.owners('k').map((id) => c.store(id).getRecord(key)))).every((r) => r !== undefined),
  );
  return Promise.all(
    c
      .owners('k')
      .map(async (id) => decodeRecord((await c.store(id).getRecord(key))!).versions.siblings.map((s) => s.expiresAt)),
  );
}

describe('coordinator: expiry', () => {
  it('a put with a TTL stores one expiry, its TTL past the coordinator clock, on every replica', async () => {
    const c = (cluster = await FakeCluster.create(3));
    const t = Date.now() + 5_000; // the coordinator's clock runs ahead of the replicas'
    c.now = () => t;
    await c.coordinator('n1').put(key, Buffer.from('v'), Buffer.alloc(0), { ttlMs: 2_000 });
    expect(await expiries(c)).toEqual([[t + 2_000], [t + 2_000], [t + 2_000]]);
  });

  it("a put without a TTL takes its bucket's default; its own TTL overrides it; 0 and 0 mean no expiry", async () => {
    const c = (cluster = await FakeCluster.create(3));
    const t = Date.now();
    c.now = () => t;
    await c.coordinator('n1').put(key, Buffer.from('a'), Buffer.alloc(0), { bucket: bucket(7_000) });
    const r = await c.coordinator('n1').get(key);
    await c.coordinator('n1').put(key, Buffer.from('b'), r.context, { bucket: bucket(7_000), ttlMs: 3_000 });
    await eventually(async () => (await expiries(c)).every((e) => e.length === 1 && e[0] === t + 3_000));
    const r2 = await c.coordinator('n1').get(key);
    await c.coordinator('n1').put(key, Buffer.from('c'), r2.context, { bucket: bucket(0) });
    await eventually(async () => (await expiries(c)).every((e) => e.length === 1 && e[0] === undefined));
  });

  it("a read leaves out what expired by the reading coordinator's clock, whatever the replicas' clocks say", async () => {
    const c = (cluster = await FakeCluster.create(3));
    const t = Date.now();
    c.now = () => t;
    await c.coordinator('n1').put(key, Buffer.from('v'), Buffer.alloc(0), { ttlMs: 60_000 });
    await expiries(c);
    expect((await c.coordinator('n2').get(key)).values.map(String)).toEqual(['v']);
    c.now = () => t + 60_000;
    const r = await c.coordinator('n2').get(key);
    expect(r).toMatchObject({ values: [], found: false });
    // The replicas' own clocks are a minute behind that: they still hold it, unexpired to them.
    expect((await c.store('n1').get(key)).values.map(String)).toEqual(['v']);
    // The read's context covers the expired value: a put with it leaves one sibling.
    await c.coordinator('n2').put(key, Buffer.from('w'), r.context);
    expect((await c.coordinator('n2').get(key)).values.map(String)).toEqual(['w']);
    await eventually(async () => (await c.store('n1').get(key)).versions === 1);
  });

  it('a TTL out of range is refused with INVALID_ARGUMENT saying the range', async () => {
    const c = (cluster = await FakeCluster.create(3));
    for (const ttlMs of [-1, 1.5, MAX_TTL_MS + 1, Number.NaN]) {
      const e = await c
        .coordinator('n1')
        .put(key, Buffer.from('v'), Buffer.alloc(0), { ttlMs })
        .catch((x: unknown) => x);
      expect(e).toMatchObject({
        code: 'RK_BAD_ARGUMENT',
        message: expect.stringMatching(/ttl_ms must be 1 to \d+ ms/),
      });
      expect(toStatus(e).code).toBe(3);
    }
    await c.coordinator('n1').put(key, Buffer.from('v'), Buffer.alloc(0), { ttlMs: MAX_TTL_MS });
    await c.coordinator('n1').put(key, Buffer.from('v'), Buffer.alloc(0), { ttlMs: 1 });
  });
});

describe('coordinator: last-writer-wins buckets', () => {
  const lww: BucketProps = { n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'lww' };

  it('two blind puts leave one value, on every replica and in a read; a siblings bucket keeps both', async () => {
    const c = (cluster = await FakeCluster.create(3, {}, 3, {
      policyOf: (k) => (k.toString().startsWith('l') ? 'lww' : 'siblings'),
    }));
    for (const [k, props] of [
      ['lk', lww],
      ['sk', bucket(0)],
    ] as const) {
      await c
        .coordinator('n1')
        .put(Buffer.from(k), Buffer.from('first'), Buffer.alloc(0), { bucket: props, quorum: 3 });
      await new Promise((r) => setTimeout(r, 2)); // a later write time
      await c
        .coordinator('n2')
        .put(Buffer.from(k), Buffer.from('second'), Buffer.alloc(0), { bucket: props, quorum: 3 });
    }
    expect((await c.coordinator('n3').get(Buffer.from('lk'), { bucket: lww, quorum: 3 })).values.map(String)).toEqual([
      'second',
    ]);
    expect(
      (await c.coordinator('n3').get(Buffer.from('sk'), { bucket: bucket(0), quorum: 3 })).values.map(String).sort(),
    ).toEqual(['first', 'second']);
    await eventually(async () =>
      (await Promise.all(c.owners('lk').map((id) => c.values(id, 'lk')))).every(
        (v) => v.length === 1 && v[0] === 'second',
      ),
    );
  });
});
