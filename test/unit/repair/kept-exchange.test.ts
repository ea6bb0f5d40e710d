/**
 * Repair on trees kept on write (storage/kept-trees.ts) between two stores, the peer
 * served over gRPC on loopback (transport/repair-wire.ts): replicas in sync compare roots
 * and read no record on either side; a difference descends and reads only the differing
 * leaves; a peer with no kept tree of the range (not built yet, or a release without kept
 * trees, which never sets TreeDigestsResponse.kept) makes the repair fall back to scans on
 * both sides, never comparing a kept tree with a scanned one.
 */
import * as grpc from '@grpc/grpc-js';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Ring } from '../../../src/ring/index.js';
import { RepairRuns } from '../../../src/repair/runs.js';
import { MemoryEngine, Store } from '../../../src/storage/index.js';
import { serviceClient } from '../../../src/transport/protos.js';
import { GrpcRepair, repairService } from '../../../src/transport/repair-wire.js';

const quiet = { debug: () => {}, warn: () => {} };
const WHOLE = { n: 0, start: 0n, end: 0n };
let server: grpc.Server | undefined;
const stores: Store[] = [];
afterEach(async () => {
  server?.forceShutdown();
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

async function open(kept: boolean): Promise<Store> {
  const s = await Store.open({ engine: new MemoryEngine(), ...(kept ? { keptTrees: { depth: 2 } } : {}) });
  stores.push(s);
  if (kept) {
    await s.trees!.track([WHOLE]);
    await s.trees!.settled();
  }
  return s;
}

/** Node "a" (local) repairing with node "b" (served over gRPC), one range: the whole ring, N=2. */
async function pair(peer: Store, local: Store): Promise<RepairRuns> {
  server = new grpc.Server();
  server.addService(
    serviceClient('ringkv.internal.v1.Repair').service,
    repairService({ clusterName: 'test', store: peer, now: Date.now, refuse: () => undefined, log: quiet }),
  );
  const port = await new Promise<number>((resolve, reject) =>
    server!.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  const ring = Ring.build([
    { id: 'a', tokens: [1n << 63n] },
    { id: 'b', tokens: [1n << 62n] },
  ]);
  return new RepairRuns({
    id: 'a',
    classes: () => [2],
    only: () => () => true,
    store: local,
    ring: () => ring,
    isUp: () => true,
    wire: new GrpcRepair('a', 'test', () => `127.0.0.1:${port}`, grpc.credentials.createInsecure()),
    timeoutMs: 10_000,
    now: Date.now,
    log: pino({ level: 'silent' }),
  });
}

async function fill(stores: readonly Store[], keys: number, skipOn1 = new Set<number>()): Promise<void> {
  for (let i = 0; i < keys; i++) {
    const w = await stores[0]!.put(`key-${i}`, Buffer.from(`value-${i}`));
    if (!skipOn1.has(i)) await stores[1]!.merge(`key-${i}`, w.record);
  }
}

async function runAll(r: RepairRuns) {
  const p = r.start();
  while (p.finishedAtMs === 0) await new Promise((res) => setTimeout(res, 5));
  return p;
}

describe('repair on kept trees', () => {
  it('in sync: compares roots and reads no record on either side', async () => {
    const [a, b] = [await open(true), await open(true)];
    await fill([a, b], 500);
    const r = await pair(b, a);
    r.trackKept(); // the ring's units: (a's two ranges) tracked, built, then compared
    await a.trees!.settled();
    await b.trees!.track(a.trees!.readyUnits());
    await b.trees!.settled();
    const readA = a.ranges.recordsRead,
      readB = b.ranges.recordsRead;
    const p = await runAll(r);
    expect(p).toMatchObject({
      done: 2,
      failed: 0,
      identical: 2,
      kept: 2,
      leavesDiffering: 0,
      keysExchanged: 0,
      recordsRead: 0,
    });
    expect(a.ranges.recordsRead - readA).toBe(0);
    expect(b.ranges.recordsRead - readB).toBe(0);
  });

  it('with differences: reads only the differing leaves, repairs them, and a second repair finds the replicas in sync', async () => {
    const [a, b] = [await open(true), await open(true)];
    await fill([a, b], 500, new Set([7, 123, 444]));
    const r = await pair(b, a);
    r.trackKept();
    await a.trees!.settled();
    await b.trees!.track(a.trees!.readyUnits());
    await b.trees!.settled();
    const first = await runAll(r);
    expect(first).toMatchObject({ done: 2, failed: 0, kept: 2, keysExchanged: 3 });
    expect(first.recordsRead).toBeGreaterThan(0);
    expect(first.recordsRead).toBeLessThan(100); // three leaves' keys of 256 leaves, not the 500 records
    const second = await runAll(r);
    expect(second).toMatchObject({ identical: 2, kept: 2, leavesDiffering: 0, recordsRead: 0 });
  });

  it('falls back to scans on both sides when the peer has no kept tree of the range', async () => {
    const [a, b] = [await open(true), await open(false)];
    await fill([a, b], 300, new Set([5]));
    const r = await pair(b, a);
    r.trackKept();
    await a.trees!.settled();
    const p = await runAll(r);
    expect(p).toMatchObject({ done: 2, failed: 0, kept: 0, keysExchanged: 1 });
    expect(p.recordsRead).toBeGreaterThanOrEqual(300); // scanned
    expect((await b.get('key-5')).values.map(String)).toEqual(['value-5']);
  });
});
