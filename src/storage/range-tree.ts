/**
 * A Merkle tree over the records of one token range, for anti-entropy: replicas of a range
 * build it from their own records, compare it top-down, and exchange only the records of
 * the leaves that differ.
 *
 * The range (start, end] is cut into 16^depth leaves of equal token width; a leaf's digest
 * is the RangeHash sum (range-hash.ts) of the entries whose token falls in it, and an inner
 * node's is the sum of its 16 children, so the root is the range's `Ranges.hash`. Sums do
 * not depend on the order entries are added in, so replicas that store the range among
 * different other ranges build identical trees from identical records.
 *
 * Depth follows the number of keys (about KEYS_PER_LEAF per leaf, at most 16^MAX_DEPTH
 * leaves), chosen by whoever starts the comparison and used by every replica.
 *
 * Must not: read storage (Ranges.tree does) or talk to peers (handoff does).
 */
import type { TokenRange } from './keys.js';
import { entryHash } from './range-hash.js';

export const FANOUT = 16;
/** Deepest tree: 16^4 = 65,536 leaves (Riak's AAE uses up to 1M segments per partition). */
export const MAX_DEPTH = 4;
/** Keys a leaf holds on average, at the depth `depthFor` picks. */
export const KEYS_PER_LEAF = 16;

const RING = 1n << 64n;

/** The depth that gives about KEYS_PER_LEAF keys per leaf for `keys` keys. */
export function depthFor(keys: number): number {
  let depth = 0;
  while (depth < MAX_DEPTH && FANOUT ** depth * KEYS_PER_LEAF < keys) depth++;
  return depth;
}

const scratch = new Uint32Array(2);

/** −(hi, lo) mod 2^64, as halves. */
function negate(hi: number, lo: number): [number, number] {
  const nlo = (~lo + 1) >>> 0;
  return [(~hi + (nlo === 0 ? 1 : 0)) >>> 0, nlo];
}

export class RangeTree {
  readonly leaves: number;
  readonly #start: bigint;
  /** Tokens in the range, and in each leaf (the last leaf may have fewer). */
  readonly #span: bigint;
  readonly #leafSpan: bigint;
  /** #hi[level][i], #lo[level][i]: the digest halves of node i of a level (0: the root). */
  readonly #hi: Uint32Array[];
  readonly #lo: Uint32Array[];
  readonly #counts: Uint32Array;
  /** Inner levels are summed from the leaves when first read after an add. */
  #dirty = false;

  constructor(
    readonly range: TokenRange,
    readonly depth: number,
  ) {
    if (!Number.isInteger(depth) || depth < 0 || depth > MAX_DEPTH)
      throw new RangeError(`tree depth must be a whole number from 0 to ${MAX_DEPTH}, got ${depth}`);
    this.leaves = FANOUT ** depth;
    this.#start = range.start;
    this.#span = range.start === range.end ? RING : (range.end - range.start + RING) % RING;
    this.#leafSpan = (this.#span + BigInt(this.leaves) - 1n) / BigInt(this.leaves);
    this.#hi = Array.from({ length: depth + 1 }, (_, l) => new Uint32Array(FANOUT ** l));
    this.#lo = Array.from({ length: depth + 1 }, (_, l) => new Uint32Array(FANOUT ** l));
    this.#counts = new Uint32Array(this.leaves);
  }

  /** The leaf a token of the range falls in. */
  leafOf(token: bigint): number {
    const offset = (token - this.#start - 1n + RING) % RING;
    if (offset >= this.#span) throw new RangeError(`token ${token.toString(16)} is outside the tree's range`);
    return Number(offset / this.#leafSpan);
  }

  /**
   * The token range (start, end] of leaf i; undefined for a leaf no token falls in (a
   * range narrower than its leaves count leaves the last ones empty).
   */
  leafRange(i: number): TokenRange | undefined {
    const from = BigInt(i) * this.#leafSpan;
    if (from >= this.#span) return undefined;
    const to = BigInt(i + 1) * this.#leafSpan;
    return { start: (this.#start + from) % RING, end: (this.#start + (to < this.#span ? to : this.#span)) % RING };
  }

  /** Add one entry: its token, storage key and canonical versions bytes (as Ranges.hash does). */
  add(token: bigint, key: Uint8Array, versions: Uint8Array): void {
    const i = this.leafOf(token);
    entryHash(key, versions, scratch);
    const hi = this.#hi[this.depth]!,
      lo = this.#lo[this.depth]!;
    const sum = lo[i]! + scratch[1]!;
    lo[i] = sum >>> 0;
    hi[i] = (hi[i]! + scratch[0]! + (sum > 0xffffffff ? 1 : 0)) >>> 0;
    this.#counts[i]!++;
    this.#dirty = true;
  }

  /**
   * Add a signed amount to leaf i: the hash halves (sign −1 subtracts them, mod 2^64) and
   * `count` entries (may be negative). How a kept tree follows a write (kept-trees.ts):
   * sums are a group, so `+eh(new) − eh(prior)` is exact.
   */
  addHash(i: number, hi: number, lo: number, sign: 1 | -1, count: number): void {
    if (sign === -1) [hi, lo] = negate(hi, lo);
    const his = this.#hi[this.depth]!,
      los = this.#lo[this.depth]!;
    const sum = los[i]! + lo;
    los[i] = sum >>> 0;
    his[i] = (his[i]! + hi + (sum > 0xffffffff ? 1 : 0)) >>> 0;
    this.#counts[i] = (this.#counts[i]! + count) >>> 0;
    this.#dirty = true;
  }

  /** Leaf i as [hi, lo, count]: what a kept tree stores for it (12 bytes). */
  leaf(i: number): [number, number, number] {
    return [this.#hi[this.depth]![i]!, this.#lo[this.depth]![i]!, this.#counts[i]!];
  }

  /** Set leaf i (a kept tree loaded from disk). */
  setLeaf(i: number, hi: number, lo: number, count: number): void {
    this.#hi[this.depth]![i] = hi >>> 0;
    this.#lo[this.depth]![i] = lo >>> 0;
    this.#counts[i] = count >>> 0;
    this.#dirty = true;
  }

  /** Add every leaf of `other` (same range and depth) to this tree's. */
  plus(other: RangeTree): void {
    if (other.depth !== this.depth || other.range.start !== this.range.start || other.range.end !== this.range.end)
      throw new RangeError('trees of different ranges or depths do not add up');
    for (let i = 0; i < this.leaves; i++) {
      const [hi, lo, count] = other.leaf(i);
      if (hi !== 0 || lo !== 0 || count !== 0) this.addHash(i, hi, lo, 1, count);
    }
  }

  /** A copy (a consistent snapshot of a kept tree for one repair session). */
  clone(): RangeTree {
    const copy = new RangeTree(this.range, this.depth);
    copy.#hi[this.depth]!.set(this.#hi[this.depth]!);
    copy.#lo[this.depth]!.set(this.#lo[this.depth]!);
    copy.#counts.set(this.#counts);
    copy.#dirty = true;
    return copy;
  }

  /** Entries added in leaf i. */
  count(i: number): number {
    return this.#counts[i]!;
  }

  /** The digest of node `index` of `level` (0 is the root, `depth` the leaves): 16 hex digits. */
  digest(level: number, index: number): string {
    if (this.#dirty) this.#sum();
    const hi = this.#hi[level]?.[index],
      lo = this.#lo[level]?.[index];
    if (hi === undefined || lo === undefined)
      throw new RangeError(`no node ${index} at level ${level} of a depth-${this.depth} tree`);
    return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
  }

  #sum(): void {
    for (let l = this.depth - 1; l >= 0; l--) {
      const hi = this.#hi[l]!,
        lo = this.#lo[l]!,
        chi = this.#hi[l + 1]!,
        clo = this.#lo[l + 1]!;
      for (let i = 0; i < hi.length; i++) {
        let h = 0,
          s = 0;
        for (let c = i * FANOUT; c < (i + 1) * FANOUT; c++) {
          s += clo[c]!;
          h += chi[c]!;
        }
        // s < 16 · 2^32 and h < 16 · 2^32: exact in a double.
        lo[i] = s >>> 0;
        hi[i] = (h + Math.floor(s / 2 ** 32)) >>> 0;
      }
    }
    this.#dirty = false;
  }
}

/**
 * The leaves where `local` and a remote tree of the same range and depth differ, found
 * top-down: the roots, then the children of the nodes that differ, level by level.
 * `remote(level, indices)` answers the remote tree's digests of those nodes (over the
 * network, or from another RangeTree). Also returns how many digests were asked for: the
 * cost of the comparison, 8 bytes each.
 */
export async function differingLeaves(
  local: RangeTree,
  remote: (level: number, indices: readonly number[]) => Promise<readonly string[]> | readonly string[],
): Promise<{ leaves: number[]; digests: number }> {
  let indices = [0];
  let digests = 0;
  for (let level = 0; level <= local.depth; level++) {
    const theirs = await remote(level, indices);
    digests += indices.length;
    const differ = indices.filter((i, k) => theirs[k] !== local.digest(level, i));
    if (level === local.depth || differ.length === 0) return { leaves: level === local.depth ? differ : [], digests };
    indices = differ.flatMap((i) => Array.from({ length: FANOUT }, (_, c) => i * FANOUT + c));
  }
  return { leaves: [], digests };
}
