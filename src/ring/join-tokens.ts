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
 *   N-th replica, each from the replica it pushes out (Replicated, join-replicated.ts; the
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
 * Owns: the rounds, their weights and the greedy, refit and swap phases. The ledgers of
 * primary ownership and hand-offs are join-ledger.ts's; the model of replicated
 * ownership with fewer zones than N is join-replicated.ts's.
 * Must not: validate input (ring.ts and member.ts do), or do I/O.
 */

import { evenTokens } from './allocate-tokens.js';
import { Ledger, type ZoneNeighbours, zoneNeighbours } from './join-ledger.js';
import { Replicated } from './join-replicated.js';
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
