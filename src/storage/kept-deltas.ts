/**
 * What a write batch does to the kept trees (kept-trees.ts): which units each data op's
 * key falls in, and the leaf deltas `+eh(new) − eh(prior)` of the batch's ops, summed per
 * unit and leaf (sums mod 2^64 are a group, so deltas are exact).
 *
 * Owns: the index of registered units by class and token (`UnitIndex`), what a record is
 * hashed by, and the batch's deltas. Must not: apply the deltas or write the journal
 * (kept-trees.ts and kept-disk.ts do), or decide which units are registered.
 */
import { tryDecode, versionBytes, versionsSpan } from '../kinds/versions/codec.js';
import type { Delta, Unit } from './kept-disk.js';
import { tokenOfDataKey, userKeyOf } from './keys.js';
import type { TokenRange } from './keys.js';
import { entryHashOf } from './range-hash.js';
import { hashInto } from '../ring/index.js';
import type { QueueOp } from './write-queue.js';

/** The versions bytes an entry is hashed by (a corrupt record: its raw bytes, as Ranges.tree does). */
export const hashed = (record: Buffer): Buffer => tryDecode(versionBytes, record) ?? record;
/**
 * The same for a record known intact, without checking its checksum again: a record being
 * written (every data put's value is one the store has just encoded, or stored as received
 * once skimRecord verified its checksum: store.ts #persist, #copy), or a prior its writer
 * decoded (`priorIntact`).
 */
const hashedIntact = (record: Buffer): Buffer => tryDecode(versionsSpan, record) ?? record;

const kh = new Uint32Array(2);
const hb = new Uint32Array(2);
const ha = new Uint32Array(2);

/** Does the range (start, end] hold token t (start = end: the whole ring)? */
function contains(r: TokenRange, t: bigint): boolean {
  if (r.start === r.end) return true;
  return r.start < r.end ? r.start < t && t <= r.end : t > r.start || t <= r.end;
}

/** The registered units (ready or building) per class, each class's sorted by range end, for finding a token's. */
export class UnitIndex {
  #byClass = new Map<number, Unit[]>();

  /** Indexes these units, in place of those indexed before. */
  reindex(units: Iterable<Unit>): void {
    const by = new Map<number, Unit[]>();
    for (const u of units) {
      const list = by.get(u.n);
      if (list === undefined) by.set(u.n, [u]);
      else list.push(u);
    }
    for (const list of by.values())
      list.sort((a, b) => (a.range.end < b.range.end ? -1 : a.range.end > b.range.end ? 1 : 0));
    this.#byClass = by;
  }

  /** No unit is registered. */
  get empty(): boolean {
    return this.#byClass.size === 0;
  }

  /** A class other than 0 has units: a key's own class must be looked up. */
  get perClass(): boolean {
    return this.#byClass.size > 1 || !this.#byClass.has(0);
  }

  /** The classes that have units. */
  classes(): IterableIterator<number> {
    return this.#byClass.keys();
  }

  /** The registered units of class n whose range holds `token` (one, for a class's disjoint ranges). */
  find(n: number, token: bigint, out: Unit[]): void {
    const list = this.#byClass.get(n);
    if (list === undefined) return;
    if (list.length > 8) {
      // Sorted by end: the first unit ending at or after the token, then any that wrap.
      let lo = 0,
        hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (list[mid]!.range.end < token) lo = mid + 1;
        else hi = mid;
      }
      for (let i = lo; i < list.length; i++) {
        const u = list[i]!;
        if (u.range.start < u.range.end) {
          if (u.range.start < token) out.push(u);
          break;
        }
      }
      for (const u of list) if (u.range.start >= u.range.end && contains(u.range, token)) out.push(u);
      return;
    }
    for (const u of list) if (contains(u.range, token)) out.push(u);
  }
}

/**
 * The leaf deltas of a batch's data ops in the units of `index` (class 0's, and those of
 * each key's class, `classOf`), per unit and leaf; undefined when none.
 */
export function batchDeltas(
  ops: readonly QueueOp[],
  index: UnitIndex,
  classOf: ((key: Buffer) => number | undefined) | undefined,
): Map<Unit, Map<number, Delta>> | undefined {
  let touched: Map<Unit, Map<number, Delta>> | undefined;
  const units: Unit[] = [];
  const perClass = index.perClass;
  for (const op of ops) {
    if (op.prior === undefined) continue; // not a data key (the queue refuses a data op without one)
    const dk = op.key as Buffer;
    const token = tokenOfDataKey(dk);
    units.length = 0;
    index.find(0, token, units);
    if (perClass) {
      const n = classOf?.(userKeyOf(dk));
      if (n !== undefined && n !== 0) index.find(n, token, units);
    }
    if (units.length === 0) continue;
    const before = op.prior === null ? undefined : op.priorIntact === true ? hashedIntact(op.prior) : hashed(op.prior);
    const after =
      op.type === 'put'
        ? hashedIntact(Buffer.from(op.value.buffer, op.value.byteOffset, op.value.byteLength))
        : undefined;
    if (before === undefined && after === undefined) continue; // nothing hashed before or after (a damaged key set aside)
    if (before !== undefined && after !== undefined && before.equals(after)) continue; // bookkeeping only: no delta
    touched ??= new Map();
    hashInto(dk, kh); // the key once, each version once, for every unit
    if (before !== undefined) entryHashOf(kh, before, hb);
    if (after !== undefined) entryHashOf(kh, after, ha);
    for (const u of units) addDelta(touched, u, u.tree.leafOf(token), before !== undefined, after !== undefined);
  }
  return touched;
}

/** Adds to unit u's delta of `leaf` the entry hashes in hb (`minus`: the prior's, taken away) and ha (`plus`: the new one's). */
function addDelta(touched: Map<Unit, Map<number, Delta>>, u: Unit, leaf: number, minus: boolean, plus: boolean): void {
  let leaves = touched.get(u);
  if (leaves === undefined) touched.set(u, (leaves = new Map()));
  let d = leaves.get(leaf);
  if (d === undefined) leaves.set(leaf, (d = { hi: 0, lo: 0, count: 0 }));
  if (minus) addTo(d, hb[0]!, hb[1]!, -1);
  if (plus) addTo(d, ha[0]!, ha[1]!, 1);
}

/** Adds (sign 1) or subtracts (-1) an entry's hash halves to a delta, and counts it. */
function addTo(d: Delta, hi: number, lo: number, sign: 1 | -1): void {
  if (sign === -1) {
    lo = (~lo + 1) >>> 0;
    hi = (~hi + (lo === 0 ? 1 : 0)) >>> 0;
  }
  const sum = d.lo + lo;
  d.lo = sum >>> 0;
  d.hi = (d.hi + hi + (sum > 0xffffffff ? 1 : 0)) >>> 0;
  d.count += sign;
}
