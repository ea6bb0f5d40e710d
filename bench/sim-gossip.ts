/**
 * npm run sim:gossip — the gossip membership on the deterministic simulator
 * (testkit/gossip-sim.ts): per node per round CPU and bytes, and rounds to spread one
 * change, through 10, 100 and 1,000 nodes, with delta gossip and with full Scuttlebutt
 * in the same run (the baseline); and how the phi detector does in a 5-node cluster at 1 s gossip (false
 * convictions over simulated hours, time to convict a killed node, time to see a
 * restart). `-- --seed N` replays one run; `-- --sizes 10,100` picks the cluster sizes,
 * `-- --no-detector` skips the detector part, `-- --no-churn` the churn at 1,000 nodes.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { GossipSim, ids } from '../testkit/gossip-sim.js';

// Garbage collections, to take out of the steps they interrupt (GossipSim.cpuLessGc).
const gcs: [number, number][] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push([e.startTime, e.startTime + e.duration]);
}).observe({ entryTypes: ['gc'] });

const seedArg = process.argv.indexOf('--seed');
const seed0 = seedArg > 0 ? Number(process.argv[seedArg + 1]) : 1;
const sizesArg = process.argv.indexOf('--sizes');
const sizes = sizesArg > 0 ? process.argv[sizesArg + 1]!.split(',').map(Number) : [10, 100, 1000];

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};

interface Figures {
  rounds: number[];
  cpu: number[];
  bytes: number;
  messages: number;
}

/**
 * One cluster of `size` nodes, converged, in `delta` or full mode: `steady` rounds metered
 * (CPU ms per node per round over nodes, bytes sent per node per round), then one field
 * change and the rounds until every node holds it.
 */
async function run(
  size: number,
  delta: boolean,
  seed: number,
  steady: number,
  busy = false,
): Promise<Figures & { spread: number }> {
  const sim = new GossipSim({ seed, detector: { windowSize: 50 }, meter: true, gossiper: { delta } });
  const all = ids(size);
  for (const id of all) sim.add(id, all.slice(0, 3), {}, true);
  sim.seedTables();
  sim.runFor(2000);
  sim.resetMeters();
  gcs.length = 0;
  if (!busy) sim.runFor(steady * 1000);
  // Busy: every node refreshes its `load` every 5 s, as a node under writes does (node.ts).
  for (let step = 0; busy && step < steady * 10; step++) {
    for (let i = step % 50; i < size; i += 50) sim.set(all[i]!, 'load', String(Math.floor(sim.random() * 1e9)));
    sim.runFor(100);
  }
  await new Promise((resolve) => setImmediate(resolve)); // the observer's entries
  const nodes = [...sim.nodes.values()];
  const cpu = [...sim.cpuLessGc(gcs).values()].map((ms) => ms / steady);
  const bytes = nodes.reduce((a, n) => a + n.bytesSent, 0) / size / steady;
  const messages = sim.messages / size / steady;
  sim.set('n1', 'status', 'leaving');
  const start = sim.now;
  sim.runFor(60_000, () => all.every((v) => sim.sees(v, 'n1', 'status', 'leaving')));
  return { rounds: [], cpu, bytes, messages, spread: (sim.now - start) / 1000 };
}

console.log(`ringkv gossip simulation (seed ${seed0}; 1 s rounds, 1-20 ms one-way delay)`);
console.log("Per node per round in a converged cluster (CPU: the gossiper's tick and receive, less the simulation's");
console.log('garbage collections; bytes: protobuf-encoded');
console.log(
  'messages sent), then rounds for one field change to reach every node. Same run, both modes. "busy": every',
);
console.log('node sets its `load` field every 5 s while metered.\n');
console.log('nodes  mode        CPU ms p50   p99   bytes sent  msgs  rounds to spread (mean, max)  2·log2 N  wall');
// Warm up both modes (the JIT), so that the first size measured is not the one that compiles.
for (const delta of [false, true]) await run(50, delta, seed0, 3);
for (const size of sizes) {
  const runs = size >= 1000 ? 1 : 5;
  const steady = size >= 1000 ? 3 : 5;
  const figures: Record<string, Figures> = {};
  const modes = size >= 100 ? (['full', 'delta', 'full busy', 'delta busy'] as const) : (['full', 'delta'] as const);
  for (const mode of modes) {
    const t0 = performance.now();
    const f: Figures = { rounds: [], cpu: [], bytes: 0, messages: 0 };
    for (let r = 0; r < runs; r++) {
      const one = await run(size, mode.startsWith('delta'), seed0 + r, steady, mode.endsWith('busy'));
      f.rounds.push(one.spread);
      f.cpu.push(...one.cpu);
      f.bytes += one.bytes / runs;
      f.messages += one.messages / runs;
    }
    figures[mode] = f;
    const mean = f.rounds.reduce((a, b) => a + b, 0) / f.rounds.length;
    console.log(
      `${String(size).padStart(5)}  ${mode.padEnd(10)} ${pct(f.cpu, 0.5).toFixed(2).padStart(9)} ${pct(f.cpu, 0.99).toFixed(2).padStart(6)}` +
        `  ${Math.round(f.bytes).toLocaleString('en').padStart(10)}  ${f.messages.toFixed(1).padStart(4)}` +
        `  ${mean.toFixed(2).padStart(6)}, ${Math.max(...f.rounds).toFixed(2)} (${runs} run${runs > 1 ? 's' : ''})`.padEnd(
          33,
        ) +
        `${(2 * Math.log2(size)).toFixed(1).padStart(8)}  ${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s`,
    );
  }
  const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(1)}×` : '-');
  console.log(
    `       delta vs full: CPU p50 ${ratio(pct(figures.full!.cpu, 0.5), pct(figures.delta!.cpu, 0.5))} less, bytes ${ratio(figures.full!.bytes, figures.delta!.bytes)} fewer`,
  );
}

// Churn: rosters differ while joins and restarts spread, so heartbeats travel as (id,
// heartbeat) pairs in full exchanges instead of vectors; the detector must not convict.
if (sizes.includes(1000) && !process.argv.includes('--no-churn')) {
  const t0 = performance.now();
  const sim = new GossipSim({ seed: seed0, dropRate: 0.01, maxDelayMs: 50, detector: { windowSize: 50 } });
  const all = ids(1000);
  for (const id of all) sim.add(id, all.slice(0, 3), {}, true);
  sim.seedTables();
  sim.runFor(30_000); // the detector's windows fill first: just after seeding they hold a few intervals
  const { falseDowns, restarted } = sim.churn(20, 2);
  console.log(
    `\nchurn, 1,000 nodes, delta gossip, 1% loss: a join and a restart every 2 rounds for 20 rounds (${restarted.size} restarted):` +
      ` false convictions ${falseDowns}  (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
  );
}

if (process.argv.includes('--no-detector')) process.exit(0);
console.log('\nphi detector, 5 nodes, 3 seeds, threshold 8, 1% loss, 1-50 ms delay, judged every 250 ms; 20 clusters:');
let falseDowns = 0;
const detect: number[] = [];
const rejoin: number[] = [];
for (let s = seed0; s < seed0 + 20; s++) {
  const sim = new GossipSim({ seed: s, dropRate: 0.01, maxDelayMs: 50, judgeEveryMs: 250 });
  const all = ids(5);
  for (const id of all) sim.add(id, all.slice(0, 3));
  sim.runFor(30_000);
  for (const n of sim.nodes.values()) n.events = [];
  sim.runFor(3600_000);
  for (const n of sim.nodes.values()) falseDowns += n.events.filter((e) => e.event.type === 'down').length;
  const t0 = sim.now;
  sim.kill('n4');
  sim.runFor(30_000, () => sim.alive().every((n) => !n.gossiper.isUp('n4')));
  detect.push(sim.now - t0);
  sim.runFor(10_000);
  const t1 = sim.now;
  sim.start('n4');
  sim.runFor(30_000, () => sim.alive().every((n) => n.gossiper.isUp('n4')));
  rejoin.push(sim.now - t1);
}
const stat = (xs: number[]): string => {
  const s = [...xs].sort((a, b) => a - b);
  return `median ${(s[s.length >> 1]! / 1000).toFixed(2)} s, max ${(s[s.length - 1]! / 1000).toFixed(2)} s`;
};
console.log(`  false convictions in 100 node-hours: ${falseDowns}`);
console.log(`  kill -9 convicted by every node: ${stat(detect)}   (target < 10 s)`);
console.log(`  restart seen up by every node:  ${stat(rejoin)}   (target < 3 s)`);
