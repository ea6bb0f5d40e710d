/**
 * npm run bench:ring — the placement ring measured side by side, in one run, with the
 * npm package `hashring` (the most used ring on npm, MD5 ketama) and a plain sorted-array
 * ring hashing with md5 like the seed write-ups. Prints ratios, not just absolutes: the
 * machine is shared and noisy, and both sides move together.
 *
 * Run with `node --expose-gc --import tsx bench/ring.ts [--quick] [--alternatives]` (the
 * npm script does). --quick skips the 999-node joins (about a second each) and samples
 * fewer keys; --alternatives prints only the seed write-ups' tables and the alternatives
 * (modulo, rendezvous, jump, Maglev, bounded loads) against the ring.
 */
import { createHash } from 'node:crypto';
import HashRing from 'hashring';
import { Ring, arcFraction, claimRing, joinRing, leaveRing } from '../src/ring/index.js';
import { BoundedLoads, Jump, Maglev, Modulo, Rendezvous, type Placement } from './alternatives.js';
import { busiest, cluster, f3, leavers, moved, pct, shortestRange, table } from './lib.js';

const quick = process.argv.includes('--quick');
const onlyAlternatives = process.argv.includes('--alternatives');
/** The cluster's N: what the claims balance for, and the n of the replicated figures. */
const N = 3;
const gc = (globalThis as { gc?: () => void }).gc;

/** A key set like "user:123456", distinct keys so that nothing is served from a cache. */
const KEYS = Array.from({ length: 1 << 16 }, (_, i) => `user:${100000 + ((i * 7919) % 900000)}`);
let sink = 0;

/** ns per call of fn over KEYS: the best of 5 rounds of at least ~150 ms each. */
function nsPerLookup(fn: (key: string) => { readonly length: number }): number {
  for (let i = 0; i < KEYS.length; i++) sink += fn(KEYS[i]!).length; // warm up the JIT
  let best = Infinity;
  for (let round = 0; round < 5; round++) {
    let calls = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0;
    while (elapsed < 150e6) {
      for (let i = 0; i < KEYS.length; i++) sink += fn(KEYS[i]!).length;
      calls += KEYS.length;
      elapsed = Number(process.hrtime.bigint() - start);
    }
    best = Math.min(best, elapsed / calls);
  }
  return best;
}

function heapMB(build: () => unknown): { value: unknown; mb: number } {
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const value = build();
  gc?.();
  return { value, mb: (process.memoryUsage().heapUsed - before) / 2 ** 20 };
}

/** The seed write-ups' ring: md5 positions (first 48 bits), sorted array, binary search. */
class Md5Ring {
  readonly #points: Float64Array;
  readonly #owners: string[];
  constructor(nodes: readonly string[], vnodes: number) {
    const pts = nodes.flatMap((n) => Array.from({ length: vnodes }, (_, i) => [Md5Ring.hash(`${n}#${i}`), n] as const));
    pts.sort((a, b) => a[0] - b[0]);
    this.#points = Float64Array.from(pts, (p) => p[0]);
    this.#owners = pts.map((p) => p[1]);
  }
  static hash(s: string): number {
    return createHash('md5').update(s).digest().readUIntBE(0, 6);
  }
  owner(h: number): number {
    const p = this.#points;
    let lo = 0;
    let hi = p.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (p[mid]! < h) lo = mid + 1;
      else hi = mid;
    }
    return lo === p.length ? 0 : lo;
  }
  replicas(key: string, n: number): string[] {
    const out: string[] = [];
    for (
      let i = this.owner(Md5Ring.hash(key)), s = 0;
      out.length < n && s < this.#owners.length;
      s++, i = (i + 1) % this.#owners.length
    ) {
      const o = this.#owners[i]!;
      if (!out.includes(o)) out.push(o);
    }
    return out;
  }
}

const results: string[] = [];
const say = (line = ''): void => {
  console.log(line);
  results.push(line);
};

say(`ringkv bench:ring — ${new Date().toISOString()} — node ${process.version}${quick ? ' — quick' : ''}`);
say('balance = busiest node’s ownership ÷ its fair share (primary: n = 1; replicated: n = 3 over 3 equal zones)');
say();

const lookupRows: string[][] = [
  [
    'nodes',
    'ringkv ns',
    'hashring ns',
    'md5 ring ns',
    'vs hashring',
    'vs md5',
    'build ms',
    'table ms',
    'rebuild ms',
    'heap MB',
  ],
];
const balanceRows: string[][] = [
  ['nodes', 'default p / r', 'random 1', 'random 16', 'random 64', 'random 256', '+10 joins', '+5 leaves', 'ms/join'],
];

for (const size of onlyAlternatives ? [] : [12, 99, 999]) {
  const members = cluster(size);
  let t = performance.now();
  const { value, mb } = heapMB(() => {
    const r = claimRing(members, N);
    t = performance.now() - t;
    const t2 = performance.now();
    r.preferenceList('warm', 3); // computes the n = 3 table
    return { ring: r, tableMs: performance.now() - t2 };
  });
  const { ring, tableMs } = value as { ring: Ring; tableMs: number };
  const buildMs = t;
  // What a node does when gossip changes the member table: build from the tokens everyone
  // already has, then the n = 3 table.
  const given = ring.members.map((m) => ({ id: m.id, zone: m.zone, tokens: m.tokens }));
  const t0 = performance.now();
  Ring.build(given).preferenceList('warm', 3);
  const rebuildMs = performance.now() - t0;

  const hr = new HashRing(members.map((m) => m.id));
  const md5 = new Md5Ring(
    members.map((m) => m.id),
    256,
  );
  const ours = nsPerLookup((k) => ring.preferenceList(k, 3));
  const theirs = nsPerLookup((k) => hr.range(k, 3, true) as string[]);
  const plain = nsPerLookup((k) => md5.replicas(k, 3));
  lookupRows.push([
    String(size),
    ours.toFixed(0),
    theirs.toFixed(0),
    plain.toFixed(0),
    `${(theirs / ours).toFixed(1)}×`,
    `${(plain / ours).toFixed(1)}×`,
    buildMs.toFixed(0),
    tableMs.toFixed(0),
    rebuildMs.toFixed(0),
    mb.toFixed(1),
  ]);

  const def = busiest(ring);
  const random = [1, 16, 64, 256].map((tokensPerNode) => {
    const b = busiest(claimRing(members, N, { allocation: 'random', tokensPerNode }));
    return `${f3(b.primary)} / ${f3(b.replicated)}`;
  });
  let joined = ring;
  let joinMs = Number.NaN;
  let afterJoins = '-';
  let afterLeaves = '-';
  if (!(quick && size > 100)) {
    const t0 = performance.now();
    for (let j = 0; j < 10; j++) joined = joinRing(joined, { id: `j${j}`, zone: ['a', 'b', 'c'][j % 3] }, N);
    joinMs = (performance.now() - t0) / 10;
    const bj = busiest(joined);
    afterJoins = `${f3(bj.primary)} / ${f3(bj.replicated)}`;
    let left = joined;
    for (const id of leavers(joined, 5, 1)) left = leaveRing(left, id, N);
    const bl = busiest(left);
    afterLeaves = `${f3(bl.primary)} / ${f3(bl.replicated)}`;
  }
  balanceRows.push([
    String(size),
    `${f3(def.primary)} / ${f3(def.replicated)}`,
    ...random,
    afterJoins,
    afterLeaves,
    Number.isNaN(joinMs) ? '-' : joinMs.toFixed(0),
  ]);
}

if (!onlyAlternatives)
  say(
    'Lookup: preferenceList(key, 3) incl. hashing "user:NNNNNN"; hashring.range(key, 3) (ketama, 160 points per node);',
  );
if (!onlyAlternatives)
  say(
    'md5 ring: 256 vnodes per node, sorted array, 3 distinct nodes clockwise. build = claimRing allocating all tokens;',
  );
if (!onlyAlternatives)
  say(
    'table = first lookup (computes the n = 3 lists); rebuild = Ring.build from given tokens + table, as on a gossip change.',
  );
if (!onlyAlternatives) say(table(lookupRows));
say();
if (!onlyAlternatives)
  say('Balance, primary / replicated (targets: ≤ 1.05 default and after joins; ≤ 1.10 after leaves).');
if (!onlyAlternatives)
  say(
    'random N = hash-derived tokens, N per node. Joins: 10 nodes j0..j9 round-robin over zones; leaves: 5 nodes picked with seed 1.',
  );
if (!onlyAlternatives) say(table(balanceRows));
say();

// A cluster formed by starting nodes one at a time, without zones: the replicated figure
// depends on the join allocator modelling the walk (join-replicated.ts, Replicated).
if (!onlyAlternatives) {
  const rows: string[][] = [['tokens per node', 'worst p / r, 4–12 nodes', 'at 12 nodes', 'shortest range', 'ms/join']];
  for (const tokensPerNode of [16, 64, 256]) {
    let ring = claimRing([{ id: 'n0000' }], N, { tokensPerNode });
    let worst = { primary: 0, replicated: 0 };
    let shortest = Infinity;
    const t0 = performance.now();
    for (const m of cluster(12, 1).slice(1)) {
      ring = joinRing(ring, { id: m.id }, N);
      shortest = Math.min(shortest, shortestRange(ring));
      if (ring.size < 4) continue;
      const b = busiest(ring);
      worst = { primary: Math.max(worst.primary, b.primary), replicated: Math.max(worst.replicated, b.replicated) };
    }
    const ms = (performance.now() - t0) / 11;
    const last = busiest(ring);
    rows.push([
      String(tokensPerNode),
      `${f3(worst.primary)} / ${f3(worst.replicated)}`,
      `${f3(last.primary)} / ${f3(last.replicated)}`,
      `${f3(shortest)} of a fair token`,
      ms.toFixed(0),
    ]);
  }
  say('Grown one node at a time from 1 to 12, no zones (n = 3 by the plain walk; target ≤ 1.05 at every step):');
  say(table(rows));
  say();
}

// Leaves are the noisiest figure: the worst over several random choices of 5 leavers.
if (!onlyAlternatives) {
  const rows: string[][] = [
    ['ring', 'leave sets', 'median p / r', 'worst p / r', 'tokens dropped: median', 'worst', 'ms/leave'],
  ];
  const shapes: [string, number, number][] = quick
    ? [
        ['12, 3 zones', 12, 20],
        ['12 grown, no zones', 12, 20],
      ]
    : [
        ['12, 3 zones', 12, 20],
        ['99, 3 zones', 99, 10],
        ['12 grown, no zones', 12, 20],
      ];
  for (const [label, size, sets] of shapes) {
    let ring: Ring;
    if (label.includes('grown')) {
      ring = claimRing([{ id: 'n0000' }], N);
      for (const m of cluster(size, 1).slice(1)) ring = joinRing(ring, { id: m.id }, N);
    } else {
      ring = claimRing(cluster(size), N);
    }
    const zoned = !label.includes('no zones');
    for (let j = 0; j < 10; j++)
      ring = joinRing(ring, { id: `j${j}`, ...(zoned ? { zone: ['a', 'b', 'c'][j % 3] } : {}) }, N);
    const got: { primary: number; replicated: number }[] = [];
    const dropped: { primary: number; replicated: number }[] = [];
    let ms = 0;
    for (let seed = 1; seed <= sets; seed++) {
      let left = ring;
      let plain = ring;
      for (const id of leavers(ring, 5, seed)) {
        const t0 = performance.now();
        left = leaveRing(left, id, N);
        ms += performance.now() - t0;
        plain = plain.withoutMember(id);
      }
      got.push(busiest(left));
      dropped.push(busiest(plain));
    }
    const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const pr = (xs: { primary: number; replicated: number }[], f: (v: number[]) => number) =>
      `${f3(f(xs.map((g) => g.primary)))} / ${f3(f(xs.map((g) => g.replicated)))}`;
    const worst = (v: number[]) => Math.max(...v);
    rows.push([
      label,
      String(sets),
      pr(got, med),
      pr(got, worst),
      pr(dropped, med),
      pr(dropped, worst),
      (ms / sets / 5).toFixed(0),
    ]);
  }
  say(
    'After 10 joins then 5 leaves, over random leave sets (seeds 1..K); each leave hands its tokens to heirs chosen for',
  );
  say('balance (leaveRing; target ≤ 1.10), against dropping them (withoutMember: their ranges go to whoever follows):');
  say(table(rows));
  say();
}

// Keys moved when an 11th node joins 10 (3 zones), against the ideal 1/11.
if (!onlyAlternatives) {
  const ten = claimRing(cluster(10), N);
  const eleven = joinRing(ten, { id: 'n0010', zone: 'b' }, N);
  const primary = moved(ten, eleven, 1);
  const replicated = moved(ten, eleven, 3);
  const sample = 1_000_000;
  const key = (i: number) => `user:${i}`;
  let sampled = 0;
  for (let i = 0; i < sample; i++)
    if (ten.preferenceList(key(i), 1)[0] !== eleven.preferenceList(key(i), 1)[0]) sampled++;
  const names = cluster(10).map((m) => m.id);
  const hr10 = new HashRing(names);
  const hr11 = new HashRing([...names, 'n0010']);
  let hrMoved = 0;
  for (let i = 0; i < sample; i++) if (hr10.range(key(i), 1)[0] !== hr11.range(key(i), 1)[0]) hrMoved++;
  const md10 = new Md5Ring(names, 256);
  const md11 = new Md5Ring([...names, 'n0010'], 256);
  let mdMoved = 0;
  for (let i = 0; i < sample; i++) if (md10.replicas(key(i), 1)[0] !== md11.replicas(key(i), 1)[0]) mdMoved++;
  say('Keys moved adding an 11th node to 10 (ideal 1/11 = 9.09% of keys change primary owner):');
  say(
    table([
      ['ring', 'moved', '÷ ideal'],
      ['ringkv (exact, from diff)', pct(primary), f3(primary * 11)],
      [`ringkv (${sample} keys)`, pct(sampled / sample), f3((sampled / sample) * 11)],
      ['ringkv replica sets, n = 3', pct(replicated), `${f3(replicated / (3 / 11))} of 3/11`],
      [`hashring (${sample} keys)`, pct(hrMoved / sample), f3((hrMoved / sample) * 11)],
      [`md5 ring (${sample} keys)`, pct(mdMoved / sample), f3((mdMoved / sample) * 11)],
    ]),
  );
}
say();

// The seed write-ups' alternatives, on the same key hash (bench/alternatives.ts).
{
  const sample = quick ? 100_000 : 500_000;
  const keys = Array.from({ length: sample }, (_, i) => `user:${i}`);
  /** Fraction of the sampled keys whose owner differs between two placements. */
  const movedKeys = (a: Placement, b: Placement): number => {
    let m = 0;
    for (const k of keys) if (a.owner(k) !== b.owner(k)) m++;
    return m / keys.length;
  };
  /** Busiest node's sampled keys ÷ the mean. */
  const busiestOf = (p: Placement, nodes: number): number => {
    const count = new Map<string, number>();
    for (const k of keys) count.set(p.owner(k), (count.get(p.owner(k)) ?? 0) + 1);
    return Math.max(...count.values()) / (keys.length / nodes);
  };
  const ringOf = (r: Ring): Placement => ({
    name: 'ringkv ring',
    owner: (k) => r.preferenceList(k, 1)[0]!,
    replicas: (k, n) => r.preferenceList(k, n),
  });

  /** Fraction of the sampled keys whose set of n replicas differs between two placements. */
  const movedSets = (a: Placement, b: Placement, n: number): number => {
    let m = 0;
    for (const k of keys) {
      const x = a.replicas!(k, n);
      const y = b.replicas!(k, n);
      if (x.some((id) => !y.includes(id))) m++;
    }
    return m / keys.length;
  };

  // Hash-derived points per node at 10 servers, as the seed write-ups count them (one run
  // of theirs: 1 point leaves the busiest over 3× the mean and another almost idle; 100
  // points 0.86 to 1.17; 1,000 points 0.93 to 1.05), against tokens the ring allocates.
  {
    const rows: string[][] = [
      ['tokens per node', 'hash-derived: busiest ÷ mean', 'idlest ÷ mean', 'allocated (ringkv): busiest', 'idlest'],
    ];
    for (const v of [1, 10, 100, 1000]) {
      const spread = (r: Ring) => {
        const shares = [...r.ownership(1).values()].map((x) => x * r.size);
        return [f3(Math.max(...shares)), f3(Math.min(...shares))];
      };
      rows.push([
        String(v),
        ...spread(claimRing(cluster(10, 1), N, { allocation: 'random', tokensPerNode: v })),
        ...spread(claimRing(cluster(10, 1), N, { tokensPerNode: v })),
      ]);
    }
    say('Primary ownership of 10 servers, no zones (exact shares of the token space, not sampled):');
    say(table(rows));
    say();
  }

  // Who takes the keys of a server that leaves 10 (the seed write-ups: with one point per
  // node a single neighbour absorbs them all, and may fail in turn; vnodes spread them).
  {
    const rows: string[][] = [
      ['ring', 'nodes taking its keys', 'largest take ÷ its keys', 'busiest after ÷ fair', 'replicated (n = 3)'],
    ];
    const gone = 'n0005';
    const shapes: [string, Ring, (r: Ring) => Ring][] = [
      [
        'hash-derived, 1 token per node, dropped',
        claimRing(cluster(10, 1), N, { allocation: 'random', tokensPerNode: 1 }),
        (r) => r.withoutMember(gone),
      ],
      [
        'hash-derived, 100 tokens per node, dropped',
        claimRing(cluster(10, 1), N, { allocation: 'random', tokensPerNode: 100 }),
        (r) => r.withoutMember(gone),
      ],
      [
        'ringkv, 1 token per node, heirs',
        claimRing(cluster(10, 1), N, { tokensPerNode: 1 }),
        (r) => leaveRing(r, gone, N),
      ],
      ['ringkv, 64 tokens per node, heirs', claimRing(cluster(10, 1), N), (r) => leaveRing(r, gone, N)],
    ];
    for (const [label, before, leave] of shapes) {
      const after = leave(before);
      const takes = new Map<string, number>();
      for (const c of Ring.diff(before, after, 1))
        takes.set(c.after[0]!, (takes.get(c.after[0]!) ?? 0) + arcFraction(c.start, c.end));
      const its = before.ownership(1).get(gone)!;
      rows.push([
        label,
        String(takes.size),
        f3(Math.max(...takes.values()) / its),
        f3(busiest(after).primary),
        f3(busiest(after).replicated),
      ]);
    }
    say(
      `Server ${gone} leaves 10, no zones: its primary ranges go to the next tokens' owners (dropped) or to heirs chosen for balance:`,
    );
    say(table(rows));
    say();
  }

  // Modulo against the ring when one server joins or leaves (the seed write-ups: 4 → 5 moves ~80%, 100 → 101 ~99%,
  // 10 → 11 ~90% against ~9%; adding or removing one of 5 moves ~20% on a ring, ~80% with modulo).
  {
    const rows: string[][] = [['servers', 'modulo moved', 'ringkv moved', 'ideal']];
    for (const [from, to] of [
      [4, 5],
      [5, 6],
      [10, 11],
      [100, 101],
      [5, 4],
      [11, 10],
      [101, 100],
    ] as const) {
      const names = cluster(Math.max(from, to)).map((m) => m.id);
      const before = claimRing(cluster(from), N);
      const after = to > from ? joinRing(before, cluster(to)[from]!, N) : leaveRing(before, names[to]!, N);
      const moduloMoved = movedKeys(new Modulo(names.slice(0, from)), new Modulo(names.slice(0, to)));
      rows.push([
        `${from} → ${to}`,
        pct(moduloMoved),
        pct(movedKeys(ringOf(before), ringOf(after))),
        pct(1 / Math.max(from, to)),
      ]);
    }
    say(
      `Keys whose owner changes when one server joins or leaves, the last one (${sample} keys; ideal 1/(N+1) on a join, 1/N on a leave):`,
    );
    say(table(rows));
    say();
  }

  for (const n of [10, 100]) {
    const members = cluster(n + 1);
    const names = members.map((m) => m.id);
    const base = names.slice(0, n);
    const middle = base[Math.floor(n / 2)]!;
    const withoutMiddle = base.filter((x) => x !== middle);
    const ring = claimRing(members.slice(0, n), N);
    type Scheme = { make: (nodes: readonly string[]) => Placement; leaveLast?: boolean; note: string };
    const schemes: [string, Scheme][] = [
      ['ringkv ring', { make: () => ringOf(ring), note: 'zone-aware n = 3; 64 tokens per node' }],
      ['modulo', { make: (ns) => new Modulo(ns), note: 'n = 3: the next indexes' }],
      ['rendezvous', { make: (ns) => new Rendezvous(ns), note: 'O(N) a lookup; n = 3: the top 3 scores' }],
      ['jump', { make: (ns) => new Jump(ns), leaveLast: true, note: 'only the last node can leave; no replica sets' }],
      ['maglev', { make: (ns) => new Maglev(ns), note: 'a prime table of ≥ 100 N slots; no replica sets' }],
      [
        'bounded loads, ε = 0.25',
        {
          make: (ns) => new BoundedLoads(ns, keys, 0.25),
          note: 'an assignment of a known key set, not a function of the key',
        },
      ],
    ];
    const rows: string[][] = [
      [
        'scheme',
        'ns owner',
        'ns n = 3',
        'busiest ÷ mean',
        'join moved',
        '÷ ideal',
        'leave moved',
        '÷ ideal',
        'n = 3 sets changed on join',
        'heap MB',
        '',
      ],
    ];
    for (const [name, sch] of schemes) {
      const { value, mb } = heapMB(() => sch.make(base));
      const p = value as Placement;
      // The ring joins and leaves through its own operations (the leaver's tokens go to heirs).
      const ours = name === 'ringkv ring';
      const joined = ours ? ringOf(joinRing(ring, members[n]!, N)) : sch.make(names);
      const left = ours
        ? ringOf(leaveRing(ring, middle, N))
        : sch.make(sch.leaveLast ? base.slice(0, -1) : withoutMiddle);
      const j = movedKeys(p, joined);
      const l = movedKeys(p, left);
      // Replica sets that change on a join: at least 3/(N+1) (the newcomer's share of 3 replicas).
      const sets = p.replicas ? movedSets(p, joined, 3) : Number.NaN;
      const ownerNs = name.startsWith('bounded') ? Number.NaN : nsPerLookup((k) => p.owner(k));
      const replicasNs = p.replicas ? nsPerLookup((k) => p.replicas!(k, 3)) : Number.NaN;
      rows.push([
        name,
        Number.isNaN(ownerNs) ? '-' : ownerNs.toFixed(0),
        Number.isNaN(replicasNs) ? '-' : replicasNs.toFixed(0),
        f3(busiestOf(p, n)),
        pct(j),
        f3(j * (n + 1)),
        pct(l),
        f3(l * n),
        Number.isNaN(sets) ? '-' : `${pct(sets)} (${f3(sets / (3 / (n + 1)))}×)`,
        mb.toFixed(1),
        sch.note,
      ]);
    }
    say(
      `The alternatives at N = ${n} (${sample} keys; join: one node more; leave: node ${middle}, for jump the last node;`,
    );
    say(
      'ideal moves: 1/(N+1) on a join, 1/N on a leave, 3/(N+1) of n = 3 sets; busiest ÷ mean has a sampling floor, near modulo’s figure):',
    );
    say(table(rows));
    say();
  }
}
if (sink === 42) console.log(''); // keep the lookups observable
