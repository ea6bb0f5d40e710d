/**
 * Causal overwrites of two or more versions of the store, and raw get-then-put, measured
 * interleaved in one process: each side overwrites the same next chunk of keys in turn
 * (the order alternating by round), so a shared, noisy machine moves every side alike —
 * a before/after comparison that separate runs, minutes apart, cannot give here.
 * Prints ops/s, the ratio to raw get-then-put, and CPU per op: the whole process's
 * (engine threads included) and the main thread's.
 *
 *   git archive HEAD src | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/
 *   node --import tsx bench/overwrite-ab.ts --variants /tmp/before,. [--n 100000] [--inflight 16] [--chunk 10000] [--rounds 2] [--memory]
 *
 * A variant is a directory holding src/ (`.`: this tree). --memory runs the stores over
 * MemoryEngine (their JavaScript alone) and the raw side over LevelDB as usual.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Level } from 'level';
import { mulberry32 } from '../src/ring/allocate-tokens.js';
import type { NodeLevel } from '../src/storage/level-engine.js';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1]! : fallback);
const N = Number(arg('--n', '100000'));
const INFLIGHT = Number(arg('--inflight', '16'));
const CHUNK = Number(arg('--chunk', '10000'));
const ROUNDS = Number(arg('--rounds', '2'));
const MEMORY = args.includes('--memory');
const variants = arg('--variants', '.').split(',');

const random = mulberry32(20261201);
const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)));
const KEYS = Array.from({ length: N }, () => bytes(16));
const VALUES = [bytes(100), bytes(100)];

/** ms to run fn(i) for i in [from, from + count), `INFLIGHT` at once. */
async function run(from: number, count: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  let next = from;
  const end = from + count;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: INFLIGHT }, async () => {
      while (next < end) await fn(next++);
    }),
  );
  return performance.now() - start;
}

/** The main thread's CPU time, ms (Linux, in 10 ms ticks; 0 elsewhere). */
function mainCpu(): number {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
}

/** What a variant's src/storage/index.ts exports, as far as this uses it. */
interface StorageModule {
  Store: {
    open(o: object): Promise<{
      put(k: Buffer, v: Buffer, c?: Buffer): Promise<{ context: Buffer }>;
      get(k: Buffer): Promise<{ context: Buffer }>;
      close(): Promise<void>;
      keyFilter: { settled: Promise<void> };
    }>;
  };
  LevelEngine: new (path: string) => { db: NodeLevel };
  MemoryEngine: new () => object;
}

interface Side {
  readonly name: string;
  readonly op: (i: number, round: number) => Promise<unknown>;
  ms: number;
  cpu: number;
  main: number;
}

const root = mkdtempSync(join(tmpdir(), 'ringkv-ab-'));
try {
  const sides: Side[] = [];
  const closers: Array<() => Promise<void>> = [];
  const raw = new Level<Buffer, Buffer>(join(root, 'raw'), {
    keyEncoding: 'buffer',
    valueEncoding: 'buffer',
  }) as NodeLevel;
  await raw.open();
  closers.push(() => raw.close());
  await run(0, N, (i) => raw.put(KEYS[i]!, VALUES[0]!));
  await raw.compactRange(Buffer.alloc(0), Buffer.alloc(32, 0xff));
  sides.push({
    name: 'raw get then put',
    ms: 0,
    cpu: 0,
    main: 0,
    op: async (i, round) => (await raw.get(KEYS[i]!), await raw.put(KEYS[i]!, VALUES[(round + 1) % 2]!)),
  });
  for (const v of variants) {
    const mod = (await import(pathToFileURL(resolve(v, 'src/storage/index.ts')).href)) as StorageModule;
    const engine = MEMORY ? new mod.MemoryEngine() : new mod.LevelEngine(join(root, `store-${sides.length}`));
    const store = await mod.Store.open({ engine });
    closers.push(() => store.close());
    await store.keyFilter.settled;
    await run(0, N, (i) => store.put(KEYS[i]!, VALUES[0]!));
    if (!MEMORY) await (engine as { db: NodeLevel }).db.compactRange(Buffer.alloc(0), Buffer.alloc(32, 0xff));
    const contexts: Buffer[] = new Array<Buffer>(N);
    await run(0, N, async (i) => void (contexts[i] = (await store.get(KEYS[i]!)).context));
    sides.push({
      name: v,
      ms: 0,
      cpu: 0,
      main: 0,
      op: async (i, round) =>
        void (contexts[i] = (await store.put(KEYS[i]!, VALUES[(round + 1) % 2]!, contexts[i])).context),
    });
  }
  for (let round = 0; round < ROUNDS; round++)
    for (let from = 0; from < N; from += CHUNK)
      for (const s of round % 2 ? [...sides].reverse() : sides) {
        const c0 = process.cpuUsage(),
          m0 = mainCpu();
        s.ms += await run(from, Math.min(CHUNK, N - from), (i) => s.op(i, round));
        const c = process.cpuUsage(c0);
        s.cpu += c.user + c.system;
        s.main += mainCpu() - m0;
      }
  const ops = N * ROUNDS;
  const rawRate = ops / (sides[0]!.ms / 1000);
  const width = Math.max(...sides.map((s) => s.name.length));
  for (const s of sides) {
    const rate = ops / (s.ms / 1000);
    console.log(
      `${s.name.padEnd(width)}  ${Math.round(rate).toLocaleString('en-US').padStart(8)}/s  ${(rate / rawRate).toFixed(2)}  cpu ${(s.cpu / ops).toFixed(1)} µs/op, main thread ${((1000 * s.main) / ops).toFixed(1)} µs/op`,
    );
  }
  for (const close of closers.reverse()) await close();
} finally {
  rmSync(root, { recursive: true, force: true });
}
