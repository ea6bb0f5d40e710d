/**
 * npm run bench:repair — anti-entropy between two replicas, on real `ringkv node`
 * processes on this machine (N=2, 16-byte keys, 100-byte values).
 *
 * Two nodes hold `--keys` keys (1,000,000), written offline: each key put once into n1's
 * store and its record merged into n2's, except one key in 1/`--diff` (0.1%): half of
 * those n2 lacks, half n2 holds a concurrent version of its own. The differing records'
 * bytes are what a repair must move at least (each side's differing record once).
 *
 * A: `ringkv repair` from n1 (background repair off): the time to detect and repair, and
 * the bytes on the wire ÷ the bytes of the differing records. Targets: ≤ 60 s, ≤ 10×.
 * Then both stores are read directly: identical, or the bench fails.
 *
 * A0: the same data, now in sync: `ringkv repair` from n1 with trees kept on write (the
 * nodes build them once at start, from the data written offline; the figure is of the
 * repair after that, which compares every range on kept trees), then the same nodes
 * restarted with --kept-trees off (today's scans). Exchange time of every range of n1 and
 * records read from storage, both ways. Targets: ≤ 1 s and 0 records with kept trees.
 *
 * C: put throughput of a store with kept trees on ÷ off (store-level loop on LevelDB, 64
 * puts in flight, new keys then overwrites, interleaved pairs), with CPU µs per put.
 * Target ≥ 0.9×.
 *
 * B: the same (converged) data, a foreground load of 16 requests in flight (half gets
 * at R=2, half puts at W=2) measured idle, then during the background repair that starts
 * one interval after the nodes did (--repair-interval-ms; default pace 8 MiB/s and the
 * governor). Target: p99 ≤ 1.5× idle.
 *
 *   npm run bench:repair [-- --quick] [-- --keys N] [-- --diff 0.001] [-- --part a|0|b|c]
 */
import { cpSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { Client } from '../src/client/index.js';
import { AdminClient, type RepairStatusReply } from '../src/client/admin.js';
import { Store } from '../src/storage/index.js';
import { freePort } from '../testkit/ports.js';
import { table } from './lib.js';
import {
  CONCURRENCY,
  Proc,
  VALUE,
  benchRoot,
  foreground,
  formed,
  idleRun,
  key,
  sleep,
  stats,
  stopAll,
} from './processes.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const quick = args.includes('--quick');
const KEYS = Number(flag('--keys') ?? NaN) || (quick ? 100_000 : 1_000_000);
const DIFF = Number(flag('--diff') ?? NaN) || 0.001;
const PART = flag('--part') ?? 'a0bc';
const IDLE_SECONDS = quick ? 5 : 10;
/** Background repair starts this long after the nodes in part B: warm-up and the idle run fit before it. */
const INTERVAL_MS = (IDLE_SECONDS + 8) * 1000;
const DURING_SECONDS = quick ? 8 : 15;
const REPAIR_LIMIT_MS = 10 * 60_000;
const root = benchRoot('repair');

/** Write the keys offline into n1's and n2's stores; returns the bytes of the records that differ. */
async function populate(dirs: readonly string[]): Promise<{ differing: number; bytes: number }> {
  const t0 = performance.now();
  const [a, b] = await Promise.all(dirs.map((d) => Store.open({ path: join(d, 'data') })));
  const every = Math.round(1 / DIFF);
  let differing = 0,
    bytes = 0;
  try {
    const STEP = 2048;
    for (let i = 0; i < KEYS; i += STEP) {
      const n = Math.min(STEP, KEYS - i);
      const written = await Promise.all(Array.from({ length: n }, (_, j) => a!.put(key('k', i + j), VALUE)));
      await Promise.all(
        written.map(async (w, j) => {
          const k = i + j;
          if (k % every !== 0) return void (await b!.merge(key('k', k), w.record));
          differing++;
          bytes += w.record.length;
          // Half missing on n2, half a concurrent version there.
          if ((k / every) % 2 === 1) bytes += (await b!.put(key('k', k), Buffer.alloc(100, 0x62))).record.length;
        }),
      );
      if ((i / STEP) % 50 === 49 && process.stdout.isTTY) process.stdout.write(`  ${i + n} keys\r`);
    }
  } finally {
    await Promise.all([a!.close(), b!.close()]);
  }
  console.log(
    `  ${KEYS} keys written (put into n1, merged into n2; ${differing} differ, ${bytes} bytes of differing records) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  return { differing, bytes };
}

async function startTwo(dirs: readonly string[], addrs: readonly string[], extra: readonly string[]): Promise<Proc[]> {
  const nodes = dirs.map((d, i) => new Proc(`n${i + 1}`, addrs[i]!, d));
  for (const n of nodes) n.start(addrs, ['--replicas', '2', ...extra]);
  await formed(nodes, 120_000);
  return nodes;
}

/** Each store's keys and version hashes, read directly (the nodes stopped). */
async function contents(dir: string): Promise<Map<string, string>> {
  const store = await Store.open({ path: join(dir, 'data') });
  const out = new Map<string, string>();
  try {
    for await (const batch of store.ranges.scan({ start: 0n, end: 0n }))
      for (const e of batch.entries) out.set(e.key.toString('latin1'), store.ranges.entryHash(e.key, e.record));
  } finally {
    await store.close();
  }
  return out;
}

/** One `ringkv repair` from `admin`'s node, to its end. */
async function repairOnce(admin: AdminClient): Promise<RepairStatusReply> {
  const started = await admin.repair();
  const end = Date.now() + REPAIR_LIMIT_MS;
  for (;;) {
    const r = await admin.repairStatus();
    if (r.finishedAtMs > 0 && r.id === started.id) return r;
    if (Date.now() > end) throw new Error(`the repair did not finish in ${REPAIR_LIMIT_MS / 1000} s`);
    await sleep(100);
  }
}

/** Puts into a fresh LevelDB store, 64 in flight (half new keys, then overwrites), with kept trees over 16 ranges or none. */
async function putLoop(kept: boolean): Promise<{ perSec: number; cpuUs: number }> {
  const PUTS = quick ? 50_000 : 200_000;
  const dir = join(root, 'puts', kept ? 'on' : 'off');
  rmSync(dir, { recursive: true, force: true });
  const s = await Store.open({ path: dir, ...(kept ? { keptTrees: { depth: 3 } } : {}) });
  try {
    if (kept) {
      await s.trees!.track(
        Array.from({ length: 16 }, (_, i) => ({ n: 0, start: BigInt(i) << 60n, end: BigInt((i + 1) % 16) << 60n })),
      );
      await s.trees!.settled();
    }
    await s.keyFilter.settled;
    let next = 0;
    const t0 = performance.now(),
      c0 = process.cpuUsage();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < PUTS) {
          const i = next++;
          await s.put(key('p', i % (PUTS / 2)), VALUE);
        }
      }),
    );
    const ms = performance.now() - t0,
      c = process.cpuUsage(c0);
    return { perSec: (PUTS / ms) * 1000, cpuUs: (c.user + c.system) / PUTS };
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(
    `bench:repair — ${KEYS} keys × ${VALUE.length}-byte values on 2 ringkv nodes (N=2), ${DIFF * 100}% differing${quick ? ' (quick)' : ''}; load average ${loadavg()[0]!.toFixed(1)}`,
  );
  const addrs = (await Promise.all([0, 1].map(() => freePort()))).map((p) => `127.0.0.1:${p}`);
  const prep = ['n1', 'n2'].map((id) => join(root, 'prep', id));
  console.log('forming the 2-node cluster, then writing the keys offline');
  await stopAll(await startTwo(prep, addrs, ['--repair-interval-ms', '0']));
  const diff = await populate(prep);
  const rows: string[][] = [];

  const dirs = ['n1', 'n2'].map((id) => join(root, 'run', id));
  prep.forEach((d, i) => cpSync(d, dirs[i]!, { recursive: true }));
  if (PART.includes('a')) {
    const nodes = await startTwo(dirs, addrs, ['--repair-interval-ms', '0']);
    console.log('A: ringkv repair from n1');
    const admin = new AdminClient(addrs[0]!, 10_000);
    let r: RepairStatusReply;
    try {
      const started = await admin.repair();
      const end = Date.now() + REPAIR_LIMIT_MS;
      for (;;) {
        r = await admin.repairStatus();
        if (r.finishedAtMs > 0 && r.id === started.id) break;
        if (Date.now() > end) throw new Error(`the repair did not finish in ${REPAIR_LIMIT_MS / 1000} s`);
        if (process.stdout.isTTY)
          process.stdout.write(`  ${r.done}/${r.ranges} ranges, ${r.keysExchanged} keys exchanged\r`);
        await sleep(500);
      }
    } finally {
      admin.close();
      await stopAll(nodes);
    }
    const [a, b] = await Promise.all(dirs.map(contents));
    const same = a!.size === b!.size && [...a!].every(([k, h]) => b!.get(k) === h);
    if (!same)
      throw new Error(
        `after the repair the replicas differ: n1 ${a!.size} keys, n2 ${b!.size}; the repair: ${JSON.stringify({ ...r, repaired: r.repaired.length })}`,
      );
    const s = (r.finishedAtMs - r.startedAtMs) / 1000;
    console.log(
      `  ${r.ranges} ranges (${r.identical} identical), ${r.leavesDiffering} leaves differing, ${r.keysExchanged} keys exchanged, ${r.bytes} bytes on the wire; replicas identical afterwards`,
    );
    rows.push(['A: time to detect and repair', `${s.toFixed(1)} s`, '≤ 60 s']);
    rows.push([
      'A: bytes on the wire ÷ differing records',
      `${(r.bytes / diff.bytes).toFixed(2)}× (${r.bytes} ÷ ${diff.bytes})`,
      '≤ 10×',
    ]);
    rows.push([
      'A: keys exchanged ÷ keys differing',
      `${(r.keysExchanged / diff.differing).toFixed(2)} (${r.keysExchanged} ÷ ${diff.differing})`,
      '',
    ]);
  }

  if (PART.includes('0')) {
    console.log('A0: in sync, ringkv repair from n1 on kept trees, then with --kept-trees off');
    for (const kept of ['on', 'off']) {
      const nodes = await startTwo(dirs, addrs, ['--repair-interval-ms', '0', '--kept-trees', kept]);
      const admin = new AdminClient(addrs[0]!, 10_000);
      try {
        // With kept trees, repeat until every range was compared on them (the first builds run at start).
        let r: RepairStatusReply;
        const end = Date.now() + REPAIR_LIMIT_MS;
        for (;;) {
          r = await repairOnce(admin);
          if (kept === 'off' || r.kept === r.ranges) break;
          if (Date.now() > end) throw new Error('kept trees were not all built in time');
          await sleep(2000);
        }
        const s = (r.finishedAtMs - r.startedAtMs) / 1000;
        console.log(
          `  kept trees ${kept}: ${r.ranges} ranges (${r.identical} in sync, ${r.kept} on kept trees) in ${s.toFixed(2)} s, ${r.recordsRead} records read on n1, ${r.bytes} bytes on the wire`,
        );
        rows.push([
          `A0: in-sync repair, kept trees ${kept}`,
          `${s.toFixed(2)} s, ${r.recordsRead} records read (n1)`,
          kept === 'on' ? '≤ 1 s, 0 records' : 'baseline',
        ]);
      } finally {
        admin.close();
        await stopAll(nodes);
      }
    }
  }

  if (PART.includes('c')) {
    console.log('C: store-level puts, kept trees on ÷ off (interleaved pairs)');
    const on: number[] = [],
      off: number[] = [],
      cpuOn: number[] = [],
      cpuOff: number[] = [];
    for (let pair = 0; pair < 3; pair++)
      for (const kept of [false, true]) {
        const { perSec, cpuUs } = await putLoop(kept);
        (kept ? on : off).push(perSec);
        (kept ? cpuOn : cpuOff).push(cpuUs);
      }
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    console.log(
      `  off ${off.map((x) => x.toFixed(0)).join(', ')} puts/s (${cpuOff.map((x) => x.toFixed(1)).join(', ')} µs process CPU/put); on ${on.map((x) => x.toFixed(0)).join(', ')} (${cpuOn.map((x) => x.toFixed(1)).join(', ')} µs)`,
    );
    rows.push([
      'C: put throughput, kept trees on ÷ off',
      `${(sum(on) / sum(off)).toFixed(2)}× (process CPU ${(sum(cpuOn) / on.length).toFixed(1)} vs ${(sum(cpuOff) / off.length).toFixed(1)} µs/put)`,
      '≥ 0.9×',
    ]);
  }

  if (PART.includes('b')) {
    const nodes = await startTwo(dirs, addrs, ['--repair-interval-ms', String(INTERVAL_MS)]);
    const t0 = performance.now();
    const kv = new Client({ nodes: addrs, deadlineMs: 10_000 });
    const admin = new AdminClient(addrs[0]!, 5000);
    console.log(
      `B: foreground ${CONCURRENCY} in flight, 50% gets / 50% new-key puts; idle, then during the background repair (default pace)`,
    );
    try {
      const idleStats = await idleRun(kv, KEYS, IDLE_SECONDS);
      if (performance.now() - t0 > INTERVAL_MS)
        console.log('  (the idle run overlapped the background repair: the idle figure is not idle)');
      const during = foreground(kv, { maxMs: REPAIR_LIMIT_MS, newPrefix: 'j', keys: KEYS });
      const end = Date.now() + REPAIR_LIMIT_MS;
      while ((await admin.repairStatus()).background.ranges === 0) {
        if (Date.now() > end) throw new Error('background repair never started');
        await sleep(200);
      }
      const d0 = performance.now();
      await sleep(DURING_SECONDS * 1000);
      const bg = (await admin.repairStatus()).background;
      const duringStats = stats((await during.stop()).samples, d0, performance.now());
      console.log(`  background repair meanwhile: ${bg.ranges} ranges repaired, ${bg.keysExchanged} keys exchanged`);
      rows.push([
        'B: foreground p99, idle',
        `${idleStats.p99.toFixed(1)} ms (${idleStats.opsPerSec.toFixed(0)} ops/s)`,
        '',
      ]);
      rows.push([
        'B: foreground p99, during background repair',
        `${duringStats.p99.toFixed(1)} ms (${duringStats.opsPerSec.toFixed(0)} ops/s)`,
        '',
      ]);
      rows.push(['B: ratio', `${(duringStats.p99 / idleStats.p99).toFixed(2)}×`, '≤ 1.5×']);
    } finally {
      kv.close();
      admin.close();
      await stopAll(nodes);
    }
  }
  rmSync(join(root, 'run'), { recursive: true, force: true });
  console.log();
  console.log(table([['figure', 'value', 'target'], ...rows]));
  console.log(
    `\nload average at the end ${loadavg()
      .map((x) => x.toFixed(1))
      .join(
        ' ',
      )} (1, 5, 15 min) on ${availableParallelism()} CPUs: other work on this machine slows every figure above`,
  );
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
