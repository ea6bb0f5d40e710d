/**
 * npm run bench:vs — ringkv against etcd and a bare grpc-js echo, side by side on this
 * machine, driven by the same load generator: 3 `ringkv node` processes (built code,
 * zones a/b/c, N=3, requests at R=2 / W=2), a 3-member etcd cluster (Range and Put over
 * gRPC with bench/etcd-kv.proto; gets are serializable ranges, served by the member that
 * takes them), and one echo process (bench/echo-server.ts: one gRPC hop, the ceiling).
 * Everything listens on 127.0.0.1 on free ports; 16-byte keys, 100-byte values.
 *
 * Workloads: `put new` (keys never written), `overwrite` (keys loaded first; ringkv passes
 * the context its previous write of that key returned, so each put replaces the value
 * instead of adding a sibling; etcd puts over the key) and `get` (keys loaded first:
 * ringkv at R=2, etcd a serializable Range). Echo answers the same echo call for all three.
 * The keys are loaded before measuring, ringkv at W=3 so every replica holds them.
 *
 * The load comes from --clients separate processes (bench/vs-load.ts, default 2, the same
 * for every system) sharing the requests in flight (16, then 128) evenly; each runs a
 * closed loop bounded in time and count, and answers with its HDR histogram of successful
 * requests' latency (failed ones are counted, not timed); the histograms are merged here.
 *
 * Rounds are interleaved: in each round, for each level and workload, echo, etcd and
 * ringkv run one after another, the order rotating between rounds, so drift on this
 * shared machine hits all three alike. A cell's ops/s is the median over rounds; its
 * p50/p99/p99.9 are those of the median round (the merged histogram of all rounds is in
 * --json too); `failed` is the sum over rounds. ringkv's ratios to etcd and echo are
 * checked against the issue's targets: at 128 in flight puts and gets ≥ 1.0× etcd's
 * ops/s, p99 ≤ etcd's, ≥ 0.6× echo's; at 16 ≥ 0.8× etcd's (overwrite counts as a put).
 *
 * Each run also reads, from /proc, the CPU the serving processes used (cores busy on
 * average, and µs per successful request: steadier than ops/s on a shared machine) and
 * what the load clients used (in cores: near the machine's count, they are the ceiling).
 *
 * For ringkv's 128-in-flight runs, each node's event-loop lag: /metrics is scraped just
 * before (prom-client resets its monitorEventLoopDelay histogram at every scrape, and
 * nothing else scrapes) and just after, so the figure belongs to that run. The samples
 * are the time between two ticks of a 10 ms timer, so the 10 ms is subtracted.
 *
 * etcd keeps its defaults, so it fsyncs its WAL on every commit; ringkv's default
 * durability acknowledges once the OS holds the write (--durability sync to compare
 * like with like). No etcd on PATH (and none apt-get can install): the rest runs without.
 *
 * --preload N: the same matrix twice, on the stores as they are, then with N more keys
 * in every ringkv node (and etcd, unless --no-etcd-preload) and each node's RSS (VmRSS)
 * and data dir size, the memory per key being the RSS difference between the nodes
 * restarted without and with the N keys, ÷ N. ringkv's keys are written offline, as
 * bench:handoff does (the nodes stopped: Store.put into n1's store, the record merged into
 * n2's and n3's, what a coordinator and its replicas do), or through the client at W=3
 * with --preload-online; etcd's through its Put at high concurrency. Restarted with the
 * keys, the nodes are measured once they are quiet (the key filter's scan and LevelDB's
 * compactions done; how long that took is printed). Bulk values are 100
 * random bytes (the bench's own are 100 × 'a', which LevelDB's Snappy shrinks on disk).
 * A table compares each cell's ops/s with and without the bulk keys, and ÷ echo in each
 * phase, since the machine drifts between the phases.
 *
 *   npm run bench:vs [-- --quick] [-- --seconds 10] [-- --rounds 3] [-- --clients 2]
 *                    [-- --keys 20000] [-- --json FILE] [-- --cpu-prof DIR]
 *                    [-- --preload 1000000 [--preload-online] [--no-etcd-preload]]
 *                    [-- --durability sync] [-- --systems echo,etcd,ringkv]
 *                    [-- --inflight 16,128] [-- --workloads put-new,overwrite,get]
 *                    [-- --bucket-ttl MS]
 *
 * --bucket-ttl MS: ringkv's requests (and its keys' load) go to a bucket `bench` created
 * through the Admin API with that default TTL, so every value it writes expires: run it
 * with and without, and compare ringkv ÷ echo (bench:expiry compares the two in one run).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, lstatSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import * as hdr from 'hdr-histogram-js';
import { AdminClient } from '../src/client/index.js';
import { Store } from '../src/storage/index.js';
import { freePort } from '../testkit/ports.js';
import { table } from './lib.js';
import { Proc, benchRoot, formed, sleep, stopAll, track } from './processes.js';
import {
  VALUE,
  bulkValue,
  histogram,
  key,
  type Init,
  type Preload,
  type PreloadReply,
  type Run,
  type RunReply,
  type System,
  type Workload,
} from './vs-load.js';

const args = process.argv.slice(2);
const opt = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const num = (name: string): number | undefined => {
  const v = opt(name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} needs a number, got ${v}`);
  return n;
};
const list = (name: string, d: string[]): string[] =>
  opt(name)
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean) ?? d;
const QUICK = args.includes('--quick');
const SECONDS = num('--seconds') ?? (QUICK ? 3 : 10);
const ROUNDS = num('--rounds') ?? (QUICK ? 1 : 3);
const CLIENTS = num('--clients') ?? 2;
const KEYS = num('--keys') ?? (QUICK ? 5_000 : 20_000);
const WARM_SECONDS = QUICK ? 1 : 2;
const PRELOAD = num('--preload') ?? 0;
const BUCKET_TTL = num('--bucket-ttl');
if (BUCKET_TTL !== undefined && PRELOAD > 0)
  throw new Error('--bucket-ttl: not with --preload (its offline load writes the default bucket)');
const PRELOAD_ONLINE = args.includes('--preload-online');
const PRELOAD_ETCD = !args.includes('--no-etcd-preload');
const JSON_FILE = opt('--json');
const CPU_PROF = opt('--cpu-prof');
const DURABILITY = opt('--durability') ?? 'default';
const INFLIGHT = list('--inflight', ['16', '128']).map(Number);
const WORKLOADS = list('--workloads', ['put-new', 'overwrite', 'get']).map((w) => w.replace('-', ' ') as Workload);
const SYSTEMS = list('--systems', ['echo', 'etcd', 'ringkv']) as System[];
if (!Number.isInteger(CLIENTS) || CLIENTS < 1 || CLIENTS > 16) throw new Error('--clients must be 1..16');
if (INFLIGHT.some((c) => !Number.isInteger(c) || c < CLIENTS))
  throw new Error(`every --inflight level must be an integer ≥ --clients (${CLIENTS})`);
if (WORKLOADS.some((w) => !['put new', 'overwrite', 'get'].includes(w)))
  throw new Error('--workloads: put-new, overwrite, get');
if (SYSTEMS.some((s) => !['echo', 'etcd', 'ringkv'].includes(s))) throw new Error('--systems: echo, etcd, ringkv');
if (!['default', 'sync'].includes(DURABILITY)) throw new Error('--durability: default or sync');

const LOAD = fileURLToPath(new URL('./vs-load.ts', import.meta.url));
const ETCD_PROTO = fileURLToPath(new URL('./etcd-kv.proto', import.meta.url));
/** The 10 ms timer prom-client's event-loop monitor ticks with (src/node/http/metrics.ts). */
const LAG_RESOLUTION_S = 0.01;
/** Requests in flight for loading keys: bench keys, then the bulk ones. */
const LOAD_CONCURRENCY = 64;
const BULK_CONCURRENCY = 256;
const BULK_CHUNK = 25_000;

const root = benchRoot('vs');
const ms = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);

// ─── processes ──────────────────────────────────────────────────────────────

/** SIGTERM by PID, SIGKILL after `graceMs`. */
async function stopChild(c: ChildProcess, graceMs = 20_000): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  const exited = new Promise((r) => c.once('exit', r));
  process.kill(c.pid!, 'SIGTERM');
  const t = setTimeout(() => c.exitCode === null && c.signalCode === null && process.kill(c.pid!, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(t);
}

/** Resident set size of a process, bytes (VmRSS); NaN once it is gone. */
function rss(pid: number | undefined): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** CPU seconds (user + system, all threads) a process has used; NaN once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100 on Linux)
  } catch {
    return NaN;
  }
}

/** Disk space a directory takes (allocated blocks, as du counts). */
function du(dir: string): number {
  let total = 0;
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      try {
        if (e.isDirectory()) walk(p);
        else total += lstatSync(p).blocks * 512;
      } catch {
        // A file LevelDB or etcd removed while we walked.
      }
    }
  };
  try {
    walk(dir);
  } catch {
    return NaN;
  }
  return total;
}

function which(cmd: string): string | undefined {
  for (const d of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(d, cmd), constants.X_OK);
      return join(d, cmd);
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Distinct log messages and how often each came. */
type LogCount = Map<string, number>;
const count = (m: LogCount, msg: string): void => void m.set(msg, (m.get(msg) ?? 0) + 1);

async function startEcho(): Promise<{ child: ChildProcess; address: string }> {
  const child = track(
    spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./echo-server.ts', import.meta.url))], {
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  const port = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const m = /^listening (\d+)$/.exec(l);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the echo server exited with ${code}`)));
  });
  return { child, address: `127.0.0.1:${port}` };
}

interface Etcd {
  readonly members: {
    readonly name: string;
    readonly child: ChildProcess;
    readonly dir: string;
    readonly client: string;
    readonly log: LogCount;
  }[];
  readonly version: string;
}

type EtcdStub = grpc.Client & {
  Range(req: unknown, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: unknown) => void): void;
};

function etcdStub(address: string): EtcdStub {
  const def = protoLoader.loadSync(ETCD_PROTO, { keepCase: false, longs: String, defaults: true });
  const KV = (grpc.loadPackageDefinition(def) as unknown as { etcdserverpb: { KV: grpc.ServiceClientConstructor } })
    .etcdserverpb.KV;
  return new KV(address, grpc.credentials.createInsecure()) as unknown as EtcdStub;
}

/** A 3-member etcd cluster on loopback, each member answering a linearizable Range; undefined (and one line saying why) when there is no etcd. */
async function startEtcd(): Promise<Etcd | undefined> {
  let bin = which('etcd');
  let why = 'no etcd on PATH';
  if (bin === undefined && process.getuid?.() === 0 && which('apt-get') !== undefined) {
    const r = spawnSync('apt-get', ['install', '-y', '-qq', 'etcd-server'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 300_000,
    });
    bin = which('etcd');
    if (bin === undefined) why += `, and apt-get install etcd-server failed (exit ${r.status ?? r.signal})`;
  } else if (bin === undefined)
    why += process.getuid?.() === 0 ? ' and no apt-get' : ' and not root, so no apt-get install';
  if (bin === undefined) {
    console.log(`bench:vs: etcd skipped — ${why} (install Debian's etcd-server)`);
    return undefined;
  }
  const version =
    /etcd Version: (\S+)/.exec(spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout ?? '')?.[1] ?? '?';
  const ports = await Promise.all(Array.from({ length: 6 }, () => freePort()));
  const names = ['e1', 'e2', 'e3'];
  const peer = (i: number): string => `http://127.0.0.1:${ports[2 * i + 1]}`;
  const cluster = names.map((n, i) => `${n}=${peer(i)}`).join(',');
  const members = names.map((name, i) => {
    const dir = join(root, name);
    const client = `127.0.0.1:${ports[2 * i]}`;
    const argv = [
      '--name',
      name,
      '--data-dir',
      dir,
      '--listen-client-urls',
      `http://${client}`,
      '--advertise-client-urls',
      `http://${client}`,
      '--listen-peer-urls',
      peer(i),
      '--initial-advertise-peer-urls',
      peer(i),
      '--initial-cluster',
      cluster,
      '--initial-cluster-state',
      'new',
      '--initial-cluster-token',
      `ringkv-bench-vs-${process.pid}`,
      '--logger',
      'zap',
      '--log-outputs',
      'stderr',
      '--log-level',
      'warn',
      // 8 GiB, etcd's largest: no NOSPACE alarm however many puts the runs make.
      '--quota-backend-bytes',
      String(8 * 2 ** 30),
    ];
    const child = track(spawn(bin!, argv, { stdio: ['ignore', 'ignore', 'pipe'] }));
    const log: LogCount = new Map();
    createInterface({ input: child.stderr! }).on('line', (l) => {
      try {
        const j = JSON.parse(l) as { level?: string; msg?: string };
        count(log, `${j.level}: ${j.msg}`);
        if (j.level === 'error' || j.level === 'fatal' || j.level === 'panic') console.error(`${name}: ${l}`);
      } catch {
        count(log, l.slice(0, 120));
      }
    });
    return { name, child, dir, client, log };
  });
  const end = Date.now() + 60_000;
  for (const m of members) {
    const stub = etcdStub(m.client);
    try {
      for (;;) {
        if (m.child.exitCode !== null)
          throw new Error(`etcd ${m.name} exited with ${m.child.exitCode}: ${[...m.log.keys()].join('; ')}`);
        const ok = await new Promise<boolean>((r) =>
          stub.Range({ key: Buffer.from('ready?') }, { deadline: Date.now() + 2000 }, (e) => r(e === null)),
        );
        if (ok) break;
        if (Date.now() > end) throw new Error(`etcd ${m.name} did not answer a linearizable Range in 60 s`);
        await sleep(250);
      }
    } finally {
      stub.close();
    }
  }
  return { members, version };
}

function startRingkv(nodes: readonly Proc[], https: readonly string[]): void {
  const seeds = nodes.map((n) => n.address);
  nodes.forEach((n, i) =>
    n.start(
      seeds,
      ['--zone', 'abc'[i]!, '--http', https[i]!, '--log-level', 'warn', '--durability', DURABILITY],
      CPU_PROF,
    ),
  );
}

/** Every node's prom-client event-loop p99 since its previous scrape, seconds (the 10 ms tick included). */
async function lagP99(https: readonly string[]): Promise<number[]> {
  return Promise.all(
    https.map(async (h) => {
      try {
        const text = await (await fetch(`http://${h}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
        const m = /^nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? (\S+)$/m.exec(text);
        return m ? Number(m[1]) : NaN;
      } catch {
        return NaN;
      }
    }),
  );
}

/** One bench/vs-load.ts process: JSON-line commands in, one JSON-line answer each. */
class LoadClient {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  #next = 1;
  readonly #waiting = new Map<number, { resolve: (x: unknown) => void; reject: (e: Error) => void }>();

  constructor(readonly index: number) {
    const prof =
      CPU_PROF === undefined
        ? []
        : [
            '--cpu-prof',
            `--cpu-prof-dir=${resolve(CPU_PROF)}`,
            `--cpu-prof-name=load${index}-${Date.now()}.cpuprofile`,
          ];
    this.child = track(
      spawn(process.execPath, [...prof, '--import', 'tsx', LOAD], { stdio: ['pipe', 'pipe', 'inherit'] }),
    );
    let ready!: () => void;
    this.ready = new Promise<void>((resolve, reject) => {
      ready = resolve;
      this.child.once('exit', (code) => reject(new Error(`load client ${index} exited with ${code}`)));
    });
    createInterface({ input: this.child.stdout! }).on('line', (l) => {
      let m: { ready?: boolean; id?: number; error?: string };
      try {
        m = JSON.parse(l) as typeof m;
      } catch {
        console.error(`load ${index}: ${l}`);
        return;
      }
      if (m.ready) return ready();
      const w = this.#waiting.get(m.id!);
      if (w === undefined) return;
      this.#waiting.delete(m.id!);
      if (m.error !== undefined) w.reject(new Error(`load client ${index}: ${m.error}`));
      else w.resolve(m);
    });
    this.child.once('exit', (code, signal) => {
      for (const w of this.#waiting.values()) w.reject(new Error(`load client ${index} exited (${code ?? signal})`));
      this.#waiting.clear();
    });
  }

  ask<T>(c: Init | Preload | Run): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (x: unknown) => void, reject });
      this.child.stdin!.write(`${JSON.stringify({ id, ...c })}\n`);
    });
  }

  /** Exit by itself (so --cpu-prof writes its profile); by PID after 20 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin!.end(`${JSON.stringify({ id: this.#next++, cmd: 'exit' })}\n`);
    const t = setTimeout(() => void stopChild(this.child, 5000), 20_000);
    await exited;
    clearTimeout(t);
  }
}

// ─── runs ───────────────────────────────────────────────────────────────────

interface Figures {
  opsPerSec: number;
  p50: number;
  p99: number;
  p999: number;
}
/** CPU in a run, from /proc (every thread: LevelDB's, Go's, the GC's): cores busy on average, and the servers' CPU per successful request. */
interface Cpu {
  clientCores: number;
  serverCores: number;
  serverUsPerOp: number;
}
interface RoundResult extends Figures, Cpu {
  ops: number;
  failed: number;
  errors: Record<string, number>;
  siblings: number;
  /** ringkv at 128: each node's event-loop lag p99 over the run, ms (10 ms tick subtracted). */
  lagMs?: number[];
}
interface Cell {
  workload: Workload;
  inflight: number;
  system: System;
  rounds: RoundResult[];
  merged: hdr.Histogram;
}
interface Summary extends Figures, Cpu {
  failed: number;
  siblings: number;
  errors: Record<string, number>;
  merged: Figures;
  lagMs?: number[];
}

const figures = (h: hdr.Histogram, opsPerSec: number): Figures => ({
  opsPerSec,
  p50: h.getValueAtPercentile(50) / 1000,
  p99: h.getValueAtPercentile(99) / 1000,
  p999: h.getValueAtPercentile(99.9) / 1000,
});

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function summarize(c: Cell): Summary {
  // Latency of the median round (the lower of the two middle ones for an even count).
  const byOps = [...c.rounds].sort((a, b) => a.opsPerSec - b.opsPerSec);
  const mid = byOps[Math.floor((byOps.length - 1) / 2)]!;
  const errors: Record<string, number> = {};
  for (const r of c.rounds) for (const [k, v] of Object.entries(r.errors)) errors[k] = (errors[k] ?? 0) + v;
  const lags = c.rounds.map((r) => r.lagMs).filter((l): l is number[] => l !== undefined);
  return {
    opsPerSec: median(c.rounds.map((r) => r.opsPerSec)),
    p50: mid.p50,
    p99: mid.p99,
    p999: mid.p999,
    clientCores: median(c.rounds.map((r) => r.clientCores)),
    serverCores: median(c.rounds.map((r) => r.serverCores)),
    serverUsPerOp: median(c.rounds.map((r) => r.serverUsPerOp)),
    failed: c.rounds.reduce((s, r) => s + r.failed, 0),
    siblings: c.rounds.reduce((s, r) => s + r.siblings, 0),
    errors,
    merged: figures(c.merged, c.rounds.reduce((s, r) => s + r.ops, 0) / (c.rounds.length * SECONDS)),
    ...(lags.length > 0 ? { lagMs: lags[0]!.map((_, i) => median(lags.map((l) => l[i]!))) } : {}),
  };
}

interface Bench {
  clients: LoadClient[];
  /** Each client's share of the bench keys key('k', i). */
  shares: { from: number; to: number }[];
  https: string[];
  /** The processes serving each system (ringkv's change when the nodes restart). */
  pids(system: System): number[];
}

/** One run of every client at its share of `inflight`, merged. */
async function runOnce(
  b: Bench,
  system: System,
  workload: Workload,
  inflight: number,
  seconds: number,
): Promise<{ result: RoundResult; hist: hdr.Histogram }> {
  const pids = b.pids(system);
  const cpu0 = pids.map(cpuSeconds);
  const t0 = performance.now();
  const replies = await Promise.all(
    b.clients.map((c, j) => {
      const concurrency = Math.floor(inflight / b.clients.length) + (j < inflight % b.clients.length ? 1 : 0);
      return c.ask<RunReply>({ cmd: 'run', system, workload, concurrency, seconds, ...b.shares[j]! });
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  const serverCpu = pids.reduce((s, pid, i) => s + cpuSeconds(pid) - cpu0[i]!, 0);
  const hist = histogram();
  const errors: Record<string, number> = {};
  let ops = 0,
    opsPerSec = 0,
    failed = 0,
    siblings = 0,
    clientCpu = 0;
  for (const r of replies) {
    const h = hdr.decodeFromCompressedBase64(r.hist);
    hist.add(h);
    h.destroy();
    ops += r.ops;
    opsPerSec += r.ops / (r.elapsedMs / 1000);
    failed += r.failed;
    siblings += r.siblings;
    clientCpu += r.cpuMs / 1000;
    for (const [k, v] of Object.entries(r.errors)) errors[k] = (errors[k] ?? 0) + v;
  }
  const cpu = {
    clientCores: clientCpu / wall,
    serverCores: serverCpu / wall,
    serverUsPerOp: (serverCpu * 1e6) / Math.max(1, ops),
  };
  return { result: { ...figures(hist, opsPerSec), ops, failed, errors, siblings, ...cpu }, hist };
}

/** The whole matrix: ROUNDS × levels × workloads × systems, the system order rotating per round. */
async function matrix(b: Bench, systems: readonly System[], label: string): Promise<Map<string, Cell>> {
  const cells = new Map<string, Cell>();
  const runs = ROUNDS * INFLIGHT.length * WORKLOADS.length * systems.length;
  console.log(
    `${label}: warming up, then ${runs} runs of ${SECONDS} s (about ${Math.ceil((runs * (SECONDS + 0.5)) / 60)} min)`,
  );
  for (const s of systems)
    for (const w of WORKLOADS)
      await runOnce(b, s, w, Math.max(...INFLIGHT), WARM_SECONDS).then((r) => r.hist.destroy());
  let done = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const order = systems.map((_, i) => systems[(i + round) % systems.length]!);
    for (const inflight of INFLIGHT) {
      for (const workload of WORKLOADS) {
        for (const system of order) {
          const scrape = system === 'ringkv' && inflight === 128;
          if (scrape) await lagP99(b.https);
          const { result, hist } = await runOnce(b, system, workload, inflight, SECONDS);
          if (scrape) result.lagMs = (await lagP99(b.https)).map((s) => Math.max(0, s - LAG_RESOLUTION_S) * 1000);
          const id = `${workload}|${inflight}|${system}`;
          const cell = cells.get(id) ?? { workload, inflight, system, rounds: [], merged: histogram() };
          cells.set(id, cell);
          cell.rounds.push(result);
          cell.merged.add(hist);
          hist.destroy();
          done++;
          const f = result.failed > 0 ? `, ${result.failed} failed` : '';
          const cpu = `server ${result.serverCores.toFixed(2)} cores, clients ${result.clientCores.toFixed(2)}`;
          console.log(
            `  [${done}/${runs}] round ${round + 1} ${workload} @${inflight} ${system}: ${result.opsPerSec.toFixed(0)} ops/s, p99 ${ms(result.p99)} ms, ${cpu}${f}`,
          );
        }
      }
    }
  }
  return cells;
}

const mark = (ok: boolean): string => (ok ? '✓' : '✗');

function report(
  cells: Map<string, Cell>,
  systems: readonly System[],
): { rows: string[][]; summaries: Record<string, Summary> } {
  const summaries: Record<string, Summary> = {};
  for (const [id, c] of cells) summaries[id] = summarize(c);
  const rows: string[][] = [
    [
      'workload',
      'in flight',
      'system',
      'ops/s',
      'p50 ms',
      'p99 ms',
      'p99.9 ms',
      'failed',
      'srv cores',
      'srv µs/op',
      'clients cores',
      '÷ etcd',
      '÷ echo',
      'p99 ÷ etcd',
      'target',
    ],
  ];
  for (const workload of WORKLOADS) {
    for (const inflight of INFLIGHT) {
      for (const system of (['echo', 'etcd', 'ringkv'] as const).filter((s) => systems.includes(s))) {
        const s = summaries[`${workload}|${inflight}|${system}`];
        if (s === undefined) continue;
        const row = [
          workload,
          String(inflight),
          system,
          s.opsPerSec.toFixed(0),
          ms(s.p50),
          ms(s.p99),
          ms(s.p999),
          String(s.failed),
          s.serverCores.toFixed(2),
          s.serverUsPerOp.toFixed(0),
          s.clientCores.toFixed(2),
        ];
        if (system === 'ringkv') {
          const e = summaries[`${workload}|${inflight}|etcd`];
          const x = summaries[`${workload}|${inflight}|echo`];
          row.push(
            e ? (s.opsPerSec / e.opsPerSec).toFixed(2) : '—',
            x ? (s.opsPerSec / x.opsPerSec).toFixed(2) : '—',
            e ? (s.p99 / e.p99).toFixed(2) : '—',
          );
          const t: string[] = [];
          if (inflight === 128) {
            t.push(
              e ? `≥1.0× etcd ${mark(s.opsPerSec >= e.opsPerSec)}` : '≥1.0× etcd n/a',
              e ? `p99 ≤ etcd ${mark(s.p99 <= e.p99)}` : 'p99 ≤ etcd n/a',
            );
            t.push(x ? `≥0.6× echo ${mark(s.opsPerSec >= 0.6 * x.opsPerSec)}` : '≥0.6× echo n/a');
          } else if (inflight === 16)
            t.push(e ? `≥0.8× etcd ${mark(s.opsPerSec >= 0.8 * e.opsPerSec)}` : '≥0.8× etcd n/a');
          row.push(t.join(', '));
        } else row.push('', '', '', '');
        rows.push(row);
      }
    }
  }
  return { rows, summaries };
}

function printNotes(summaries: Record<string, Summary>, nodeIds: readonly string[]): void {
  const lag = Object.entries(summaries).filter(([, s]) => s.lagMs !== undefined);
  if (lag.length > 0) {
    console.log(
      `\nringkv event-loop lag p99 per node at 128 in flight, ms (prom-client's monitorEventLoopDelay over each run, 10 ms tick subtracted; median over rounds):`,
    );
    console.log(
      table([
        ['workload', ...nodeIds],
        ...lag.map(([id, s]) => [id.split('|')[0]!, ...s.lagMs!.map((x) => (Number.isNaN(x) ? '?' : x.toFixed(1)))]),
      ]),
    );
  }
  for (const [id, s] of Object.entries(summaries)) {
    const [w, c, sys] = id.split('|');
    if (s.failed > 0)
      console.log(
        `failed: ${sys} ${w} @${c}: ${Object.entries(s.errors)
          .map(([e, n]) => `${n} × ${e}`)
          .join('; ')}`,
      );
    if (s.siblings > 0) console.log(`siblings: ${sys} ${w} @${c}: ${s.siblings} gets answered more than one value`);
  }
}

// ─── large store ────────────────────────────────────────────────────────────

/** Put `n` keys key('p', i) into n1's store and merge each record into n2's and n3's; the nodes are stopped. */
async function populateOffline(dirs: readonly string[], n: number): Promise<number> {
  const t0 = performance.now();
  const stores = await Promise.all(dirs.map((d) => Store.open({ path: join(d, 'data') })));
  try {
    const [first, ...others] = stores;
    const STEP = 2048;
    for (let i = 0; i < n; i += STEP) {
      const count = Math.min(STEP, n - i);
      const keys = Array.from({ length: count }, (_, j) => key('p', i + j));
      const written = await Promise.all(keys.map((k) => first!.put(k, bulkValue())));
      await Promise.all(others.map((s) => s.mergeMany(written.map((w, j) => ({ key: keys[j]!, record: w.record })))));
      if ((i / STEP) % 100 === 99)
        console.log(`  ${i + count} keys written, ${((i + count) / ((performance.now() - t0) / 1000)).toFixed(0)}/s`);
    }
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
  return (performance.now() - t0) / 1000;
}

/** Put `n` keys key('p', i) through the load clients, in chunks, at W=3 for ringkv. */
async function populateOnline(b: Bench, system: 'etcd' | 'ringkv', n: number): Promise<number> {
  const t0 = performance.now();
  const per = Math.floor(BULK_CONCURRENCY / b.clients.length);
  for (let at = 0; at < n;) {
    await Promise.all(
      b.clients.map((c) => {
        const from = Math.min(at, n);
        const to = Math.min(at + BULK_CHUNK, n);
        at = to;
        return from < to
          ? c.ask<PreloadReply>({
              cmd: 'preload',
              system,
              prefix: 'p',
              from,
              to,
              concurrency: per,
              w: 3,
              keep: false,
              random: true,
            })
          : Promise.resolve();
      }),
    );
    console.log(`  ${system}: ${at} keys, ${(at / ((performance.now() - t0) / 1000)).toFixed(0)}/s`);
  }
  return (performance.now() - t0) / 1000;
}

/**
 * Wait until the nodes are quiet: each under `cores` of CPU over a 2 s window, or
 * `maxMs` passed. A node that opens a million keys scans them into its key filter, and
 * LevelDB goes on with the compactions a bulk load left; measured meanwhile, a write
 * pays for both. Returns the seconds it took and whether they did settle.
 */
async function settle(
  pids: readonly number[],
  maxMs: number,
  cores = 0.1,
): Promise<{ seconds: number; settled: boolean }> {
  const t0 = performance.now();
  for (;;) {
    const before = pids.map(cpuSeconds);
    const w0 = performance.now();
    await sleep(2000);
    const wall = (performance.now() - w0) / 1000;
    const busy = pids.map((pid, i) => (cpuSeconds(pid) - before[i]!) / wall);
    const seconds = (performance.now() - t0) / 1000;
    if (busy.every((c) => c < cores)) return { seconds, settled: true };
    if (performance.now() - t0 > maxMs) return { seconds, settled: false };
  }
}

interface Memory {
  rss: number[];
  disk: number[];
}
const ringkvMemory = (nodes: readonly Proc[]): Memory => ({
  rss: nodes.map((n) => rss(n.child?.pid)),
  disk: nodes.map((n) => du(n.dataDir)),
});
const etcdMemory = (e: Etcd): Memory => ({
  rss: e.members.map((m) => rss(m.child.pid)),
  disk: e.members.map((m) => du(m.dir)),
});

// ─── main ───────────────────────────────────────────────────────────────────

async function main(): Promise<void> {
  if (CPU_PROF !== undefined) mkdirSync(CPU_PROF, { recursive: true });
  const load0 = loadavg();
  const etcd = SYSTEMS.includes('etcd') ? await startEtcd() : undefined;
  const systems = SYSTEMS.filter((s) => s !== 'etcd' || etcd !== undefined);
  const echo = await startEcho();

  const ports = await Promise.all(Array.from({ length: 6 }, () => freePort()));
  const nodes = ['n1', 'n2', 'n3'].map((id, i) => new Proc(id, `127.0.0.1:${ports[i]}`, join(root, id)));
  const https = ports.slice(3).map((p) => `127.0.0.1:${p}`);
  startRingkv(nodes, https);
  await formed(nodes, 120_000);
  if (BUCKET_TTL !== undefined) {
    const admin = new AdminClient(nodes[0]!.address, 30_000);
    try {
      await admin.createBucket('bench', { ttlMs: BUCKET_TTL });
    } finally {
      admin.close();
    }
  }
  const fresh = ringkvMemory(nodes);

  const cores = cpus().length;
  console.log(
    `bench:vs — ringkv (3 nodes, N=3, R=W=2, durability ${DURABILITY}) vs ${etcd ? `etcd ${etcd.version} (3 members)` : 'no etcd'} vs grpc-js echo; ` +
      `${CLIENTS} load client processes; ${cores} cores (available parallelism ${availableParallelism()}); load average ${load0[0]!.toFixed(1)}; ` +
      `${ROUNDS} round(s) × ${SECONDS} s per cell; ${KEYS} keys; 16-byte keys, 100-byte values`,
  );

  const clients = Array.from({ length: CLIENTS }, (_, i) => new LoadClient(i));
  await Promise.all(clients.map((c) => c.ready));
  const init = (): Promise<unknown> =>
    Promise.all(
      clients.map((c, index) =>
        c.ask({
          cmd: 'init',
          index,
          echo: echo.address,
          etcd: etcd?.members.map((m) => m.client) ?? [],
          ringkv: nodes.map((n) => n.address),
          bucket: BUCKET_TTL === undefined ? '' : 'bench',
        }),
      ),
    );
  await init();
  const shares = clients.map((_, j) => ({
    from: Math.floor((j * KEYS) / CLIENTS),
    to: Math.floor(((j + 1) * KEYS) / CLIENTS),
  }));
  const b: Bench = {
    clients,
    shares,
    https,
    pids: (s) =>
      s === 'echo'
        ? [echo.child.pid!]
        : s === 'etcd'
          ? etcd!.members.map((m) => m.child.pid!)
          : nodes.map((n) => n.child!.pid!),
  };

  // The keys overwrite and get use: ringkv at W=3 (every replica has them; each client keeps its keys' contexts).
  for (const system of ['ringkv', 'etcd'] as const) {
    if (!systems.includes(system)) continue;
    const t0 = performance.now();
    const r = await Promise.all(
      clients.map((c, j) =>
        c.ask<PreloadReply>({
          cmd: 'preload',
          system,
          prefix: 'k',
          ...shares[j]!,
          concurrency: Math.max(1, Math.floor(LOAD_CONCURRENCY / CLIENTS)),
          w: 3,
          keep: true,
          random: false,
        }),
      ),
    );
    const retried = r.reduce((s, x) => s + x.failed, 0);
    console.log(
      `loaded ${KEYS} keys into ${system} in ${((performance.now() - t0) / 1000).toFixed(1)} s${retried ? ` (${retried} puts retried)` : ''}`,
    );
  }

  // What the servers burn with no requests (gossip, timers, background repair): part of every run's CPU figures.
  const idle: Record<string, number> = {};
  {
    const before = systems.map((s) => b.pids(s).map(cpuSeconds));
    const t0 = performance.now();
    await sleep(QUICK ? 3000 : 5000);
    const wall = (performance.now() - t0) / 1000;
    systems.forEach(
      (s, i) => (idle[s] = b.pids(s).reduce((sum, pid, j) => sum + cpuSeconds(pid) - before[i]![j]!, 0) / wall),
    );
    console.log(`idle CPU of the servers, cores: ${systems.map((s) => `${s} ${idle[s]!.toFixed(3)}`).join(', ')}`);
  }

  const out: Record<string, unknown> = {
    config: {
      seconds: SECONDS,
      rounds: ROUNDS,
      clients: CLIENTS,
      keys: KEYS,
      inflight: INFLIGHT,
      workloads: WORKLOADS,
      systems,
      durability: DURABILITY,
      preload: PRELOAD,
      preloadOnline: PRELOAD_ONLINE,
    },
    machine: {
      cores,
      availableParallelism: availableParallelism(),
      loadavgStart: load0,
      node: process.version,
      etcd: etcd?.version ?? null,
    },
    idleServerCores: idle,
    phases: [] as unknown[],
  };
  const phases: { label: string; summaries: Record<string, Summary> }[] = [];
  const runPhase = async (label: string): Promise<void> => {
    const cells = await matrix(b, systems, label);
    const { rows, summaries } = report(cells, systems);
    console.log(
      `\n${label}: ops/s = median of ${ROUNDS} round(s); p50/p99/p99.9 of the median round; failed = sum over rounds; ${CLIENTS} client processes, ${cores} cores`,
    );
    console.log(table(rows));
    printNotes(
      summaries,
      nodes.map((n) => n.id),
    );
    console.log('');
    for (const c of cells.values()) c.merged.destroy();
    phases.push({ label, summaries });
    (out.phases as unknown[]).push({ label, cells: summaries });
  };

  await runPhase(PRELOAD > 0 ? 'without the bulk keys' : 'results');

  if (PRELOAD > 0) {
    const mem: Record<string, unknown> = {};
    // ringkv: RSS of nodes restarted without, then with, the N keys: the difference is what the keys cost at rest.
    const afterRuns = ringkvMemory(nodes);
    await stopAll(nodes);
    startRingkv(nodes, https);
    await formed(nodes, 300_000);
    await sleep(5000);
    const restarted = ringkvMemory(nodes);
    let loadSeconds: number;
    let restartSeconds = 0;
    if (PRELOAD_ONLINE) {
      await init();
      console.log(`loading ${PRELOAD} more keys into ringkv through the client at W=3, ${BULK_CONCURRENCY} in flight`);
      loadSeconds = await populateOnline(b, 'ringkv', PRELOAD);
      await stopAll(nodes);
    } else {
      await stopAll(nodes);
      console.log(
        `writing ${PRELOAD} more keys into the stopped ringkv nodes' stores (Store.put into n1's, the record merged into n2's and n3's)`,
      );
      loadSeconds = await populateOffline(
        nodes.map((n) => n.dataDir),
        PRELOAD,
      );
    }
    const r0 = performance.now();
    startRingkv(nodes, https);
    await formed(nodes, 600_000);
    restartSeconds = (performance.now() - r0) / 1000;
    const quiet = await settle(
      nodes.map((n) => n.child!.pid!),
      600_000,
    );
    console.log(
      `ringkv nodes ${quiet.settled ? 'quiet' : 'still busy'} (under 0.1 core each) ${quiet.seconds.toFixed(0)} s after forming: key filter scan and LevelDB compactions`,
    );
    const loaded = ringkvMemory(nodes);
    await init();
    console.log(
      `ringkv: ${PRELOAD} keys in ${loadSeconds.toFixed(0)} s (${(PRELOAD / loadSeconds).toFixed(0)}/s, ${PRELOAD_ONLINE ? 'online' : 'offline'}); restart to formed ${restartSeconds.toFixed(1)} s`,
    );
    mem.ringkv = {
      fresh,
      afterRuns,
      restarted,
      loaded,
      loadSeconds,
      restartSeconds,
      settleSeconds: quiet.seconds,
      settled: quiet.settled,
      online: PRELOAD_ONLINE,
    };

    let etcdMem: { before: Memory; loaded: Memory; loadSeconds: number } | undefined;
    if (etcd !== undefined && PRELOAD_ETCD) {
      const before = etcdMemory(etcd);
      console.log(`loading ${PRELOAD} more keys into etcd through Put, ${BULK_CONCURRENCY} in flight`);
      const s = await populateOnline(b, 'etcd', PRELOAD);
      await sleep(5000);
      etcdMem = { before, loaded: etcdMemory(etcd), loadSeconds: s };
      console.log(`etcd: ${PRELOAD} keys in ${s.toFixed(0)} s (${(PRELOAD / s).toFixed(0)}/s)`);
      mem.etcd = etcdMem;
    }

    await runPhase(`with ${PRELOAD} more keys`);
    const after = ringkvMemory(nodes);
    mem.ringkvAfterRuns = after;

    const rows = [
      [
        'process',
        'RSS fresh MiB',
        'RSS after runs',
        'restarted, same keys',
        `restarted, +${PRELOAD}`,
        'after runs',
        'bytes/key',
        'disk before MiB',
        'disk after MiB',
        'disk bytes/key',
      ],
    ];
    nodes.forEach((n, i) => {
      const perKey = (loaded.rss[i]! - restarted.rss[i]!) / PRELOAD;
      const diskPerKey = (loaded.disk[i]! - restarted.disk[i]!) / PRELOAD;
      rows.push([
        `ringkv ${n.id}`,
        mb(fresh.rss[i]!),
        mb(afterRuns.rss[i]!),
        mb(restarted.rss[i]!),
        mb(loaded.rss[i]!),
        mb(after.rss[i]!),
        perKey.toFixed(0),
        mb(restarted.disk[i]!),
        mb(loaded.disk[i]!),
        diskPerKey.toFixed(0),
      ]);
    });
    if (etcd !== undefined && etcdMem !== undefined) {
      const final = etcdMemory(etcd);
      mem.etcdAfterRuns = final;
      etcd.members.forEach((m, i) => {
        const perKey = (etcdMem.loaded.rss[i]! - etcdMem.before.rss[i]!) / PRELOAD;
        const diskPerKey = (etcdMem.loaded.disk[i]! - etcdMem.before.disk[i]!) / PRELOAD;
        rows.push([
          `etcd ${m.name}`,
          '',
          mb(etcdMem.before.rss[i]!),
          '',
          mb(etcdMem.loaded.rss[i]!),
          mb(final.rss[i]!),
          perKey.toFixed(0),
          mb(etcdMem.before.disk[i]!),
          mb(etcdMem.loaded.disk[i]!),
          diskPerKey.toFixed(0),
        ]);
      });
    }
    console.log(
      `memory and disk (VmRSS; data dir as du counts it). ringkv bytes/key: RSS restarted with the keys − restarted without, ÷ ${PRELOAD}; etcd (not restarted): RSS after its load − before, ÷ ${PRELOAD}`,
    );
    console.log(table(rows));

    const [empty, full] = phases;
    // ÷ echo too: the echo's own drift between the phases is the machine's, not the store's.
    const cmp = [
      [
        'workload',
        'in flight',
        'system',
        'ops/s without',
        `ops/s +${PRELOAD}`,
        'ratio',
        '÷ echo without',
        `÷ echo +${PRELOAD}`,
        'p99 without',
        `p99 +${PRELOAD}`,
      ],
    ];
    for (const id of Object.keys(full!.summaries)) {
      const a = empty!.summaries[id],
        z = full!.summaries[id]!;
      if (a === undefined) continue;
      const [w, c, sys] = id.split('|');
      const ea = empty!.summaries[`${w}|${c}|echo`],
        ez = full!.summaries[`${w}|${c}|echo`];
      const ofEcho = (x: Summary, e: Summary | undefined): string =>
        e === undefined || sys === 'echo' ? '' : (x.opsPerSec / e.opsPerSec).toFixed(2);
      cmp.push([
        w!,
        c!,
        sys!,
        a.opsPerSec.toFixed(0),
        z.opsPerSec.toFixed(0),
        (z.opsPerSec / a.opsPerSec).toFixed(2),
        ofEcho(a, ea),
        ofEcho(z, ez),
        ms(a.p99),
        ms(z.p99),
      ]);
    }
    console.log(`\nthroughput with ${PRELOAD} more keys ÷ without them (same run)`);
    console.log(table(cmp));
    out.memory = mem;
  } else {
    const m = ringkvMemory(nodes);
    const e = etcd ? etcdMemory(etcd) : undefined;
    console.log(
      `RSS / data dir at the end, MiB: ${nodes.map((n, i) => `${n.id} ${mb(m.rss[i]!)} / ${mb(m.disk[i]!)}`).join(', ')}${e ? `; ${etcd!.members.map((x, i) => `${x.name} ${mb(e.rss[i]!)} / ${mb(e.disk[i]!)}`).join(', ')}` : ''}`,
    );
    out.memory = { ringkv: m, etcd: e ?? null };
  }

  // The log lines up to here: what the members say while stopping one another is not the bench's.
  const logs: Record<string, Record<string, number>> = {};
  for (const n of nodes) {
    const c: LogCount = new Map();
    for (const { line } of n.lines)
      count(
        c,
        `${typeof line.level === 'number' ? (({ 40: 'warn', 50: 'error', 60: 'fatal' } as Record<number, string>)[line.level] ?? line.level) : '?'}: ${line.msg}`,
      );
    if (c.size > 0) logs[`ringkv ${n.id}`] = Object.fromEntries(c);
  }
  for (const m of etcd?.members ?? []) if (m.log.size > 0) logs[`etcd ${m.name}`] = Object.fromEntries(m.log);
  // Stop everything by PID: load clients first (they exit by themselves, writing their profiles), then the servers.
  await Promise.all(clients.map((c) => c.stop()));
  await stopAll(nodes);
  await Promise.all([stopChild(echo.child), ...(etcd?.members.map((m) => stopChild(m.child, 10_000)) ?? [])]);
  const logLines = Object.entries(logs).map(
    ([who, c]) =>
      `  ${who}: ${Object.entries(c)
        .map(([msg, n]) => `${n} × ${msg}`)
        .join('; ')}`,
  );
  console.log(
    logLines.length > 0 ? `log lines at warn and above:\n${logLines.join('\n')}` : 'no log lines at warn or above',
  );
  const load1 = loadavg();
  console.log(`load average at the end ${load1[0]!.toFixed(1)}`);
  out.logs = logs;
  (out.machine as Record<string, unknown>).loadavgEnd = load1;
  if (JSON_FILE !== undefined) writeFileSync(JSON_FILE, JSON.stringify(out, null, 2));
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
