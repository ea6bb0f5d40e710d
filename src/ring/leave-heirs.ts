/**
 * Who inherits a leaving node's tokens, so that the ring stays balanced after it leaves.
 *
 * A leave that simply drops the leaver's tokens hands each of its ranges to the owner of
 * the next token and each replica to the next node the walk picks: whoever happens to
 * follow. The join allocator (join-tokens.ts) chooses tokens so that those heirs are
 * spread evenly, but only on average, so a few leaves can still tip the ring off balance.
 * Riak's claim instead reassigns a leaver's partitions to chosen nodes.
 * ringkv does the same with tokens: every token of the leaver keeps its place on the ring
 * and is handed to a heir chosen for balance. Nobody else's tokens move, and the data that
 * moves is exactly what a plain leave moves: each range the leaver replicated gains one
 * replica. The balance this keeps, against dropping the tokens, is in
 * docs/ring.md#known-limits-of-the-ring.
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
import type { Ring, RingMember } from './ring.js';
import { arcFraction } from './tokens.js';

/**
 * Weight of primary ownership against replicated. Replicated ownership is the load (each
 * replica stores and serves its keys); primary decides little (which replica issues a
 * put's version). With at least N zones replicated is the share of the zone's own ring,
 * and balancing it alone leaves primary far from fair; a quarter weight keeps both within
 * a few percent (docs/benchmarks.md#tuning-the-hash-and-the-claims).
 */
const PRIMARY_WEIGHT = 0.25;
const IMPROVING_PASSES = 2;
/** No member: a leaver's position before the plain leave gives it an owner, an empty slot of `kept`, no pick yet. */
const NONE = 0xffffffff;

/**
 * The heir of each of `id`'s tokens (a member other than `id`), for a cluster of N =
 * `replicas`. `id` must be a member and not the only one, `replicas` an integer ≥ 1
 * (claim.ts checks both).
 */
export function chooseHeirs(ring: Ring, id: string, replicas: number): Map<bigint, string> {
  const others = ring.members.filter((m) => m.id !== id);
  const tokens = ring.tokens;
  const search = startSearch(ring, others, ring.member(id)!, replicas);
  const { owner, mine, length } = search;
  const positions = [...tokens.keys()].filter((i) => mine[i]).sort((x, y) => length[y]! - length[x]! || x - y);
  for (const i of positions) trial(search, i, best(search, i), true);
  for (let pass = 0; pass < IMPROVING_PASSES; pass++) {
    let moved = false;
    for (const i of positions) {
      const h = best(search, i);
      if (h !== owner[i]) {
        trial(search, i, h, true);
        moved = true;
      }
    }
    if (!moved) break;
  }
  return new Map(positions.map((i) => [tokens[i]!, others[owner[i]!]!.id]));
}

/** The position after i on a ring of m positions. */
function nextPosition(i: number, m: number): number {
  return i + 1 === m ? 0 : i + 1;
}

/** The position before i on a ring of m positions. */
function prevPosition(i: number, m: number): number {
  return i === 0 ? m - 1 : i - 1;
}

/**
 * The state of the heir search over the ring's m positions, the stayers (`others`)
 * numbered by their index. Trials change owner, mine, the replica tables, the totals and
 * maxReach; between trials dP and dR are all zero.
 */
interface HeirSearch {
  readonly m: number;
  /** The replicas per range, at most the stayers. */
  readonly n: number;
  /** owner[i]: the member at position i; mine[i]: i is one of the leaver's positions not yet handed over. */
  readonly owner: Uint32Array;
  readonly mine: Uint8Array;
  /** length[i]: the ring fraction of the range ending at position i. */
  readonly length: Float64Array;
  readonly fairPrimary: Float64Array;
  readonly fairReplicated: Float64Array;
  readonly selector: ReplicaSelector;
  /** table[j·n .. j·n + n − 1]: the replicas of range j; reach[j]: how far its walk went. */
  readonly table: Uint32Array;
  readonly reach: Uint32Array;
  /** The farthest any walk went. */
  maxReach: number;
  /** Each stayer's primary and replicated ownership. */
  readonly primary: Float64Array;
  readonly replicated: Float64Array;
  /** The replicas each range had with the leaver, the leaver left out (NONE after them). */
  readonly kept: Uint32Array;
  readonly candidates: readonly number[];
  // Scratch for one trial: the ownership changes, and the members they touch.
  readonly dP: Float64Array;
  readonly dR: Float64Array;
  readonly touched: number[];
}

/** The search at its start: the ring as a plain leave leaves it, with its replica tables and totals. */
function startSearch(ring: Ring, others: readonly RingMember[], leaver: RingMember, replicas: number): HeirSearch {
  const n = Math.min(replicas, others.length);
  const tokens = ring.tokens;
  const m = tokens.length;
  const { owner, mine, ownerOf } = plainLeaveOwners(tokens, others);
  const length = Float64Array.from(tokens, (t, i) => arcFraction(tokens[prevPosition(i, m)]!, t));
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
  const tables = replicaTables(selector, owner, length, n, others.length);
  const kept = keptReplicas(tokens, ownerOf, others, leaver, replicas, n);
  const candidates = others.map((_, v) => v);
  return {
    m,
    n,
    owner,
    mine,
    length,
    fairPrimary,
    fairReplicated,
    selector,
    ...tables,
    kept,
    candidates,
    dP: new Float64Array(others.length),
    dR: new Float64Array(others.length),
    touched: [],
  };
}

/**
 * Each position's owner among `others` (by index), as a plain leave leaves the ring: the
 * leaver's positions are marked in `mine` and take the owner of the next other position.
 */
function plainLeaveOwners(
  tokens: readonly bigint[],
  others: readonly RingMember[],
): { owner: Uint32Array; mine: Uint8Array; ownerOf: Map<bigint, number> } {
  const m = tokens.length;
  const owner = new Uint32Array(m);
  const mine = new Uint8Array(m);
  const ownerOf = new Map<bigint, number>();
  others.forEach((mem, v) => mem.tokens.forEach((t) => ownerOf.set(t, v)));
  tokens.forEach((t, i) => {
    const v = ownerOf.get(t);
    if (v === undefined) ((mine[i] = 1), (owner[i] = NONE));
    else owner[i] = v;
  });
  // Unassigned positions take the owner of the next assigned one: the ring without them.
  for (let i = 0; i < m; i++) {
    if (!mine[i]) continue;
    let j = i;
    while (mine[j]) j = nextPosition(j, m);
    owner[i] = owner[j]!;
  }
  return { owner, mine, ownerOf };
}

/** The replicas and walk reach of every range under `owner`, and each member's primary and replicated ownership. */
function replicaTables(
  selector: ReplicaSelector,
  owner: Uint32Array,
  length: Float64Array,
  n: number,
  members: number,
): Pick<HeirSearch, 'table' | 'reach' | 'maxReach' | 'primary' | 'replicated'> {
  const m = owner.length;
  const table = new Uint32Array(m * n);
  const reach = new Uint32Array(m);
  const primary = new Float64Array(members);
  const replicated = new Float64Array(members);
  let maxReach = 1;
  for (let j = 0; j < m; j++) {
    table.set(selector.select(owner, j, n), j * n);
    reach[j] = selector.reach;
    maxReach = Math.max(maxReach, selector.reach);
    primary[owner[j]!]! += length[j]!;
    for (let k = j * n; k < j * n + n; k++) replicated[table[k]!]! += length[j]!;
  }
  return { table, reach, maxReach, primary, replicated };
}

/**
 * The replicas each range had with the leaver, the leaver left out (n a row, NONE after
 * them): a heir may be chosen only where every one of them keeps the range (else a
 * stayer would lose data it holds and two nodes would gain it, as when two heirs of
 * adjacent tokens fill one walk).
 */
function keptReplicas(
  tokens: readonly bigint[],
  ownerOf: Map<bigint, number>,
  others: readonly RingMember[],
  leaver: RingMember,
  replicas: number,
  n: number,
): Uint32Array {
  const m = tokens.length;
  const kept = new Uint32Array(m * n).fill(NONE);
  const me = others.length;
  const withLeaver = Uint32Array.from(tokens, (t) => ownerOf.get(t) ?? me);
  const all = new ReplicaSelector(
    topologyOf([...others.map((x) => x.zone), leaver.zone], [...others.map((x) => x.rack), leaver.rack]),
  );
  const nAll = Math.min(replicas, others.length + 1);
  for (let j = 0; j < m; j++) {
    let k = j * n;
    for (const v of all.select(withLeaver, j, nAll)) if (v !== me) kept[k++] = v;
  }
  return kept;
}

/** Does `row`, as the replicas of range j, hold every replica range j keeps from before the leave? */
function keeps(s: HeirSearch, j: number, row: ArrayLike<number>): boolean {
  const { n, kept } = s;
  for (let k = j * n; k < j * n + n && kept[k] !== NONE; k++)
    if (!Array.prototype.includes.call(row, kept[k])) return false;
  return true;
}

/** Member v's share of the cost with primary ownership p and replicated ownership r. */
function cost(s: HeirSearch, v: number, p: number, r: number): number {
  return PRIMARY_WEIGHT * (p / s.fairPrimary[v]! - 1) ** 2 + (r / s.fairReplicated[v]! - 1) ** 2;
}

/** Adds member v to the members the trial touches. */
function touch(touched: number[], v: number): void {
  if (!touched.includes(v)) touched.push(v);
}

/**
 * Give position i (and the unassigned positions just before it, which follow it) to
 * member h. Returns the cost change; keeps the change only with `commit`.
 */
function trial(s: HeirSearch, i: number, h: number, commit: boolean): number {
  const { m, n, owner, mine, length, selector, table, reach, primary, replicated, dP, dR, touched } = s;
  let a = i;
  while (mine[prevPosition(a, m)] && prevPosition(a, m) !== i) a = prevPosition(a, m);
  const span = (i - a + m) % m; // positions a..i change owner
  const saved: number[] = [];
  for (let k = 0, p = a; k <= span; k++, p = nextPosition(p, m)) (saved.push(owner[p]!), (owner[p] = h));
  touched.length = 0;
  // Ranges whose walk reached position a or later: at most maxReach back from a.
  const back = Math.min(m - 1 - span, s.maxReach - 1);
  const rows: { j: number; row: number[]; reach: number }[] = [];
  let allowed = true;
  for (let d = back; d >= -span; d--) {
    const j = (a - d + m) % m;
    if (d > 0 && reach[j]! <= d) continue; // stopped before a
    const row = selector.select(owner, j, n);
    rows.push({ j, row, reach: selector.reach });
    if (!keeps(s, j, row) && keeps(s, j, table.subarray(j * n, j * n + n))) allowed = false;
    const len = length[j]!;
    const oldOwner = d > 0 ? owner[j]! : saved[-d]!;
    if (oldOwner !== row[0])
      (touch(touched, oldOwner), touch(touched, row[0]!), (dP[oldOwner]! -= len), (dP[row[0]!]! += len));
    for (let k = j * n; k < j * n + n; k++) (touch(touched, table[k]!), (dR[table[k]!]! -= len));
    for (const v of row) (touch(touched, v), (dR[v]! += len));
  }
  let delta = allowed ? 0 : Infinity;
  for (const v of touched)
    delta += cost(s, v, primary[v]! + dP[v]!, replicated[v]! + dR[v]!) - cost(s, v, primary[v]!, replicated[v]!);
  if (commit) {
    for (const v of touched) ((primary[v]! += dP[v]!), (replicated[v]! += dR[v]!));
    for (const { j, row, reach: r } of rows)
      (table.set(row, j * n), (reach[j] = r), (s.maxReach = Math.max(s.maxReach, r)));
    mine[i] = 0;
  } else {
    for (let k = 0, p = a; k <= span; k++, p = nextPosition(p, m)) owner[p] = saved[k]!;
  }
  for (const v of touched) ((dP[v] = 0), (dR[v] = 0));
  return delta;
}

/** The candidate for position i that lowers the cost most; a position already handed over keeps its heir on a tie. */
function best(s: HeirSearch, i: number): number {
  const { owner, mine } = s;
  let pick = mine[i] ? NONE : owner[i]!;
  let lowest = mine[i] ? Infinity : 0;
  for (const h of s.candidates) {
    if (h === pick) continue;
    const delta = trial(s, i, h, false);
    if (delta < lowest - 1e-15) ((lowest = delta), (pick = h));
  }
  return pick;
}
