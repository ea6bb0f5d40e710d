/**
 * Profile the store's causal overwrite alone: load N keys, read each (its context), then
 * overwrite each with that context at a fixed number in flight, with the CPU profiler on
 * for the overwrite phase only (node:inspector), so loading and reading do not blur it.
 * Prints ops/s and the main thread's busy share (event-loop utilisation); writes the
 * profile to --out, for bench/profile-top.ts.
 *
 *   node --import tsx bench/profile-overwrite.ts [--n 200000] [--inflight 16] [--out FILE]
 *     --no-profile  time it only
 *     --raw         first time raw get-then-put on a plain Level database, and print the ratio
 *     --count       engine trips during the overwrites: gets, getManys (keys), writes (ops)
 *     --threads     each thread's CPU and preemptions during the phase (Linux /proc)
 *     --memory      over MemoryEngine: the store's own JavaScript, without LevelDB
 *
 * A wall-clock profile on a busy machine charges a thread's waits for a CPU to whatever
 * it was running: read --threads and --count beside it.
 */
import { Session } from 'node:inspector/promises';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Level } from 'level';
import { mulberry32 } from '../src/ring/allocate-tokens.js';
import { LevelEngine, MemoryEngine, Store } from '../src/storage/index.js';
import type { Engine, WriteOp } from '../src/storage/index.js';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1]! : fallback);
const N = Number(arg('--n', '200000'));
const INFLIGHT = Number(arg('--inflight', '16'));
const OUT = arg('--out', '/tmp/prof-store/overwrite.cpuprofile');
const PROFILE = !args.includes('--no-profile');

const random = mulberry32(20261201);
const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)));
const KEYS = Array.from({ length: N }, () => bytes(16));
const VALUE = bytes(100),
  VALUE2 = bytes(100);

async function rate(count: number, fn: (i: number) => Promise<unknown>): Promise<{ ops: number; elu: number }> {
  let next = 0;
  const elu = performance.eventLoopUtilization();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (next < count) await fn(next++);
    }),
  );
  return { ops: count / ((performance.now() - start) / 1000), elu: performance.eventLoopUtilization(elu).utilization };
}

/** Per thread of this process (Linux): CPU ms and involuntary context switches (preemptions). */
function threads(): Map<string, { name: string; cpuMs: number; preempted: number }> {
  const out = new Map<string, { name: string; cpuMs: number; preempted: number }>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const status = readFileSync(`/proc/self/task/${tid}/status`, 'utf8');
      out.set(tid, {
        name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / 100, // utime + stime, in USER_HZ (100)
        preempted: Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0),
      });
    }
  } catch {
    // not Linux: no per-thread figures
  }
  return out;
}

function threadDelta(before: ReturnType<typeof threads>, seconds: number): string {
  const rows: string[] = [];
  for (const [tid, t] of threads()) {
    const b = before.get(tid) ?? { cpuMs: 0, preempted: 0 };
    const cpu = t.cpuMs - b.cpuMs;
    if (cpu < 10) continue;
    rows.push(
      `  ${tid === String(process.pid) ? 'main' : t.name} ${tid}: ${(cpu / 10 / seconds).toFixed(0)}% of a core, ${t.preempted - b.preempted} preemptions`,
    );
  }
  return rows.join('\n');
}

const root = mkdtempSync(join(tmpdir(), 'ringkv-prof-'));
try {
  let rawOps = 0;
  if (args.includes('--raw')) {
    const raw = new Level<Buffer, Buffer>(join(root, 'raw'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await raw.open();
    await rate(N, (i) => raw.put(KEYS[i]!, VALUE));
    const before = threads();
    const r = await rate(N, async (i) => {
      await raw.get(KEYS[i]!);
      await raw.put(KEYS[i]!, VALUE2);
    });
    if (args.includes('--threads')) console.log(threadDelta(before, N / r.ops));
    console.log(
      `raw get then put: ${Math.round(r.ops).toLocaleString('en-US')}/s, main thread busy ${(100 * r.elu).toFixed(0)}%`,
    );
    rawOps = r.ops;
    await raw.close();
  }
  const engine = new LevelEngine(join(root, 'store'));
  const counts = { get: 0, getMany: 0, getManyKeys: 0, write: 0, writeOps: 0 };
  const counting: Engine = {
    kind: engine.kind,
    open: () => engine.open(),
    close: () => engine.close(),
    iterator: (a, b) => engine.iterator(a, b),
    keyIterator: (a, b) => engine.keyIterator(a, b),
    approximateSize: (a, b) => engine.approximateSize(a, b),
    get: (k: Uint8Array) => (counts.get++, engine.get(k)),
    getMany: (ks: readonly Uint8Array[]) => (counts.getMany++, (counts.getManyKeys += ks.length), engine.getMany(ks)),
    write: (ops: readonly WriteOp[], sync: boolean) => (
      counts.write++,
      (counts.writeOps += ops.length),
      engine.write(ops, sync)
    ),
  };
  const memory = args.includes('--memory');
  const store = await Store.open({
    engine: memory ? new MemoryEngine() : args.includes('--count') ? counting : engine,
  });
  await store.keyFilter.settled;
  await rate(N, (i) => store.put(KEYS[i]!, VALUE));
  if (!memory) await engine.db.compactRange(Buffer.alloc(0), Buffer.alloc(32, 0xff));
  const contexts: Buffer[] = new Array(N);
  await rate(N, async (i) => void (contexts[i] = (await store.get(KEYS[i]!)).context));
  const session = new Session();
  if (PROFILE) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  for (const k of Object.keys(counts)) counts[k as keyof typeof counts] = 0;
  const before = threads();
  const r = await rate(N, (i) => store.put(KEYS[i]!, VALUE2, contexts[i]));
  if (args.includes('--count')) console.log(counts);
  if (args.includes('--threads')) console.log(threadDelta(before, N / r.ops));
  if (PROFILE) {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(dirname(OUT), { recursive: true });
    writeFileSync(OUT, JSON.stringify(profile));
    session.disconnect();
  }
  const { writes, batches } = store.writeStats;
  console.log(
    `store overwrite: ${Math.round(r.ops).toLocaleString('en-US')}/s, main thread busy ${(100 * r.elu).toFixed(0)}%, ${(writes / batches).toFixed(1)} writes per batch${rawOps ? `, ${(r.ops / rawOps).toFixed(2)} of raw get then put` : ''}${PROFILE ? `; profile: ${OUT}` : ''}`,
  );
  await store.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}
