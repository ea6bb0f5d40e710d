/**
 * npm run sim:topology — 1,000 nodes through 100 topology changes (joins, decommissions,
 * removals and replacements, in equal parts and random order) on the seeded simulator
 * (testkit/topology-sim.ts), with nodes crashing and restarting in the middle of them.
 * It runs the real decisions (membership/join.ts, src/cluster) and checks that every change
 * completes, no range has fewer than N replicas holding its data, and no two movements
 * pull at once; it prints changes per second of simulated time and CPU ms per change.
 *
 *   npm run sim:topology -- [--nodes 1000] [--changes 100] [--seed 1] [--crash-rate 0.05]
 */
import { parseArgs } from 'node:util';
import { TopologySim } from '../testkit/topology-sim.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '1000' },
    changes: { type: 'string', default: '100' },
    seed: { type: 'string', default: '1' },
    'crash-rate': { type: 'string', default: '0.05' },
  },
});
const nodes = Number(values.nodes),
  changes = Number(values.changes),
  seed = Number(values.seed),
  crashRate = Number(values['crash-rate']);
const cpu0 = process.cpuUsage();
const wall0 = performance.now();
const sim = new TopologySim({ seed, nodes, changes, crashRate });
const setupMs = (process.cpuUsage(cpu0).user + process.cpuUsage(cpu0).system) / 1000;
const r = sim.run();
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000 - setupMs;
const same = sim.sameRing();
console.log(`${nodes} nodes, ${changes} changes (seed ${seed}, crash rate ${crashRate} a round)`);
console.log(
  `completed        ${r.completed}/${changes}${r.pending.length > 0 ? `; pending: ${r.pending.join(', ')}` : ''}`,
);
console.log(
  `simulated time   ${(r.simulatedMs / 1000).toFixed(0)} s: ${((r.completed / r.simulatedMs) * 1000).toFixed(4)} changes per simulated second (${(r.simulatedMs / 1000 / Math.max(1, r.completed)).toFixed(1)} s a change)`,
);
console.log(
  `CPU              ${cpuMs.toFixed(0)} ms: ${(cpuMs / Math.max(1, r.completed)).toFixed(1)} ms per change (setup ${setupMs.toFixed(0)} ms, wall ${((performance.now() - wall0) / 1000).toFixed(1)} s)`,
);
console.log(`crashes          ${r.crashes}; refused requests ${r.refusals}; withdrawn changes ${r.withdrawals}`);
console.log(`removal repair   ${r.repairedUnits} units repaired, ${r.skippedUnits} skipped (a replica down)`);
console.log(`one ring         ${same ? 'yes' : 'NO'}`);
console.log(`violations       ${r.violations.length === 0 ? 'none' : `\n  ${r.violations.slice(0, 10).join('\n  ')}`}`);
if (r.violations.length > 0 || r.pending.length > 0 || !same) process.exitCode = 1;
