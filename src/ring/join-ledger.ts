/**
 * The join allocator's cost ledgers (join-tokens.ts): primary ownership and hand-offs
 * over one ring, the whole ring or the newcomer's zone ring, with the cost terms of
 * both and how a new token of the newcomer changes them.
 *
 * Owns: `Ledger` (shares, fair shares, the runs and heirs of tokens, the hand-off table),
 * and `zoneNeighbours` (where the newcomer's zone ring's tokens are around each range).
 * Must not: choose tokens (join-tokens.ts does), model replicated ownership of rings
 * with fewer zones than N (join-replicated.ts), or do I/O.
 */

/**
 * Ownership and hand-offs in one ring (the whole ring, or X's zone ring: the tokens j
 * with member(own[j]), each owning length[j] of that ring), with the cost terms of
 * join-tokens.ts.
 *
 * Hand-offs h[a][b] live in one flat table of slots: one per (owner, heir) pair that
 * occurs in the ring, then X's row h[X][·] and X's column h[·][X]. Each token knows the
 * slot of its own (owner, heir) pair, so the candidate scan reads arrays indexed by
 * token and a table of about m + 2n entries, not an n × n matrix that misses the cache.
 */
export class Ledger {
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

  /** X takes u from the owner of token j: the move moveCoefficients prices, applied (u < 0 reverts it). */
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
export interface ZoneNeighbours {
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
export function zoneNeighbours(len: Float64Array, own: Int32Array, inZone: Uint8Array): ZoneNeighbours {
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
