/**
 * One Jepsen-style run: a real cluster of `ringkv node` processes, concurrent clients,
 * a nemesis applying the seeded schedule (nemesis.ts), then heal, settle (hints, repair),
 * check convergence replica by replica, read every key, check the histories, and write
 * the report (JSON, summary, SVG timeline) into the run's results folder: safety,
 * availability, and throughput and p99 during each kind of fault against quiet time.
 *
 * Owns: the run's processes, network and faults, from start to cleanup (also on SIGINT,
 * SIGTERM and a failure). Must not: leave anything behind, or judge what it did not record.
 */
import { mkdirSync, readdirSync, readFileSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { Client } from '../../src/client/index.js';
import { mulberry32 } from '../../src/ring/allocate-tokens.js';
import { storedKey } from '../../src/buckets/index.js';
import { decodeRecord, isCounterRecord, versionBytes } from '../../src/kinds/versions/codec.js';
import { decodeCounter } from '../../src/kinds/counter/counter-record.js';
import { GrpcReplicas } from '../../src/transport/replica-wire.js';
import {
  availability,
  checkCounter,
  checkExpiry,
  checkMap,
  checkOrSet,
  checkRegister,
  checkSet,
  faultImpact,
  type Availability,
  type CounterResult,
  type ExpiryResult,
  type FaultImpact,
  type MapResult,
  type Op,
  type OffsetChange,
  type OrSetResult,
  type RegisterResult,
  type SetResult,
  type Window,
} from './checkers.js';
import { JepsenCluster, type JepsenNode } from '../../testkit/jepsen/cluster.js';
import { capabilities, Network, sweep, type NetCapabilities } from '../../testkit/jepsen/net.js';
import {
  partition,
  schedule,
  shuffle,
  SLOW_SHAPES,
  type Fault,
  type Nemesis,
  type PartitionShape,
  type SlowShape,
} from './nemesis.js';
import {
  cpuThrottleSupport,
  healAllSlow,
  SLOW_DEFAULTS,
  strobe,
  throttleCpu,
  type Healable,
} from '../../testkit/jepsen/slow.js';
import {
  diskSupport,
  fillDisk,
  flipInTable,
  freeDisk,
  removeTable,
  truncateNewestLog,
} from '../../testkit/jepsen/disk.js';
import { timelineSvg } from './timeline.js';
import { checkLinearizable, type Verdict } from './linearizability.js';
import {
  CAS_BUCKET,
  CasWorkload,
  COUNTER_BUCKET,
  CounterWorkload,
  ExpiryWorkload,
  History,
  MAP_BUCKET,
  MapWorkload,
  ORSET_BUCKET,
  OrSetWorkload,
  RegisterWorkload,
  SetWorkload,
} from './workloads.js';

export type Workload = 'set' | 'register' | 'expiry' | 'counter' | 'orset' | 'map' | 'cas';
export const WORKLOADS: readonly Workload[] = ['set', 'register', 'expiry', 'counter', 'orset', 'map', 'cas'];

export interface JepsenOptions {
  readonly timeS: number;
  readonly nodes: number;
  readonly nemeses: readonly Nemesis[];
  readonly workloads: readonly Workload[];
  readonly seed: number;
  /** Mean ms between faults. */
  readonly everyMs: number;
  readonly workers: number;
  /** Where this run's folder goes. */
  readonly resultsDir: string;
  /** Fail the run when a nemesis cannot run here (CI, as root, must run them all). */
  readonly requireAll: boolean;
  readonly log: (line: string) => void;
  /** How far the clock nemesis (and a restart with its clock behind) moves a node's clock, ms (default 1 to 10 minutes). */
  readonly clockSkewMs?: { readonly min: number; readonly max: number };
  /** Called once the cluster is up; what it throws fails the run (tests fail or interrupt the run here). */
  readonly onReady?: (info: { pids: number[]; folder: string }) => void;
}

export interface FaultRecord {
  readonly kind: Nemesis;
  /** A partition's or a slow fault's shape. */
  readonly shape?: string;
  label: string;
  readonly startMs: number;
  endMs: number;
  /** Why it was not applied, if it was not. */
  readonly skipped?: string;
}

export interface JepsenReport {
  readonly seed: number;
  readonly options: Omit<JepsenOptions, 'log' | 'onReady'>;
  readonly folder: string;
  readonly capabilities: NetCapabilities;
  /** Nemeses asked for that could not run on this machine, with the reason. */
  readonly notRun: Record<string, string>;
  readonly faults: FaultRecord[];
  /** How long the workload ran, ms: its time, or more when it ran on until the last planned fault (at most twice). */
  readonly workloadMs: number;
  readonly ops: { total: number; ok: number; failed: number; unknown: number; byCode: Record<string, number> };
  readonly set?: SetResult;
  readonly register?: RegisterResult;
  readonly expiry?: ExpiryResult;
  readonly counter?: CounterResult;
  readonly orset?: OrSetResult;
  readonly map?: MapResult;
  /** The cas workload's history, searched for a linearization: operations, how many were unknown or refused, and each key's verdict. */
  readonly cas?: {
    readonly ops: number;
    readonly unknown: number;
    readonly notApplied: number;
    readonly applied: number;
    /** Compare-and-sets answered "not applied": another client changed the key first. */
    readonly beaten: number;
    readonly verdict: Verdict;
  };
  readonly convergence: { converged: boolean; ms: number; keys: number; divergent: string[] };
  readonly settleMs: number;
  readonly availability: Availability;
  /** Throughput and p99 during each kind of fault ÷ with none active, and failures during. */
  readonly impact: FaultImpact;
  readonly malformed: string[];
  /** The first few messages of each error code the clients saw. */
  readonly errors: Record<string, string[]>;
  readonly violations: string[];
  readonly valid: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Each node's disk with the disk-full nemesis: room for a run's data many times over, and a floor (5%) of 25.6 MiB. */
const SMALL_DISK_BYTES = 512 * 2 ** 20;

async function waitUntil(
  what: string,
  ms: number,
  check: () => Promise<boolean>,
  detail: () => string = () => '',
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}${detail() && `: ${detail()}`}`);
    await sleep(500);
  }
}

export async function runJepsen(o: JepsenOptions): Promise<JepsenReport> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const folder = join(o.resultsDir, `${stamp}-seed${o.seed}`);
  mkdirSync(folder, { recursive: true });
  const log = (line: string): void => o.log(line);

  const caps = capabilities();
  const notRun: Record<string, string> = {};
  if (caps.namespaces !== true) {
    for (const n of ['partition', 'packet'] as const) if (o.nemeses.includes(n)) notRun[n] = caps.namespaces;
  } else if (caps.netem !== true && o.nemeses.includes('packet')) {
    notRun['packet: delay, jitter, reordering'] =
      `${caps.netem}; the packet nemesis drops packets (nftables) and slows the link (tbf) instead`;
  }
  // The slow shapes: cpu needs a cpu cgroup, delay a namespace per node (its proxy runs in the node's).
  const slowCaps: Record<SlowShape, true | string> = {
    cpu: cpuThrottleSupport(),
    strobe: true,
    delay: caps.namespaces,
  };
  if (o.nemeses.includes('slow'))
    for (const shape of SLOW_SHAPES) if (slowCaps[shape] !== true) notRun[`slow: ${shape}`] = slowCaps[shape];
  // disk-full gives each node a small disk (a tmpfs: root); corrupt damages a stopped node's files, which needs nothing.
  const disk = diskSupport();
  if (o.nemeses.includes('disk-full') && disk !== true) notRun['disk-full'] = disk;
  const required = ['partition', 'packet', 'slow: cpu', 'slow: delay', 'disk-full'];
  if (o.requireAll && required.some((k) => notRun[k] !== undefined)) {
    throw new Error(
      `every nemesis must run here, but: ${Object.entries(notRun)
        .map(([k, v]) => `${k}: ${v}`)
        .join('; ')}`,
    );
  }

  for (const left of sweep()) log(`removed a leftover of an earlier run: ${left}`);
  let net: Network | undefined;
  let cluster: JepsenCluster | undefined;
  let client: Client | undefined;
  let unhedged: Client | undefined;
  let replicas: GrpcReplicas | undefined;
  let stopped = false;
  const cleanup = (): void => {
    stopped = true;
    // Slow faults first: a throttled node back in its own cgroup (the child group removed), a strobed one continued.
    healAllSlow();
    client?.close();
    unhedged?.close();
    replicas?.close();
    cluster?.close();
    net?.destroy();
  };
  // An interrupted run still removes every process, namespace and rule it made.
  const onSignal = (sig: NodeJS.Signals): void => {
    log(`${sig}: cleaning up`);
    cleanup();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    net = caps.namespaces === true ? Network.create() : undefined;
    cluster = new JepsenCluster({
      root: folder,
      zones: 3,
      seeds: 3,
      net,
      flags: ['--request-timeout-ms', '2000', '--leaver-wait-ms', '10000'],
      ...(o.nemeses.includes('disk-full') && disk === true ? { diskBytes: SMALL_DISK_BYTES } : {}),
    });
    for (let i = 0; i < o.nodes; i++) (await cluster.add()).start();
    const started = Date.now();
    await allSettled(cluster, 240_000);
    log(
      `cluster of ${o.nodes} up in ${Date.now() - started} ms${net ? ` on ${net.subnet}.0/24, one namespace per node` : ' on 127.0.0.1 (no namespaces)'}`,
    );
    o.onReady?.({ pids: cluster.nodes.map((n) => n.pid!), folder });

    if (o.workloads.some((w) => w === 'counter' || w === 'orset' || w === 'map' || w === 'cas'))
      await createTypedBuckets(cluster);
    client = new Client({ nodes: cluster.nodes.map((n) => n.address), deadlineMs: 3000 });
    const history = new History();
    const random = mulberry32(o.seed ^ 0x5eed);
    const set = o.workloads.includes('set') ? new SetWorkload(client, history) : undefined;
    const register = o.workloads.includes('register') ? new RegisterWorkload(client, history, 100, random) : undefined;
    unhedged = o.workloads.includes('expiry')
      ? new Client({ nodes: cluster.nodes.map((n) => n.address), deadlineMs: 3000, hedge: false })
      : undefined;
    const expiry = unhedged ? new ExpiryWorkload(unhedged, history, 30, random) : undefined;
    const counter = o.workloads.includes('counter') ? new CounterWorkload(client, history, 5, random) : undefined;
    const orset = o.workloads.includes('orset') ? new OrSetWorkload(client, history, 4, random) : undefined;
    const map = o.workloads.includes('map') ? new MapWorkload(client, history, 4, random) : undefined;
    // A compare-and-set is never hedged (client/kv.ts), so the hedging client serves it too.
    const cas = o.workloads.includes('cas') ? new CasWorkload(client, history, 3, random) : undefined;
    const workloads = [set, register, expiry, counter, orset, map, cas].filter((w) => w !== undefined);
    const endMs = o.timeS * 1000;
    // The workload runs its time, and on until the last planned fault has been applied (a slow machine applies
    // them late: a join or a decommission takes longer), at most twice its time; a fault not begun by then is skipped.
    const capMs = 2 * endMs;
    const maxOps = o.timeS * 4000;
    let ops = 0,
      faultsDone = false,
      workloadMs = 0;
    const workers = Array.from({ length: o.workers }, async (_, i) => {
      const w = workloads[i % workloads.length]!;
      while (!stopped && (history.now() < endMs || (!faultsDone && history.now() < capMs)) && ops++ < maxOps)
        await w.step();
      workloadMs = Math.max(workloadMs, history.now());
    });

    const nemesis = new NemesisRunner(
      cluster,
      net,
      caps,
      slowCaps,
      history,
      log,
      o.clockSkewMs ?? { min: 60_000, max: 600_000 },
    );
    const plan = schedule({
      seed: o.seed,
      nemeses: o.nemeses.filter((n) => notRun[n] === undefined),
      timeMs: endMs,
      everyMs: o.everyMs,
    });
    const faults = (async () => {
      try {
        for (const f of plan) {
          await sleep(f.atMs - history.now());
          if (history.now() >= capMs) {
            log(`nemesis ${f.kind}: skipped, the run is past twice its time`);
            continue;
          }
          await nemesis.apply(f);
        }
      } finally {
        faultsDone = true;
      }
    })();
    await Promise.all([...workers, faults]);
    log(`workload done: ${history.ops.length} operations`);

    // Heal everything, then let the cluster settle: members normal, hints delivered, a repair.
    const healedAt = Date.now();
    await nemesis.healAll();
    await nemesis.membershipDone(240_000);
    await nemesis.damageRepaired();
    await allSettled(cluster, 240_000);
    // Hints held by the members (a removed node's last gossip keeps the count it died with).
    await waitUntil('no hints held by any member', 120_000, async () => {
      const ids = new Set(cluster!.members.map((n) => n.id));
      return (await cluster!.views()).every(
        (v) => v !== undefined && v.members.every((m) => !ids.has(m.id) || m.hints === 0),
      );
    });
    await repairAll(cluster, log);
    const settleMs = Date.now() - healedAt;
    log(`settled in ${settleMs} ms`);

    const keys: TypedKey[] = [
      ...[...(set?.keys ?? []), ...(register?.keys ?? []), ...(expiry?.keys ?? [])].map((key) => ({
        key,
        bucket: '',
        type: 'kv' as const,
      })),
      ...[...(counter?.keys ?? [])].map((key) => ({ key, bucket: COUNTER_BUCKET, type: 'kv' as const })), // a counter's record is compared as any record's
      ...[...(orset?.keys ?? [])].map((key) => ({ key, bucket: ORSET_BUCKET, type: 'set' as const })),
      ...[...(map?.keys ?? [])].map((key) => ({ key, bucket: MAP_BUCKET, type: 'set' as const })), // a map's fields are sub-keys, as a set's elements
    ];
    replicas = new GrpcReplicas(
      (id) => cluster!.nodes.find((n) => n.id === id)?.address,
      grpc.credentials.createInsecure(),
    );
    let divergent = await divergentKeys(cluster, replicas, keys);
    const convergeEnd = Date.now() + 60_000;
    while (divergent.length > 0 && Date.now() < convergeEnd) {
      await sleep(1000);
      divergent = await divergentKeys(cluster, replicas, keys);
    }
    const convergence = {
      converged: divergent.length === 0,
      ms: Date.now() - healedAt,
      keys: keys.length,
      divergent: divergent.slice(0, 50),
    };
    log(
      `convergence: ${convergence.converged ? `every replica of ${keys.length} keys identical ${convergence.ms} ms after the heal` : `${divergent.length} keys differ between replicas`}`,
    );
    for (const d of divergent.slice(0, 3)) log(`  differs: ${d}`);

    const finalRead = async <T>(key: string, read: () => Promise<T>): Promise<T> => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await read();
        } catch (e) {
          if (attempt >= 5) throw new Error(`final read of ${key} failed: ${(e as Error).message}`);
          await sleep(1000);
        }
      }
    };
    const readAll = (key: string): Promise<Buffer[]> =>
      finalRead(key, async () => (await client!.get(key, { r: 3, deadlineMs: 10_000 })).values);
    const setResult = set ? checkSet(set.attempted, set.acked, await set.finalRead(readAll)) : undefined;
    const registerResult = register ? checkRegister(register.writes, await register.finalRead(readAll)) : undefined;
    if (expiry) await expiry.finalRead(readAll);
    const expiryResult = expiry ? checkExpiry(expiry.writes, expiry.reads, nemesis.offsets) : undefined;
    const counterResult = counter
      ? checkCounter(
          counter.increments,
          counter.reads,
          await counter.finalRead((key) =>
            finalRead(
              key,
              async () => (await client!.counterGet(key, { bucket: COUNTER_BUCKET, r: 3, deadlineMs: 10_000 })).value,
            ),
          ),
        )
      : undefined;
    const orsetResult = orset
      ? checkOrSet(
          orset.elements,
          await orset.finalRead((key) =>
            finalRead(key, async () => {
              const out: string[] = [];
              for await (const e of client!.setElements(key, { bucket: ORSET_BUCKET, r: 3, deadlineMs: 10_000 }))
                out.push(String(e.element));
              return out;
            }),
          ),
        )
      : undefined;
    const mapResult = map
      ? checkMap(
          map.requests,
          await map.finalRead((key) =>
            finalRead(key, async () => {
              const m = await client!.mapGet(key, { bucket: MAP_BUCKET, r: 3, deadlineMs: 10_000 });
              return {
                counter: m.counters.n ?? 0n,
                elements: new Set((m.sets.s ?? []).map(String)),
                last: m.registers.last === undefined ? undefined : String(m.registers.last),
              };
            }),
          ),
        )
      : undefined;
    if (cas)
      await cas.finalRead((key) => finalRead(key, () => client!.get(key, { bucket: CAS_BUCKET, deadlineMs: 10_000 })));
    const casResult = cas
      ? {
          ops: cas.ops.length,
          unknown: cas.ops.filter((x) => x.outcome === 'unknown').length,
          notApplied: cas.notApplied,
          applied: cas.ops.filter((x) => x.outcome === 'ok' && x.op.kind === 'cas' && x.op.applied === true).length,
          beaten: cas.ops.filter((x) => x.outcome === 'ok' && x.op.kind === 'cas' && x.op.applied === false).length,
          verdict: checkLinearizable(cas.ops),
        }
      : undefined;
    if (casResult)
      log(
        `cas: ${casResult.ops} operations on ${cas!.keys.size} keys (${casResult.applied} applied, ${casResult.beaten} not applied for a changed value, ${casResult.unknown} unknown, ${casResult.notApplied} refused before applying): ${casResult.verdict.linearizable === true ? 'linearizable' : casResult.verdict.linearizable === false ? 'NOT linearizable' : 'search passed its budget'}`,
      );

    const windows: Window[] = nemesis.records
      .filter((r) => r.skipped === undefined)
      .map((r) => ({
        kind: r.kind,
        ...(r.shape ? { shape: r.shape } : {}),
        label: r.label,
        startMs: r.startMs,
        endMs: r.endMs,
      }));
    const avail = availability(history.ops, windows, 5000);
    const impact = faultImpact(history.ops, windows, workloadMs);
    const byCode: Record<string, number> = {};
    for (const op of history.ops) if (op.code) byCode[op.code] = (byCode[op.code] ?? 0) + 1;
    const violations: string[] = [];
    if (setResult && setResult.lost.length > 0)
      violations.push(`set: ${setResult.lost.length} acknowledged elements lost`);
    if (setResult && setResult.unexpected.length > 0)
      violations.push(`set: ${setResult.unexpected.length} unexpected elements`);
    if (registerResult && registerResult.lost.length > 0)
      violations.push(`register: ${registerResult.lost.length} acknowledged writes lost`);
    if (registerResult && registerResult.unexpected.length > 0)
      violations.push(`register: ${registerResult.unexpected.length} unexpected values`);
    if (expiryResult && expiryResult.late > 0)
      violations.push(`expiry: ${expiryResult.late} reads showed a value past its expiry plus the clock skew bound`);
    if (expiryResult && expiryResult.unexpected.length > 0)
      violations.push(`expiry: ${expiryResult.unexpected.length} unexpected values`);
    if (counterResult && counterResult.lost.length > 0)
      violations.push(`counter: ${counterResult.lost.length} counters lost acknowledged increments`);
    if (counterResult && counterResult.doubled.length > 0)
      violations.push(
        `counter: ${counterResult.doubled.length} counters counted an increment twice (or one nobody made)`,
      );
    if (counterResult && counterResult.badReads.length > 0)
      violations.push(`counter: ${counterResult.badReads.length} reads above what was invoked, or below zero`);
    if (orsetResult && orsetResult.lost.length > 0)
      violations.push(`orset: ${orsetResult.lost.length} acknowledged adds lost`);
    if (orsetResult && orsetResult.resurrected.length > 0)
      violations.push(`orset: ${orsetResult.resurrected.length} removed elements came back`);
    if (orsetResult && orsetResult.unexpected.length > 0)
      violations.push(`orset: ${orsetResult.unexpected.length} unexpected elements`);
    if (mapResult && mapResult.lost.length > 0)
      violations.push(`map: ${mapResult.lost.length} acknowledged updates lost`);
    if (mapResult && mapResult.torn.length > 0)
      violations.push(
        `map: ${mapResult.torn.length} maps whose counter disagrees with the updates their set shows applied (an update in part, or counted twice)`,
      );
    if (mapResult && mapResult.unexpected.length > 0)
      violations.push(`map: ${mapResult.unexpected.length} unexpected elements or register values`);
    for (const k of casResult?.verdict.keys ?? []) {
      if (k.linearizable === false)
        violations.push(
          `cas: key ${k.key}'s history (${k.ops} operations) is not linearizable: no order places ${JSON.stringify(k.stuckAt)} (the deepest order placed ${k.deepest})`,
        );
      else if (k.linearizable === undefined)
        violations.push(
          `cas: key ${k.key}'s history (${k.ops} operations) could not be checked: the search passed its budget after ${k.steps} steps`,
        );
    }
    if (!convergence.converged)
      violations.push(`convergence: ${divergent.length} keys still differ between replicas 60 s after settling`);
    if (history.malformed.length > 0)
      violations.push(`${history.malformed.length} reads returned a value no client wrote`);
    const report: JepsenReport = {
      seed: o.seed,
      options: {
        timeS: o.timeS,
        nodes: o.nodes,
        nemeses: o.nemeses,
        workloads: o.workloads,
        seed: o.seed,
        everyMs: o.everyMs,
        workers: o.workers,
        resultsDir: o.resultsDir,
        requireAll: o.requireAll,
        ...(o.clockSkewMs ? { clockSkewMs: o.clockSkewMs } : {}),
      },
      folder,
      capabilities: caps,
      notRun,
      faults: nemesis.records,
      workloadMs,
      ops: {
        total: history.ops.length,
        ok: history.ops.filter((x) => x.outcome === 'ok').length,
        failed: history.ops.filter((x) => x.outcome === 'fail').length,
        unknown: history.ops.filter((x) => x.outcome === 'unknown').length,
        byCode,
      },
      ...(setResult ? { set: setResult } : {}),
      ...(registerResult ? { register: registerResult } : {}),
      ...(expiryResult ? { expiry: expiryResult } : {}),
      ...(counterResult ? { counter: counterResult } : {}),
      ...(orsetResult ? { orset: orsetResult } : {}),
      ...(mapResult ? { map: mapResult } : {}),
      ...(casResult ? { cas: casResult } : {}),
      convergence,
      settleMs,
      availability: avail,
      impact,
      malformed: history.malformed.slice(0, 50),
      errors: history.errors,
      violations,
      valid: violations.length === 0,
    };
    writeFileSync(join(folder, 'report.json'), JSON.stringify(report, null, 2));
    writeFileSync(join(folder, 'summary.txt'), summary(report));
    // The whole history, one operation per line: [workload, startMs, endMs, outcome, code].
    writeFileSync(
      join(folder, 'history.jsonl'),
      history.ops
        .map((x) => JSON.stringify([x.workload, Math.round(x.startMs), Math.round(x.endMs), x.outcome, x.code ?? '']))
        .join('\n') + '\n',
    );
    redraw(folder);
    return report;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    cleanup();
  }
}

/** Draw a finished run's timeline.svg from its report.json and history.jsonl; returns the picture's path. */
export function redraw(folder: string): string {
  const r = JSON.parse(readFileSync(join(folder, 'report.json'), 'utf8')) as JepsenReport;
  const ops: Op[] = readFileSync(join(folder, 'history.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [workload, startMs, endMs, outcome, code] = JSON.parse(l) as [
        Op['workload'],
        number,
        number,
        Op['outcome'],
        string,
      ];
      return { workload, startMs, endMs, outcome, ...(code ? { code } : {}) };
    });
  const windows: Window[] = r.faults
    .filter((f) => f.skipped === undefined)
    .map((f) => ({
      kind: f.kind,
      ...(f.shape ? { shape: f.shape } : {}),
      label: f.label,
      startMs: f.startMs,
      endMs: f.endMs,
    }));
  const o = r.options;
  const path = join(folder, 'timeline.svg');
  writeFileSync(
    path,
    timelineSvg(
      `ringkv jepsen: seed ${r.seed}, ${o.nodes} nodes, ${o.timeS} s, ${o.workloads.join('+')}: ${r.valid ? 'valid' : 'INVALID'}`,
      ops,
      windows,
      r.workloadMs ?? o.timeS * 1000,
    ),
  );
  return path;
}

/** Every member normal and up in every member's view (gone nodes excluded); on timeout, says who lacks whom. */
async function allSettled(cluster: JepsenCluster, ms: number): Promise<void> {
  let lacking: string[] = [];
  await waitUntil(
    'all members normal and up everywhere',
    ms,
    async () => {
      const ids = cluster.members.map((n) => n.id);
      const views = await cluster.views();
      lacking = views.flatMap((v, i) => {
        if (v === undefined) return [`${ids[i]} did not answer`];
        const missing = ids.flatMap((id) => {
          const m = v.members.find((x) => x.id === id);
          if (m === undefined) return [`${id} (unknown)`];
          return m.status === 'normal' && m.up ? [] : [`${id} (${m.status}${m.up ? '' : ', down'})`];
        });
        return missing.length ? [`${ids[i]} sees ${missing.join(', ')}`] : [];
      });
      return lacking.length === 0;
    },
    () => lacking.join('; '),
  );
}

async function repairAll(cluster: JepsenCluster, log: (l: string) => void): Promise<void> {
  for (const n of cluster.members) {
    const started = Date.now();
    let run = await n.admin().repair();
    while (run.finishedAtMs === 0 && Date.now() - started < 120_000) {
      await sleep(500);
      run = await n.admin().repairStatus();
    }
    log(
      `repair on ${n.id}: ${run.done} ranges, ${run.keysExchanged} keys exchanged, ${run.failed} failed, ${Date.now() - started} ms`,
    );
  }
}

/** A key the run checks for convergence: its bucket, and whether it is a set (its elements are records of their own). */
interface TypedKey {
  readonly key: string;
  readonly bucket: string;
  readonly type: 'kv' | 'set';
}

/** The typed workloads' buckets, on one node; then until every node knows them (they spread by gossip). */
async function createTypedBuckets(cluster: JepsenCluster): Promise<void> {
  const admin = cluster.nodes[0]!.admin();
  await admin.createBucket(COUNTER_BUCKET, { type: 'counter' });
  await admin.createBucket(ORSET_BUCKET, { type: 'set' });
  await admin.createBucket(MAP_BUCKET, { type: 'map' });
  await admin.createBucket(CAS_BUCKET, { type: 'consistent' });
  await waitUntil('every node knows the typed buckets', 60_000, async () => {
    const known = await Promise.all(
      cluster.nodes.map((n) =>
        Promise.all([COUNTER_BUCKET, ORSET_BUCKET, MAP_BUCKET, CAS_BUCKET].map((b) => n.admin().getBucket(b))).then(
          () => true,
          () => false,
        ),
      ),
    );
    return known.every(Boolean);
  });
}

/**
 * Keys whose N replicas do not hold identical versions, read from each replica's own
 * storage: a key's record (a counter's too), or every element record of a set. Each entry
 * names the key, its bucket and type, its replicas, and what each holds where they differ
 * (describeRecord), so that a failed run says what did not converge.
 */
async function divergentKeys(
  cluster: JepsenCluster,
  replicas: GrpcReplicas,
  keys: readonly TypedKey[],
): Promise<string[]> {
  const admin = cluster.members.find((n) => n.running)!.admin();
  const out: string[] = [];
  for (const { key, bucket, type } of keys) {
    const ep = await admin.endpoints(key, bucket);
    const stored = storedKey(bucket, Buffer.from(key));
    const ids = ep.preferenceList.map((e) => e.id);
    // Per replica: sub-key (hex; '' for a kv key) → its record.
    const held = await Promise.all(
      ep.preferenceList.map(async (e) => {
        const records = new Map<string, Buffer>();
        if (type === 'set') {
          let after: Buffer | undefined;
          do {
            const page = await replicas.call(
              e.id,
              { op: 'readRange', parent: stored, after, limit: 1000 },
              Date.now() + 5000,
            );
            for (const r of page.records) records.set(r.key.toString('hex'), Buffer.from(r.record));
            after = page.next;
          } while (after !== undefined);
        } else {
          const r = await replicas.call(e.id, { op: 'read', key: stored }, Date.now() + 5000);
          if (r !== undefined) records.set('', Buffer.from(r));
        }
        return records;
      }),
    );
    const versions = (r: Buffer | undefined): string => (r === undefined ? '-' : versionBytes(r).toString('hex'));
    const parts = new Set(held.flatMap((m) => [...m.keys()]));
    const differ = [...parts].filter((k) => new Set(held.map((m) => versions(m.get(k)))).size > 1);
    if (differ.length === 0) continue;
    const where = (k: string): string => ids.map((id, i) => `${id}=${describeRecord(held[i]!.get(k))}`).join(' ');
    const name = `${bucket === '' ? '' : `${bucket}/`}${key} (${type}) on ${ids.join(',')}`;
    out.push(
      type === 'set'
        ? `${name}: ${differ.length} of ${parts.size} elements differ; ${differ
            .slice(0, 3)
            .map((k) => `${k}: ${where(k)}`)
            .join('; ')}`
        : `${name}: ${where('')}`,
    );
  }
  return out;
}

/**
 * A replica's record of a key for a report, '-' for none: a record of versions as its
 * clock (actor's first 4 bytes hex:counter), siblings (dot, value or ⊥ for a tombstone,
 * expiry, write time, write id) and retired ids; a counter's as its entries; anything else
 * (a compare-and-set register, or what does not decode) as its format and versions' length.
 */
function describeRecord(record: Buffer | undefined): string {
  if (record === undefined) return '-';
  const actor = (a: string): string => Buffer.from(a, 'latin1').subarray(0, 4).toString('hex');
  try {
    if (isCounterRecord(record)) {
      const c = decodeCounter(record).state;
      return `counter{${c.entries.map((e) => `${actor(e.actor)}:${e.floor}+${e.p}-${e.n}`).join(',')}} log ${c.log.length} voids ${c.voids.length}`;
    }
    const { versions: v, deletedAt } = decodeRecord(record);
    const clock = [...v.clock].map(([a, n]) => `${actor(a)}:${n}`).join(',');
    const siblings = v.siblings
      .map((s) => {
        const value = s.value === null ? '⊥' : JSON.stringify(Buffer.from(s.value).toString('utf8').slice(0, 24));
        const extras = [
          s.expiresAt !== undefined ? `exp ${s.expiresAt}` : '',
          s.at !== undefined ? `at ${s.at}` : '',
          s.id !== undefined ? `id ${Buffer.from(s.id, 'latin1').toString('hex')}` : '',
        ].filter(Boolean);
        return `${actor(s.actor)}:${s.counter} ${value}${extras.length > 0 ? ` (${extras.join(', ')})` : ''}`;
      })
      .join(' | ');
    const retired = v.retired?.length
      ? ` retired ${v.retired.map((r) => Buffer.from(r.id, 'latin1').toString('hex')).join(',')}`
      : '';
    return `clock{${clock}} [${siblings}]${retired}${deletedAt !== undefined ? ` deleted at ${deletedAt}` : ''}`;
  } catch (e) {
    return `format ${record[0]}, ${record.length} bytes (${(e as Error).message})`;
  }
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}

export function summary(r: JepsenReport): string {
  const lines: string[] = [];
  lines.push(`ringkv jepsen run, seed ${r.seed}: ${r.valid ? 'VALID' : 'INVALID'}`);
  lines.push(
    `  ${r.options.nodes} nodes, ${r.options.timeS} s, workloads ${r.options.workloads.join(', ')}, nemeses ${r.options.nemeses.join(', ')}`,
  );
  for (const [k, why] of Object.entries(r.notRun)) lines.push(`  not run: ${k}: ${why}`);
  const applied = r.faults.filter((f) => !f.skipped);
  lines.push(`  faults: ${applied.length} applied, ${r.faults.length - applied.length} skipped`);
  for (const f of r.faults)
    lines.push(
      `    ${(f.startMs / 1000).toFixed(1).padStart(6)} s  ${f.kind.padEnd(10)} ${f.skipped ? `${f.shape ? `${f.shape}: ` : ''}skipped: ${f.skipped}` : `${f.label} (${((f.endMs - f.startMs) / 1000).toFixed(1)} s)`}`,
    );
  lines.push(
    `  operations: ${r.ops.total} (${r.ops.ok} ok, ${r.ops.failed} failed, ${r.ops.unknown} unknown); failures by code ${JSON.stringify(r.ops.byCode)}`,
  );
  if (r.set)
    lines.push(
      `  set: attempted ${r.set.attempted}, acknowledged ${r.set.acknowledged}, lost ${r.set.lost.length}, unexpected ${r.set.unexpected.length}, recovered ${r.set.recovered}`,
    );
  if (r.register)
    lines.push(
      `  register: ${r.register.keys} keys, ${r.register.writes} writes, acknowledged ${r.register.acknowledged}, lost ${r.register.lost.length}, unexpected ${r.register.unexpected.length}, superseded by a successor ${r.register.superseded}`,
    );
  lines.push(
    `  convergence: ${r.convergence.converged ? `every replica identical, ${(r.convergence.ms / 1000).toFixed(1)} s after the heal (settling took ${(r.settleMs / 1000).toFixed(1)} s)` : `${r.convergence.divergent.length} keys differ`}`,
  );
  lines.push(
    `  availability: ${pct(r.availability.overall)} overall, ${pct(r.availability.quiet)} with no fault active`,
  );
  for (const [kind, a] of Object.entries(r.availability.byKind)) {
    const after =
      a.after === undefined
        ? 'no time after a heal free of other faults'
        : `${pct(a.after)} in the 5 s after the heal, all ok again within ${a.worstRecoveryMs === undefined ? '> 5 s' : `${(a.worstRecoveryMs / 1000).toFixed(2)} s`} (${a.measured} measured)`;
    lines.push(`    ${kind.padEnd(10)} ${String(a.faults).padStart(3)} faults: ${pct(a.during)} during, ${after}`);
  }
  if (r.impact !== undefined) {
    const q = r.impact.quiet;
    const x = (v: number | undefined): string => (v === undefined ? '   n/a' : `${v.toFixed(2)}×`.padStart(6));
    lines.push(
      `  throughput and p99 during faults ÷ quiet (${q.okPerSec.toFixed(0)} ok ops/s, p99 ${q.p99Ms === undefined ? 'n/a' : `${q.p99Ms.toFixed(0)} ms`}, ${q.failed} failed, over ${q.seconds.toFixed(1)} s with no fault active):`,
    );
    for (const [k, m] of Object.entries(r.impact.byKind).sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(
        `    ${k.padEnd(26)} ${String(m.faults).padStart(3)} faults ${m.seconds.toFixed(1).padStart(6)} s: ops/s ${x(m.throughput)} (${m.okPerSec.toFixed(0)}/s), p99 ${x(m.p99)} (${m.p99Ms === undefined ? 'n/a' : `${m.p99Ms.toFixed(0)} ms`}), ${m.failed} failed`,
      );
    }
  }
  if (r.expiry)
    lines.push(
      `  expiry: ${r.expiry.writes} writes, acknowledged ${r.expiry.acknowledged}, ${r.expiry.reads} reads, ${r.expiry.judged} values judged, late ${r.expiry.late}, unexpected ${r.expiry.unexpected.length}, largest skew bound ${r.expiry.maxSkewMs} ms`,
    );
  if (r.counter)
    lines.push(
      `  counter: ${r.counter.keys} keys, ${r.counter.increments} increments, acknowledged ${r.counter.acknowledged}, ${r.counter.reads} reads, lost ${r.counter.lost.length}, doubled ${r.counter.doubled.length}, bad reads ${r.counter.badReads.length}, unknown units applied ${r.counter.unknownApplied}`,
    );
  if (r.orset)
    lines.push(
      `  orset: ${r.orset.elements} elements, acknowledged ${r.orset.acknowledged}, removed ${r.orset.removed}, lost ${r.orset.lost.length}, resurrected ${r.orset.resurrected.length}, unexpected ${r.orset.unexpected.length}`,
    );
  if (r.map)
    lines.push(
      `  map: ${r.map.requests} updates of ${r.map.keys} maps, acknowledged ${r.map.acknowledged}, lost ${r.map.lost.length}, torn ${r.map.torn.length}, unexpected ${r.map.unexpected.length}`,
    );
  if (r.cas) {
    const v = r.cas.verdict.linearizable;
    lines.push(
      `  cas: ${r.cas.ops} operations on ${r.cas.verdict.keys.length} keys, applied ${r.cas.applied}, not applied for a changed value ${r.cas.beaten}, unknown ${r.cas.unknown}, refused ${r.cas.notApplied}; ${v === true ? 'linearizable' : v === false ? 'NOT linearizable' : 'not proved (search budget)'} (${r.cas.verdict.keys.reduce((n, k) => n + k.steps, 0)} search steps)`,
    );
  }
  for (const v of r.violations) lines.push(`  VIOLATION: ${v}`);
  lines.push(`  report: ${join(r.folder, 'report.json')}, picture: ${join(r.folder, 'timeline.svg')}`);
  return lines.join('\n') + '\n';
}

/** Applies faults to the cluster and heals them, keeping a record of each. */
class NemesisRunner {
  readonly records: FaultRecord[] = [];
  /** Every clock offset the nemesis set, with when (checkers.ts: the expiry checker's skew bound). */
  readonly offsets: OffsetChange[] = [];
  #membership: Promise<void> | undefined;
  /** The repair of the last node the corrupt nemesis damaged, while it runs. */
  #unrepaired: Promise<void> | undefined;
  #removeNext = false;
  #strobe: NodeJS.Timeout | undefined;
  /** The slow fault in force, if any. */
  #slow: Healable | undefined;
  /** Nodes the nemesis has stopped (killed or paused) or slowed right now. */
  readonly #down = new Set<JepsenNode>();

  constructor(
    readonly cluster: JepsenCluster,
    readonly net: Network | undefined,
    readonly caps: NetCapabilities,
    readonly slowCaps: Record<SlowShape, true | string>,
    readonly history: History,
    readonly log: (l: string) => void,
    readonly skew: { readonly min: number; readonly max: number },
  ) {}

  /** Set node `n`'s clock offset through `set`, recording when it was asked and when it was in force. */
  async #offset(id: string, offsetMs: number, set: () => Promise<unknown>): Promise<void> {
    const fromMs = this.history.now();
    try {
      await set();
    } finally {
      this.offsets.push({ id, offsetMs, fromMs, toMs: this.history.now() });
    }
  }

  /** A skew the nemesis applies, ms, positive. */
  #skew(random: () => number): number {
    return Math.round(this.skew.min + random() * (this.skew.max - this.skew.min));
  }

  #record(kind: Nemesis, label: string, skipped?: string, shape?: string): FaultRecord {
    const r: FaultRecord = {
      kind,
      ...(shape ? { shape } : {}),
      label,
      startMs: this.history.now(),
      endMs: this.history.now(),
      ...(skipped ? { skipped } : {}),
    };
    this.records.push(r);
    this.log(`nemesis ${kind}: ${skipped ? `${shape ? `${shape}: ` : ''}skipped (${skipped})` : label}`);
    return r;
  }

  /** Running members the nemesis may touch: not stopped by it, not on their way out. */
  #candidates(): JepsenNode[] {
    return this.cluster.members.filter((n) => n.running && !n.paused && !this.#down.has(n));
  }

  async apply(f: Fault): Promise<void> {
    const random = mulberry32(Math.floor(f.seed * 2 ** 32));
    switch (f.kind) {
      case 'partition': {
        const members = this.cluster.members.map((n) => ({ id: n.id, zone: n.zone }));
        const p = partition(f.shape as PartitionShape, members, random);
        const rec = this.#record('partition', `${p.shape}: ${p.describe}`, undefined, p.shape);
        this.net!.partition(p.grudges);
        await sleep(f.forMs);
        this.net!.healPartition();
        rec.endMs = this.history.now();
        return;
      }
      case 'kill':
      case 'pause': {
        // At most N-W = 1 replica of any key stopped at once: one node of the cluster.
        if (this.#down.size > 0) return void this.#record(f.kind, '', 'another node is already down');
        const victim = shuffle(this.#candidates(), random)[0];
        if (victim === undefined) return void this.#record(f.kind, '', 'no running member');
        this.#down.add(victim);
        // Half the restarts come back with the clock minutes behind: the new generation must still be larger.
        const behindMs = f.kind === 'kill' && random() < 0.5 ? -this.#skew(random) : 0;
        const rec = this.#record(
          f.kind,
          f.kind === 'kill'
            ? `kill -9 ${victim.id}, restart${behindMs ? ` with its clock ${Math.round(-behindMs / 1000)} s behind` : ''}`
            : `SIGSTOP ${victim.id}`,
        );
        if (f.kind === 'kill') await victim.kill();
        else victim.signal('SIGSTOP');
        await sleep(f.forMs);
        if (f.kind === 'kill') await this.#offset(victim.id, behindMs, async () => victim.start(behindMs));
        else victim.signal('SIGCONT');
        this.#down.delete(victim);
        rec.endMs = this.history.now();
        return;
      }
      case 'packet': {
        const victims = shuffle(this.#candidates(), random).slice(0, 1 + Math.floor(random() * 2));
        const netem = this.caps.netem === true;
        const fault = netem
          ? { lossPercent: 10, delayMs: 50, jitterMs: 40, reorderPercent: 20 }
          : { lossPercent: 20, slowKbit: 512 };
        const rec = this.#record(
          'packet',
          `${victims.map((v) => v.id).join(',')}: ${netem ? 'netem delay 50±40 ms, 20% reordered, 10% loss' : '20% loss, link slowed to 512 kbit/s'}`,
        );
        for (const v of victims) this.net!.degrade(v.id, fault);
        await sleep(f.forMs);
        this.net!.heal();
        rec.endMs = this.history.now();
        return;
      }
      case 'clock': {
        const victims = shuffle(this.#candidates(), random).slice(0, 1 + Math.floor(random() * 2));
        const offset = this.#skew(random) * (random() < 0.5 ? -1 : 1);
        const strobe = random() < 0.5;
        const rec = this.#record(
          'clock',
          `${victims.map((v) => v.id).join(',')}: ${strobe ? `strobe ±${Math.round(Math.abs(offset) / 1000)} s every 200 ms` : `skew ${offset > 0 ? '+' : ''}${Math.round(offset / 1000)} s`}`,
        );
        const set = (ms: number): Promise<unknown> =>
          Promise.all(
            victims.map((v) =>
              this.#offset(v.id, ms, () => v.admin().setClockOffset(ms)).catch((e: Error) =>
                this.log(`clock on ${v.id}: ${e.message}`),
              ),
            ),
          );
        await set(offset);
        if (strobe) {
          let sign = 1;
          this.#strobe = setInterval(() => void set((sign = -sign) * offset), 200);
        }
        await sleep(f.forMs);
        clearInterval(this.#strobe);
        await set(0);
        rec.endMs = this.history.now();
        return;
      }
      case 'slow':
        return this.#applySlow(f, random);
      case 'disk-full':
        return this.#fillDisk(f, random);
      case 'corrupt':
        return this.#corrupt(f, random);
      case 'membership': {
        if (this.#membership !== undefined)
          return void this.#record('membership', '', 'the last membership change is still running');
        const rec = this.#record('membership', 'join, then decommission or remove');
        this.#membership = this.#change(rec, random)
          .catch((e: Error) => {
            rec.label += ` — stopped: ${e.message}`;
            this.log(`membership: ${e.message}`);
          })
          .finally(() => {
            rec.endMs = this.history.now();
            this.#membership = undefined;
          });
        return;
      }
    }
  }

  /**
   * One node slowed, not stopped: its CPU throttled, its process strobed, or its links
   * delayed. It counts as the one node down meanwhile (no kill or pause overlaps it, no
   * membership change picks it). The record starts once the fault is in force.
   */
  async #applySlow(f: Fault, random: () => number): Promise<void> {
    const shape = f.shape as SlowShape;
    const can = this.slowCaps[shape];
    if (can !== true) return void this.#record('slow', '', can, shape);
    if (this.#down.size > 0) return void this.#record('slow', '', 'another node is already down', shape);
    const victim = shuffle(this.#candidates(), random)[0];
    if (victim === undefined) return void this.#record('slow', '', 'no running member', shape);
    this.#down.add(victim);
    const d = SLOW_DEFAULTS;
    let label: string;
    try {
      switch (shape) {
        case 'cpu':
          this.#slow = throttleCpu(victim.pid!, d.cpuShare, victim.id);
          label = `cpu: ${victim.id} throttled to ${Math.round(d.cpuShare * 100)}% of a core`;
          break;
        case 'strobe':
          this.#slow = strobe(victim.pid!, d.stoppedMs, d.runningMs);
          label = `strobe: ${victim.id} ${d.stoppedMs} ms stopped / ${d.runningMs} ms running`;
          break;
        case 'delay': {
          const net = this.net!;
          await net.delay(victim.id, { delayMs: d.delayMs, jitterMs: d.jitterMs });
          this.#slow = { heal: () => net.undelay() };
          label = `delay: ${victim.id} links ${d.delayMs}±${d.jitterMs} ms`;
          break;
        }
      }
    } catch (e) {
      this.#down.delete(victim);
      this.#slow?.heal();
      this.#slow = undefined;
      if (shape === 'delay') this.net?.undelay();
      return void this.#record('slow', '', `could not apply: ${(e as Error).message}`, shape);
    }
    const rec = this.#record('slow', label, undefined, shape);
    await sleep(f.forMs);
    this.#slow?.heal();
    this.#slow = undefined;
    this.#down.delete(victim);
    rec.endMs = this.history.now();
  }

  /**
   * One node's disk filled: for the first half of the fault to half its floor of free
   * space (it refuses new writes, RESOURCE_EXHAUSTED), for the second to the last byte (its
   * store's writes fail ENOSPC, LevelDB's background error included); then freed. It counts
   * as the one node down meanwhile.
   */
  async #fillDisk(f: Fault, random: () => number): Promise<void> {
    if (this.#down.size > 0) return void this.#record('disk-full', '', 'another node is already down');
    const victim = shuffle(this.#candidates(), random)[0];
    if (victim === undefined) return void this.#record('disk-full', '', 'no running member');
    this.#down.add(victim);
    try {
      const st = statfsSync(victim.dataDir);
      const floor = Math.min(0.05 * st.blocks * st.bsize, 2 ** 30);
      const left = fillDisk(victim.dataDir, Math.floor(floor / 2));
      const rec = this.#record(
        'disk-full',
        `${victim.id}'s disk filled: ${(left / 2 ** 20).toFixed(1)} MiB free (under its floor), then none`,
      );
      await sleep(f.forMs / 2);
      fillDisk(victim.dataDir, 0);
      await sleep(f.forMs / 2);
      rec.endMs = this.history.now();
    } finally {
      freeDisk(victim.dataDir);
      this.#down.delete(victim);
    }
  }

  /**
   * One node killed -9 and its LevelDB files damaged while it is down, then started again:
   * a table file removed (the database repairs itself at open), bytes flipped inside
   * records of another, its newest log cut short. It counts as the one node down
   * meanwhile; no other node is damaged until it has been repaired.
   */
  async #corrupt(f: Fault, random: () => number): Promise<void> {
    if (this.#down.size > 0) return void this.#record('corrupt', '', 'another node is already down');
    if (this.#unrepaired !== undefined)
      return void this.#record('corrupt', '', 'the last damaged node is not repaired yet');
    const victim = shuffle(this.#candidates(), random)[0];
    if (victim === undefined) return void this.#record('corrupt', '', 'no running member');
    this.#down.add(victim);
    try {
      await victim.kill();
      const db = join(victim.dataDir, 'data');
      // Writes since a node's last start are in its log alone; each start writes the log into a table. Two
      // tables at least, so that one can be removed and another damaged.
      for (let i = 0; i < 3 && readdirSync(db).filter((f) => f.endsWith('.ldb')).length < 2; i++) {
        victim.start();
        await waitUntil(`${victim.id} up again`, 30_000, async () => (await victim.status()) !== undefined).catch(
          () => undefined,
        );
        await sleep(1000);
        await victim.kill();
      }
      const flipped = flipInTable(db, 1 + Math.floor(random() * 4), random);
      const did = [removeTable(db, random, flipped?.table), flipped?.text, truncateNewestLog(db, random)].filter(
        (d) => d !== undefined,
      );
      const rec = this.#record(
        'corrupt',
        `kill -9 ${victim.id}, ${did.length > 0 ? did.join(', ') : 'no files to damage yet'}, restart, repair`,
      );
      await sleep(f.forMs);
      victim.start();
      rec.endMs = this.history.now();
      // What the damage lost (acknowledged writes among it) is on other replicas only until a repair: no
      // other node's files are damaged before then, or a second loss could take a write's last copies.
      this.#unrepaired = this.#repairAfterDamage(victim).finally(() => (this.#unrepaired = undefined));
    } finally {
      this.#down.delete(victim);
    }
  }

  /** Repair a damaged node once it is back, trying again while other faults get in the way (at most 5 minutes). */
  async #repairAfterDamage(victim: JepsenNode): Promise<void> {
    const end = Date.now() + 300_000;
    while (Date.now() < end && !victim.gone) {
      try {
        if (!victim.running || victim.paused) throw new Error('not running');
        let run = await victim.admin().repair();
        while (run.finishedAtMs === 0 && Date.now() < end) {
          await sleep(500);
          run = await victim.admin().repairStatus();
        }
        // Every range, with every replica up: a range skipped for a replica down still has its losses on one copy.
        if (run.finishedAtMs !== 0 && run.failed === 0 && run.skipped === 0)
          return void this.log(`nemesis corrupt: ${victim.id} repaired: ${run.keysExchanged} keys exchanged`);
      } catch {
        // down, paused or busy: again shortly
      }
      await sleep(1000);
    }
    this.log(`nemesis corrupt: ${victim.id} not repaired in 5 minutes`);
  }

  /** Resolves once every damaged node has been repaired (the run's settling waits for it). */
  async damageRepaired(): Promise<void> {
    await this.#unrepaired;
  }

  /** A node joins; once it is normal, another leaves (decommission and removenode in turn). */
  async #change(rec: { label: string }, random: () => number): Promise<void> {
    const fresh = await this.cluster.add();
    fresh.start();
    this.log(`membership: ${fresh.id} joins`);
    const seedIds = new Set(this.cluster.nodes.slice(0, 3).map((n) => n.id));
    await waitUntil(`${fresh.id} normal on every member`, 180_000, async () =>
      (await this.cluster.views()).every(
        (v) => v === undefined || v.members.find((m) => m.id === fresh.id)?.status === 'normal',
      ),
    );
    // One topology change at a time: a refusal while the last one finishes is retried.
    let refused = '';
    const retry = (what: string, call: () => Promise<unknown>): Promise<void> =>
      waitUntil(`${what} accepted`, 180_000, () =>
        call().then(
          () => true,
          (e: Error & { code?: number }) => {
            if (e.code !== 9 && e.code !== 14 && e.code !== 4) throw e;
            if (e.message !== refused) this.log(`membership: ${what}: ${(refused = e.message)}; retrying`);
            return false;
          },
        ),
      );
    // Leave: never a seed (joins need them), never the node that just joined.
    const leaver = shuffle(
      this.#candidates().filter((n) => !seedIds.has(n.id) && n !== fresh),
      random,
    )[0];
    if (leaver === undefined) return;
    const remove = this.#removeNext;
    this.#removeNext = !this.#removeNext;
    if (!remove) {
      rec.label = `${fresh.id} joins, ${leaver.id} decommissioned`;
      this.log(`membership: decommission ${leaver.id}`);
      leaver.leaving = true;
      await retry(`decommission ${leaver.id}`, () => leaver.admin().decommission());
      // It exits by itself once its ranges are on their new replicas; a kill in between restarts it and it carries on.
      const exited = (): boolean => !leaver.running && !this.#down.has(leaver);
      await waitUntil(
        `${leaver.id} to finish leaving`,
        600_000,
        async () => exited() && (await sleep(1000).then(exited)),
      );
      leaver.gone = true;
      this.log(`membership: ${leaver.id} left`);
    } else {
      if (this.#down.size > 0)
        await waitUntil('no node down before a removal', 60_000, async () => this.#down.size === 0);
      rec.label = `${fresh.id} joins, ${leaver.id} killed and removed`;
      // It counts as the one node down until its ranges are back on N replicas.
      this.#down.add(leaver);
      try {
        await leaver.kill();
        leaver.gone = true;
        const driver = this.#candidates()[0]!;
        this.log(`membership: ${leaver.id} killed; removenode from ${driver.id}`);
        await retry(`removenode ${leaver.id}`, () => driver.admin().removeNode(leaver.id));
        await waitUntil(`${leaver.id} removed everywhere`, 600_000, async () =>
          (await this.cluster.views()).every(
            (v) => v !== undefined && v.members.every((m) => m.id !== leaver.id || m.status === 'removed'),
          ),
        );
        this.log(`membership: ${leaver.id} removed`);
      } finally {
        this.#down.delete(leaver);
      }
    }
  }

  async membershipDone(ms: number): Promise<void> {
    if (this.#membership) await Promise.race([this.#membership, sleep(ms)]);
  }

  /** Every network fault removed, every clock true, every stopped or slowed node running freely again. */
  async healAll(): Promise<void> {
    clearInterval(this.#strobe);
    this.#slow?.heal();
    this.#slow = undefined;
    this.net?.heal();
    for (const n of this.cluster.members) {
      if (n.paused) n.signal('SIGCONT');
      // A leaving node that exited by itself has left: it is not restarted.
      else if (!n.running && (!n.leaving || this.#down.has(n))) n.start();
      this.#down.delete(n);
    }
    await Promise.all(
      this.cluster.members.map((n) => this.#offset(n.id, 0, () => n.admin().setClockOffset(0)).catch(() => undefined)),
    );
  }
}
