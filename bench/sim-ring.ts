/**
 * npm run sim:ring — replays a sequence of joins and leaves on the ring, offline, and
 * prints after each step the balance (busiest node ÷ fair share) and how much of the
 * key space moved, against the least that had to.
 *
 *   npm run sim:ring -- [--nodes 12] [--zones 3] [--tokens 64] [--allocation balanced|random]
 *                       [--start layout|grow] [--steps +10,-5] [--seed 1] [--replicas 3]
 *
 * --replicas is the cluster's N: joins and leaves balance what each node replicates
 * among N (claim.ts), and the replicated figures are for n = N.
 * --start layout builds the first ring at once (claimRing); grow starts from one node and
 * joins the rest one by one, as a cluster formed by starting nodes does (one row per join
 * from the 4th node on).
 * --steps: "+K" joins K nodes (zones round robin), "-K" removes K nodes chosen at random
 * (seeded). "moved" is the share of the key space whose primary (n = 1) or replica set
 * (n = N) changed; "÷ least" divides it by the share that had to move, the newcomer's or
 * the leaver's ownership: 1.000 means nothing moved that did not have to. "shortest" is
 * the shortest token range ÷ a fair token's share (joins keep it at least 1/32 = 0.031;
 * leaves lower it, as the fair token's share grows with fewer tokens).
 * --zones 1 puts every node in one zone, which places replicas as no zones at all does.
 */
import { parseArgs } from 'node:util';
import { type Ring, claimRing, joinRing, leaveRing } from '../src/ring/index.js';
import type { Allocation } from '../src/ring/index.js';
import { ZONES, busiest, cluster, f3, leavers, moved, pct, shortestRange, table } from './lib.js';

const { values } = parseArgs({
  options: {
    nodes: { type: 'string', default: '12' },
    zones: { type: 'string', default: '3' },
    tokens: { type: 'string', default: '64' },
    allocation: { type: 'string', default: 'balanced' },
    start: { type: 'string', default: 'layout' },
    steps: { type: 'string', default: '+10,-5' },
    seed: { type: 'string', default: '1' },
    replicas: { type: 'string', default: '3' },
  },
});
const nodes = Number(values.nodes);
const zones = Number(values.zones);
const seed = Number(values.seed);
const options = { tokensPerNode: Number(values.tokens), allocation: values.allocation as Allocation };
const N = Number(values.replicas);
const n = Math.min(N, zones >= N ? N : nodes);

const rows: string[][] = [
  ['step', 'change', 'nodes', 'primary', 'replicas', 'shortest', 'moved p', '÷ least', 'moved r', '÷ least', 'ms'],
];
const record = (step: string, change: string, before: Ring | undefined, after: Ring, ms: number, subject?: string) => {
  const b = busiest(after, N);
  const cells = [step, change, String(after.size), f3(b.primary), f3(b.replicated), f3(shortestRange(after))];
  if (before && subject) {
    const owner = after.has(subject) ? after : before; // the newcomer's or the leaver's shares
    const p = moved(before, after, 1);
    const r = moved(before, after, Math.min(n, before.size, after.size));
    cells.push(
      pct(p),
      f3(p / owner.ownership(1).get(subject)!),
      pct(r),
      f3(r / owner.ownership(Math.min(n, before.size, after.size)).get(subject)!),
    );
  } else {
    cells.push('-', '-', '-', '-');
  }
  cells.push(ms.toFixed(0));
  rows.push(cells);
};

let t = performance.now();
let ring: Ring;
if (values.start === 'grow') {
  // One row per join from the 4th node on (the 3rd and fewer replicate everything).
  const members = cluster(nodes, zones);
  ring = claimRing([members[0]!], N, options);
  for (const m of members.slice(1)) {
    t = performance.now();
    const next = joinRing(ring, m, N);
    if (next.size >= 4) record('0', `grow ${m.id} (${m.zone})`, ring, next, performance.now() - t, m.id);
    ring = next;
  }
  if (nodes < 4) record('0', `grow 1 → ${nodes}`, undefined, ring, performance.now() - t);
} else {
  ring = claimRing(cluster(nodes, zones), N, options);
  record('0', `layout ${nodes}`, undefined, ring, performance.now() - t);
}

let step = 0;
let joined = 0;
for (const group of values.steps.split(',').filter(Boolean)) {
  const count = Number(group.slice(1));
  if (group[0] === '+') {
    for (let k = 0; k < count; k++) {
      const id = `j${String(joined).padStart(3, '0')}`;
      const zone = ZONES[joined++ % zones]!;
      t = performance.now();
      const next = joinRing(ring, { id, zone }, N);
      record(String(++step), `join ${id} (${zone})`, ring, next, performance.now() - t, id);
      ring = next;
    }
  } else if (group[0] === '-') {
    for (const id of leavers(ring, count, seed + step)) {
      t = performance.now();
      const next = leaveRing(ring, id, N);
      record(String(++step), `leave ${id}`, ring, next, performance.now() - t, id);
      ring = next;
    }
  } else {
    throw new Error(`--steps: expected groups like +10 or -5, got "${group}"`);
  }
}

console.log(
  `ringkv sim:ring — ${nodes} nodes, ${zones} zones, ${options.tokensPerNode} tokens per node, ${options.allocation} allocation, start ${values.start}, steps ${values.steps}, N = ${N}`,
);
console.log(`primary / replicas: busiest node ÷ fair share, n = 1 and n = ${n}`);
console.log(table(rows));
