/**
 * npm run bench:handoff — range streaming to a joining node, on real `ringkv node`
 * processes on this machine (N=3, 16-byte keys, 100-byte values).
 *
 * A (unthrottled): a 3-node cluster holds `--keys` keys (so every node holds every key);
 * a 4th node joins with the senders at --stream-bytes-per-second 0 and the governor off.
 * The streaming phase is timed by the joiner itself (its 'ranges streamed' log line: keys,
 * bytes, ms) → MB/s and keys/s. Baseline in the same run: a raw LevelDB copy of as
 * many records as were streamed (nextv scan of a copy of a node's LevelDB, batched puts
 * into an empty one, one process): the ceiling of a copy with no network, no codec and no
 * merge. Target (issue 29): streaming keys/s ≥ 0.8 × the copy's. `--pairs` joins and
 * copies run in turn (default 3), each join against the copy that follows it. Also each
 * node's CPU in the streaming phase (from /proc, all threads: LevelDB's and the GC's too),
 * per key streamed, against the copy's: on a shared machine the CPU per key moves less
 * than the elapsed time does; and the share of keys the joiner copied without decoding
 * them (Store.ingest: ~100% for a fresh joiner).
 *
 * B (defaults): the same cluster (a copy of the same data dirs), a foreground load of 16
 * requests in flight (half gets of present keys at R=2, half puts of new keys at W=2)
 * measured with nothing moving (idle p99), then during the join of a 4th node with the
 * default settings (24 MiB/s stream throttle and the governor at 2×); p99 during the
 * streaming phase and during the whole join, and their ratio to idle. Target: ≤ 2×.
 *
 * The keys are written offline, honestly: the three nodes start once (to form the cluster
 * and write node.json), stop, and each key is put once into n1's store with Store.put and
 * its record merged into n2's and n3's stores with Store.merge (what a coordinator and its
 * replicas do), then the nodes restart. Every process is stopped by its PID; every loop
 * is bounded in count and time.
 *
 *   npm run bench:handoff [-- --quick] [-- --keys 500000] [-- --idle-seconds 15]
 *                         [-- --part a|b] [-- --pairs 3] [-- --cpu-prof DIR | --profile DIR]   (profiles every node)
 *                         [-- --json FILE]   (the figures, as bench:compare reads them)
 */
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { Level } from 'level';
import { Client } from '../src/client/index.js';
import { AdminClient } from '../src/client/admin.js';
import { Store } from '../src/storage/index.js';
import { ALL_DATA } from '../src/storage/keys.js';
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
  type LogLine,
  type Sample,
} from './processes.js';

const root = benchRoot('handoff');

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const quick = args.includes('--quick');
const KEYS = Number(flag('--keys') ?? NaN) || (quick ? 50_000 : 500_000);
const IDLE_SECONDS = Number(flag('--idle-seconds') ?? NaN) || (quick ? 6 : 15);
const PART = flag('--part') ?? 'ab';
const CPU_PROF = flag('--cpu-prof') ?? flag('--profile');
/** Part A's join and raw copy, run this many times in turn (interleaved pairs: the machine's load moves both alike). */
const PAIRS = Number(flag('--pairs') ?? NaN) || (quick ? 1 : 3);
const JSON_FILE = flag('--json');
const JOIN_LIMIT_MS = 12 * 60_000; // a bound on each join, whatever the speed
const mb = (bytes: number): string => (bytes / 1e6).toFixed(1);

/** Put KEYS keys into n1's store, merge each record into n2's and n3's (the nodes are stopped). */
async function populate(dirs: readonly string[]): Promise<void> {
  const t0 = performance.now();
  const stores = await Promise.all(dirs.map((d) => Store.open({ path: join(d, 'data') })));
  try {
    const [first, ...others] = stores;
    const STEP = 2048;
    for (let i = 0; i < KEYS; i += STEP) {
      const n = Math.min(STEP, KEYS - i);
      const written = await Promise.all(Array.from({ length: n }, (_, j) => first!.put(key('k', i + j), VALUE)));
      for (const s of others) await Promise.all(written.map((w, j) => s.merge(key('k', i + j), w.record)));
      if ((i / STEP) % 50 === 49) process.stdout.write(`  ${i + n} keys\r`);
    }
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
  console.log(
    `  ${KEYS} keys written (put once, merged into two more stores) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}

/** Raw LevelDB: scan `count` data records of `src` with nextv and put them in batches into an empty DB. */
async function rawCopy(
  src: string,
  dst: string,
  count: number,
): Promise<{ keys: number; bytes: number; ms: number; cpu: number }> {
  const a = new Level<Buffer, Buffer>(src, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  const b = new Level<Buffer, Buffer>(dst, { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await a.open();
  await b.open();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let keys = 0,
    bytes = 0;
  const it = a.iterator({ gte: ALL_DATA.gte as Buffer, lt: ALL_DATA.lt as Buffer });
  try {
    while (keys < count) {
      const chunk = await it.nextv(Math.min(512, count - keys));
      if (chunk.length === 0) break;
      const batch = b.batch();
      for (const [k, v] of chunk) {
        batch.put(k, v);
        bytes += k.length + v.length;
      }
      await batch.write();
      keys += chunk.length;
    }
  } finally {
    await it.close();
  }
  const ms = performance.now() - t0;
  await a.close();
  await b.close(); // CPU until LevelDB's compactions are done, as the joiner's count includes them
  const cpu = process.cpuUsage(cpu0);
  return { keys, bytes, ms, cpu: (cpu.user + cpu.system) / 1e6 };
}

/** Each node's CPU in the streaming phase: seconds, share of the phase, µs per key streamed. */
function cpuLine(j: Joined, keys: number): string {
  const phase = (j.streamEnd - j.streamStart) / 1000;
  return Object.entries(j.cpu)
    .map(
      ([id, s]) =>
        `${id} ${s.toFixed(2)} s (${((100 * s) / phase).toFixed(0)}%, ${((s * 1e6) / keys).toFixed(1)} µs/key)`,
    )
    .join(', ');
}

interface Cluster {
  readonly nodes: Proc[];
  readonly joiner: Proc;
}

/** Start n1..n3 from `dirs` (already populated), wait until they form. */
async function startThree(
  dirs: readonly string[],
  addrs: readonly string[],
  extra: readonly string[],
): Promise<Proc[]> {
  const nodes = dirs.map((d, i) => new Proc(`n${i + 1}`, addrs[i]!, d));
  for (const n of nodes) n.start(addrs.slice(0, 3), extra, CPU_PROF);
  await formed(nodes, 120_000);
  return nodes;
}

/** Start the joiner and wait for its streaming to finish and for it to be normal everywhere. */
interface Joined {
  readonly t0: number;
  readonly streamStart: number;
  readonly streamEnd: number;
  readonly normal: number;
  readonly streamed: LogLine;
  /** CPU seconds each node used during the streaming phase. */
  readonly cpu: Record<string, number>;
}

async function join4(c: Cluster, addrs: readonly string[], extra: readonly string[]): Promise<Joined> {
  const t0 = performance.now();
  c.joiner.start(addrs.slice(0, 3), extra, CPU_PROF);
  const limit = sleep(JOIN_LIMIT_MS).then(() => {
    throw new Error(`the join did not finish in ${JOIN_LIMIT_MS / 1000} s`);
  });
  const admin = new AdminClient(c.joiner.address, 2000);
  const progress = setInterval(() => {
    admin.transfers().then(
      (t) => {
        const r = t.pulls.at(-1)?.ranges ?? [];
        if (r.length > 0)
          process.stdout.write(
            `  joiner pulled ${r.reduce((s, x) => s + x.keys, 0)} keys, ${r.filter((x) => x.state === 'done').length}/${r.length} ranges\r`,
          );
      },
      () => undefined,
    );
  }, 5000);
  try {
    const all = [...c.nodes, c.joiner];
    const streamStart = await Promise.race([
      c.joiner.when((l) => l.msg === 'streaming the ranges this node gains'),
      limit,
    ]);
    const cpu0 = all.map((n) => n.cpuSeconds());
    const streamEnd = await Promise.race([c.joiner.when((l) => l.msg === 'ranges streamed'), limit]);
    const cpu = Object.fromEntries(all.map((n, i) => [n.id, n.cpuSeconds() - cpu0[i]!]));
    await Promise.race([formed(all, JOIN_LIMIT_MS), limit]);
    return { t0, streamStart, streamEnd, normal: performance.now(), streamed: c.joiner.line('ranges streamed')!, cpu };
  } finally {
    clearInterval(progress);
    admin.close();
    limit.catch(() => undefined);
  }
}

async function main(): Promise<void> {
  console.log(
    `bench:handoff — ${KEYS} keys × ${VALUE.length}-byte values on 3 ringkv nodes (N=3), a 4th joins${quick ? ' (quick)' : ''}; load average ${loadavg()[0]!.toFixed(1)}`,
  );
  const ports = await Promise.all([0, 1, 2, 3].map(() => freePort()));
  const addrs = ports.map((p) => `127.0.0.1:${p}`);
  const prep = ['n1', 'n2', 'n3'].map((id) => join(root, 'prep', id));

  // Form the cluster once (node.json, tokens), stop it, write the keys offline.
  console.log('forming the 3-node cluster, then writing the keys offline');
  const first = await startThree(prep, addrs, []);
  await stopAll(first);
  await populate(prep);
  if (CPU_PROF !== undefined) mkdirSync(CPU_PROF, { recursive: true });

  const rows: string[][] = [];
  const figures: Record<string, number> = {};
  if (PART.includes('a')) {
    const ratios: number[] = [];
    for (let pair = 1; pair <= PAIRS; pair++) {
      const dirs = ['n1', 'n2', 'n3'].map((id) => join(root, 'a', id));
      prep.forEach((d, i) => cpSync(d, dirs[i]!, { recursive: true }));
      const extra = ['--stream-bytes-per-second', '0', '--background-latency-factor', '0'];
      const nodes = await startThree(dirs, addrs, extra);
      const c: Cluster = { nodes, joiner: new Proc('n4', addrs[3]!, join(root, 'a', 'n4')) };
      console.log(`A${PAIRS > 1 ? ` (pair ${pair} of ${PAIRS})` : ''}: n4 joins, unthrottled, governor off`);
      let j: Joined;
      try {
        j = await join4(c, addrs, extra);
      } finally {
        await stopAll([...nodes, c.joiner]);
        rmSync(join(root, 'a'), { recursive: true, force: true });
      }
      const { keys, bytes, ms, copied } = j.streamed as unknown as {
        keys: number;
        bytes: number;
        ms: number;
        copied?: number;
      };
      console.log(
        `  streamed ${keys} keys, ${mb(bytes)} MB in ${ms} ms; n4 normal everywhere ${((j.normal - j.t0) / 1000).toFixed(1)} s after it started`,
      );
      console.log(
        `  keys copied without a decode (Store.ingest's fast path): ${copied === undefined ? 'not reported' : `${copied} (${((100 * copied) / Math.max(1, keys)).toFixed(1)}%)`}`,
      );
      console.log(`  CPU during streaming: ${cpuLine(j, keys)}`);
      // The baseline, with the nodes stopped: a raw copy of as many records, from a copy of n1's LevelDB made while it was stopped.
      const raw = await rawCopy(join(prep[0]!, 'data'), join(root, 'raw-copy'), keys);
      rmSync(join(root, 'raw-copy'), { recursive: true, force: true });
      const mbps = bytes / 1e6 / (ms / 1000),
        kps = keys / (ms / 1000);
      const rawMbps = raw.bytes / 1e6 / (raw.ms / 1000),
        rawKps = raw.keys / (raw.ms / 1000);
      const us = (cpu: number, n: number): string => ((cpu * 1e6) / n).toFixed(1);
      const sendersCpu = Object.entries(j.cpu)
        .filter(([id]) => id !== 'n4')
        .reduce((t, [, x]) => t + x, 0);
      ratios.push(kps / rawKps);
      const tag = PAIRS > 1 ? ` #${pair}` : '';
      if (pair === 1)
        Object.assign(figures, {
          'A stream MB/s': mbps,
          'A stream keys/s': kps,
          'A CPU µs/key': ((j.cpu.n4! + sendersCpu) * 1e6) / keys,
          'A joiner CPU µs/key': (j.cpu.n4! * 1e6) / keys,
          'A senders CPU µs/key': (sendersCpu * 1e6) / keys,
          'A stream ÷ raw copy': kps / rawKps,
          'A copied share': (copied ?? 0) / Math.max(1, keys),
        });
      rows.push([
        `A${tag}: stream to joiner (unthrottled)`,
        String(keys),
        mb(bytes),
        String(ms),
        mbps.toFixed(1),
        kps.toFixed(0),
        `${us(j.cpu.n4!, keys)} + ${us(sendersCpu, keys)}`,
        '',
      ]);
      rows.push([
        `A${tag}: raw LevelDB copy (baseline)`,
        String(raw.keys),
        mb(raw.bytes),
        raw.ms.toFixed(0),
        rawMbps.toFixed(1),
        rawKps.toFixed(0),
        us(raw.cpu, raw.keys),
        '',
      ]);
      rows.push([
        `A${tag}: stream ÷ raw copy`,
        '',
        '',
        '',
        (mbps / rawMbps).toFixed(2),
        (kps / rawKps).toFixed(2),
        ((j.cpu.n4! + sendersCpu) / keys / (raw.cpu / raw.keys)).toFixed(2),
        '≥ 0.8 keys/s',
      ]);
    }
    if (PAIRS > 1) {
      const sorted = [...ratios].sort((x, y) => x - y);
      figures['A stream ÷ raw copy (median of pairs)'] = sorted[Math.floor(sorted.length / 2)]!;
      console.log(
        `  stream ÷ raw copy, keys/s, per pair: ${ratios.map((r) => r.toFixed(2)).join(', ')} (median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)})`,
      );
    }
  }

  const rowsB: string[][] = [];
  if (PART.includes('b')) {
    const dirs = ['n1', 'n2', 'n3'].map((id) => join(root, 'b', id));
    prep.forEach((d, i) => cpSync(d, dirs[i]!, { recursive: true }));
    const nodes = await startThree(dirs, addrs, []);
    const c: Cluster = { nodes, joiner: new Proc('n4', addrs[3]!, join(root, 'b', 'n4')) };
    const kv = new Client({ nodes: addrs.slice(0, 3), deadlineMs: 10_000 });
    console.log(
      `B: default settings (24 MiB/s, governor 2×); foreground ${CONCURRENCY} in flight, 50% gets / 50% new-key puts`,
    );
    try {
      const idleStats = await idleRun(kv, KEYS, IDLE_SECONDS);
      // Now the join, under the same load.
      const during = foreground(kv, { maxMs: JOIN_LIMIT_MS, newPrefix: 'j', keys: KEYS });
      let j: Awaited<ReturnType<typeof join4>>;
      let duringRun!: { samples: Sample[]; failed: number };
      try {
        j = await join4(c, addrs, []);
      } finally {
        duringRun = await during.stop();
      }
      const { keys, bytes, ms } = j.streamed as unknown as { keys: number; bytes: number; ms: number };
      const streaming = stats(duringRun.samples, j.streamStart, j.streamEnd);
      const whole = stats(duringRun.samples, j.t0, j.normal);
      console.log(`  CPU during streaming: ${cpuLine(j, keys)}`);
      console.log(
        `  streamed ${keys} keys, ${mb(bytes)} MB in ${ms} ms (${(bytes / 1e6 / (ms / 1000)).toFixed(1)} MB/s); n4 normal everywhere ${((j.normal - j.t0) / 1000).toFixed(1)} s after it started; failed requests: idle ${idleStats.failed}, during ${duringRun.failed}`,
      );
      Object.assign(figures, {
        'B idle ops/s': idleStats.opsPerSec,
        'B idle p99 ms': idleStats.p99,
        'B streaming p99 ms': streaming.p99,
        'B streaming MB/s': bytes / 1e6 / (ms / 1000),
        'B failed': idleStats.failed + duringRun.failed,
      });
      const ms2 = (x: number): string => x.toFixed(2);
      rowsB.push(['phase', 'seconds', 'ops', 'ops/s', 'p50 ms', 'p99 ms', 'p99 ÷ idle', 'target']);
      rowsB.push([
        'idle (no join)',
        IDLE_SECONDS.toFixed(1),
        String(idleStats.ops),
        idleStats.opsPerSec.toFixed(0),
        ms2(idleStats.p50),
        ms2(idleStats.p99),
        '1.00',
        '',
      ]);
      rowsB.push([
        'streaming (joiner log)',
        ((j.streamEnd - j.streamStart) / 1000).toFixed(1),
        String(streaming.ops),
        streaming.opsPerSec.toFixed(0),
        ms2(streaming.p50),
        ms2(streaming.p99),
        (streaming.p99 / idleStats.p99).toFixed(2),
        '≤ 2.00',
      ]);
      rowsB.push([
        'whole join (start → normal)',
        ((j.normal - j.t0) / 1000).toFixed(1),
        String(whole.ops),
        whole.opsPerSec.toFixed(0),
        ms2(whole.p50),
        ms2(whole.p99),
        (whole.p99 / idleStats.p99).toFixed(2),
        '',
      ]);
    } finally {
      kv.close();
      await stopAll([...nodes, c.joiner]);
    }
  }

  if (rows.length > 0) {
    console.log();
    console.log(table([['run', 'keys', 'MB', 'ms', 'MB/s', 'keys/s', 'CPU µs/key', 'target'], ...rows]));
    console.log(
      '  (CPU µs/key: the joiner + the three senders during the streaming phase, from /proc; the copy: its process until its DB is closed; ratio target on keys/s)',
    );
  }
  if (rowsB.length > 0) {
    console.log();
    console.log(table(rowsB));
  }
  if (JSON_FILE !== undefined) writeFileSync(JSON_FILE, `${JSON.stringify({ keys: KEYS, figures }, null, 2)}\n`);
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
