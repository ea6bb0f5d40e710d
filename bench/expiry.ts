/**
 * npm run bench:expiry — the figures of expiry (docs/reads-and-writes.md#expiry), each
 * against its baseline in the same run:
 *
 *   storage     bytes a key takes in LevelDB with a TTL ÷ without (16-byte keys, 100-byte
 *               values): its record (format 3: the expiry with the sibling) and its entry
 *               in the expiry index, counted exactly by reading the database
 *   reclaim     expired keys reclaimed per second by Store.reclaimExpired (the expiry index,
 *               oldest first): keys that superseded nothing (dropped whole) and keys that
 *               superseded an older value (rewritten, their clock kept as a tombstone)
 *   cluster     put and get ops/s through a 3-node cluster (ringkv node processes, N=3,
 *               W=R=2, 64 in flight) in a bucket whose default TTL is on (1 hour: nothing
 *               expires during the run) ÷ a bucket alike but without one, rounds
 *               interleaved, the median of each; target ≥ 0.95×
 *
 * Every loop is bounded in count and time; every process is stopped by its PID; loopback
 * and free ports only. Flags: --quick (fewer keys, shorter rounds).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../src/client/index.js';
import { LevelEngine, Store } from '../src/storage/index.js';
import { EXPIRY } from '../src/storage/keys.js';
import { TestCluster } from '../testkit/node-cluster.js';
import { waitFor } from '../testkit/wait.js';
import { table } from './lib.js';

const quick = process.argv.includes('--quick');
const KEYS = quick ? 5_000 : 20_000;
const RECLAIM_KEYS = quick ? 10_000 : 50_000;
const ROUND_S = quick ? 3 : 6;
const ROUNDS = quick ? 2 : 3;
const INFLIGHT = 64;
const T0 = 1_796_000_000_000;
const VALUE = Buffer.alloc(100, 'v');
const key = (i: number): string => `key-${String(i).padStart(12, '0')}`; // 16 bytes

/** A store on LevelDB in a scratch directory, on a clock the caller moves. */
async function scratch(): Promise<{
  store: Store;
  engine: LevelEngine;
  clock: { now: number };
  done: () => Promise<void>;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'ringkv-bench-expiry-'));
  const engine = new LevelEngine(dir);
  const clock = { now: T0 };
  const store = await Store.open({ engine, now: () => clock.now });
  return {
    store,
    engine,
    clock,
    done: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })),
  };
}

/** Key + value bytes of the database's entries under one prefix byte. */
async function bytesUnder(engine: LevelEngine, prefix: number): Promise<{ entries: number; bytes: number }> {
  const it = engine.iterator(Buffer.from([prefix]), Buffer.from([prefix + 1]));
  let entries = 0,
    bytes = 0;
  for (let chunk = await it.nextv(1000); chunk.length > 0; chunk = await it.nextv(1000))
    for (const [k, v] of chunk) (entries++, (bytes += k.length + v.length));
  await it.close();
  return { entries, bytes };
}

async function storage(): Promise<string[][]> {
  const rows: string[][] = [];
  for (const ttl of [false, true]) {
    const s = await scratch();
    for (let i = 0; i < KEYS; i += 256)
      await Promise.all(
        Array.from({ length: Math.min(256, KEYS - i) }, (_, j) =>
          s.store.put(key(i + j), VALUE, undefined, ttl ? { expiresAt: T0 + 3_600_000 } : {}),
        ),
      );
    const data = await bytesUnder(s.engine, 0x64),
      index = await bytesUnder(s.engine, EXPIRY);
    rows.push([
      ttl ? 'with a TTL' : 'without',
      String(data.entries),
      (data.bytes / data.entries).toFixed(1),
      index.entries === 0 ? '0' : (index.bytes / index.entries).toFixed(1),
      ((data.bytes + index.bytes) / data.entries).toFixed(1),
    ]);
    await s.done();
  }
  const [off, on] = rows.map((r) => Number(r[4]));
  rows.push([
    'overhead',
    '',
    (Number(rows[1]![2]) - Number(rows[0]![2])).toFixed(1),
    rows[1]![3]!,
    `+${(on! - off!).toFixed(1)} (${(on! / off!).toFixed(3)}×)`,
  ]);
  return rows;
}

async function reclaim(
  superseding: boolean,
): Promise<{ keys: number; seconds: number; dropped: number; rewritten: number }> {
  const s = await scratch();
  for (let i = 0; i < RECLAIM_KEYS; i += 256)
    await Promise.all(
      Array.from({ length: Math.min(256, RECLAIM_KEYS - i) }, async (_, j) => {
        const first = superseding ? (await s.store.put(key(i + j), VALUE)).context : undefined;
        await s.store.put(key(i + j), VALUE.subarray(1), first, { expiresAt: T0 + 1000 });
      }),
    );
  s.clock.now = T0 + 1000;
  const started = performance.now();
  const r = await s.store.reclaimExpired();
  const seconds = (performance.now() - started) / 1000;
  await s.done();
  return { keys: r.dropped + r.rewritten, seconds, ...r };
}

/** One closed loop of `op` at INFLIGHT for ROUND_S seconds (and at most 2M operations): successful ops/s. */
async function loop(op: (i: number) => Promise<unknown>): Promise<number> {
  const end = performance.now() + ROUND_S * 1000;
  let next = 0,
    ok = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (performance.now() < end && next < 2_000_000) {
        const i = next++;
        try {
          await op(i);
          ok++;
        } catch {
          /* counted by its absence */
        }
      }
    }),
  );
  return ok / ((performance.now() - started) / 1000);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Create a bucket, trying again (5 times at most) while the new cluster is slow to confirm it. */
async function makeBucket(c: TestCluster, name: string, ttlMs: number): Promise<void> {
  const admin = c.node('n1').admin();
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.createBucket(name, { ttlMs });
      return;
    } catch (e) {
      if ((await admin.listBuckets().catch(() => [])).some((b) => b.name === name)) return;
      if (attempt >= 5) throw e;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

async function cluster(): Promise<string[][]> {
  const c = await TestCluster.create(3, 3, ['--request-timeout-ms', '2000']);
  let client: Client | undefined;
  try {
    for (const n of c.nodes) n.start();
    await waitFor(
      '3 normal and up on every node',
      60_000,
      async () =>
        (await c.views()).every(
          (v) => v?.members.length === 3 && v.members.every((m) => m.status === 'normal' && m.up),
        ),
      250,
    );
    // Two named buckets, alike but for the TTL: the comparison is of expiry alone, not of a bucket's key prefix.
    await makeBucket(c, 'plain', 0);
    await makeBucket(c, 'ttl', 3_600_000);
    client = new Client({ nodes: c.nodes.map((n) => n.address) });
    const kv = client;
    const arms = [
      { name: 'no TTL', bucket: 'plain' },
      { name: 'TTL 1 h', bucket: 'ttl' },
    ];
    // Keys to read, in both buckets (every read finds its value).
    for (const a of arms)
      for (let i = 0; i < 2000; i += 64)
        await Promise.all(Array.from({ length: 64 }, (_, j) => kv.put(key(i + j), VALUE, { w: 3, bucket: a.bucket })));
    const puts = new Map<string, number[]>(),
      gets = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? arms : [...arms].reverse();
      for (const a of order)
        (puts.get(a.name) ?? puts.set(a.name, []).get(a.name)!).push(
          await loop((i) => kv.put(`p${round}-${i}`, VALUE, { w: 2, bucket: a.bucket })),
        );
      for (const a of order)
        (gets.get(a.name) ?? gets.set(a.name, []).get(a.name)!).push(
          await loop((i) => kv.get(key(i % 2000), { r: 2, bucket: a.bucket })),
        );
    }
    const row = (what: string, m: Map<string, number[]>): string[] => {
      const [off, on] = arms.map((a) => median(m.get(a.name)!));
      const ratio = on! / off!;
      return [what, off!.toFixed(0), on!.toFixed(0), `${ratio.toFixed(3)}×`, ratio >= 0.95 ? 'met' : 'NOT MET'];
    };
    return [row('put', puts), row('get', gets)];
  } finally {
    client?.close();
    c.destroy();
  }
}

console.log(`bench:expiry — ${quick ? 'quick' : 'full'} run, ${new Date().toISOString()}\n`);
console.log(`storage (LevelDB, ${KEYS} keys of 16 bytes, values of 100 bytes), bytes per key:`);
console.log(table([['keys', 'count', 'record + key', 'index entry', 'total'], ...(await storage())]));
const rec = [await reclaim(false), await reclaim(true)];
console.log(`\nreclamation (Store.reclaimExpired, ${RECLAIM_KEYS} expired keys, LevelDB):`);
console.log(
  table([
    ['keys', 'reclaimed', 'seconds', 'keys/s'],
    [
      'superseded nothing (dropped)',
      String(rec[0]!.dropped),
      rec[0]!.seconds.toFixed(2),
      (rec[0]!.keys / rec[0]!.seconds).toFixed(0),
    ],
    [
      'superseded a value (rewritten)',
      String(rec[1]!.rewritten),
      rec[1]!.seconds.toFixed(2),
      (rec[1]!.keys / rec[1]!.seconds).toFixed(0),
    ],
  ]),
);
console.log(
  `\ncluster (3 nodes, N=3, W=R=2, ${INFLIGHT} in flight, median of ${ROUNDS} interleaved rounds of ${ROUND_S} s), ops/s:`,
);
console.log(
  table([['op', 'bucket, no TTL', 'bucket, TTL 1 h', 'TTL ÷ no TTL', 'target ≥ 0.95×'], ...(await cluster())]),
);
