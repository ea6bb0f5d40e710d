/**
 * The Ring: an immutable snapshot of members and their tokens, and the placement
 * questions asked of it (DESIGN.md, decisions 1 and 2).
 *
 * Owns: building a ring (allocating tokens for members that have none), lookups of a
 * key's preference list, ownership shares, and the ring with one member more or less.
 * A lookup is one hash, one binary search over the sorted tokens (kept as two uint32
 * arrays: no BigInt on the hot path) and one array read: the replica lists of every
 * token range are computed once per n, on first use, and kept.
 *
 * Must not: do I/O, keep timers, or change after construction (the cached per-n tables
 * are invisible to callers). Up/down is not the ring's business: fallbacks for down
 * nodes are computed by callers from `walk`.
 */

import { layoutTokens, randomTokens, tokenCount } from './allocate-tokens.js';
import { joinTokens } from './join-tokens.js';
import { RingError } from './errors.js';
import { hashInto, tokenOf } from './hash.js';
import { type Member, type NormalizedMember, normalizeMember, normalizeMembers } from './member.js';
import { ReplicaSelector, type Topology, topologyOf } from './placement.js';
import { arcFraction, tokenHex, tokenHi, tokenLo } from './tokens.js';

/** A member of a built ring: every field filled in, tokens sorted ascending. */
export interface RingMember {
  readonly id: string;
  readonly zone: string;
  readonly rack: string;
  readonly weight: number;
  readonly tokens: readonly bigint[];
}

export type Allocation = 'balanced' | 'random';

export interface RingOptions {
  /**
   * Tokens for a node of weight 1 (a node of weight w gets round(w × this), at least 1).
   * Default 64: the balanced allocator then keeps the busiest node within 5% of its fair
   * share, primary and replicated, from 12 to 999 nodes and through joins (bench/ring.ts).
   */
  readonly tokensPerNode?: number | undefined;
  /** 'balanced' (default): tokens chosen to even out ownership. 'random': hash-derived. */
  readonly allocation?: Allocation | undefined;
  /** Seed for the allocators' deterministic choices (default 'ringkv'). */
  readonly seed?: string | undefined;
}

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

export const DEFAULT_TOKENS_PER_NODE = 64;
const MAX_TOKENS_PER_NODE = 4096;
/** Largest ring accepted: keeps a snapshot (and its per-n tables) within tens of MB. */
export const MAX_RING_TOKENS = 1 << 22;

interface ResolvedOptions {
  readonly tokensPerNode: number;
  readonly allocation: Allocation;
  readonly seed: string;
}

function resolveOptions(options: RingOptions): ResolvedOptions {
  const { tokensPerNode = DEFAULT_TOKENS_PER_NODE, allocation = 'balanced', seed = 'ringkv' } = options ?? {};
  if (!Number.isInteger(tokensPerNode) || tokensPerNode < 1 || tokensPerNode > MAX_TOKENS_PER_NODE) {
    throw new RingError(
      'RING_BAD_OPTION',
      `tokensPerNode must be an integer in 1..${MAX_TOKENS_PER_NODE}, got ${String(tokensPerNode)}`,
    );
  }
  if (allocation !== 'balanced' && allocation !== 'random') {
    throw new RingError('RING_BAD_OPTION', `allocation must be 'balanced' or 'random', got ${String(allocation)}`);
  }
  if (typeof seed !== 'string') throw new RingError('RING_BAD_OPTION', `seed must be a string, got ${typeof seed}`);
  return { tokensPerNode, allocation, seed };
}

const H = new Uint32Array(2);

export class Ring {
  /** Members sorted by id; a node's index is its position here. */
  readonly #members: readonly RingMember[];
  readonly #index: ReadonlyMap<string, number>;
  readonly #options: ResolvedOptions;
  /** Sorted tokens, as bigints and as uint32 halves, with the owner (member index) of each. */
  readonly #tokens: readonly bigint[];
  readonly #hi: Uint32Array;
  readonly #lo: Uint32Array;
  readonly #owner: Uint32Array;
  readonly #topology: Topology;
  /** #tables[n][i] = the n replicas of the range ending at token i (frozen, shared). */
  readonly #tables: (readonly (readonly string[])[] | undefined)[] = [];

  private constructor(members: readonly RingMember[], options: ResolvedOptions) {
    this.#members = Object.freeze([...members]);
    this.#index = new Map(members.map((m, i) => [m.id, i]));
    this.#options = options;
    let total = 0;
    for (const m of members) total += m.tokens.length;
    if (total > MAX_RING_TOKENS) {
      throw new RingError('RING_BAD_OPTION', `the ring would hold ${total} tokens, more than ${MAX_RING_TOKENS}; use fewer tokens per node`);
    }
    const tokens: bigint[] = new Array(total);
    const owners = new Uint32Array(total);
    let k = 0;
    members.forEach((m, v) => {
      for (const t of m.tokens) {
        tokens[k] = t;
        owners[k++] = v;
      }
    });
    const order = Array.from({ length: total }, (_, i) => i);
    order.sort((a, b) => (tokens[a]! < tokens[b]! ? -1 : tokens[a]! > tokens[b]! ? 1 : 0));
    this.#tokens = Object.freeze(order.map((i) => tokens[i]!));
    this.#owner = Uint32Array.from(order, (i) => owners[i]!);
    for (let i = 1; i < total; i++) {
      if (this.#tokens[i] === this.#tokens[i - 1]) {
        const a = members[this.#owner[i - 1]!]!.id;
        const b = members[this.#owner[i]!]!.id;
        throw new RingError('RING_BAD_TOKEN', `token ${tokenHex(this.#tokens[i]!)} is claimed by both ${a} and ${b}`);
      }
    }
    this.#hi = Uint32Array.from(this.#tokens, tokenHi);
    this.#lo = Uint32Array.from(this.#tokens, tokenLo);
    this.#topology = topologyOf(
      members.map((m) => m.zone),
      members.map((m) => m.rack),
    );
  }

  /**
   * Build a ring. Members without tokens get them from the allocator: on a ring where
   * nobody has tokens yet, all at once (`layoutTokens`); otherwise one by one, in id
   * order, as if each joined the members that have tokens (`joinTokens`). The result
   * depends only on the members and options, not on their order.
   */
  static build(members: readonly Member[], options: RingOptions = {}): Ring {
    const resolved = resolveOptions(options);
    const normalized = normalizeMembers(members);
    if (normalized.length === 0) {
      throw new RingError('RING_EMPTY', 'a ring needs at least one member; pass [{ id: "n1" }] or more');
    }
    const withTokens = normalized.filter((m) => m.tokens !== undefined) as RingMember[];
    const without = normalized.filter((m) => m.tokens === undefined);
    if (without.length === 0) return new Ring(normalized as RingMember[], resolved);
    if (resolved.allocation === 'balanced' && withTokens.length === 0) {
      const seed = Number(tokenOf(`${resolved.seed}\n${normalized.map((m) => m.id).join('\n')}`) & 0xffffffffn);
      const laid = layoutTokens(
        normalized.map((m) => ({ zone: m.zone, count: tokenCount(m.weight, resolved.tokensPerNode) })),
        seed,
      );
      return new Ring(
        normalized.map((m, i) => ({ ...m, tokens: Object.freeze(laid[i]!) })),
        resolved,
      );
    }
    let ring = new Ring(withTokens.length > 0 ? withTokens : [], resolved);
    for (const m of without) ring = ring.#with(m);
    return ring;
  }

  /** This ring with one more member; only the newcomer's tokens are new. */
  withMember(member: Member): Ring {
    const m = normalizeMember(member);
    if (this.#index.has(m.id)) {
      throw new RingError('RING_DUPLICATE_MEMBER', `${m.id} is already a member; remove it first to change it`);
    }
    return this.#with(m);
  }

  #with(m: NormalizedMember): Ring {
    const { tokensPerNode, allocation, seed } = this.#options;
    let tokens = m.tokens;
    if (tokens === undefined) {
      const count = tokenCount(m.weight, tokensPerNode);
      if (allocation === 'random') {
        tokens = randomTokens(m.id, count, seed, new Set(this.#tokens));
      } else {
        tokens = joinTokens({
          tokens: this.#tokens,
          owners: Array.from(this.#owner),
          zoneOf: [...this.#members.map((x) => x.zone), m.zone],
          weights: [...this.#members.map((x) => x.weight), m.weight],
          newcomer: this.#members.length,
          count,
        });
      }
    }
    const added: RingMember = Object.freeze({ ...m, tokens: Object.freeze([...tokens]) });
    const members = [...this.#members, added].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return new Ring(members, this.#options);
  }

  /** This ring without the member `id`; everyone else keeps their tokens. */
  withoutMember(id: string): Ring {
    if (!this.#index.has(id)) throw new RingError('RING_UNKNOWN_MEMBER', `${String(id)} is not a member of this ring`);
    if (this.#members.length === 1) {
      throw new RingError('RING_EMPTY', `${id} is the last member; a ring needs at least one member`);
    }
    return new Ring(
      this.#members.filter((m) => m.id !== id),
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

  /** The options this ring allocates with (and passes to the rings derived from it). */
  get options(): Required<RingOptions> {
    return { ...this.#options };
  }

  /**
   * The n distinct nodes that hold `key`, primary first (see placement.ts for the
   * zone- and rack-aware rule). Throws RING_BAD_REPLICAS unless 1 ≤ n ≤ size.
   */
  preferenceList(key: string | Uint8Array, n: number): string[] {
    const table = this.#tables[n] ?? this.#table(n);
    if (typeof key !== 'string' && !(key instanceof Uint8Array)) {
      throw new RingError('RING_BAD_OPTION', `a key must be a string or a Uint8Array, got ${typeof key}`);
    }
    hashInto(key, H);
    return table[this.#search(H[0]!, H[1]!)]!.slice();
  }

  /** The n replicas of the range that holds `token` (a key's token is `tokenOf(key)`). */
  replicasForToken(token: bigint, n: number): readonly string[] {
    const table = this.#tables[n] ?? this.#table(n);
    return table[this.#search(tokenHi(token), tokenLo(token))]!;
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
        out.push(this.#members[v]!.id);
      }
    }
    return out;
  }

  /** Every token range (start, end] with its n replicas, in token order. */
  ranges(n: number): RingRange[] {
    const table = this.#tables[n] ?? this.#table(n);
    const t = this.#tokens;
    return t.map((end, i) => ({ start: t[i === 0 ? t.length - 1 : i - 1]!, end, replicas: table[i]! }));
  }

  /**
   * Map of node id → fraction of the token space for which the node is among the first
   * n replicas (n = 1: primary ownership). The values sum to n.
   */
  ownership(n = 1): Map<string, number> {
    const table = this.#tables[n] ?? this.#table(n);
    const share = new Float64Array(this.#members.length);
    const t = this.#tokens;
    const ids = new Map(this.#members.map((m, i) => [m.id, i]));
    for (let i = 0; i < t.length; i++) {
      const len = arcFraction(t[i === 0 ? t.length - 1 : i - 1]!, t[i]!);
      for (const id of table[i]!) share[ids.get(id)!]! += len;
    }
    return new Map(this.#members.map((m, i) => [m.id, share[i]!]));
  }

  /**
   * The token ranges whose replica set (as a set) differs between two rings, coalesced,
   * in token order: exactly what must be streamed when `before` becomes `after`.
   */
  static diff(before: Ring, after: Ring, n: number): RangeChange[] {
    const tb = before.#tables[n] ?? before.#table(n);
    const ta = after.#tables[n] ?? after.#table(n);
    const bounds = mergeSorted(before.#tokens, after.#tokens);
    const raw: RangeChange[] = [];
    for (let k = 0; k < bounds.length; k++) {
      const end = bounds[k]!;
      const b = tb[before.#search(tokenHi(end), tokenLo(end))]!;
      const a = ta[after.#search(tokenHi(end), tokenLo(end))]!;
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

  /** Index of the first token ≥ (hi, lo), wrapping to 0 past the last token. */
  #search(hi: number, lo: number): number {
    const his = this.#hi;
    const los = this.#lo;
    let a = 0;
    let b = his.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      const h = his[mid]!;
      if (h < hi || (h === hi && los[mid]! < lo)) a = mid + 1;
      else b = mid;
    }
    return a === his.length ? 0 : a;
  }

  /** Compute (once) the replica lists of every range for n. */
  #table(n: number): readonly (readonly string[])[] {
    if (!Number.isInteger(n) || n < 1 || n > this.#members.length) {
      throw new RingError(
        'RING_BAD_REPLICAS',
        `n must be an integer in 1..${this.#members.length} (the ring's distinct nodes), got ${String(n)}`,
      );
    }
    const selector = new ReplicaSelector(this.#topology);
    const ids = this.#members.map((m) => m.id);
    // Consecutive ranges often share a list: reuse the frozen array (saves memory).
    let previous: readonly string[] = [];
    const table = Array.from(this.#owner, (_, i) => {
      const picked = selector.select(this.#owner, i, n);
      const list = picked.map((v) => ids[v]!);
      if (!sameList(list, previous)) previous = Object.freeze(list);
      return previous;
    });
    this.#tables[n] = table;
    return table;
  }
}

function mergeSorted(a: readonly bigint[], b: readonly bigint[]): bigint[] {
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
  return a === b || (a.length === b.length && a.every((x, i) => x === b[i]));
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (const x of a) if (!b.includes(x)) return false;
  return true;
}
