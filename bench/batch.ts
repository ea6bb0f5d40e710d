/**
 * npm run bench:batch — GetMany and PutMany of 100 keys against single gets and puts, on
 * a local cluster of 3 `ringkv node` processes (built code, zones a/b/c, N=3, R=W=2,
 * 127.0.0.1, free ports), 16-byte keys and 100-byte values, one ringkv/client in this
 * process driving closed loops bounded in time and count.
 *
 * Per workload (get: keys loaded first at W=3; put: keys never written), in each round:
 * - `single`: 100 single calls in flight (the client's stream batches them per turn);
 * - `batch`: batches of 100 keys, `--batches` in flight (default 1 and 4): 1 is the same
 *   100 keys in flight as `single`, the comparison the targets are about; 4 shows what
 *   more batches in flight add.
 * Rounds alternate the modes' order, so drift on a shared machine hits both. A cell's
 * keys/s is the median over rounds, its p50/p99 (of one call: a single get, or a whole
 * batch) those of the median round. Printed: each batch row's keys/s ÷ single's and its
 * p99 ÷ single's, against the targets (≥ 3× keys/s, p99 ≤ 2×, at the same keys in flight).
 * Failed calls, and keys failed inside batches, are counted (a run with any is flagged).
 * Also the CPU per key of the three nodes (from /proc) and of this process (the client):
 * what a batch saves, whatever else the machine runs.
 *
 *   npm run bench:batch [-- --seconds 5] [-- --rounds 3] [-- --batches 1,4]
 *                       [-- --keys 20000] [-- --cpu-prof DIR] [-- --json FILE]
 *                       [-- --workloads get,put] [-- --no-single]   (to profile one mode)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { Client } from '../src/client/index.js';
import { freePort } from '../testkit/ports.js';
import { argOf, histogram, table } from './lib.js';
import { Proc, VALUE, benchRoot, formed, key, sleep, stopAll } from './processes.js';

const args = process.argv.slice(2);
const arg = (name: string, def: string): string => argOf(args, name, def);
const SECONDS = Number(arg('seconds', '5'));
const ROUNDS = Number(arg('rounds', '3'));
const KEYS = Number(arg('keys', '20000'));
const BATCHES = arg('batches', '1,4').split(',').map(Number);
const CPU_PROF = args.includes('--cpu-prof') ? arg('cpu-prof', 'profiles') : undefined;
const JSON_OUT = args.includes('--json') ? arg('json', 'batch.json') : undefined;
/** For profiling one thing at a time: the workloads to run, and whether to run single calls at all. */
const WORKLOADS = arg('workloads', 'get,put').split(',') as ('get' | 'put')[];
const SINGLE = !args.includes('--no-single');
if (WORKLOADS.some((w) => w !== 'get' && w !== 'put'))
  throw new Error(`--workloads takes get and put, got ${WORKLOADS.join(',')}`);
for (const [name, v] of [
  ['seconds', SECONDS],
  ['rounds', ROUNDS],
  ['keys', KEYS],
  ...BATCHES.map((b) => ['batches', b] as const),
] as const)
  if (!(Number.isInteger(v) && v > 0)) throw new Error(`--${name} must be a positive whole number, got ${v}`);
if (KEYS < 100) throw new Error('--keys must be at least 100 (one batch)');

/** Keys in flight in the single-call mode, and keys per batch. */
const IN_FLIGHT = 100;
const BATCH = 100;
/** A bound on every loop, whatever --seconds says. */
const MAX_CALLS = 2_000_000;

type Workload = 'get' | 'put';
type Mode = { kind: 'single' } | { kind: 'batch'; inFlight: number };
const modeName = (m: Mode): string =>
  m.kind === 'single' ? `single ×${IN_FLIGHT}` : `batch of ${BATCH} ×${m.inFlight}`;

interface Run {
  keys: number;
  calls: number;
  failedCalls: number;
  failedKeys: number;
  keysPerSec: number;
  p50: number;
  p99: number;
  /** CPU the three nodes used per key that succeeded, µs: steadier than keys/s on a shared machine. */
  nodeUsPerKey: number;
  /** CPU this process (the client) used per key, µs. */
  clientUsPerKey: number;
}

let nodeProcs: readonly Proc[] = [];
const nodeCpu = (): number => nodeProcs.reduce((s, n) => s + n.cpuSeconds(), 0);
const ownCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

let fresh = 0;

/** One closed loop of `mode` for SECONDS: calls of one key, or batches of BATCH keys. */
async function run(kv: Client, workload: Workload, mode: Mode): Promise<Run> {
  const h = histogram();
  let calls = 0,
    keys = 0,
    failedCalls = 0,
    failedKeys = 0,
    next = 0;
  const workers = mode.kind === 'single' ? IN_FLIGHT : mode.inFlight;
  const perCall = mode.kind === 'single' ? 1 : BATCH;
  const started = performance.now();
  const cpu0 = nodeCpu(),
    own0 = ownCpu();
  const end = started + SECONDS * 1000;
  const pick = (): Buffer => (workload === 'get' ? key('k', (next++ * 7919) % KEYS) : key('p', fresh++));
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < end && calls < MAX_CALLS) {
        const ks = Array.from({ length: perCall }, pick);
        const s = performance.now();
        try {
          let failed = 0;
          if (mode.kind === 'single')
            await (workload === 'get' ? kv.get(ks[0]!, { r: 2 }) : kv.put(ks[0]!, VALUE, { w: 2 }));
          else {
            const out =
              workload === 'get'
                ? await kv.getMany(ks, { r: 2 })
                : await kv.putMany(
                    ks.map((k) => ({ key: k, value: VALUE })),
                    { w: 2 },
                  );
            failed = out.filter((r) => !r.ok).length;
          }
          h.recordValue(Math.max(1, Math.round((performance.now() - s) * 1000)));
          calls++;
          keys += perCall - failed;
          failedKeys += failed;
        } catch {
          failedCalls++;
        }
      }
    }),
  );
  const secs = (performance.now() - started) / 1000;
  const r = {
    keys,
    calls,
    failedCalls,
    failedKeys,
    keysPerSec: keys / secs,
    p50: h.getValueAtPercentile(50) / 1000,
    p99: h.getValueAtPercentile(99) / 1000,
    nodeUsPerKey: ((nodeCpu() - cpu0) * 1e6) / keys,
    clientUsPerKey: ((ownCpu() - own0) * 1e6) / keys,
  };
  h.destroy();
  return r;
}

function median(runs: readonly Run[]): Run {
  const sorted = [...runs].sort((a, b) => a.keysPerSec - b.keysPerSec);
  const m = sorted[Math.floor(sorted.length / 2)]!;
  return {
    ...m,
    failedCalls: runs.reduce((s, r) => s + r.failedCalls, 0),
    failedKeys: runs.reduce((s, r) => s + r.failedKeys, 0),
  };
}

async function main(): Promise<void> {
  const root = benchRoot('batch');
  if (CPU_PROF !== undefined) mkdirSync(CPU_PROF, { recursive: true });
  const ports = await Promise.all(Array.from({ length: 3 }, () => freePort()));
  const nodes = ['n1', 'n2', 'n3'].map((id, i) => new Proc(id, `127.0.0.1:${ports[i]}`, join(root, id)));
  nodeProcs = nodes;
  const seeds = nodes.map((n) => n.address);
  nodes.forEach((n, i) => n.start(seeds, ['--zone', 'abc'[i]!, '--log-level', 'warn'], CPU_PROF));
  const kv = new Client({ nodes: seeds, deadlineMs: 10_000 });
  try {
    await formed(nodes, 120_000);
    await kv.refreshRing();
    console.log(
      `bench:batch — 3 nodes (N=3, R=W=2), ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)}; ${ROUNDS} round(s) × ${SECONDS} s per cell; ` +
        `${KEYS} keys loaded; 16-byte keys, 100-byte values; single calls ${IN_FLIGHT} in flight, batches of ${BATCH} keys ${BATCHES.join(' or ')} in flight`,
    );
    // Load the keys at W=3 (in batches: this is not measured), then warm up every mode.
    for (let i = 0; i < KEYS; i += BATCH) {
      const out = await kv.putMany(
        Array.from({ length: Math.min(BATCH, KEYS - i) }, (_, j) => ({ key: key('k', i + j), value: VALUE })),
        { w: 3 },
      );
      const bad = out.find((r) => !r.ok);
      if (bad && !bad.ok) throw new Error(`loading keys failed: ${bad.error.message}`);
    }
    const modes: Mode[] = [
      ...(SINGLE ? [{ kind: 'single' } as const] : []),
      ...BATCHES.map((b): Mode => ({ kind: 'batch', inFlight: b })),
    ];
    for (const w of WORKLOADS) for (const m of modes) await warm(kv, w, m);
    const runs = new Map<string, Run[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const w of WORKLOADS) {
        const order = round % 2 === 0 ? modes : [...modes].reverse();
        for (const m of order) {
          const cell = `${w} ${modeName(m)}`;
          runs.set(cell, [...(runs.get(cell) ?? []), await run(kv, w, m)]);
        }
      }
    }
    const rows: string[][] = [
      [
        'workload',
        'mode',
        'keys/s',
        'p50 ms',
        'p99 ms',
        'keys/s ÷ single',
        'p99 ÷ single',
        'node µs/key',
        'client µs/key',
        'failed calls',
        'failed keys',
      ],
    ];
    const result: Record<string, unknown> = {};
    const verdicts: string[] = [];
    for (const w of WORKLOADS) {
      const singleRuns = runs.get(`${w} ${modeName({ kind: 'single' })}`);
      const single = singleRuns === undefined ? undefined : median(singleRuns);
      for (const m of modes) {
        const r = median(runs.get(`${w} ${modeName(m)}`)!);
        const kr = single === undefined ? NaN : r.keysPerSec / single.keysPerSec,
          pr = single === undefined ? NaN : r.p99 / single.p99;
        rows.push([
          w,
          modeName(m),
          r.keysPerSec.toFixed(0),
          r.p50.toFixed(2),
          r.p99.toFixed(2),
          m.kind === 'single' ? '' : `${kr.toFixed(2)}×`,
          m.kind === 'single' ? '' : `${pr.toFixed(2)}×`,
          r.nodeUsPerKey.toFixed(0),
          r.clientUsPerKey.toFixed(0),
          String(r.failedCalls),
          String(r.failedKeys),
        ]);
        result[`${w} ${modeName(m)}`] = r;
        if (m.kind === 'batch' && m.inFlight * BATCH === IN_FLIGHT && single !== undefined)
          verdicts.push(
            `${w}: batch keys/s ${kr.toFixed(2)}× single (target ≥ 3×: ${kr >= 3 ? 'met' : 'MISSED'}); batch p99 ${pr.toFixed(2)}× single's (target ≤ 2×: ${pr <= 2 ? 'met' : 'MISSED'})`,
          );
      }
    }
    console.log(table(rows));
    for (const v of verdicts) console.log(v);
    const failures = [...runs.values()].flat().reduce((s, r) => s + r.failedCalls + r.failedKeys, 0);
    if (failures > 0) console.log(`WARNING: ${failures} calls or keys failed; the figures count only what succeeded`);
    if (JSON_OUT !== undefined)
      writeFileSync(
        JSON_OUT,
        JSON.stringify({ seconds: SECONDS, rounds: ROUNDS, keys: KEYS, result, verdicts }, null, 2),
      );
  } finally {
    kv.close();
    await stopAll(nodes);
  }
}

/** 1 s of `mode` unmeasured: JIT, channels, the latency windows. */
async function warm(kv: Client, w: Workload, m: Mode): Promise<void> {
  const end = performance.now() + 1000;
  let calls = 0;
  const workers = m.kind === 'single' ? IN_FLIGHT : m.inFlight;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < end && calls++ < MAX_CALLS) {
        const k = w === 'get' ? key('k', calls % KEYS) : key('x', calls);
        await (
          m.kind === 'single'
            ? w === 'get'
              ? kv.get(k, { r: 2 })
              : kv.put(k, VALUE, { w: 2 })
            : w === 'get'
              ? kv.getMany(
                  Array.from({ length: BATCH }, (_, j) => key('k', (calls * BATCH + j) % KEYS)),
                  { r: 2 },
                )
              : kv.putMany(
                  Array.from({ length: BATCH }, (_, j) => ({ key: key('w', calls * BATCH + j), value: VALUE })),
                  { w: 2 },
                )
        ).catch(() => undefined);
      }
    }),
  );
  await sleep(100);
}

await main();
