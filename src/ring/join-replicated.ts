/**
 * The join allocator's model of replicated ownership (join-tokens.ts) for rings with
 * fewer zones than N: what each node replicates under the placement rule's walk, and
 * what a new token of the newcomer takes of it, from whom.
 *
 * Owns: `Replicated` and the walk model it is built from (replica sets, losers,
 * regions). Must not: choose tokens (join-tokens.ts does), place replicas itself (it
 * walks with placement.ts's ReplicaSelector), or do I/O.
 */

import { fairSharesOf } from './balance.js';
import { ReplicaSelector, topologyOf } from './placement.js';

/** The most ranges before a new token whose replica sets it may change that are modelled, per replica. */
const REGION_PER_REPLICA = 8;

/**
 * Replicated ownership under the placement rule, walked by placement.ts's own
 * ReplicaSelector (zones and racks: the walk the ring places replicas with), for
 * rings with fewer zones than N, where the zone ring no longer says what a node
 * replicates. This is the model of Cassandra's ReplicationAwareTokenAllocator: a node
 * replicates a range when the rule picks it walking clockwise from the range, so a token
 * replicates its own range and the ranges before it back to its "replication start",
 * and a new token takes replicas from the owners of ranges up to N − 1 distinct owners
 * before it.
 *
 * S(s), the replica set of range s, is what the rule picks walking from token s. A token
 * of X inside range r (between tokens r − 1 and r) is met first by the walk of its own
 * part of range r, then by the walks of the ranges just before r that have not picked
 * all their replicas by token r − 1: its region. A range whose set gains X loses one
 * member, its loser (with no zones: the last of S(s)), whichever of X's tokens its walk
 * meets first. So what X's new tokens change is a coverage: a range in the region of a
 * new token is X's (to replicate) whole; a range split by a new token and in no region
 * is X's up to the split point. Each gain of X is its loser's loss. Regions may overlap:
 * coverage counts a range once, so the cost of a token is exact given the others.
 * That holds for the plain walk (one zone, one rack). With zones or racks it is an
 * estimate: a range's loser is the one X pushes out when met just after the range's own
 * token, and a range whose walk waits longer than 8N ranges (REGION_PER_REPLICA) for X's
 * zone or rack (X alone in it, say) is counted as X's wherever X's tokens go.
 */
export class Replicated {
  readonly share: Float64Array;
  readonly fair: Float64Array;
  readonly inv: Float64Array;
  /** Who loses range s if X comes to replicate it; -1 when nobody does (X has it already). */
  readonly #loser: Int32Array;
  readonly #len: Float64Array;
  /** The region of range r apart from r itself: #region[#at[r]] .. #region[#at[r + 1] − 1]. */
  readonly #at: Int32Array;
  readonly #region: Int32Array;
  /** How many new tokens' regions hold range s, and the split point of the new token in it (-1: none). */
  readonly #covers: Int32Array;
  readonly #split: Float64Array;
  readonly #ids: Int32Array;
  readonly #delta: Float64Array;

  constructor(
    readonly x: number,
    weight: Float64Array,
    zoneKeys: readonly string[],
    rackKeys: readonly string[],
    own: Int32Array,
    len: Float64Array,
    N: number,
  ) {
    const n = weight.length;
    const m = own.length;
    const MAX_REGION = REGION_PER_REPLICA * N;
    this.fair = fairSharesOf(zoneKeys, Array.from(weight), N);
    this.inv = this.fair.map((f) => (f > 0 ? 1 / f : 0));
    this.share = new Float64Array(n);
    this.#len = len;
    this.#loser = new Int32Array(m).fill(-1);
    this.#covers = new Int32Array(m);
    this.#split = new Float64Array(m).fill(-1);
    this.#ids = new Int32Array(MAX_REGION + 2);
    this.#delta = new Float64Array(MAX_REGION + 2);
    const model = walkModel(x, zoneKeys, rackKeys, own, len, N);
    sharesAndLosers(model, replicaSets(model), this.share, this.#loser);
    const { at, region } = regions(model, n, this.#loser);
    this.#at = at;
    this.#region = region;
  }

  /** What X replicates of range s now. */
  #held(s: number): number {
    return this.#covers[s]! > 0 ? this.#len[s]! : Math.max(this.#split[s]!, 0);
  }

  /**
   * A new token of X in range r taking x of it changes the cost Σ (share − fair)² / fair
   * by A·x² + B·x + C: writes A, B, C to out.
   */
  coefficients(r: number, out: Float64Array): void {
    const { x, inv, share, fair } = this;
    const ids = this.#ids;
    const delta = this.#delta;
    // What each node gains (X) or loses (the losers, some more than once) apart from x.
    ids[0] = x;
    delta[0] = 0;
    let k = 1;
    for (let e = this.#at[r]!; e < this.#at[r + 1]!; e++) {
      const s = this.#region[e]!;
      const d = this.#len[s]! - this.#held(s);
      if (d === 0) continue;
      const v = this.#loser[s]!;
      let i = 1;
      while (i < k && ids[i] !== v) i++;
      if (i === k) {
        ids[k] = v;
        delta[k++] = 0;
      }
      delta[0]! += d;
      delta[i]! -= d;
    }
    let c = 0;
    let dl = 0;
    const l = this.#covers[r]! > 0 ? -1 : this.#loser[r]!;
    for (let i = 0; i < k; i++) {
      const v = ids[i]!;
      const d = delta[i]!;
      c += inv[v]! * (2 * (share[v]! - fair[v]!) + d) * d;
      if (v === l) dl = d;
    }
    if (l < 0) {
      out[0] = 0;
      out[1] = 0;
    } else {
      out[0] = inv[x]! + inv[l]!;
      out[1] = 2 * (inv[x]! * (share[x]! - fair[x]! + delta[0]!) - inv[l]! * (share[l]! - fair[l]! + dl));
    }
    out[2] = c;
  }

  /** Adds (sign 1) or takes out (-1) a new token of X in range r taking u of it. */
  move(r: number, u: number, sign: 1 | -1): void {
    for (let e = this.#at[r]!; e < this.#at[r + 1]!; e++) {
      const s = this.#region[e]!;
      const before = this.#held(s);
      this.#covers[s]! += sign;
      this.#give(s, this.#held(s) - before);
    }
    const before = this.#held(r);
    this.#split[r] = sign === 1 ? u : -1;
    this.#give(r, this.#held(r) - before);
  }

  /** Range s's loser gives d of it to X (nothing when range s has no loser). */
  #give(s: number, d: number): void {
    if (d === 0 || this.#loser[s]! < 0) return;
    this.share[this.x]! += d;
    this.share[this.#loser[s]!]! -= d;
  }
}

/** Steps a modelled walk may take before its range is left out of the model. */
const WALK_BOUND = 256;

/**
 * The placement rule's walk (placement.ts, zones and racks) from token s, at most `steps`
 * tokens, over a ring that may meet X just before token `before` (-1: not met). X counts
 * as a node of its zone and rack when it has tokens already, is met, or `member` says so
 * (the ring it joins, before it is met). Writes the picks to out; returns how many.
 */
type Walk = (s: number, steps: number, before: number, out: Int32Array, member?: boolean) => number;

/** What the Replicated model is built from: the ring, X, N, and the walk with its buffer of picks. */
interface WalkModel {
  readonly x: number;
  readonly own: Int32Array;
  readonly len: Float64Array;
  readonly N: number;
  /** The most ranges before a new token that are modelled: REGION_PER_REPLICA · N. */
  readonly maxRegion: number;
  /** One zone and one rack: the walk is the plain one (the first N distinct owners met). */
  readonly plain: boolean;
  readonly walk: Walk;
  readonly out: Int32Array;
}

/** The walk of the placement rule over the ring X joins, with what the model's phases share. */
function walkModel(
  x: number,
  zoneKeys: readonly string[],
  rackKeys: readonly string[],
  own: Int32Array,
  len: Float64Array,
  N: number,
): WalkModel {
  const selector = new ReplicaSelector(topologyOf(zoneKeys, rackKeys));
  const owners = Uint32Array.from(own);
  const xOnRing = own.includes(x);
  const walk: Walk = (s, steps, before, out, member = false) =>
    selector.walkInto(owners, s, steps, x, before, before < 0 && !member && !xOnRing, out);
  const maxRegion = REGION_PER_REPLICA * N;
  return { x, own, len, N, maxRegion, plain: selector.simple, walk, out: new Int32Array(N) };
}

/** S(s) for every range, N entries from s·N (-1 entries when the walk did not settle within its bound). */
function replicaSets(model: WalkModel): Int32Array {
  const { own, N, walk, out } = model;
  const m = own.length;
  const sets = new Int32Array(m * N).fill(-1);
  if (model.plain) plainSets(own, sets, N);
  else for (let s = 0; s < m; s++) if (walk(s, WALK_BOUND, -1, out) === N) sets.set(out, s * N);
  return sets;
}

/**
 * Adds each node's replicated share under `sets` to `share`, and writes to `loser` who
 * loses each range X would come to replicate (a range X replicates wherever its tokens
 * go is counted as X's in `share` instead).
 */
function sharesAndLosers(model: WalkModel, sets: Int32Array, share: Float64Array, loser: Int32Array): void {
  const { x, own, len, N, walk, out, plain } = model;
  const m = own.length;
  for (let s = 0; s < m; s++) {
    if (sets[s * N]! < 0) continue;
    let hasX = false;
    for (let k = s * N; k < s * N + N; k++) {
      share[sets[k]!]! += len[s]!;
      if (sets[k] === x) hasX = true;
    }
    if (hasX) continue;
    if (plain) {
      loser[s] = sets[s * N + N - 1]!;
    } else if (walk(s, WALK_BOUND, s + 1 === m ? 0 : s + 1, out) === N && out.includes(x)) {
      // The member X pushes out when met right after token s.
      let lost = -1;
      for (let k = s * N; k < s * N + N; k++) if (!out.includes(sets[k]!)) lost = lost < 0 ? sets[k]! : -2;
      if (lost < 0) continue;
      if (walk(s, model.maxRegion, -1, out, true) < N) {
        // The walk waits longer than any region for a zone X is in (X alone in its
        // zone, say): X replicates range s wherever its tokens go. Count it as done.
        share[x]! += len[s]!;
        share[lost]! -= len[s]!;
      } else {
        loser[s] = lost;
      }
    }
  }
}

/**
 * The region of each range r apart from r itself, for n nodes: the ranges with a loser
 * whose walks meet a token of X in range r first, region[at[r]] .. region[at[r + 1] − 1].
 */
function regions(model: WalkModel, n: number, loser: Int32Array): { at: Int32Array; region: Int32Array } {
  const { x, own, N, walk, out, plain } = model;
  const m = own.length;
  const at = new Int32Array(m + 1);
  const region: number[] = [];
  const seen = new Int32Array(n).fill(-1);
  const maxBack = Math.min(model.maxRegion, m - 1);
  for (let r = 0; r < m; r++) {
    at[r] = region.length;
    if (own[r] === x) continue;
    let distinct = 0;
    for (let k = 0, s = r; k < maxBack; k++) {
      s = s === 0 ? m - 1 : s - 1;
      const v = own[s]!;
      if (v === x) break;
      if (plain) {
        // Plain walk: range s meets X before picking all its replicas while the owners
        // of s .. r − 1 are fewer than N.
        if (seen[v] !== r) {
          if (distinct === N - 1) break;
          seen[v] = r;
          distinct++;
        }
      } else {
        if (walk(s, k + 1, -1, out, true) === N) break; // settled before X's token
        if (walk(s, WALK_BOUND, r, out) !== N || !out.includes(x)) continue;
      }
      if (loser[s]! >= 0) region.push(s);
    }
  }
  at[m] = region.length;
  return { at, region: Int32Array.from(region) };
}

/** First N distinct owners walking from each token, into sets (no zones). */
function plainSets(own: Int32Array, sets: Int32Array, N: number): void {
  const m = own.length;
  // The last token by walking; each one before from the one after it: S(s) = own[s],
  // then S(s + 1) without own[s].
  const seen = new Set<number>();
  for (let i = m - 1, step = 0; step < m && seen.size < N; step++, i = i + 1 === m ? 0 : i + 1) {
    if (!seen.has(own[i]!)) {
      sets[(m - 1) * N + seen.size] = own[i]!;
      seen.add(own[i]!);
    }
  }
  if (seen.size < N) {
    sets.fill(-1);
    return;
  }
  for (let s = m - 2; s >= 0; s--) {
    const v = own[s]!;
    sets[s * N] = v;
    for (let k = 0, j = 1; j < N; k++) {
      const w = sets[(s + 1) * N + k]!;
      if (w !== v) sets[s * N + j++] = w;
    }
  }
}
