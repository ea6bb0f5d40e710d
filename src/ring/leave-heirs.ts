/**
 * Who inherits a leaving node's tokens, so that the ring stays balanced after it leaves.
 *
 * A leave that simply drops the leaver's tokens hands each of its ranges to the owner of
 * the next token and each replica to the next node the walk picks: whoever happens to
 * follow. The join allocator (join-tokens.ts) chooses tokens so that those heirs are
 * spread evenly, but only on average: five random leaves from 12 nodes grown without
 * zones ended at up to 1.105× fair replicated ownership, and rings grown from one node
 * at up to 1.22×. Riak's claim instead reassigns a leaver's partitions to chosen nodes.
 * ringkv does the same with tokens: every token of the leaver keeps its place on the ring
 * and is handed to a heir chosen for balance. Nobody else's tokens move, and the data that
 * moves is exactly what a plain leave moves: each range the leaver replicated gains one
 * replica. After 10 joins to 12 nodes and 5 leaves, 20 leave sets: 1.014× fair at worst
 * with 3 zones (1.143× dropping tokens), 1.037× without zones (1.153×).
 *
 * The choice (greedy, then improving passes):
 * - A heir may be any member, provided every node that replicated a range with the
 *   leaver still replicates it afterwards: then each range the leaver held gains exactly
 *   one replica and no stayer loses one, as when the tokens are dropped. (With N zones
 *   that allows the leaver's zone and the range's existing replicas; two different heirs
 *   of adjacent tokens that would share one walk are refused.)
 * - A token not yet handed to anyone behaves exactly as if dropped: its position is given
 *   to the owner of the next token that is not an unassigned token of the leaver, which
 *   gives the same replica walks as the ring without it. So the search starts from the
 *   plain leave and can only improve on it.
 * - Tokens are taken longest range first; each goes to the candidate that lowers
 *   Σ_v (replicated_v / fair_v − 1)² + PRIMARY_WEIGHT · Σ_v (primary_v / fair_v − 1)² most
 *   (N replicas, the caller's N, as for joins). Then each token in turn may move
 *   to another candidate while that lowers the cost (IMPROVING_PASSES passes).
 * - Handing a position to another owner changes only the ranges whose replica walk
 *   reaches that position; the selector reports how far each walk went, so each trial
 *   recomputes a few ranges, not the ring (a 99-node ring leave takes milliseconds).
 *
 * Must not: validate input (claim.ts does), build rings (claim.ts), or do I/O. Deterministic: the same ring gives
 * the same heirs on every node.
 */

import { fairSharesOf } from './balance.js';
import { ReplicaSelector, topologyOf } from './placement.js';
import type { Ring } from './ring.js';
import { arcFraction } from './tokens.js';

/**
 * Weight of primary ownership against replicated. Replicated ownership is the load (each
 * replica stores and serves its keys); primary decides little (which replica issues a
 * put's version). With at least N zones replicated is the share of the zone's own ring,
 * and balancing it alone left primary up to 1.8× fair in trials; a quarter weight keeps
 * both within a few percent.
 */
const PRIMARY_WEIGHT = 0.25;
const IMPROVING_PASSES = 2;

/**
 * The heir of each of `id`'s tokens (a member other than `id`), for a cluster of N =
 * `replicas`. `id` must be a member and not the only one, `replicas` an integer ≥ 1
 * (claim.ts checks both).
 */
export function chooseHeirs(ring: Ring, id: string, replicas: number): Map<bigint, string> {
  const others = ring.members.filter((m) => m.id !== id);
  const leaver = ring.member(id)!;
  const n = Math.min(replicas, others.length);
  const tokens = ring.tokens;
  const m = tokens.length;
  const NONE = 0xffffffff;
  // owner[i]: the member at position i; mine[i]: i is one of the leaver's positions not yet handed over.
  const owner = new Uint32Array(m);
  const mine = new Uint8Array(m);
  const ownerOf = new Map<bigint, number>();
  others.forEach((mem, v) => mem.tokens.forEach((t) => ownerOf.set(t, v)));
  tokens.forEach((t, i) => {
    const v = ownerOf.get(t);
    if (v === undefined) ((mine[i] = 1), (owner[i] = NONE));
    else owner[i] = v;
  });
  const next = (i: number): number => (i + 1 === m ? 0 : i + 1);
  const prev = (i: number): number => (i === 0 ? m - 1 : i - 1);
  // Unassigned positions take the owner of the next assigned one: the ring without them.
  for (let i = 0; i < m; i++) {
    if (!mine[i]) continue;
    let j = i;
    while (mine[j]) j = next(j);
    owner[i] = owner[j]!;
  }
  const length = Float64Array.from(tokens, (t, i) => arcFraction(tokens[prev(i)]!, t));
  const zones = others.map((x) => x.zone);
  const weights = others.map((x) => x.weight);
  const fairPrimary = fairSharesOf(zones, weights, 1);
  const fairReplicated = fairSharesOf(zones, weights, n);
  const selector = new ReplicaSelector(
    topologyOf(
      zones,
      others.map((x) => x.rack),
    ),
  );
  const table = new Uint32Array(m * n);
  const reach = new Uint32Array(m);
  const primary = new Float64Array(others.length);
  const replicated = new Float64Array(others.length);
  let maxReach = 1;
  for (let j = 0; j < m; j++) {
    table.set(selector.select(owner, j, n), j * n);
    reach[j] = selector.reach;
    maxReach = Math.max(maxReach, selector.reach);
    primary[owner[j]!]! += length[j]!;
    for (let k = j * n; k < j * n + n; k++) replicated[table[k]!]! += length[j]!;
  }
  // The replicas each range had with the leaver, the leaver left out: a heir may be chosen
  // only where every one of them keeps the range (else a stayer would lose data it holds
  // and two nodes would gain it, as when two heirs of adjacent tokens fill one walk).
  const kept = new Uint32Array(m * n).fill(NONE);
  {
    const me = others.length;
    const withLeaver = Uint32Array.from(tokens, (t) => ownerOf.get(t) ?? me);
    const all = new ReplicaSelector(topologyOf([...zones, leaver.zone], [...others.map((x) => x.rack), leaver.rack]));
    const nAll = Math.min(replicas, others.length + 1);
    for (let j = 0; j < m; j++) {
      let k = j * n;
      for (const v of all.select(withLeaver, j, nAll)) if (v !== me) kept[k++] = v;
    }
  }
  const keeps = (j: number, row: ArrayLike<number>): boolean => {
    for (let k = j * n; k < j * n + n && kept[k] !== NONE; k++)
      if (!Array.prototype.includes.call(row, kept[k])) return false;
    return true;
  };
  const cost = (v: number, p: number, r: number): number =>
    PRIMARY_WEIGHT * (p / fairPrimary[v]! - 1) ** 2 + (r / fairReplicated[v]! - 1) ** 2;

  const candidates = others.map((_, v) => v);

  // Scratch for one trial: the changed ranges' new rows, and the members they touch.
  const dP = new Float64Array(others.length);
  const dR = new Float64Array(others.length);
  const touched: number[] = [];
  const touch = (v: number): void => {
    if (!touched.includes(v)) touched.push(v);
  };

  /**
   * Give position i (and the unassigned positions just before it, which follow it) to
   * member h. Returns the cost change; keeps the change only with `commit`.
   */
  const trial = (i: number, h: number, commit: boolean): number => {
    let a = i;
    while (mine[prev(a)] && prev(a) !== i) a = prev(a);
    const span = (i - a + m) % m; // positions a..i change owner
    const saved: number[] = [];
    for (let k = 0, p = a; k <= span; k++, p = next(p)) (saved.push(owner[p]!), (owner[p] = h));
    touched.length = 0;
    // Ranges whose walk reached position a or later: at most maxReach back from a.
    const back = Math.min(m - 1 - span, maxReach - 1);
    const rows: { j: number; row: number[]; reach: number }[] = [];
    let allowed = true;
    for (let d = back; d >= -span; d--) {
      const j = (a - d + m) % m;
      if (d > 0 && reach[j]! <= d) continue; // stopped before a
      const row = selector.select(owner, j, n);
      rows.push({ j, row, reach: selector.reach });
      if (!keeps(j, row) && keeps(j, table.subarray(j * n, j * n + n))) allowed = false;
      const len = length[j]!;
      const oldOwner = d > 0 ? owner[j]! : saved[-d]!;
      if (oldOwner !== row[0]) (touch(oldOwner), touch(row[0]!), (dP[oldOwner]! -= len), (dP[row[0]!]! += len));
      for (let k = j * n; k < j * n + n; k++) (touch(table[k]!), (dR[table[k]!]! -= len));
      for (const v of row) (touch(v), (dR[v]! += len));
    }
    let delta = allowed ? 0 : Infinity;
    for (const v of touched)
      delta += cost(v, primary[v]! + dP[v]!, replicated[v]! + dR[v]!) - cost(v, primary[v]!, replicated[v]!);
    if (commit) {
      for (const v of touched) ((primary[v]! += dP[v]!), (replicated[v]! += dR[v]!));
      for (const { j, row, reach: r } of rows)
        (table.set(row, j * n), (reach[j] = r), (maxReach = Math.max(maxReach, r)));
      mine[i] = 0;
    } else {
      for (let k = 0, p = a; k <= span; k++, p = next(p)) owner[p] = saved[k]!;
    }
    for (const v of touched) ((dP[v] = 0), (dR[v] = 0));
    return delta;
  };

  /** The candidate that lowers the cost most; a position already handed over keeps its heir on a tie. */
  const best = (i: number): number => {
    let pick = mine[i] ? NONE : owner[i]!;
    let lowest = mine[i] ? Infinity : 0;
    for (const h of candidates) {
      if (h === pick) continue;
      const delta = trial(i, h, false);
      if (delta < lowest - 1e-15) ((lowest = delta), (pick = h));
    }
    return pick;
  };

  const positions = [...tokens.keys()].filter((i) => mine[i]).sort((x, y) => length[y]! - length[x]! || x - y);
  for (const i of positions) trial(i, best(i), true);
  for (let pass = 0; pass < IMPROVING_PASSES; pass++) {
    let moved = false;
    for (const i of positions) {
      const h = best(i);
      if (h !== owner[i]) {
        trial(i, h, true);
        moved = true;
      }
    }
    if (!moved) break;
  }
  return new Map(positions.map((i) => [tokens[i]!, others[owner[i]!]!.id]));
}
