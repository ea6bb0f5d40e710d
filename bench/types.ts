/**
 * npm run bench:types — the data types (issue 30) on a local cluster of 3 `ringkv node`
 * processes (built code, zones a/b/c, N=3, R=W=2, 127.0.0.1, free ports), one
 * ringkv/client in this process driving loops bounded in time and count.
 *
 * 1. Set add on sets of 10, 1,000 and 10,000 elements: each set is filled (updates of
 *    1,000 adds, not measured), then `--adds` single-element adds run one at a time
 *    (latency, not throughput): p50 and p99, and the bytes the nodes sent to replicas per
 *    add (the sum of every node's ringkv_replica_bytes_sent_total before and after, so
 *    it counts the issue call, the records sent on, and any repair or hint meanwhile).
 *    Targets: p50 ≤ 5 ms at 10,000 elements; bytes per add at 10,000 within 2× of at 10.
 *    The same for maps of 10, 1,000 and 10,000 register fields: updates of three fields
 *    at once (a register, a counter, a set field's element), one at a time.
 * 2. Counter increments against plain puts at 128 in flight, in the same run: rounds of
 *    `--seconds` each, alternating which goes first, over 1,000 keys each; the median
 *    round's ops/s. Target: increments/s ≥ 0.7× puts/s.
 * 3. Compare-and-set uncontended against plain puts (issue 31): `--adds` pairs one at a
 *    time, a put then a putIf on a fresh key of a consistent bucket (alternating which goes
 *    first), p50 and p99 of each. Target: putIf p50 ≤ 2.5× put p50. Then 8 writers on one
 *    key for `--seconds`, each a putIf on the version it last saw: calls/s, applied/s, and
 *    the shares not applied and unknown.
 *
 * 4. Resets and drops: `--adds` counter resets one at a time, each on a counter
 *    incremented and read just before (that increment and get are the baseline): a reset
 *    is a read and a write, so its p50 is set against the sum of theirs. A set drop of
 *    the largest size against filling that set in updates of 1,000 (the same elements, the
 *    same run): elements per second of each. No targets: the figures say what they cost.
 *
 *   npm run bench:types [-- --adds 300] [-- --seconds 5] [-- --rounds 3] [-- --sizes 10,1000,10000]
 *                       [-- --cpu-prof DIR] [-- --json FILE]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { AdminClient, Client, casNotApplied } from '../src/client/index.js';
import { freePort } from '../testkit/ports.js';
import { argOf, histogram, table } from './lib.js';
import { Proc, VALUE, benchRoot, formed, key, sleep, stopAll } from './processes.js';

const args = process.argv.slice(2);
const arg = (name: string, def: string): string => argOf(args, name, def);
const ADDS = Number(arg('adds', '300'));
const SECONDS = Number(arg('seconds', '5'));
const ROUNDS = Number(arg('rounds', '3'));
const SIZES = arg('sizes', '10,1000,10000').split(',').map(Number);
const CPU_PROF = args.includes('--cpu-prof') ? arg('cpu-prof', 'profiles') : undefined;
const JSON_OUT = args.includes('--json') ? arg('json', 'types.json') : undefined;
for (const [name, v] of [
  ['adds', ADDS],
  ['seconds', SECONDS],
  ['rounds', ROUNDS],
  ...SIZES.map((s) => ['sizes', s] as const),
] as const)
  if (!(Number.isInteger(v) && v > 0)) throw new Error(`--${name} must be a positive whole number, got ${v}`);

const IN_FLIGHT = 128;
const KEYS = 1000;
/** A bound on every loop, whatever --seconds says. */
const MAX_CALLS = 2_000_000;
const SETS = 'bench-sets',
  COUNTERS = 'bench-counters',
  MAPS = 'bench-maps',
  LOCKS = 'bench-cas';
/** Writers on one key in the contended compare-and-set run. */
const CAS_WRITERS = 8;

/** A metric summed over every node and label set (ringkv_replica_bytes_sent_total, say). */
async function metricSum(http: readonly string[], name: string): Promise<number> {
  let sum = 0;
  const line = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+(?:\\.\\d+)?(?:e\\+\\d+)?)$`, 'gm');
  for (const h of http) {
    const text = await (await fetch(`http://${h}/metrics`)).text();
    for (const m of text.matchAll(line)) sum += Number(m[1]);
  }
  return sum;
}

const replicaBytes = (http: readonly string[]): Promise<number> => metricSum(http, 'ringkv_replica_bytes_sent_total');

interface UpdateRow {
  size: number;
  p50: number;
  p99: number;
  bytesPerUpdate: number;
  failed: number;
}

/**
 * The cost of one small update of a value of `size` parts: `fill(from, count)` writes
 * parts [from, from + count) (1,000 a call, not measured), then ADDS calls of
 * `update(i)` run one at a time: p50, p99, and the replica bytes per update.
 */
async function updateCost(
  http: readonly string[],
  size: number,
  fill: (from: number, count: number) => Promise<unknown>,
  update: (i: number) => Promise<unknown>,
): Promise<UpdateRow> {
  for (let i = 0; i < size; i += 1000) await fill(i, Math.min(1000, size - i));
  // Warm: the same path, unmeasured.
  for (let i = 0; i < 20; i++) await update(-1 - i);
  await sleep(200); // the warm-up's background sends done
  const h = histogram();
  let failed = 0;
  const bytes0 = await replicaBytes(http);
  for (let i = 0; i < ADDS; i++) {
    const s = performance.now();
    try {
      await update(i);
      h.recordValue(Math.max(1, Math.round((performance.now() - s) * 1000)));
    } catch {
      failed++;
    }
  }
  await sleep(200); // the last updates' records reach the third replica
  const bytes = (await replicaBytes(http)) - bytes0;
  const row = {
    size,
    p50: h.getValueAtPercentile(50) / 1000,
    p99: h.getValueAtPercentile(99) / 1000,
    bytesPerUpdate: bytes / (ADDS - failed),
    failed,
  };
  h.destroy();
  return row;
}

const part = (prefix: string, i: number): string => `${prefix}-${i < 0 ? `warm${-i}` : String(i).padStart(8, '0')}`;

/** Single-element adds to a set of `size` elements. */
function setAdds(kv: Client, http: readonly string[], size: number): Promise<UpdateRow> {
  const set = `set-${size}`;
  return updateCost(
    http,
    size,
    (from, count) =>
      kv.setAdd(
        set,
        Array.from({ length: count }, (_, j) => part('element', from + j)),
        { bucket: SETS, w: 3, deadlineMs: 30_000 },
      ),
    (i) => kv.setAdd(set, [part('added', i)], { bucket: SETS, w: 2 }),
  );
}

/** Updates of three fields at once (a register assigned, a counter incremented, an element added to a set field) in a map of `size` register fields. */
function mapUpdates(kv: Client, http: readonly string[], size: number): Promise<UpdateRow> {
  const map = `map-${size}`;
  return updateCost(
    http,
    size,
    (from, count) =>
      kv.mapUpdate(
        map,
        Array.from({ length: count }, (_, j) => ({
          op: 'assign' as const,
          path: [{ name: part('field', from + j), type: 'register' as const }],
          value: 'v',
        })),
        { bucket: MAPS, w: 3, deadlineMs: 30_000 },
      ),
    (i) =>
      kv.mapUpdate(
        map,
        [
          { op: 'assign', path: [{ name: 'last', type: 'register' }], value: part('page', i) },
          { op: 'increment', path: [{ name: 'visits', type: 'counter' }], amount: 1 },
          { op: 'add', path: [{ name: 'seen', type: 'set' }], element: part('page', i) },
        ],
        { bucket: MAPS, w: 2 },
      ),
  );
}

interface LoadRun {
  opsPerSec: number;
  p50: number;
  p99: number;
  failed: number;
}

/** A closed loop of IN_FLIGHT workers for SECONDS: counter increments or puts over KEYS keys. */
async function load(kv: Client, kind: 'counter' | 'put'): Promise<LoadRun> {
  const h = histogram();
  let ops = 0,
    failed = 0,
    next = 0;
  const started = performance.now();
  const end = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < end && ops + failed < MAX_CALLS) {
        const k = key(kind === 'counter' ? 'c' : 'p', (next++ * 7919) % KEYS);
        const s = performance.now();
        try {
          await (kind === 'counter' ? kv.counterUpdate(k, 1, { bucket: COUNTERS, w: 2 }) : kv.put(k, VALUE, { w: 2 }));
          h.recordValue(Math.max(1, Math.round((performance.now() - s) * 1000)));
          ops++;
        } catch {
          failed++;
        }
      }
    }),
  );
  const r = {
    opsPerSec: ops / ((performance.now() - started) / 1000),
    p50: h.getValueAtPercentile(50) / 1000,
    p99: h.getValueAtPercentile(99) / 1000,
    failed,
  };
  h.destroy();
  return r;
}

const ms = (h: hdr.Histogram, p: number): number => h.getValueAtPercentile(p) / 1000;

/** ADDS pairs one at a time, a put and a putIf (if absent) on a fresh key each, alternating which goes first: each one's latency. */
async function casUncontended(
  kv: Client,
): Promise<{ put: { p50: number; p99: number }; cas: { p50: number; p99: number }; failed: number }> {
  const hs = { put: histogram(), cas: histogram() };
  let failed = 0;
  const one = async (kind: 'put' | 'cas', i: number, record: boolean): Promise<void> => {
    const s = performance.now();
    try {
      if (kind === 'put') await kv.put(part('put', i), VALUE, { w: 2 });
      else if (!(await kv.putIf(part('cas', i), VALUE, { bucket: LOCKS })).applied)
        throw new Error('a fresh key was not absent');
      if (record) hs[kind].recordValue(Math.max(1, Math.round((performance.now() - s) * 1000)));
    } catch {
      failed++;
    }
  };
  for (let i = 0; i < 20; i++) for (const k of ['put', 'cas'] as const) await one(k, -1 - i, false); // warm
  for (let i = 0; i < ADDS; i++)
    for (const k of i % 2 === 0 ? (['put', 'cas'] as const) : (['cas', 'put'] as const)) await one(k, i, true);
  const r = {
    put: { p50: ms(hs.put, 50), p99: ms(hs.put, 99) },
    cas: { p50: ms(hs.cas, 50), p99: ms(hs.cas, 99) },
    failed,
  };
  hs.put.destroy();
  hs.cas.destroy();
  return r;
}

/** CAS_WRITERS writers on one key for SECONDS, each a putIf on the version it last saw. */
async function casContended(
  kv: Client,
  http: readonly string[],
): Promise<{
  callsPerSec: number;
  appliedPerSec: number;
  notApplied: number;
  unknown: number;
  refused: number;
  calls: number;
  retriesPerCall: number;
  p50: number;
  p99: number;
}> {
  const h = histogram();
  const retriesBefore = await metricSum(http, 'ringkv_cas_retries_total');
  let calls = 0,
    applied = 0,
    notApplied = 0,
    unknown = 0,
    refused = 0,
    n = 0;
  const started = performance.now();
  const end = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CAS_WRITERS }, async () => {
      let context: Buffer | undefined;
      while (performance.now() < end && calls < MAX_CALLS) {
        const s = performance.now();
        calls++;
        // Every call's time, whatever it ended with (an unknown outcome is often the longest).
        const took = (): void => h.recordValue(Math.max(1, Math.round((performance.now() - s) * 1000)));
        try {
          const r = await kv.putIf('contended', `v${n++}`, { bucket: LOCKS, ...(context ? { context } : {}) });
          took();
          context = r.context;
          if (r.applied) applied++;
          else notApplied++;
        } catch (e) {
          took();
          if (casNotApplied(e)) refused++;
          else unknown++;
          context = (await kv.get('contended', { bucket: LOCKS }).catch(() => undefined))?.context;
        }
      }
    }),
  );
  const secs = (performance.now() - started) / 1000;
  // Rounds run again (preempted) per call, reads after an unknown outcome included.
  const retriesPerCall = ((await metricSum(http, 'ringkv_cas_retries_total')) - retriesBefore) / calls;
  const r = {
    callsPerSec: calls / secs,
    appliedPerSec: applied / secs,
    notApplied,
    unknown,
    refused,
    calls,
    retriesPerCall,
    p50: ms(h, 50),
    p99: ms(h, 99),
  };
  h.destroy();
  return r;
}

/** ADDS triples one at a time on a fresh counter each: an increment, a get, then a reset. */
async function resetCost(
  kv: Client,
): Promise<Record<'increment' | 'get' | 'reset', { p50: number; p99: number }> & { failed: number }> {
  const hs = { increment: histogram(), get: histogram(), reset: histogram() };
  let failed = 0;
  const timed = async (kind: keyof typeof hs, call: () => Promise<unknown>, record: boolean): Promise<void> => {
    const s = performance.now();
    try {
      await call();
      if (record) hs[kind].recordValue(Math.max(1, Math.round((performance.now() - s) * 1000)));
    } catch {
      failed++;
    }
  };
  for (let i = -20; i < ADDS; i++) {
    const k = part('reset', i),
      record = i >= 0;
    const incr = (): Promise<void> => timed('increment', () => kv.counterIncrement(k, 3, { bucket: COUNTERS }), record);
    const get = (): Promise<void> => timed('get', () => kv.counterGet(k, { bucket: COUNTERS }), record);
    await incr().then(get);
    await timed('reset', () => kv.counterReset(k, { bucket: COUNTERS }), record);
  }
  const r = {
    increment: { p50: ms(hs.increment, 50), p99: ms(hs.increment, 99) },
    get: { p50: ms(hs.get, 50), p99: ms(hs.get, 99) },
    reset: { p50: ms(hs.reset, 50), p99: ms(hs.reset, 99) },
    failed,
  };
  for (const h of Object.values(hs)) h.destroy();
  return r;
}

/** A set of `size` elements filled in updates of 1,000, then dropped: elements per second of each. */
async function dropCost(
  kv: Client,
  size: number,
): Promise<{ size: number; fillPerSec: number; dropPerSec: number; removed: number }> {
  const set = `drop-${size}`;
  const s0 = performance.now();
  for (let i = 0; i < size; i += 1000)
    await kv.setAdd(
      set,
      Array.from({ length: Math.min(1000, size - i) }, (_, j) => part('element', i + j)),
      { bucket: SETS, deadlineMs: 30_000 },
    );
  const fill = (performance.now() - s0) / 1000;
  const s1 = performance.now();
  const { removed } = await kv.setDrop(set, { bucket: SETS, deadlineMs: 30_000 });
  const drop = (performance.now() - s1) / 1000;
  return { size, fillPerSec: size / fill, dropPerSec: removed / drop, removed };
}

const medianRun = (runs: readonly LoadRun[]): LoadRun =>
  [...runs].sort((a, b) => a.opsPerSec - b.opsPerSec)[Math.floor(runs.length / 2)]!;

async function main(): Promise<void> {
  const root = benchRoot('types');
  if (CPU_PROF !== undefined) mkdirSync(CPU_PROF, { recursive: true });
  const ports = await Promise.all(Array.from({ length: 6 }, () => freePort()));
  const nodes = ['n1', 'n2', 'n3'].map((id, i) => new Proc(id, `127.0.0.1:${ports[i]}`, join(root, id)));
  const http = nodes.map((_, i) => `127.0.0.1:${ports[3 + i]}`);
  const seeds = nodes.map((n) => n.address);
  nodes.forEach((n, i) => n.start(seeds, ['--zone', 'abc'[i]!, '--log-level', 'warn', '--http', http[i]!], CPU_PROF));
  const kv = new Client({ nodes: seeds, deadlineMs: 10_000 });
  const admin = new AdminClient(seeds[0]!, 10_000);
  try {
    await formed(nodes, 120_000);
    await admin.createBucket(SETS, { type: 'set' });
    await admin.createBucket(COUNTERS, { type: 'counter' });
    await admin.createBucket(MAPS, { type: 'map' });
    await admin.createBucket(LOCKS, { type: 'consistent' });
    await kv.refreshRing();
    console.log(
      `bench:types — 3 nodes (N=3, R=W=2), ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}; set adds: ${ADDS} one at a time on sets of ${SIZES.join(', ')}; ` +
        `counters vs puts: ${IN_FLIGHT} in flight over ${KEYS} keys, ${ROUNDS} round(s) × ${SECONDS} s each`,
    );

    const rows = (rs: readonly UpdateRow[]): string[][] =>
      rs.map((r) => [
        String(r.size),
        r.p50.toFixed(2),
        r.p99.toFixed(2),
        r.bytesPerUpdate.toFixed(0),
        String(r.failed),
      ]);
    const sets: UpdateRow[] = [];
    for (const size of SIZES) sets.push(await setAdds(kv, http, size));
    console.log(table([['set size', 'p50 ms', 'p99 ms', 'replica bytes/add', 'failed'], ...rows(sets)]));
    const verdicts: string[] = [];
    const smallest = sets[0]!,
      largest = sets[sets.length - 1]!;
    verdicts.push(
      `set add p50 at ${largest.size} elements: ${largest.p50.toFixed(2)} ms (target ≤ 5 ms: ${largest.p50 <= 5 ? 'met' : 'MISSED'})`,
    );
    const growth = largest.bytesPerUpdate / smallest.bytesPerUpdate;
    verdicts.push(
      `replica bytes per add at ${largest.size} ÷ at ${smallest.size}: ${growth.toFixed(2)}× (target ≤ 2×: ${growth <= 2 ? 'met' : 'MISSED'})`,
    );
    const maps: UpdateRow[] = [];
    for (const size of SIZES) maps.push(await mapUpdates(kv, http, size));
    console.log(table([['map fields', 'p50 ms', 'p99 ms', 'replica bytes/update', 'failed'], ...rows(maps)]));
    const mapGrowth = maps[maps.length - 1]!.bytesPerUpdate / maps[0]!.bytesPerUpdate;
    verdicts.push(
      `map update (3 fields) p50 at ${maps[maps.length - 1]!.size} fields: ${maps[maps.length - 1]!.p50.toFixed(2)} ms; replica bytes per update there ÷ at ${maps[0]!.size}: ${mapGrowth.toFixed(2)}× (no target: the set's 2× applied to maps: ${mapGrowth <= 2 ? 'met' : 'MISSED'})`,
    );

    // Warm both, then alternate which goes first.
    await load(kv, 'put');
    await load(kv, 'counter');
    const runs = { put: [] as LoadRun[], counter: [] as LoadRun[] };
    for (let round = 0; round < ROUNDS; round++)
      for (const kind of round % 2 === 0 ? (['put', 'counter'] as const) : (['counter', 'put'] as const))
        runs[kind].push(await load(kv, kind));
    const put = medianRun(runs.put),
      counter = medianRun(runs.counter);
    console.log(
      table([
        ['workload', 'ops/s', 'p50 ms', 'p99 ms', 'failed'],
        ...(['put', 'counter'] as const).map((k) => {
          const r = k === 'put' ? put : counter;
          return [
            k,
            r.opsPerSec.toFixed(0),
            r.p50.toFixed(2),
            r.p99.toFixed(2),
            String(runs[k].reduce((s, x) => s + x.failed, 0)),
          ];
        }),
      ]),
    );
    const ratio = counter.opsPerSec / put.opsPerSec;
    verdicts.push(
      `counter increments/s ÷ puts/s at ${IN_FLIGHT} in flight: ${ratio.toFixed(2)}× (target ≥ 0.7×: ${ratio >= 0.7 ? 'met' : 'MISSED'})`,
    );

    const cas = await casUncontended(kv);
    console.log(
      table([
        ['one at a time', 'p50 ms', 'p99 ms'],
        ['put (W=2)', cas.put.p50.toFixed(2), cas.put.p99.toFixed(2)],
        ['putIf', cas.cas.p50.toFixed(2), cas.cas.p99.toFixed(2)],
      ]),
    );
    const casRatio = cas.cas.p50 / cas.put.p50;
    verdicts.push(
      `compare-and-set p50 ÷ put p50, uncontended: ${casRatio.toFixed(2)}× (p99 ${(cas.cas.p99 / cas.put.p99).toFixed(2)}×; target p50 ≤ 2.5×: ${casRatio <= 2.5 ? 'met' : 'MISSED'})`,
    );
    const contended = await casContended(kv, http);
    const share = (x: number): string => `${((100 * x) / contended.calls).toFixed(1)}%`;
    console.log(
      table([
        [
          `${CAS_WRITERS} writers, one key`,
          'calls/s',
          'applied/s',
          'not applied',
          'unknown',
          'refused',
          'retries/call',
          'p50 ms',
          'p99 ms',
        ],
        [
          'putIf',
          contended.callsPerSec.toFixed(0),
          contended.appliedPerSec.toFixed(0),
          share(contended.notApplied),
          share(contended.unknown),
          share(contended.refused),
          contended.retriesPerCall.toFixed(2),
          contended.p50.toFixed(2),
          contended.p99.toFixed(2),
        ],
      ]),
    );
    verdicts.push(
      `compare-and-set, ${CAS_WRITERS} writers on one key: ${contended.appliedPerSec.toFixed(0)} applied/s of ${contended.callsPerSec.toFixed(0)} calls/s; ${share(contended.notApplied)} not applied, ${share(contended.unknown)} unknown, ${share(contended.refused)} refused (no target)`,
    );

    const resets = await resetCost(kv);
    console.log(
      table([
        ['one at a time', 'p50 ms', 'p99 ms'],
        ...(['increment', 'get', 'reset'] as const).map((k) => [
          `counter ${k}`,
          resets[k].p50.toFixed(2),
          resets[k].p99.toFixed(2),
        ]),
      ]),
    );
    const resetRatio = resets.reset.p50 / (resets.get.p50 + resets.increment.p50);
    verdicts.push(
      `counter reset p50 ÷ (get p50 + increment p50): ${resetRatio.toFixed(2)}× (a read and a write; no target)`,
    );
    const drop = await dropCost(kv, largest.size);
    console.log(
      table([
        [`set of ${drop.size}`, 'elements/s'],
        ['fill (updates of 1,000)', drop.fillPerSec.toFixed(0)],
        ['drop (page by page)', drop.dropPerSec.toFixed(0)],
      ]),
    );
    if (drop.removed !== drop.size) console.log(`WARNING: the drop removed ${drop.removed} of ${drop.size} elements`);
    verdicts.push(
      `set drop of ${drop.size} elements ÷ filling it: ${(drop.dropPerSec / drop.fillPerSec).toFixed(2)}× the elements/s (no target)`,
    );
    for (const v of verdicts) console.log(v);
    const failures =
      [...sets, ...maps].reduce((s, r) => s + r.failed, 0) +
      [...runs.put, ...runs.counter].reduce((s, r) => s + r.failed, 0) +
      cas.failed +
      resets.failed;
    if (failures > 0) console.log(`WARNING: ${failures} calls failed; the figures count only what succeeded`);
    if (JSON_OUT !== undefined)
      writeFileSync(
        JSON_OUT,
        JSON.stringify(
          {
            adds: ADDS,
            seconds: SECONDS,
            rounds: ROUNDS,
            sets,
            maps,
            put,
            counter,
            ratio,
            cas,
            casRatio,
            contended,
            resets,
            resetRatio,
            drop,
            verdicts,
          },
          null,
          2,
        ),
      );
  } finally {
    admin.close();
    kv.close();
    await stopAll(nodes);
  }
}

await main();
