/**
 * The Ring: an immutable snapshot of members and their tokens, and the placement
 * questions asked of it (docs/architecture.md).
 *
 * Owns: building a ring from members and their tokens, lookups of a key's preference
 * list, ownership shares, the difference between two rings, and the ring with one member
 * more or less (its tokens given, or a leaver's handed to given heirs).
 * A lookup is one hash, one bucket-narrowed binary search over the sorted tokens (as
 * uint32 pairs: no BigInt on the hot path) and one read of a flat table: the replica
 * lists of every token range are computed once per n, on first use, and kept.
 *
 * Must not: do I/O, keep timers, or change after construction (the per-n tables are
 * computed lazily but are invisible to callers). Up/down is not the ring's business:
 * `targets` takes the caller's opinion as a function. Nor is choosing tokens or heirs:
 * the claim functions do (claim.ts), and this file imports no allocator.
 */

import { RingError } from './ring-errors.js';
import { type Target, targetsWithFallbacks } from './fallbacks.js';
import { hashInto, tokenOf } from './hash.js';
import {
  type Member,
  type NormalizedMember,
  type TokenedMember,
  byId,
  normalizeMember,
  normalizeMembers,
} from './member.js';
import { type RingOptions, resolveOptions } from './ring-options.js';
import { ReplicaSelector, type Topology, topologyOf } from './placement.js';
import { arcFraction, compareTokens, tokenHex, tokenHi, tokenLo } from './tokens.js';

export type { Target } from './fallbacks.js';

/** A member of a built ring: every field filled in, tokens sorted ascending. */
export type RingMember = TokenedMember;

/** One token range whose replica set differs between two rings: tokens in (start, end]. */
export interface RangeChange {
  /** Exclusive start. The range wraps past 2^64 − 1 when end < start; start === end is the whole ring. */
  readonly start: bigint;
  /** Inclusive end. */
  readonly end: bigint;
  readonly before: readonly string[];
  readonly after: readonly string[];
}

/** One token range of a ring with its replicas: tokens in (start, end]. */
export interface RingRange {
  readonly start: bigint;
  readonly end: bigint;
  readonly replicas: readonly string[];
}

/** Largest ring accepted: keeps a snapshot (and its per-n tables) within tens of MB. */
export const MAX_RING_TOKENS = 1 << 22;

const H = new Uint32Array(2);

export class Ring {
  /** Members sorted by id; a node's index is its position here. */
  readonly #members: readonly RingMember[];
  readonly #ids: readonly string[];
  readonly #index: ReadonlyMap<string, number>;
  readonly #options: Required<RingOptions>;
  /** Sorted tokens; #pos[2i], #pos[2i + 1] = high and low halves of token i; #owner[i] its member. */
  readonly #tokens: readonly bigint[];
  readonly #pos: Uint32Array;
  readonly #owner: Uint32Array;
  /**
   * Bucket index: tokens whose top bits are b start at #bucket[b] (#bucket[last] = count).
   * A lookup searches one bucket, about one token, instead of the whole array.
   */
  readonly #bucket: Uint32Array;
  readonly #shift: number;
  readonly #topology: Topology;
  /**
   * #tables[n]: for range i (ending at token i), its n replicas as member indices at
   * [i·n, i·n + n). Flat, so that a lookup reads one cache line, not an array object;
   * never handed out: callers get fresh arrays of ids.
   */
  readonly #tables: (Uint32Array | undefined)[] = [];

  private constructor(members: readonly RingMember[], options: Required<RingOptions>) {
    this.#members = Object.freeze([...members]);
    this.#ids = Object.freeze(members.map((m) => m.id));
    this.#index = new Map(members.map((m, i) => [m.id, i]));
    this.#options = options;
    let total = 0;
    for (const m of members) total += m.tokens.length;
    if (total > MAX_RING_TOKENS) {
      throw new RingError(
        'RING_BAD_OPTION',
        `the ring would hold ${total} tokens, more than ${MAX_RING_TOKENS}; use fewer tokens per node`,
      );
    }
    // Sort by (high, low) halves: numbers compare far faster than bigints.
    const hi = new Uint32Array(total);
    const lo = new Uint32Array(total);
    const owners = new Uint32Array(total);
    const all: bigint[] = new Array(total);
    let k = 0;
    members.forEach((m, v) => {
      for (const t of m.tokens) {
        all[k] = t;
        hi[k] = tokenHi(t);
        lo[k] = tokenLo(t);
        owners[k++] = v;
      }
    });
    const order = Uint32Array.from({ length: total }, (_, i) => i).sort((a, b) => hi[a]! - hi[b]! || lo[a]! - lo[b]!);
    this.#tokens = Object.freeze(Array.from(order, (i) => all[i]!));
    this.#owner = order.map((i) => owners[i]!);
    this.#pos = new Uint32Array(2 * total);
    order.forEach((i, j) => {
      this.#pos[2 * j] = hi[i]!;
      this.#pos[2 * j + 1] = lo[i]!;
    });
    for (let i = 1; i < total; i++) {
      if (this.#tokens[i] === this.#tokens[i - 1]) {
        const a = this.#ids[this.#owner[i - 1]!];
        const b = this.#ids[this.#owner[i]!];
        throw new RingError('RING_BAD_TOKEN', `token ${tokenHex(this.#tokens[i]!)} is claimed by both ${a} and ${b}`);
      }
    }
    const bits = Math.min(20, Math.max(1, Math.ceil(Math.log2(total + 1))));
    this.#shift = 32 - bits;
    this.#bucket = new Uint32Array((1 << bits) + 1);
    for (let i = 0, b = 0; b <= 1 << bits; b++) {
      while (i < total && this.#pos[2 * i]! >>> this.#shift < b) i++;
      this.#bucket[b] = i;
    }
    this.#topology = topologyOf(
      members.map((m) => m.zone),
      members.map((m) => m.rack),
    );
  }

  /**
   * Build a ring from members that all have their tokens (a ring holds tokens; it does
   * not choose them: claimRing in claim.ts gives tokens to members without, then builds).
   * `options` are carried for the claims made on this ring. The result depends only on
   * the members and options, not on their order.
   */
  static build(members: readonly Member[], options: RingOptions = {}): Ring {
    const resolved = resolveOptions(options);
    const normalized = normalizeMembers(members);
    if (normalized.length === 0) {
      throw new RingError('RING_EMPTY', 'a ring needs at least one member; pass [{ id: "n1", tokens: [...] }] or more');
    }
    return new Ring(normalized.map(tokened), resolved);
  }

  /** This ring with one more member, with its tokens (claimJoin in claim.ts chooses them); nobody else's tokens change. */
  withMember(member: Member): Ring {
    const m = normalizeMember(member);
    if (this.#index.has(m.id)) {
      throw new RingError('RING_DUPLICATE_MEMBER', `${m.id} is already a member; remove it first to change it`);
    }
    return new Ring([...this.#members, tokened(m)].sort(byId), this.#options);
  }

  /**
   * This ring without the member `id`; everyone else keeps their tokens. With `heirs`
   * (token → member, as `leaveHeirs` gives), each of id's tokens named there goes to its
   * heir instead of being dropped; a token not named is dropped.
   */
  withoutMember(id: string, heirs?: ReadonlyMap<bigint, string>): Ring {
    if (!this.#index.has(id)) throw new RingError('RING_UNKNOWN_MEMBER', `${String(id)} is not a member of this ring`);
    if (this.#members.length === 1) {
      throw new RingError('RING_EMPTY', `${id} is the last member; a ring needs at least one member`);
    }
    const gained = new Map<string, bigint[]>();
    const own = new Set(this.member(id)!.tokens);
    for (const [t, heir] of heirs ?? []) {
      if (!own.has(t))
        throw new RingError(
          'RING_BAD_TOKEN',
          `token ${tokenHex(t)} is not one of ${id}'s tokens; heirs can only inherit the leaver's tokens`,
        );
      if (heir === id || !this.#index.has(heir))
        throw new RingError(
          'RING_UNKNOWN_MEMBER',
          `heir ${String(heir)} is not a member of this ring other than ${id}`,
        );
      gained.set(heir, [...(gained.get(heir) ?? []), t]);
    }
    return new Ring(
      this.#members
        .filter((m) => m.id !== id)
        .map((m) => (gained.has(m.id) ? { ...m, tokens: [...m.tokens, ...gained.get(m.id)!].sort(compareTokens) } : m)),
      this.#options,
    );
  }

  /** Members sorted by id, with their tokens. */
  get members(): readonly RingMember[] {
    return this.#members;
  }

  member(id: string): RingMember | undefined {
    const i = this.#index.get(id);
    return i === undefined ? undefined : this.#members[i];
  }

  has(id: string): boolean {
    return this.#index.has(id);
  }

  /** Number of members (distinct physical nodes). */
  get size(): number {
    return this.#members.length;
  }

  /** All tokens, sorted ascending. */
  get tokens(): readonly bigint[] {
    return this.#tokens;
  }

  /** The options claims on this ring allocate with (passed on to the rings derived from it). */
  get options(): Required<RingOptions> {
    return { ...this.#options };
  }

  /**
   * The n distinct nodes that hold `key`, primary first (see placement.ts for the
   * zone- and rack-aware rule). Throws RING_BAD_REPLICAS unless 1 ≤ n ≤ size.
   */
  preferenceList(key: string | Uint8Array, n: number): string[] {
    const table = this.#tableFor(n);
    if (typeof key !== 'string' && !(key instanceof Uint8Array)) {
      throw new RingError('RING_BAD_OPTION', `a key must be a string or a Uint8Array, got ${typeof key}`);
    }
    hashInto(key, H);
    return this.#list(table, this.#search(H[0]!, H[1]!), n);
  }

  /** The n replicas of the range that holds `token` (a key's token is `tokenOf(key)`). */
  replicasForToken(token: bigint, n: number): string[] {
    const table = this.#tableFor(n);
    return this.#list(table, this.#search(tokenHi(token), tokenLo(token)), n);
  }

  /** The range (start, end] that holds `token`: end is the first token at or after it. */
  rangeOf(token: bigint): { start: bigint; end: bigint } {
    const i = this.#search(tokenHi(token), tokenLo(token));
    const t = this.#tokens;
    return { start: t[i === 0 ? t.length - 1 : i - 1]!, end: t[i]! };
  }

  /**
   * Every distinct node in clockwise order of first appearance from the range that
   * holds `token`. The coordinator takes fallbacks for down replicas from here.
   */
  walk(token: bigint): string[] {
    const start = this.#search(tokenHi(token), tokenLo(token));
    const seen = new Set<number>();
    const out: string[] = [];
    for (let s = 0; s < this.#owner.length && seen.size < this.#members.length; s++) {
      const v = this.#owner[(start + s) % this.#owner.length]!;
      if (!seen.has(v)) {
        seen.add(v);
        out.push(this.#ids[v]!);
      }
    }
    return out;
  }

  /**
   * Where a request for `key` goes when some replicas may be down: the up primaries in
   * place, and for each down primary a fallback annotated with whom it stands in for
   * (see fallbacks.ts). Fewer than n targets when too few nodes are up. `canStandIn`
   * narrows which up nodes may be fallbacks (say, not one that is leaving).
   */
  targets(
    key: string | Uint8Array,
    n: number,
    isUp: (id: string) => boolean,
    canStandIn?: (id: string) => boolean,
  ): Target[] {
    const primaries = this.preferenceList(key, n);
    if (primaries.every(isUp)) return primaries.map((id) => ({ id }));
    return targetsWithFallbacks(primaries, this.walk(tokenOf(key)), (id) => this.member(id)!.zone, isUp, canStandIn);
  }

  /** Every token range (start, end] with its n replicas, in token order. */
  ranges(n: number): RingRange[] {
    const table = this.#tableFor(n);
    const t = this.#tokens;
    return t.map((end, i) => ({ start: t[i === 0 ? t.length - 1 : i - 1]!, end, replicas: this.#list(table, i, n) }));
  }

  /**
   * Map of node id → fraction of the token space for which the node is among the first
   * n replicas (n = 1: primary ownership). The values sum to n.
   */
  ownership(n = 1): Map<string, number> {
    const table = this.#tableFor(n);
    const share = new Float64Array(this.#members.length);
    const t = this.#tokens;
    for (let i = 0; i < t.length; i++) {
      const len = arcFraction(t[i === 0 ? t.length - 1 : i - 1]!, t[i]!);
      for (let k = i * n; k < i * n + n; k++) share[table[k]!]! += len;
    }
    return new Map(this.#ids.map((id, v) => [id, share[v]!]));
  }

  /**
   * The token ranges whose replica set (as a set) differs between two rings, coalesced,
   * in token order: exactly what must be streamed when `before` becomes `after`.
   * `nAfter` (default n) is the replica count in `after`, for a cluster smaller than N
   * whose keys are on every member: a join then adds a replica to every range.
   */
  static diff(before: Ring, after: Ring, n: number, nAfter = n): RangeChange[] {
    before.#tableFor(n); // validates n against both rings before any work
    after.#tableFor(nAfter);
    const bounds = unionSorted(before.#tokens, after.#tokens);
    const raw: RangeChange[] = [];
    for (let k = 0; k < bounds.length; k++) {
      const end = bounds[k]!;
      const b = before.replicasForToken(end, n);
      const a = after.replicasForToken(end, nAfter);
      if (sameSet(b, a)) continue;
      const start = bounds[k === 0 ? bounds.length - 1 : k - 1]!;
      const last = raw[raw.length - 1];
      if (last !== undefined && last.end === start && sameList(last.before, b) && sameList(last.after, a)) {
        raw[raw.length - 1] = { ...last, end };
      } else {
        raw.push({ start, end, before: b, after: a });
      }
    }
    // Join the last range with the first when they meet across 2^64 − 1 → 0.
    if (raw.length > 1) {
      const first = raw[0]!;
      const last = raw[raw.length - 1]!;
      if (last.end === first.start && sameList(last.before, first.before) && sameList(last.after, first.after)) {
        raw[0] = { ...first, start: last.start };
        raw.pop();
      }
    }
    return raw;
  }

  /** A fresh array of the ids of range i's n replicas. */
  #list(table: Uint32Array, i: number, n: number): string[] {
    const ids = this.#ids;
    const out: string[] = new Array(n);
    for (let k = 0, at = i * n; k < n; k++) out[k] = ids[table[at + k]!]!;
    return out;
  }

  /** Index of the first token ≥ (hi, lo), wrapping to 0 past the last token. */
  #search(hi: number, lo: number): number {
    const pos = this.#pos;
    const bucket = hi >>> this.#shift;
    let a = this.#bucket[bucket]!;
    let b = this.#bucket[bucket + 1]!; // the answer is at most the next bucket's first token
    while (a < b) {
      const mid = (a + b) >>> 1;
      const h = pos[2 * mid]!;
      if (h < hi || (h === hi && pos[2 * mid + 1]! < lo)) a = mid + 1;
      else b = mid;
    }
    return a === this.#owner.length ? 0 : a;
  }

  /** The replica lists of every range for n, computed on first use. */
  #tableFor(n: number): Uint32Array {
    return this.#tables[n] ?? this.#computeTable(n);
  }

  #computeTable(n: number): Uint32Array {
    if (!Number.isInteger(n) || n < 1 || n > this.#members.length) {
      throw new RingError(
        'RING_BAD_REPLICAS',
        `n must be an integer in 1..${this.#members.length} (the ring's distinct nodes), got ${String(n)}`,
      );
    }
    const selector = new ReplicaSelector(this.#topology);
    const m = this.#owner.length;
    const table = new Uint32Array(m * n);
    for (let i = 0; i < m; i++) table.set(selector.select(this.#owner, i, n), i * n);
    this.#tables[n] = table;
    return table;
  }
}

/** A member that must have its tokens: the ring holds tokens, it does not choose them. */
function tokened(m: NormalizedMember): TokenedMember {
  if (m.tokens === undefined) {
    throw new RingError(
      'RING_BAD_TOKEN',
      `member ${m.id} has no tokens; a ring does not choose them: claim them with claimRing (a new ring) or joinRing (a join)`,
    );
  }
  return m as TokenedMember;
}

/** The sorted union of two sorted token lists, each token once. */
function unionSorted(a: readonly bigint[], b: readonly bigint[]): bigint[] {
  const out: bigint[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = j >= b.length || (i < a.length && a[i]! <= b[j]!) ? a[i++]! : b[j++]!;
    if (out.length === 0 || out[out.length - 1] !== x) out.push(x);
  }
  return out;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
