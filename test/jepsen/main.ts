/**
 * npm run jepsen -- [--time 300] [--nodes 5] [--nemesis all|partition,kill,pause,packet,clock,membership,slow,disk-full,corrupt]
 *                   [--workload set,register,expiry,counter,orset,map] [--seed S] [--every-ms 10000] [--workers 8] [--results DIR]
 *
 * A Jepsen-style run against real `ringkv node` processes (test/jepsen/run.ts): prints the
 * verdict and a summary, writes the report, and exits 1 on any violation. The seed
 * reproduces the schedule of faults. `--sweep` only removes what crashed runs left behind.
 */
import { Command, InvalidArgumentError } from 'commander';
import { join } from 'node:path';
import { parseNemeses } from './nemesis.js';
import { sweep } from '../../testkit/jepsen/net.js';
import { WORKLOADS, redraw, runJepsen, summary, type Workload } from './run.js';

const int =
  (min: number, max: number) =>
  (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    return n;
  };
const workloads = (v: string): Workload[] => {
  const out = v.split(',').map((s) => s.trim());
  for (const w of out)
    if (!(WORKLOADS as readonly string[]).includes(w))
      throw new InvalidArgumentError(`unknown workload "${w}"; known: ${WORKLOADS.join(', ')}`);
  return out as Workload[];
};
const nemeses = (v: string): ReturnType<typeof parseNemeses> => {
  try {
    return parseNemeses(v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
};

const program = new Command('jepsen')
  .description('fault-injection run against a real ringkv cluster')
  .option('--time <s>', 'seconds of workload under faults', int(10, 86_400), 300)
  .option('--nodes <n>', 'nodes to start (one more joins during the run)', int(4, 20), 5)
  .option(
    '--nemesis <list>',
    'faults to inject: all, or a list of partition,kill,pause,packet,clock,membership,slow,disk-full,corrupt',
    nemeses,
    parseNemeses('all'),
  )
  .option('--workload <list>', `any of ${WORKLOADS.join(', ')}`, workloads, ['set', 'register'] as Workload[])
  .option('--seed <n>', 'seed of the fault schedule (default: random, printed)', int(0, 2 ** 31 - 1))
  .option('--every-ms <ms>', 'mean time between faults', int(1000, 600_000), 10_000)
  .option('--workers <n>', 'concurrent clients', int(1, 256), 8)
  .option(
    '--results <dir>',
    'folder for the run folders (not committed)',
    join(import.meta.dirname, '../../results/jepsen'),
  )
  .option(
    '--sweep',
    'only remove namespaces, links, cpu cgroups, delay proxies and processes that earlier runs left behind',
  )
  .option('--render <folder>', "only redraw a finished run's timeline.svg from its report.json and history.jsonl")
  .parse();

const opts = program.opts<{
  time: number;
  nodes: number;
  nemesis: ReturnType<typeof parseNemeses>;
  workload: Workload[];
  seed?: number;
  everyMs: number;
  workers: number;
  results: string;
  sweep?: boolean;
  render?: string;
}>();
if (opts.render !== undefined) {
  console.log(`wrote ${redraw(opts.render)}`);
  process.exit(0);
}
if (opts.sweep) {
  const removed = sweep();
  console.log(removed.length === 0 ? 'nothing left behind' : `removed: ${removed.join(', ')}`);
  process.exit(0);
}
const seed = opts.seed ?? Math.floor(Math.random() * 2 ** 31);
const t0 = Date.now();
console.log(`jepsen: seed ${seed} (rerun with --seed ${seed})`);
try {
  const report = await runJepsen({
    timeS: opts.time,
    nodes: opts.nodes,
    nemeses: opts.nemesis,
    workloads: opts.workload,
    seed,
    everyMs: opts.everyMs,
    workers: opts.workers,
    resultsDir: opts.results,
    requireAll: process.env['CI'] === 'true' && process.getuid?.() === 0,
    log: (l) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${l}`),
  });
  console.log(summary(report));
  process.exit(report.valid ? 0 : 1);
} catch (e) {
  console.error(`jepsen: the run failed: ${(e as Error).stack ?? e}`);
  process.exit(2);
}
