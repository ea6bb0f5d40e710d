/**
 * npm run sim:clocks — clock entries per key after 1,000 random joins and leaves of a
 * 10-node cluster (N = 3) of real stores (testkit/clock-sim.ts: writes with and without
 * contexts, hints, repairs, restarts, purges), at quiescence, with clock pruning (the
 * store's pass and pruning on merge) and, in the same run on the same seed, without it
 * (the baseline: what every release before issue 29 kept). Target: at most N + 2 entries.
 * It also checks what the property test checks: nothing lost or resurrected, no dot
 * issued twice, replicas identical.
 *
 *   npm run sim:clocks -- [--churn 1000] [--seed 29] [--keys 16]
 */
import { parseArgs } from 'node:util';
import { runClockSim, summary } from '../testkit/clock-sim.js';

const { values } = parseArgs({
  options: {
    churn: { type: 'string', default: '1000' },
    seed: { type: 'string', default: '29' },
    keys: { type: 'string', default: '16' },
  },
});
const churn = Number(values.churn),
  seed = Number(values.seed),
  keys = Number(values.keys);
const N = 3;
const show = (xs: readonly number[]): string => {
  const s = summary(xs);
  return `max ${s.max}, p99 ${s.p99}, mean ${s.mean.toFixed(2)}`;
};
console.log(
  `10 nodes, N = ${N}, ${keys} keys, ${churn} joins and leaves (seed ${seed}); clock entries per key on each replica, at quiescence`,
);
let failed = false;
for (const prune of [false, true]) {
  const cpu0 = process.cpuUsage();
  const r = await runClockSim({ seed, churn, keys, prune });
  const cpu = process.cpuUsage(cpu0);
  const bad = [...r.lost, ...r.resurrected, ...r.dotsIssuedTwice, ...r.diverged];
  console.log(
    `${prune ? 'pruned  ' : 'baseline'}  ${show(r.entriesAfter)}   (before the last pass: ${show(r.entriesBefore)}; ${r.writes} writes, ${r.pruned} records pruned, ${r.hintsExpired} hints expired; CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms)`,
  );
  console.log(`          violations: ${bad.length === 0 ? 'none' : bad.slice(0, 10).join(', ')}`);
  if (bad.length > 0 || (prune && summary(r.entriesAfter).max > N + 2)) failed = true;
}
if (failed) process.exitCode = 1;
