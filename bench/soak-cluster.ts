/**
 * npm run soak:cluster — the Jepsen-style set check (test/cluster/set-check.ts) run
 * longer than CI's: 5 real node processes, blind puts at W=2 from 8 workers while a
 * nemesis kills (-9) and restarts or pauses a random node every few seconds; then heal,
 * deliver hints, read every key at R=3, and count attempted, acknowledged, lost,
 * unexpected and recovered values. Exits 1 if anything acknowledged was lost or anything
 * unexpected appeared.
 *
 *   npm run soak:cluster [-- --seconds 120] [-- --keys 400] [-- --nodes 5]
 */
import { runSetCheck } from '../test/cluster/set-check.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const seconds = flag('--seconds', 120);
const keys = flag('--keys', 400);
const nodes = flag('--nodes', 5);

const started = Date.now();
const r = await runSetCheck({
  nodes,
  keys,
  workers: 8,
  // Blind puts add a sibling each: keep every key under the 100-sibling cap.
  maxOps: keys * 90,
  seconds,
  faultEveryMs: 5000,
  faultForMs: 3000,
  log: (l) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${l}`),
});
console.log(`faults: ${r.faults.length} (${r.faults.join(', ')})`);
console.log(`failed puts by gRPC code: ${JSON.stringify(r.failures)}`);
console.log(`attempted ${r.attempted}, acknowledged ${r.acknowledged}, lost ${r.lost.length}, unexpected ${r.unexpected.length}, recovered ${r.recovered}`);
if (r.lost.length > 0) console.log(`lost: ${r.lost.slice(0, 20).join(', ')}`);
if (r.unexpected.length > 0) console.log(`unexpected: ${r.unexpected.slice(0, 20).join(', ')}`);
process.exit(r.lost.length === 0 && r.unexpected.length === 0 ? 0 : 1);
