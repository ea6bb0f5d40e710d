/**
 * Tokens for one node joining an existing ring, never moving anyone else's tokens.
 *
 * The newcomer X must end up with its fair share of two things: primary ownership (the
 * whole ring) and replicated ownership (the ranges it holds one of the N replicas of).
 * A token of X placed at a + x inside the range (a, b] takes x of primary ownership from
 * the owner of b. What it takes of replicated ownership depends on the zones:
 * - With at least N zones, zone-aware placement puts one replica of a key in each of N
 *   zones, and what a node replicates is its share of its zone's own ring (the ring of
 *   only its zone's tokens). There X's token takes x + g of zone ownership from the owner
 *   of the next zone token at or after b, where g is the distance from the last zone token
 *   at or before a up to a.
 * - With fewer zones than N (no zones at all being the common case), a node replicates a
 *   range when it is among the nodes the walk from that range picks: a token replicates
 *   its own range and the ranges before it back to N − 1 other owners. There X's token
 *   takes x of its own range and the whole ranges before it that now meet X before their
 *   N-th replica, each from the replica it pushes out (the Replicated class below; the
 *   model of Cassandra's ReplicationAwareTokenAllocator, with zones). Balancing primary
 *   ownership alone leaves such rings, grown one node at a time, well off fair replicated.
 * N is the caller's (`JoinInput.replicas`: the node's --replicas setting).
 * A token can split a range anywhere at least MIN_RANGE from its ends, so X can take
 * nearly precisely what it should without leaving slivers.
 *
 * A third thing is how balanced the ring stays when a node leaves. A leave hands each
 * of the leaver's tokens to a heir chosen for balance (leave-heirs.ts), starting from the
 * plain heirs: the owners of the tokens after them, and for replicas the next node each
 * range's walk picks. The join spreads those plain heirs, which leaves the search less
 * to repair: h[A][B], the primary ownership A hands to B on leaving, should be in
 * proportion to B's weight. X's new token makes X the heir of the tokens just before
 * it, and X's own range goes to the owner of b. With N zones the same is asked of the
 * zone ring; with fewer, replica heirs are not modelled.
 *
 * The cost minimised, for the whole ring and for X's zone ring (N zones or more), is
 *   Σ_i (share_i − fair_i)² / fair_i  +  λ Σ_A Σ_B (h[A][B] − ideal[A][B])² / fair_B,
 * with λ the hand-off weight of that ring, plus, with fewer zones than N,
 * REPLICATED_WEIGHT · Σ_i (replicated_i − fair_i)² / fair_i, plus a term that asks each
 * of X's tokens to take about the same (see EVEN_TAKES).
 * With the chosen ranges fixed it is a convex quadratic in the split points, so:
 * 1. greedy: each new token goes to the range whose best split point (closed form)
 *    lowers the cost most, at most one new token per range and per zone range and none
 *    in adjacent ranges, so that the tokens' primary and zone effects add up
 *    independently (replicated effects of nearby tokens overlap, and are counted once);
 * 2. refit: after each new token every split point so far is re-optimised in turn
 *    (coordinate descent);
 * 3. swap: each token in turn is taken out and the best one for the ring as it now stands
 *    put back, which undoes the greedy's myopic early choices.
 * A ring with fewer free ranges than X has tokens (a few nodes) takes several rounds;
 * each round aims only its part of the way to the fair shares, leaving room for the
 * tokens still to come.
 * This is the idea of Cassandra's ReplicationAwareTokenAllocator and Riak's claim v4
 * (take from the most loaded, replication-aware), with continuous split points and
 * leave-awareness added.
 *
 * Must not: validate input (ring.ts and member.ts do), or do I/O.
 */

import { evenTokens } from './allocate-tokens.js';
import { fairSharesOf } from './balance.js';
import { ReplicaSelector, topologyOf } from './placement.js';
import { RING_SIZE, arcFraction, compareTokens, mergeByToken } from './tokens.js';

const TWO_64 = 2 ** 64;
/**
 * Shortest range a join creates, as a fraction of a fair token's share (1 / the tokens
 * of the grown ring): both parts of a split range are at least this long. Without it the
 * greedy can leave ranges 2 hash values long: a token owning nothing, that no later join
 * can split. It cannot be much more: a node joining n equal nodes laid out with equal
 * ranges takes n/(n + 1) of each of its ranges, leaving 1/n of a fair token to the old
 * owner; with 1/32 a newcomer to 99 nodes gets 97% of its fair share. It costs a little
 * balance after leaves, since nearly empty tokens would be a free way to choose heirs
 * (figures: docs/benchmarks.md#tuning-the-hash-and-the-claims).
 */
const MIN_RANGE = 1 / 32;
/**
 * Weight of replicated-ownership balance against primary, with fewer zones than N. 0.5
 * and 1 balance rings grown one node at a time without zones alike; they pull apart in
 * weighted rings of a few nodes.
 * When a node's fair share is to replicate every key (weights 1, 2, 1 joined by 2, N = 3:
 * both nodes of weight 2), the walk would have to meet it within N owners from every
 * range: chasing that costs the newcomer primary share and gains no replicated balance.
 * Such rings weigh replicated balance at REPLICATED_WEIGHT_AT_CAP
 * (figures: docs/benchmarks.md#tuning-the-hash-and-the-claims).
 */
const REPLICATED_WEIGHT = 0.5;
const REPLICATED_WEIGHT_AT_CAP = 0.1;
/** The most ranges before a new token whose replica sets it may change that are modelled, per replica. */
const REGION_PER_REPLICA = 8;
/** Coordinate-descent sweeps over the split points after each new token. */
const REFIT_SWEEPS = 2;
/** Take-out-and-put-back passes over all tokens after the greedy placement. */
const SWAP_PASSES = 1;
/**
 * Weights of hand-off balance against ownership balance, on the whole ring and on the
 * zone ring. Full weight on the whole ring leaves rings better balanced after leaves, at
 * a little balance right after the joins. Zone heirs can only be the zone's own tokens,
 * and a weight above ~0.1 there costs zone balance for no gain after leaves
 * (figures: docs/benchmarks.md#tuning-the-hash-and-the-claims).
 */
const PRIMARY_HANDOFF_WEIGHT = 1.0;
const ZONE_HANDOFF_WEIGHT = 0.1;
/**
 * Hand-off weights ramp up from 0 for rings of HANDOFF_RAMP_FROM nodes or fewer to full
 * weight HANDOFF_RAMP_OVER nodes later. In a ring of a few nodes any leave is a big
 * event whoever the heirs are, and chasing ideal heirs there starves the newcomer of its
 * fair share (figures: docs/benchmarks.md#tuning-the-hash-and-the-claims).
 */
const HANDOFF_RAMP_FROM = 4;
const HANDOFF_RAMP_OVER = 8;
/**
 * Weight μ·count of the even-takes term μ·Σ (x − x̄)² / x̄, x̄ = the newcomer's fair
 * share per token. Without it the greedy takes whole ranges with its first tokens and
 * wastes the last ones on slivers: fewer effective tokens, and every later leave hands
 * its ranges to fewer heirs. It matters most for rings grown one node at a time, and
 * costs laid-out rings nothing; 0.1 to 0.8 all do about as well
 * (figures: docs/benchmarks.md#tuning-the-hash-and-the-claims).
 */
const EVEN_TAKES = 0.3;

/** The ring a newcomer joins: tokens sorted ascending with their owners (node indices). */
export interface JoinInput {
  readonly tokens: readonly bigint[];
  readonly owners: readonly number[];
  /** Zone and rack keys and weight of every node, the newcomer included. */
  readonly zoneOf: readonly string[];
  readonly rackOf: readonly string[];
  readonly weights: readonly number[];
  /** Index of the newcomer. */
  readonly newcomer: number;
  readonly count: number;
  /** The cluster's N: the replicas per key whose ownership the join balances. */
  readonly replicas: number;
}

/** The newcomer's tokens, sorted. */
export function joinTokens(input: JoinInput): bigint[] {
  if (input.tokens.length === 0) return evenTokens(input.count);
  let tokens = [...input.tokens];
  let owners = [...input.owners];
  const placed: bigint[] = [];
  // One round places at most one token per range; a newcomer with more tokens than the
  // ring has free ranges (a ring of few tokens) goes round again on the grown ring.
  while (placed.length < input.count) {
    const rest = { ...input, tokens, owners, count: input.count - placed.length };
    let round = placeRound(rest, input.count, 1);
    // This round could place only some of the tokens left: let it go only that part of
    // the way to fair shares, leaving room for the takes of the tokens still to come.
    if (round.length > 0 && round.length < rest.count) round = placeRound(rest, input.count, round.length / rest.count);
    if (round.length === 0) break;
    placed.push(...round);
    const merged = mergeByToken(
      tokens.map((t, i) => [t, owners[i]!] as const),
      round.sort(compareTokens).map((t) => [t, input.newcomer] as const),
    );
    tokens = merged.map((e) => e[0]);
    owners = merged.map((e) => e[1]);
  }
  return placed.sort(compareTokens);
}

/**
 * Ownership and hand-offs in one ring (the whole ring, or X's zone ring: the tokens j
 * with member(own[j]), each owning length[j] of that ring), with the cost terms above.
 *
 * Hand-offs h[a][b] live in one flat table of slots: one per (owner, heir) pair that
 * occurs in the ring, then X's row h[X][·] and X's column h[·][X]. Each token knows the
 * slot of its own (owner, heir) pair, so the candidate scan reads arrays indexed by
 * token and a table of about m + 2n entries, not an n × n matrix that misses the cache.
 */
class Ledger {
  readonly share: Float64Array;
  readonly fair: Float64Array;
  readonly inv: Float64Array; // 1 / fair, 0 for non-members
  /** run[j]: length of the run of j's owner's consecutive tokens ending at j (handed off as one). */
  readonly run: Float64Array;
  /** heir[j]: owner of the first member token after j with another owner. */
  readonly heir: Int32Array;
  /** slot[j]: the slot of h[own[j]][heir[j]], or -1 when a node would hand to itself. */
  readonly #slot: Int32Array;
  readonly #h: Float64Array;
  readonly #ideal: Float64Array; // ideal h[a][b] = fair[a] · weight[b] / (total − weight[a])
  readonly #fromX: number; // slot of h[X][b] is #fromX + b
  readonly #toX: number; // slot of h[a][X] is #toX + a

  constructor(
    readonly x: number,
    weight: Float64Array,
    readonly own: Int32Array,
    length: Float64Array,
    member: (v: number) => boolean,
    readonly handoffWeight: number,
  ) {
    const n = weight.length;
    let total = 0;
    for (let v = 0; v < n; v++) if (member(v)) total += weight[v]!;
    this.share = new Float64Array(n);
    this.fair = new Float64Array(n);
    this.inv = new Float64Array(n);
    const heirScale = new Float64Array(n);
    for (let v = 0; v < n; v++) {
      if (!member(v)) continue;
      this.fair[v] = weight[v]! / total;
      this.inv[v] = total / weight[v]!;
      heirScale[v] = total > weight[v]! ? this.fair[v]! / (total - weight[v]!) : 0;
    }
    const { run, heir } = runs(length, own, member);
    this.run = run;
    this.heir = heir;
    this.#slot = new Int32Array(own.length).fill(-1);
    const ids = new Map<number, number>();
    const ideal: number[] = [];
    for (let j = 0; j < own.length; j++) {
      const a = own[j]!;
      const b = heir[j]!;
      if (!member(a) || a === b || a === x || b === x) continue;
      let id = ids.get(a * n + b);
      if (id === undefined) {
        ids.set(a * n + b, (id = ids.size));
        ideal.push(heirScale[a]! * weight[b]!);
      }
      this.#slot[j] = id;
    }
    this.#fromX = ids.size;
    this.#toX = ids.size + n;
    for (let v = 0; v < n; v++) ideal.push(heirScale[x]! * weight[v]!);
    for (let v = 0; v < n; v++) ideal.push(heirScale[v]! * weight[x]!);
    this.#ideal = Float64Array.from(ideal);
    this.#h = new Float64Array(ideal.length);
    for (let j = 0; j < own.length; j++) {
      const a = own[j]!;
      const b = heir[j]!;
      if (!member(a)) continue;
      this.share[a]! += length[j]!;
      if (a === b) continue;
      if (a === x) this.#slot[j] = this.#fromX + b;
      else if (b === x) this.#slot[j] = this.#toX + a;
      this.#h[this.#slot[j]!]! += length[j]!;
    }
  }

  /** Error of the hand-off in slot s against its ideal (0 for no slot). */
  #err(s: number): number {
    return s < 0 ? 0 : this.#h[s]! - this.#ideal[s]!;
  }

  /**
   * X taking u from the owner of token j (X then hands its new range to that owner, who
   * hands u less to its heir) changes the cost by A·u² + B·u: writes A, B to out.
   */
  moveCoefficients(j: number, out: Float64Array): void {
    const { inv, share, fair, x } = this;
    const donor = this.own[j]!;
    let a = inv[donor]! + inv[x]!;
    let b = 2 * ((share[x]! - fair[x]!) * inv[x]! - (share[donor]! - fair[donor]!) * inv[donor]!);
    a += this.handoffWeight * inv[donor]!;
    b += this.handoffWeight * 2 * this.#err(this.#fromX + donor) * inv[donor]!;
    const heir = this.heir[j]!;
    if (donor !== heir) {
      a += this.handoffWeight * inv[heir]!;
      b -= this.handoffWeight * 2 * this.#err(this.#slot[j]!) * inv[heir]!;
    }
    out[0] = a;
    out[1] = b;
  }

  move(j: number, u: number): void {
    const donor = this.own[j]!;
    this.share[this.x]! += u;
    this.share[donor]! -= u;
    this.#h[this.#fromX + donor]! += u;
    const s = this.#slot[j]!;
    if (s >= 0) this.#h[s]! -= u;
  }

  /**
   * A new token right after token j makes X the heir of j's run: the cost change
   * (sign 0), or apply / revert it (sign ±1).
   */
  reheir(j: number, sign: 0 | 1 | -1): number {
    const a = this.own[j]!;
    if (a === this.x) return 0;
    const run = this.run[j]!;
    const s = this.#slot[j]!;
    if (sign !== 0) {
      if (s >= 0) this.#h[s]! -= sign * run;
      this.#h[this.#toX + a]! += sign * run;
      return 0;
    }
    const inv = this.inv;
    let c = 0;
    if (this.heir[j] !== a) c += -run * (2 * this.#err(s) - run) * inv[this.heir[j]!]!;
    c += run * (2 * this.#err(this.#toX + a) + run) * inv[this.x]!;
    return this.handoffWeight * c;
  }
}

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
class Replicated {
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

/** A chosen range and split point: the token goes at tokens[r - 1] + x. */
interface Split {
  readonly r: number;
  x: number;
}

/**
 * Places up to input.count tokens of the `total` the newcomer gets, one per free range,
 * aiming `fraction` of the way from the shares now to the fair shares.
 */
function placeRound(input: JoinInput, total: number, fraction: number): bigint[] {
  const round = startRound(input, total, fraction);
  const splits = chooseSplits(round, input.count);
  return splitTokens(input.tokens, splits, round.minRange);
}

/**
 * One round's model of the ring (the ledgers of its cost terms) and its search state:
 * the ranges taken so far and the split point of the last range scored.
 */
interface Round {
  readonly m: number;
  /** Index of the newcomer X. */
  readonly nx: number;
  readonly own: Int32Array;
  readonly len: Float64Array;
  /** The whole ring (P), X's zone ring (Z, with N zones or more) and the walk's replicas (R, with fewer). */
  readonly P: Ledger;
  readonly Z: Ledger | undefined;
  readonly R: Replicated | undefined;
  readonly zone: ZoneNeighbours | undefined;
  readonly rWeight: number;
  readonly minRange: number;
  /** The even-takes term μ·(x − x̄)² / x̄ as A·x² + B·x + C. */
  readonly evenA: number;
  readonly evenB: number;
  readonly evenC: number;
  /** Scratch for the ledgers' coefficients. */
  readonly coef: Float64Array;
  readonly rcoef: Float64Array;
  /** The split point bestCost found last. */
  bestX: number;
  readonly usedRange: Uint8Array;
  readonly usedZoneRange: Uint8Array;
}

/** The round's ledgers, their fair shares moved `fraction` of the way from the shares now, and its weights. */
function startRound(input: JoinInput, total: number, fraction: number): Round {
  const { tokens, newcomer: nx, count } = input;
  const own = Int32Array.from(input.owners);
  const m = tokens.length;
  const n = input.weights.length;
  const len = Float64Array.from(tokens, (t, j) => arcFraction(tokens[j === 0 ? m - 1 : j - 1]!, t));
  const { P, Z, R, zone } = roundLedgers(input, own, len);
  const rWeight = R && R.fair.some((f) => f > 1 - 1e-9) ? REPLICATED_WEIGHT_AT_CAP : REPLICATED_WEIGHT;
  // The grown ring has m + count tokens, whichever round this is.
  const minRange = MIN_RANGE / (m + count);
  // An even take is 1/total of X's fair share, or less when X lacks less than that per
  // token still to place (later rounds, on rings with fewer free ranges than X has tokens).
  const xbar = Math.max(Math.min(P.fair[nx]! / total, (P.fair[nx]! - P.share[nx]!) / input.count), 1e-12);
  // A round that places only part of the tokens aims only that part of the way.
  if (fraction < 1) {
    for (const L of [P, Z, R]) {
      if (!L) continue;
      for (let v = 0; v < n; v++) L.fair[v] = L.share[v]! + fraction * (L.fair[v]! - L.share[v]!);
    }
  }
  const mu = EVEN_TAKES / input.count;
  return {
    m,
    nx,
    own,
    len,
    P,
    Z,
    R,
    zone,
    rWeight,
    minRange,
    evenA: mu / xbar,
    evenB: -2 * mu,
    evenC: mu * xbar,
    coef: new Float64Array(2),
    rcoef: new Float64Array(3),
    bestX: 0,
    usedRange: new Uint8Array(m),
    usedZoneRange: new Uint8Array(m),
  };
}

/**
 * The ledgers of the ring the newcomer joins: the whole ring (P), and X's zone ring (Z)
 * with its neighbours or the walk's replicas (R), where they are needed.
 */
function roundLedgers(input: JoinInput, own: Int32Array, len: Float64Array): Pick<Round, 'P' | 'Z' | 'R' | 'zone'> {
  const nx = input.newcomer;
  const n = input.weights.length;
  const weight = Float64Array.from(input.weights);
  const inZone = Uint8Array.from(input.zoneOf, (z) => (z === input.zoneOf[nx] ? 1 : 0));
  // The whole ring, and X's zone ring. With no zone token yet, X's first token gives it
  // the whole zone ring whatever it does: only the whole ring is optimised.
  const ramp = Math.min(1, Math.max(0, (n - HANDOFF_RAMP_FROM) / HANDOFF_RAMP_OVER));
  const P = new Ledger(nx, weight, own, len, () => true, PRIMARY_HANDOFF_WEIGHT * ramp);
  // Replicated ownership: with N zones or more it is the zone ring's (Z); with fewer it
  // is modelled on the walk itself (R). With no more nodes than N every node replicates
  // everything, and with N = 1 replicated is primary: neither is needed.
  const zoneCount = new Set(input.zoneOf).size;
  const N = input.replicas;
  const R = zoneCount < N && n > N ? new Replicated(nx, weight, input.zoneOf, input.rackOf, own, len, N) : undefined;
  const zone =
    N > 1 && zoneCount >= N && own.some((v) => inZone[v] === 1) ? zoneNeighbours(len, own, inZone) : undefined;
  const Z =
    zone &&
    new Ledger(
      nx,
      weight,
      own,
      Float64Array.from(len, (l, j) => (inZone[own[j]!] ? zone.gap[j]! + l : 0)),
      (v) => inZone[v] === 1,
      ZONE_HANDOFF_WEIGHT * ramp,
    );
  return { P, Z, R, zone };
}

/** Does a token in range r take zone ownership (from someone other than X)? */
function zoned(round: Round, r: number): boolean {
  return round.zone !== undefined && round.own[round.zone.next[r]!] !== round.nx;
}

/** Split-independent part of choosing range r: the tokens just before it now go to X (cost change with sign 0, else apply / revert). */
function fixedCost(round: Round, r: number, sign: 0 | 1 | -1): number {
  let c = round.P.reheir(r === 0 ? round.m - 1 : r - 1, sign);
  if (zoned(round, r)) c += round.Z!.reheir(round.zone!.last[r]!, sign);
  return c;
}

/** Least cost change of a token in range r (the split point goes to `round.bestX`). */
function bestCost(round: Round, r: number): number {
  const { P, Z, R, zone, coef, rcoef, rWeight } = round;
  P.moveCoefficients(r, coef);
  // Even takes: μ·(x − x̄)² / x̄, x̄ the even take above.
  let a = coef[0]! + round.evenA;
  let b = coef[1]! + round.evenB;
  let c = round.evenC;
  if (zoned(round, r)) {
    // In the zone ring X gains u = g + x: A·u² + B·u expanded in x.
    Z!.moveCoefficients(zone!.next[r]!, coef);
    const g = zone!.gap[r]!;
    a += coef[0]!;
    b += 2 * coef[0]! * g + coef[1]!;
    c += (coef[0]! * g + coef[1]!) * g;
  }
  if (R) {
    R.coefficients(r, rcoef);
    a += rWeight * rcoef[0]!;
    b += rWeight * rcoef[1]!;
    c += rWeight * rcoef[2]!;
  }
  const x = Math.min(Math.max(-b / (2 * a), round.minRange), round.len[r]! - round.minRange);
  round.bestX = x;
  return (a * x + b) * x + c;
}

/** Adds (sign 1) or takes out (-1) split s's ownership moves in every ledger. */
function applySplit(round: Round, s: Split, sign: 1 | -1): void {
  const { zone } = round;
  round.P.move(s.r, sign * s.x);
  if (zoned(round, s.r)) round.Z!.move(zone!.next[s.r]!, sign * (s.x + zone!.gap[s.r]!));
  round.R?.move(s.r, s.x, sign);
}

/** The free range where a new token lowers the cost most, with its split point. */
function chooseRange(round: Round): Split | undefined {
  const { m, own, nx, len, zone, usedRange, usedZoneRange, minRange } = round;
  let bestR = -1;
  let bestSplit = 0;
  let bestTotal = Infinity;
  for (let r = 0; r < m; r++) {
    if (usedRange[r] || own[r] === nx || len[r]! < 2 * minRange) continue;
    if (usedRange[r === 0 ? m - 1 : r - 1] || usedRange[r + 1 === m ? 0 : r + 1]) continue;
    if (zone && usedZoneRange[zone.next[r]!]) continue;
    const cost = bestCost(round, r) + fixedCost(round, r, 0);
    if (cost < bestTotal) {
      bestTotal = cost;
      bestR = r;
      bestSplit = round.bestX;
    }
  }
  return bestR < 0 ? undefined : { r: bestR, x: bestSplit };
}

/** Takes (sign 1) or frees (-1) split s's range, with all its effects on the ledgers. */
function placeSplit(round: Round, s: Split, sign: 1 | -1): void {
  round.usedRange[s.r] = sign === 1 ? 1 : 0;
  if (round.zone) round.usedZoneRange[round.zone.next[s.r]!] = sign === 1 ? 1 : 0;
  fixedCost(round, s.r, sign);
  applySplit(round, s, sign);
}

/** Re-optimises every split point in turn, REFIT_SWEEPS times (coordinate descent). */
function refit(round: Round, splits: Split[]): void {
  for (let sweep = 0; sweep < REFIT_SWEEPS; sweep++) {
    for (const t of splits) {
      applySplit(round, t, -1);
      bestCost(round, t.r);
      t.x = round.bestX;
      applySplit(round, t, 1);
    }
  }
}

/** Up to `count` splits: greedy with a refit after each, then SWAP_PASSES take-out-and-put-back passes. */
function chooseSplits(round: Round, count: number): Split[] {
  const splits: Split[] = [];
  for (let step = 0; step < count; step++) {
    const s = chooseRange(round);
    if (s === undefined) break;
    placeSplit(round, s, 1);
    splits.push(s);
    refit(round, splits);
  }
  for (let pass = 0; pass < SWAP_PASSES; pass++) {
    for (let k = 0; k < splits.length; k++) {
      placeSplit(round, splits[k]!, -1);
      const s = chooseRange(round)!; // the range just freed is a candidate again
      placeSplit(round, s, 1);
      splits[k] = s;
      refit(round, splits);
    }
  }
  return splits;
}

/** The tokens of the splits, both parts of each split range at least minRange long in whole hash values. */
function splitTokens(tokens: readonly bigint[], splits: readonly Split[], minRange: number): bigint[] {
  const m = tokens.length;
  // Both parts of a split at least minRange long in whole hash values, not just in doubles.
  const least = BigInt(Math.max(1, Math.ceil(minRange * TWO_64)));
  return splits.map(({ r, x }) => {
    const from = tokens[r === 0 ? m - 1 : r - 1]!;
    const span = (tokens[r]! - from + RING_SIZE) % RING_SIZE || RING_SIZE;
    let step = BigInt(Math.round(x * TWO_64));
    if (step > span - least) step = span - least;
    if (step < least) step = least;
    if (step > span - 1n) step = span - 1n;
    return (from + step) % RING_SIZE;
  });
}

/**
 * Over the tokens j with member(own[j]) (the whole ring, or one zone's tokens), each
 * owning length[j] of that ring: run[j] = total length of the run of consecutive member
 * tokens of j's owner that ends at j (a leaving node hands a run off as one);
 * heir[j] = owner of the first member token after j with another owner (who inherits
 * j's range if its owner leaves; j's owner itself when nobody else is a member).
 */
function runs(
  length: Float64Array,
  own: Int32Array,
  member: (v: number) => boolean,
): { run: Float64Array; heir: Int32Array } {
  const m = length.length;
  const run = new Float64Array(m);
  const heir = new Int32Array(m);
  const idx: number[] = [];
  for (let j = 0; j < m; j++) if (member(own[j]!)) idx.push(j);
  const k = idx.length;
  // Two laps round the circle settle the runs and heirs that wrap past token 0.
  let acc = 0;
  let last = -1;
  for (let lap = 0; lap < 2 * k; lap++) {
    const j = idx[lap % k]!;
    acc = own[j] === last ? acc + length[j]! : length[j]!;
    last = own[j]!;
    run[j] = acc;
  }
  let after = -1; // the member token after j
  for (let lap = 2 * k - 1; lap >= 0; lap--) {
    const j = idx[lap % k]!;
    if (after < 0) heir[j] = own[j]!;
    else heir[j] = own[after] === own[j] ? heir[after]! : own[after]!;
    after = j;
  }
  return { run, heir };
}

/** The newcomer's zone tokens around each range (zoneNeighbours). */
interface ZoneNeighbours {
  readonly gap: Float64Array;
  readonly last: Int32Array;
  readonly next: Int32Array;
}

/**
 * For the range ending at each token r, with Z the newcomer's zone:
 * `gap[r]`: length from the last Z token at or before the range's start up to that start;
 * `last[r]`: index of that Z token; `next[r]`: index of the first Z token at or after r
 * (its owner gives up zone ownership to a token placed in range r; it also names the
 * zone range that range r lies in). Requires at least one Z token.
 */
function zoneNeighbours(len: Float64Array, own: Int32Array, inZone: Uint8Array): ZoneNeighbours {
  const m = len.length;
  const gap = new Float64Array(m);
  const last = new Int32Array(m);
  const next = new Int32Array(m);
  let acc = 0;
  let lastZ = -1;
  for (let j = m - 1; j >= 0 && lastZ < 0; j--) {
    if (inZone[own[j]!]) lastZ = j;
    else acc += len[j]!;
  }
  for (let j = 0; j < m; j++) {
    gap[j] = acc;
    last[j] = lastZ;
    if (inZone[own[j]!]) {
      acc = 0;
      lastZ = j;
    } else acc += len[j]!;
  }
  let nextZ = -1;
  for (let j = 0; j < m && nextZ < 0; j++) if (inZone[own[j]!]) nextZ = j;
  for (let j = m - 1; j >= 0; j--) {
    if (inZone[own[j]!]) nextZ = j;
    next[j] = nextZ;
  }
  return { gap, last, next };
}
