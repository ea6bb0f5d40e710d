/**
 * The verification pass (src/repair/verify.ts) over a fake cluster's stores: a record
 * damaged on one replica's disk, which no read reaches, is found by the pass and restored
 * from the other replicas (whatever its kind: a value, a counter); one no other replica
 * holds is reported as not restored; the pass reads every record and counts its bytes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { placementKey, storedKey } from '../../../src/buckets/index.js';
import { Verifier } from '../../../src/repair/verify.js';
import { FakeCluster, eventually } from '../replication/fake-cluster.js';

const B = (s: string): Buffer => Buffer.from(s);
const EMPTY = Buffer.alloc(0);
let cluster: FakeCluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

function verifierOf(c: FakeCluster, id: string): Verifier {
  return new Verifier({
    store: c.store(id),
    replicasOf: (key) => c.ring.preferenceList(placementKey(key), 3).filter((x) => x !== id),
    fetch: (node, key) => c.store(node).getRecord(key),
    log: pino({ level: 'silent' }),
    now: Date.now,
  });
}

describe('verification pass', () => {
  it('finds records damaged on disk that no read reached and restores them from the other replicas; counts what it read', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    for (let i = 0; i < 100; i++) await c.coordinator('n1').put(B(`k${i}`), B(`v${i}`), EMPTY, { quorum: 3 });
    const counter = storedKey('hits', B('c'));
    await c.coordinator('n1').counterUpdate(counter, 7, { quorum: 3 });
    await c.damage('n3', B('k42'));
    await c.damage('n3', counter);
    const v = verifierOf(c, 'n3');
    const p = await v.pass({ bytesPerSecond: 1 << 30, share: () => 1, signal: new AbortController().signal });
    expect(p).toMatchObject({ records: 99, corrupt: 2, restored: 2, unrestored: 0 });
    expect(p.bytes).toBeGreaterThan(0);
    expect(p.finishedAtMs).toBeGreaterThanOrEqual(p.startedAtMs);
    expect((await c.store('n3').get(B('k42'))).values.map(String)).toEqual(['v42']);
    expect((await c.coordinator('n3').counterGet(counter, { quorum: 1 })).value).toBe(7n);
    // A second pass finds every record whole.
    expect(
      await v.pass({ bytesPerSecond: 1 << 30, share: () => 1, signal: new AbortController().signal }),
    ).toMatchObject({ records: 101, corrupt: 0 });
    expect(v.totals).toMatchObject({ passes: 2, corrupt: 2, restored: 2 });
  });

  it("restores at once a record a read or a scan found corrupt (the store's onCorrupt), once however often it is met", async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    for (const k of ['a', 'b']) await c.coordinator('n1').put(B(k), B(`v-${k}`), EMPTY, { quorum: 3 });
    await c.damage('n2', B('a'));
    await c.damage('n2', B('b'));
    const v = verifierOf(c, 'n2');
    c.store('n2').onCorrupt = (key) => v.restoreSoon(key);
    await c
      .store('n2')
      .get(B('a'))
      .catch(() => undefined); // a read meets it
    await c
      .store('n2')
      .get(B('a'))
      .catch(() => undefined); // and again, before it is restored
    for await (const batch of c.store('n2').ranges.scan({ start: 0n, end: 0n })) void batch; // a stream's or a repair's scan meets b
    await eventually(
      async () =>
        (
          await Promise.all(
            ['a', 'b'].map((k) =>
              c
                .store('n2')
                .get(B(k))
                .then(
                  (r) => String(r.values[0]),
                  () => '',
                ),
            ),
          )
        ).join() === 'v-a,v-b',
    );
    expect(v.totals).toMatchObject({ corrupt: 2, restored: 2, unrestored: 0 });
  });

  it('reports a record no other replica gives as not restored, and leaves it for a read or repair', async () => {
    cluster = await FakeCluster.create(3);
    const c = cluster;
    await c.coordinator('n1').put(B('only'), B('v'), EMPTY, { quorum: 3 });
    await c.damage('n2', B('only'));
    const v = new Verifier({
      store: c.store('n2'),
      replicasOf: () => [],
      fetch: async () => undefined,
      log: pino({ level: 'silent' }),
      now: Date.now,
    });
    expect(
      await v.pass({ bytesPerSecond: 1 << 30, share: () => 1, signal: new AbortController().signal }),
    ).toMatchObject({ corrupt: 1, restored: 0, unrestored: 1 });
  });
});
