/**
 * What the benches that run `ringkv node` processes share (bench:handoff, bench:repair, bench:vs):
 * a node process with its log lines, stopped by its PID; the cluster's status; a
 * closed-loop foreground load and its latency figures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as hdr from 'hdr-histogram-js';
import { histogram } from './lib.js';
import type { Client } from '../src/client/index.js';
import { AdminClient, type StatusReply } from '../src/client/admin.js';

/**
 * The `ringkv` the nodes run: this tree's build, or RINGKV_DIST's (another build's dist/,
 * as bench:compare sets it to run an older commit's nodes under the same bench).
 */
const MAIN = process.env.RINGKV_DIST
  ? join(resolve(process.env.RINGKV_DIST), 'cli', 'main.js')
  : fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
/** Requests the foreground load keeps in flight. */
export const CONCURRENCY = 16;
/** A bound on every load loop. */
const MAX_OPS = 5_000_000;
/** Every bench value: 100 bytes. */
export const VALUE = Buffer.alloc(100, 0x61);

/** Bench key i with a prefix: 16 bytes. */
export const key = (prefix: string, i: number): Buffer =>
  Buffer.from(`${prefix}${String(i).padStart(15, '0')}`.slice(-16));
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface LogLine {
  readonly msg: string;
  readonly [k: string]: unknown;
}

/** One `ringkv node` process (built code), its JSON log lines, stopped by its PID. */
export class Proc {
  child: ChildProcess | undefined;
  exit: Promise<unknown> = Promise.resolve();
  readonly lines: { at: number; line: LogLine }[] = [];
  readonly #waiters: { test: (l: LogLine) => boolean; resolve: (at: number) => void }[] = [];

  constructor(
    readonly id: string,
    readonly address: string,
    readonly dataDir: string,
  ) {}

  /** Start it; with `cpuProf`, node writes a CPU profile into that directory at exit. */
  start(seeds: readonly string[], extra: readonly string[], cpuProf?: string): void {
    const nodeArgs =
      cpuProf === undefined
        ? []
        : ['--cpu-prof', `--cpu-prof-dir=${resolve(cpuProf)}`, `--cpu-prof-name=${this.id}-${Date.now()}.cpuprofile`];
    const argv = [
      ...nodeArgs,
      MAIN,
      'node',
      '--id',
      this.id,
      '--listen',
      this.address,
      '--data-dir',
      this.dataDir,
      '--seeds',
      seeds.join(','),
      '--log-level',
      'info',
      ...extra,
    ];
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    this.child = child;
    live.add(child);
    this.exit = new Promise((r) => child.once('exit', r)).finally(() => live.delete(child));
    createInterface({ input: child.stdout! }).on('line', (l) => {
      let line: LogLine;
      try {
        line = JSON.parse(l) as LogLine;
      } catch {
        line = { msg: l };
      }
      const at = performance.now();
      this.lines.push({ at, line });
      for (const w of [...this.#waiters])
        if (w.test(line)) (this.#waiters.splice(this.#waiters.indexOf(w), 1), w.resolve(at));
      if (typeof line.level === 'number' && line.level >= 50) console.error(`${this.id}: ${l}`);
    });
  }

  /** When (performance.now) a log line passing `test` arrived: one already seen, or the next. */
  when(test: (l: LogLine) => boolean): Promise<number> {
    const seen = this.lines.find((x) => test(x.line));
    if (seen) return Promise.resolve(seen.at);
    return new Promise((resolve) => this.#waiters.push({ test, resolve }));
  }

  line(msg: string): LogLine | undefined {
    return this.lines.find((x) => x.line.msg === msg)?.line;
  }

  /** CPU seconds (user + system) the process has used so far; NaN where /proc is missing. */
  cpuSeconds(): number {
    try {
      const stat = readFileSync(`/proc/${this.child!.pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100 on Linux)
    } catch {
      return NaN;
    }
  }

  /** SIGTERM by PID; SIGKILL after 20 s. */
  async stop(): Promise<void> {
    const c = this.child;
    if (c === undefined || c.exitCode !== null || c.signalCode !== null) return;
    process.kill(c.pid!, 'SIGTERM');
    const t = setTimeout(() => c.exitCode === null && c.signalCode === null && process.kill(c.pid!, 'SIGKILL'), 20_000);
    await this.exit;
    clearTimeout(t);
  }
}

const live = new Set<ChildProcess>();

/** Count a process that is not a `ringkv node` (a server, a load client) among those benchRoot kills by PID at exit. */
export function track(child: ChildProcess): ChildProcess {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/**
 * A scratch directory for a bench, removed at exit, when every node process still running
 * is killed by its PID too.
 */
export function benchRoot(name: string): string {
  const root = mkdtempSync(join(tmpdir(), `ringkv-bench-${name}-`));
  process.on('exit', () => {
    for (const c of live) if (c.exitCode === null && c.signalCode === null) process.kill(c.pid!, 'SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });
  process.on('SIGINT', () => process.exit(130));
  process.on('SIGTERM', () => process.exit(143));
  return root;
}

export async function statuses(nodes: readonly Proc[]): Promise<(StatusReply | undefined)[]> {
  return Promise.all(
    nodes.map(async (n) => {
      const a = new AdminClient(n.address, 2000);
      try {
        return await a.status(3);
      } catch {
        return undefined;
      } finally {
        a.close();
      }
    }),
  );
}

/** Every node of `nodes` sees every one of them normal and up. */
export async function formed(nodes: readonly Proc[], timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const views = await statuses(nodes);
    if (
      views.every(
        (v) =>
          v !== undefined && nodes.every((n) => v.members.some((m) => m.id === n.id && m.status === 'normal' && m.up)),
      )
    )
      return;
    if (Date.now() > end)
      throw new Error(`${nodes.map((n) => n.id).join(', ')} not normal and up everywhere after ${timeoutMs} ms`);
    await sleep(250);
  }
}

export interface Sample {
  readonly start: number;
  readonly us: number;
}

/**
 * Closed-loop foreground load: CONCURRENCY workers, half gets at R=2 of present keys
 * (`key('k', i)` for i < o.keys), half puts at W=2 of new keys, until `stop`.
 */
export function foreground(
  kv: Client,
  o: { maxMs: number; newPrefix: string; keys: number },
): { stop(): Promise<{ samples: Sample[]; failed: number }> } {
  const samples: Sample[] = [];
  let failed = 0,
    i = 0,
    fresh = 0,
    stopping = false;
  const end = performance.now() + o.maxMs;
  const workers = Array.from({ length: CONCURRENCY }, async () => {
    while (!stopping && performance.now() < end && i < MAX_OPS) {
      const n = i++;
      const s = performance.now();
      try {
        if (n % 2 === 0) await kv.get(key('k', (n * 7919) % o.keys), { r: 2 });
        else await kv.put(key(o.newPrefix, fresh++), VALUE, { w: 2 });
        samples.push({ start: s, us: Math.max(1, Math.round((performance.now() - s) * 1000)) });
      } catch {
        failed++;
      }
    }
  });
  return {
    async stop() {
      stopping = true;
      await Promise.all(workers);
      return { samples, failed };
    },
  };
}

export interface Stats {
  ops: number;
  opsPerSec: number;
  p50: number;
  p99: number;
}

/** Latency figures (ms) of the samples that started in [from, to). */
export function stats(samples: readonly Sample[], from: number, to: number): Stats {
  const h = histogram();
  for (const s of samples) if (s.start >= from && s.start < to) h.recordValue(s.us);
  const r = {
    ops: h.totalCount,
    opsPerSec: h.totalCount / ((to - from) / 1000),
    p50: h.getValueAtPercentile(50) / 1000,
    p99: h.getValueAtPercentile(99) / 1000,
  };
  h.destroy();
  return r;
}

/** Warm up for 3 s (JIT, channels, the governor's idle p99), then measure the load with nothing else running for `seconds`. */
export async function idleRun(kv: Client, keys: number, seconds: number): Promise<Stats & { failed: number }> {
  const warm = foreground(kv, { maxMs: 3000, newPrefix: 'u', keys });
  await sleep(3000);
  await warm.stop();
  const idle = foreground(kv, { maxMs: seconds * 1000, newPrefix: 'i', keys });
  const i0 = performance.now();
  await sleep(seconds * 1000);
  const { samples, failed } = await idle.stop();
  return { ...stats(samples, i0, performance.now()), failed };
}

/** Stop every node by its PID (SIGTERM, then SIGKILL after 20 s). */
export async function stopAll(nodes: readonly Proc[]): Promise<void> {
  await Promise.all(nodes.map((n) => n.stop()));
}
