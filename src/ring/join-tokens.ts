/**
 * Tokens for one node joining an existing ring, never moving anyone else's tokens.
 *
 * The newcomer X must end up with its fair share of two things: primary ownership (the
 * whole ring) and ownership of its zone's own ring (the ring of only its zone's tokens),
 * which under zone-aware placement is what a node replicates when there are N zones.
 * A token of X placed at a + x inside the range (a, b] takes x of primary ownership from
 * the owner of b, and x + g of zone ownership from the owner of the next zone token at or
 * after b, where g is the distance from the last zone token at or before a up to a.
 * A token can split a range anywhere, so X can take precisely what it should.
 *
 * A third thing decides how balanced the ring stays when a node leaves (a leave may not
 * move anyone else's tokens): whom each node would hand its ranges to. h[A][B], the
 * ownership A hands to B on leaving, should be in proportion to B's weight. X's new token
 * makes X the heir of the tokens just before it, and X's own range goes to the owner of b.
 *
 * The cost minimised, for both the whole ring and X's zone ring, is
 *   Σ_i (share_i − fair_i)² / fair_i  +  λ Σ_A Σ_B (h[A][B] − ideal[A][B])² / fair_B,
 * with λ the hand-off weight of that ring, plus a term that asks each of X's tokens to
 * take about the same (see EVEN_TAKES).
 * With the chosen ranges fixed it is a convex quadratic in the split points, so:
 * 1. greedy: each new token goes to the range whose best split point (closed form)
 *    lowers the cost most, at most one new token per range and per zone range and none
 *    in adjacent ranges, so that the tokens' effects add up independently;
 * 2. refit: after each new token every split point so far is re-optimised in turn
 *    (coordinate descent);
 * 3. swap: each token in turn is taken out and the best one for the ring as it now stands
 *    put back, which undoes the greedy's myopic early choices.
 * This is the idea of Cassandra's ReplicationAwareTokenAllocator and Riak's claim v4
 * (take from the most loaded, replication-aware), with continuous split points and
 * leave-awareness added.
 *
 * Must not: validate input (ring.ts and member.ts do), or do I/O.
 */

import { evenTokens } from './allocate-tokens.js';
import { RING_SIZE, arcFraction, compareTokens, mergeByToken } from './tokens.js';

const TWO_64 = 2 ** 64;
/** Smallest split, as a fraction of the ring: keeps every new token strictly inside its range. */
const MIN_SPLIT = 2 / TWO_64;
/** Coordinate-descent sweeps over the split points after each new token. */
const REFIT_SWEEPS = 2;
/** Take-out-and-put-back passes over all tokens after the greedy placement. */
const SWAP_PASSES = 1;
/**
 * Weights of hand-off balance against ownership balance, on the whole ring and on the
 * zone ring. Measured on 4 rings of 12 nodes + 10 joins (ids n0.., node-0.., x0..,
 * host0..), 20 random sets of 5 leaves each, as in bench:ring's leave-set table: with
 * 0.1 for both the worst leave set ended at 1.13–1.18× fair (median 1.09);
 * 1.0 on the whole ring brings that to 1.11–1.13× (median 1.08), still within 1.025
 * right after the joins. Zone heirs can only be the zone's own tokens, and a weight
 * above ~0.1 there costs zone balance for no gain after leaves.
 */
const PRIMARY_HANDOFF_WEIGHT = 1.0;
const ZONE_HANDOFF_WEIGHT = 0.1;
/**
 * Hand-off weights ramp up from 0 for rings of HANDOFF_RAMP_FROM nodes or fewer to full
 * weight HANDOFF_RAMP_OVER nodes later. In a ring of a few nodes any leave is a big
 * event whoever the heirs are, and chasing ideal heirs there starves the newcomer: a
 * node of weight 3 joining weights 3, 1 and 3 got 69% of its fair share at full weight;
 * with the ramp the worst of 600 random weighted rings of 2–9 nodes got 91%.
 */
const HANDOFF_RAMP_FROM = 4;
const HANDOFF_RAMP_OVER = 8;
/**
 * Weight μ·count of the even-takes term μ·Σ (x − x̄)² / x̄, x̄ = the newcomer's fair
 * share per token. Without it the greedy takes whole ranges with its first tokens and
 * wastes the last ones on slivers (a node joining a 1-node ring took 25%, 25%, 0%, 0%):
 * fewer effective tokens, and every later leave hands its ranges to fewer heirs. Rings
 * grown one node at a time went from 1.44× to 1.05× fair, and 5 leaves from them from
 * 2.3× to about 1.2× (npm run sim:ring -- --start grow --steps +3,-5), with no loss on
 * laid-out rings; 0.1 to 0.8 all do about as well.
 */
const EVEN_TAKES = 0.3;

/** The ring a newcomer joins: tokens sorted ascending with their owners (node indices). */
export interface JoinInput {
  readonly tokens: readonly bigint[];
  readonly owners: readonly number[];
  /** Zone key and weight of every node, the newcomer included. */
  readonly zoneOf: readonly string[];
  readonly weights: readonly number[];
  /** Index of the newcomer. */
  readonly newcomer: number;
  readonly count: number;
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
    const round = placeRound({ ...input, tokens, owners, count: input.count - placed.length }, input.count);
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

/** A chosen range and split point: the token goes at tokens[r - 1] + x. */
interface Split {
  readonly r: number;
  x: number;
}

/** Places up to input.count tokens of the `total` the newcomer gets, one per free range. */
function placeRound(input: JoinInput, total: number): bigint[] {
  const { tokens, newcomer: nx, count } = input;
  const own = Int32Array.from(input.owners);
  const m = tokens.length;
  const n = input.weights.length;
  const weight = Float64Array.from(input.weights);
  const inZone = Uint8Array.from(input.zoneOf, (z) => (z === input.zoneOf[nx] ? 1 : 0));
  const len = Float64Array.from(tokens, (t, j) => arcFraction(tokens[j === 0 ? m - 1 : j - 1]!, t));
  const prev = (j: number): number => (j === 0 ? m - 1 : j - 1);

  // The whole ring, and X's zone ring. With no zone token yet, X's first token gives it
  // the whole zone ring whatever it does: only the whole ring is optimised.
  const ramp = Math.min(1, Math.max(0, (n - HANDOFF_RAMP_FROM) / HANDOFF_RAMP_OVER));
  const P = new Ledger(nx, weight, own, len, () => true, PRIMARY_HANDOFF_WEIGHT * ramp);
  const zone = own.some((v) => inZone[v] === 1) ? zoneNeighbours(len, own, inZone) : undefined;
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
  /** Does a token in range r take zone ownership (from someone other than X)? */
  const zoned = (r: number): boolean => zone !== undefined && own[zone.next[r]!] !== nx;

  /** Split-independent part of choosing range r: the tokens just before it now go to X. */
  const fixed = (r: number, sign: 0 | 1 | -1): number => {
    let c = P.reheir(prev(r), sign);
    if (zoned(r)) c += Z!.reheir(zone!.last[r]!, sign);
    return c;
  };

  const coef = new Float64Array(2);
  // An even take is 1/total of X's fair share, or less when X lacks less than that per
  // token still to place (later rounds, on rings with fewer free ranges than X has tokens).
  const xbar = Math.max(Math.min(P.fair[nx]! / total, (P.fair[nx]! - P.share[nx]!) / input.count), 1e-12);
  const mu = EVEN_TAKES / input.count;
  const evenA = mu / xbar;
  const evenB = -2 * mu;
  const evenC = mu * xbar;
  let bestX = 0;
  /** Least cost change of a token in range r (the split point goes to `bestX`). */
  const best = (r: number): number => {
    P.moveCoefficients(r, coef);
    // Even takes: μ·(x − x̄)² / x̄, x̄ the even take above.
    let a = coef[0]! + evenA;
    let b = coef[1]! + evenB;
    let c = evenC;
    if (zoned(r)) {
      // In the zone ring X gains u = g + x: A·u² + B·u expanded in x.
      Z!.moveCoefficients(zone!.next[r]!, coef);
      const g = zone!.gap[r]!;
      a += coef[0]!;
      b += 2 * coef[0]! * g + coef[1]!;
      c += (coef[0]! * g + coef[1]!) * g;
    }
    bestX = Math.min(Math.max(-b / (2 * a), MIN_SPLIT), len[r]! - MIN_SPLIT);
    return (a * bestX + b) * bestX + c;
  };
  const apply = (s: Split, sign: 1 | -1): void => {
    P.move(s.r, sign * s.x);
    if (zoned(s.r)) Z!.move(zone!.next[s.r]!, sign * (s.x + zone!.gap[s.r]!));
  };

  const usedRange = new Uint8Array(m);
  const usedZoneRange = new Uint8Array(m);
  /** The free range where a new token lowers the cost most, with its split point. */
  const choose = (): Split | undefined => {
    let bestR = -1;
    let bestSplit = 0;
    let bestCost = Infinity;
    for (let r = 0; r < m; r++) {
      if (usedRange[r] || own[r] === nx || len[r]! * TWO_64 < 4) continue;
      if (usedRange[prev(r)] || usedRange[r + 1 === m ? 0 : r + 1]) continue;
      if (zone && usedZoneRange[zone.next[r]!]) continue;
      const cost = best(r) + fixed(r, 0);
      if (cost < bestCost) {
        bestCost = cost;
        bestR = r;
        bestSplit = bestX;
      }
    }
    return bestR < 0 ? undefined : { r: bestR, x: bestSplit };
  };
  const place = (s: Split, sign: 1 | -1): void => {
    usedRange[s.r] = sign === 1 ? 1 : 0;
    if (zone) usedZoneRange[zone.next[s.r]!] = sign === 1 ? 1 : 0;
    fixed(s.r, sign);
    apply(s, sign);
  };
  const refit = (splits: Split[]): void => {
    for (let sweep = 0; sweep < REFIT_SWEEPS; sweep++) {
      for (const t of splits) {
        apply(t, -1);
        best(t.r);
        t.x = bestX;
        apply(t, 1);
      }
    }
  };

  const splits: Split[] = [];
  for (let step = 0; step < count; step++) {
    const s = choose();
    if (s === undefined) break;
    place(s, 1);
    splits.push(s);
    refit(splits);
  }
  for (let pass = 0; pass < SWAP_PASSES; pass++) {
    for (let k = 0; k < splits.length; k++) {
      place(splits[k]!, -1);
      const s = choose()!; // the range just freed is a candidate again
      place(s, 1);
      splits[k] = s;
      refit(splits);
    }
  }

  return splits.map(({ r, x }) => {
    const from = tokens[prev(r)]!;
    const span = (tokens[r]! - from + RING_SIZE) % RING_SIZE || RING_SIZE;
    let step = BigInt(Math.floor(x * TWO_64));
    if (step < 1n) step = 1n;
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

/**
 * For the range ending at each token r, with Z the newcomer's zone:
 * `gap[r]`: length from the last Z token at or before the range's start up to that start;
 * `last[r]`: index of that Z token; `next[r]`: index of the first Z token at or after r
 * (its owner gives up zone ownership to a token placed in range r; it also names the
 * zone range that range r lies in). Requires at least one Z token.
 */
function zoneNeighbours(
  len: Float64Array,
  own: Int32Array,
  inZone: Uint8Array,
): { gap: Float64Array; last: Int32Array; next: Int32Array } {
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
