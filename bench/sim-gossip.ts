/**
 * npm run sim:gossip — the gossip membership on the deterministic simulator
 * (testkit/gossip-sim.ts): rounds to spread one change through 10, 100 and 1,000
 * nodes, and how the phi detector does in a 5-node cluster at 1 s gossip (false
 * convictions over simulated hours, time to convict a killed node, time to see a
 * restart). `-- --seed N` replays one run.
 */
import { GossipSim, ids } from '../testkit/gossip-sim.js';

const seedArg = process.argv.indexOf('--seed');
const seed0 = seedArg > 0 ? Number(process.argv[seedArg + 1]) : 1;

console.log(`ringkv gossip simulation (seed ${seed0}; 1 s rounds, 1-20 ms one-way delay)\n`);
console.log('nodes  rounds to spread a change  (log2 N)  messages/node/round  wall time');
for (const size of [10, 100, 1000]) {
  const t0 = performance.now();
  const rounds: number[] = [];
  let perNode = 0;
  const runs = size === 1000 ? 1 : 5;
  for (let r = 0; r < runs; r++) {
    const sim = new GossipSim({ seed: seed0 + r, detector: { windowSize: 50 } });
    const all = ids(size);
    for (const id of all) sim.add(id, all.slice(0, 3), {}, true);
    sim.seedTables();
    sim.runFor(1000);
    const m0 = sim.messages;
    sim.set('n1', 'status', 'leaving');
    const start = sim.now;
    sim.runFor(60_000, () => all.every((v) => sim.sees(v, 'n1', 'status', 'leaving')));
    const took = (sim.now - start) / 1000;
    rounds.push(took);
    perNode += (sim.messages - m0) / size / took;
  }
  const mean = rounds.reduce((a, b) => a + b, 0) / rounds.length;
  console.log(
    `${String(size).padStart(5)}  ${mean.toFixed(2).padStart(6)} (max ${Math.max(...rounds).toFixed(2)}, ${runs} run${runs > 1 ? 's' : ''})`.padEnd(35) +
      `${Math.log2(size).toFixed(1).padStart(8)}  ${(perNode / runs).toFixed(2).padStart(19)}  ${((performance.now() - t0) / 1000).toFixed(1).padStart(7)} s`,
  );
}

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
