/**
 * npm run bench:verify — the verification pass (src/repair/verify.ts) on one store on
 * LevelDB: `--keys` records (default 200,000) of `--value-bytes` (default 1,000), loaded
 * and compacted, in one process, on this machine, in one run:
 *
 * 1. Speed: an unpaced pass, records read per second and per second of CPU (this process's
 *    user + system time), against the baseline of a raw LevelDB iterator reading the same
 *    records (nextv(1000)): the ratio says what checking each record costs over reading it.
 * 2. The foreground while a pass runs at the default pace (8 MiB/s): gets of random keys,
 *    one at a time, for `--seconds` idle, then for `--seconds` with the pass running; p50
 *    and p99 of each, and the ratio of the p99s. Target: ≤ 1.5×.
 * 3. How long a flipped record on a node of 1,000,000 such records waits to be found and
 *    restored with the default schedule: at most the interval (a day) plus one pass at the
 *    default pace, the pass's time computed from the bytes per record measured here.
 *
 *   npm run bench:verify [-- --keys 200000] [-- --value-bytes 1000] [-- --seconds 5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Verifier } from '../src/repair/verify.js';
import { mulberry32 } from '../src/ring/allocate-tokens.js';
import { Store } from '../src/storage/index.js';
import { LevelEngine } from '../src/storage/level-engine.js';
import { argOf, histogram, table } from './lib.js';

const args = process.argv.slice(2);
const KEYS = Number(argOf(args, 'keys', '200000'));
const VALUE_BYTES = Number(argOf(args, 'value-bytes', '1000'));
const SECONDS = Number(argOf(args, 'seconds', '5'));
for (const [name, v] of [
  ['keys', KEYS],
  ['value-bytes', VALUE_BYTES],
  ['seconds', SECONDS],
] as const)
  if (!(Number.isInteger(v) && v > 0)) throw new Error(`--${name} must be a positive whole number, got ${v}`);
const DEFAULT_PACE = 8 << 20;
const DAY_MS = 86_400_000;
const NODE_KEYS = 1_000_000;

const random = mulberry32(20261207);
const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)));
const key = (i: number): Buffer => Buffer.from(`key-${String(i).padStart(8, '0')}`);

const cpuSeconds = (from: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1e6;
};

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'ringkv-bench-verify-'));
  const engine = new LevelEngine(join(root, 'data'));
  const store = await Store.open({ engine });
  try {
    const value = bytes(VALUE_BYTES);
    for (let i = 0; i < KEYS; i += 500)
      await Promise.all(Array.from({ length: Math.min(500, KEYS - i) }, (_, j) => store.put(key(i + j), value)));
    await engine.db.compactRange(Buffer.alloc(0), Buffer.alloc(64, 0xff));
    const verifier = new Verifier({
      store,
      replicasOf: () => [],
      fetch: async () => undefined,
      log: pino({ level: 'silent' }),
      now: Date.now,
    });
    const never = new AbortController().signal;
    console.log(`bench:verify — one store on LevelDB, ${KEYS} records of ${VALUE_BYTES}-byte values, compacted`);

    // 1. Speed, unpaced, against a raw iterator over the same records (each twice: the better run of each).
    const raw = async (): Promise<{ perSecond: number; perCpuSecond: number }> => {
      const cpu = process.cpuUsage(),
        t0 = performance.now();
      let n = 0;
      const it = engine.db.iterator({ gte: Buffer.from([0x64]), lt: Buffer.from([0x65]) }); // the data span ('d')
      for (let batch = await it.nextv(1000); batch.length > 0; batch = await it.nextv(1000)) n += batch.length;
      await it.close();
      const s = (performance.now() - t0) / 1000;
      return { perSecond: n / s, perCpuSecond: n / cpuSeconds(cpu) };
    };
    const pass = async (): Promise<{ perSecond: number; perCpuSecond: number; bytes: number; records: number }> => {
      const cpu = process.cpuUsage(),
        t0 = performance.now();
      const p = await verifier.pass({ bytesPerSecond: 2 ** 40, share: () => 1, signal: never });
      const s = (performance.now() - t0) / 1000;
      return {
        perSecond: p.records / s,
        perCpuSecond: p.records / cpuSeconds(cpu),
        bytes: p.bytes,
        records: p.records,
      };
    };
    const best = <T extends { perSecond: number }>(a: T, b: T): T => (a.perSecond >= b.perSecond ? a : b);
    const r = best(await raw(), await raw());
    const v = best(await pass(), await pass());
    if (v.records !== KEYS) throw new Error(`the pass read ${v.records} records of ${KEYS}`);
    console.log(
      table([
        ['', 'records/s', 'records per CPU-second'],
        ['raw LevelDB iterator', r.perSecond.toFixed(0), r.perCpuSecond.toFixed(0)],
        ['verification pass', v.perSecond.toFixed(0), v.perCpuSecond.toFixed(0)],
      ]),
    );

    // 2. Foreground gets, idle and with a pass at the default pace.
    const gets = async (): Promise<{ p50: number; p99: number; n: number }> => {
      const h = histogram();
      const end = performance.now() + SECONDS * 1000;
      let n = 0;
      while (performance.now() < end && n < 1_000_000) {
        const t = performance.now();
        await store.get(key(Math.floor(random() * KEYS)));
        h.recordValue(Math.max(1, Math.round((performance.now() - t) * 1000)));
        n++;
      }
      const out = { p50: h.getValueAtPercentile(50) / 1000, p99: h.getValueAtPercentile(99) / 1000, n };
      h.destroy();
      return out;
    };
    const idle = await gets();
    const stop = new AbortController();
    const running = verifier.pass({ bytesPerSecond: DEFAULT_PACE, share: () => 1, signal: stop.signal });
    const busy = await gets();
    stop.abort();
    const partial = await running;
    console.log(
      table([
        ['gets, one at a time', 'p50 ms', 'p99 ms', 'gets'],
        ['idle', idle.p50.toFixed(3), idle.p99.toFixed(3), String(idle.n)],
        [`pass at ${DEFAULT_PACE >> 20} MiB/s`, busy.p50.toFixed(3), busy.p99.toFixed(3), String(busy.n)],
      ]),
    );
    const ratio = busy.p99 / idle.p99;
    const paceSeen = partial.bytes / ((partial.finishedAtMs - partial.startedAtMs) / 1000);

    // 3. Time to find a flipped record on a node of NODE_KEYS such records, default schedule.
    const passSeconds = (NODE_KEYS * (v.bytes / v.records)) / DEFAULT_PACE;
    console.log(
      `verification pass: ${v.perSecond.toFixed(0)} records/s unpaced, ${v.perCpuSecond.toFixed(0)} per CPU-second; ÷ raw iterator: ${(v.perSecond / r.perSecond).toFixed(2)}× (no target)`,
    );
    console.log(
      `foreground get p99 with a pass at the default pace (${(paceSeen / (1 << 20)).toFixed(1)} MiB/s read) ÷ idle: ${ratio.toFixed(2)}× (target ≤ 1.5×: ${ratio <= 1.5 ? 'met' : 'MISSED'})`,
    );
    console.log(
      `a flipped record on a node of ${NODE_KEYS.toLocaleString('en')} such records: found and restored within ${(DAY_MS / 3_600_000).toFixed(0)} h (the interval) + ${passSeconds.toFixed(0)} s (one pass at ${DEFAULT_PACE >> 20} MiB/s), sooner if a read, stream or repair meets it`,
    );
  } finally {
    await store.close();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
