/**
 * The kept trees (kept-trees.ts) on disk: a unit's leaves and meta under 'a' keys
 * (keys.ts), the journal entry each write batch adds, reading them all back when the store
 * opens, and deleting them all when it opens without kept trees.
 *
 * A leaf's value is hash hi (4), hash lo (4), count (4); an empty leaf has no key. The
 * meta (leaf TREE_META_LEAF) is JSON: builtAt, and the jitter share of the next rebuild.
 * A journal entry lists, for each ready unit its batch touched, a unit header (n, start,
 * end, depth, how many leaves) and each leaf's index and value after the batch.
 *
 * Owns: these byte layouts, and what a unit is in memory (`Unit`). Must not: decide when a
 * journal entry or a checkpoint is written, or build trees (kept-trees.ts does both).
 */
import type { Engine, WriteOp } from './engine.js';
import { ALL_TREES, TREE_META_LEAF, parseTreeKey, treeJournalSeq, treeKey } from './keys.js';
import type { TokenRange } from './keys.js';
import { RangeTree } from './range-tree.js';

/** A unit's kept tree and its build state. */
export interface Unit {
  readonly id: string;
  readonly n: number;
  readonly range: TokenRange;
  readonly depth: number;
  /** ready: `tree` equals the unit's records and is on disk; building: `tree` gathers the deltas since the build's snapshot. */
  state: 'ready' | 'building';
  tree: RangeTree;
  builtAt: number;
  /** This build's share of the rebuild jitter, [0, 1): kept with builtAt in the meta key. */
  jitter: number;
  /** While a ready unit is rebuilt: the deltas since the rebuild's snapshot (the kept tree serves meanwhile). */
  pending: RangeTree | undefined;
  /** Untracked while building: the build stops and swaps nothing in. */
  dropped: boolean;
}

/** A unit's id: its class, range and depth. */
export const unitId = (n: number, start: bigint, end: bigint, depth: number): string =>
  `${n}:${start.toString(16)}:${end.toString(16)}:${depth}`;

/** A unit with an empty tree, never built. */
export function newUnit(id: string, n: number, range: TokenRange, depth: number, state: Unit['state']): Unit {
  return {
    id,
    n,
    range,
    depth,
    state,
    tree: new RangeTree(range, depth),
    builtAt: 0,
    jitter: 0,
    pending: undefined,
    dropped: false,
  };
}

const LEAF_BYTES = 12;
/** A journal entry's unit header: n (1), start (8), end (8), depth (1), leaves listed (4). */
const UNIT_HEADER = 22;
/** Each leaf listed: index (2), hi (4), lo (4), count (4). */
const JOURNAL_LEAF = 14;

/** A leaf delta being summed for one batch: hash halves mod 2^64 and a count. */
export interface Delta {
  hi: number;
  lo: number;
  count: number;
}

/** The op that stores a leaf's value: a put, or a delete of an empty leaf (absent reads as empty). */
export function leafOp(u: Unit, leaf: number, hi: number, lo: number, count: number): WriteOp {
  const key = treeKey(u.n, u.range, u.depth, leaf);
  if (hi === 0 && lo === 0 && count === 0) return { type: 'del', key };
  const value = Buffer.allocUnsafe(LEAF_BYTES);
  value.writeUInt32BE(hi, 0);
  value.writeUInt32BE(lo, 4);
  value.writeUInt32BE(count, 8);
  return { type: 'put', key, value };
}

/** Appends to `ops` the deletes of a unit's leaves on disk (those not empty: an empty leaf has no key) and of its meta. */
export function deleteUnit(u: Unit, ops: WriteOp[]): void {
  for (let i = 0; i < u.tree.leaves; i++)
    if (nonzero(u.tree.leaf(i))) ops.push({ type: 'del', key: treeKey(u.n, u.range, u.depth, i) });
  ops.push({ type: 'del', key: treeKey(u.n, u.range, u.depth, TREE_META_LEAF) });
}

/** Whether a leaf's value (hash halves, count) is not the empty leaf's. */
const nonzero = ([hi, lo, count]: [number, number, number]): boolean => hi !== 0 || lo !== 0 || count !== 0;

/** The op that stores a unit's meta: when it was built (ms) and its share of the rebuild jitter. */
export function metaOp(u: Unit, builtAt: number, jitter: number): WriteOp {
  return {
    type: 'put',
    key: treeKey(u.n, u.range, u.depth, TREE_META_LEAF),
    value: Buffer.from(JSON.stringify({ builtAt, jitter })),
  };
}

/** A unit's meta value: when it was built (ms) and its share of the rebuild jitter (absent in a meta of the first pass). */
function parseMeta(v: Buffer): { builtAt: number; jitter: number | undefined } {
  let m: { builtAt?: unknown; jitter?: unknown } = {};
  try {
    m = JSON.parse(v.toString()) as typeof m;
  } catch {
    // unreadable: built at 0, so due for a rebuild at once
  }
  const builtAt = typeof m.builtAt === 'number' && Number.isFinite(m.builtAt) ? m.builtAt : 0;
  const jitter = typeof m.jitter === 'number' && m.jitter >= 0 && m.jitter < 1 ? m.jitter : undefined;
  return { builtAt, jitter };
}

/**
 * The journal entry of a batch: for each ready unit among `touched`, the value after the
 * batch (its tree's leaf plus the delta) of every leaf the batch touched; undefined when
 * no ready unit is touched.
 */
export function journalEntry(touched: ReadonlyMap<Unit, ReadonlyMap<number, Delta>>): Buffer | undefined {
  let size = 0;
  for (const [u, leaves] of touched) if (u.state === 'ready') size += UNIT_HEADER + leaves.size * JOURNAL_LEAF;
  if (size === 0) return undefined;
  const entry = Buffer.allocUnsafe(size);
  let pos = 0;
  for (const [u, leaves] of touched) {
    if (u.state !== 'ready') continue;
    entry[pos] = u.n;
    entry.writeBigUInt64BE(u.range.start, pos + 1);
    entry.writeBigUInt64BE(u.range.end, pos + 9);
    entry[pos + 17] = u.depth;
    entry.writeUInt32BE(leaves.size, pos + 18);
    pos += UNIT_HEADER;
    for (const [leaf, d] of leaves) {
      const [hi, lo, count] = u.tree.leaf(leaf);
      const sum = lo + d.lo;
      entry.writeUInt16BE(leaf, pos);
      entry.writeUInt32BE((hi + d.hi + (sum > 0xffffffff ? 1 : 0)) >>> 0, pos + 2);
      entry.writeUInt32BE(sum >>> 0, pos + 6);
      entry.writeUInt32BE((count + d.count) >>> 0, pos + 10);
      pos += JOURNAL_LEAF;
    }
  }
  return entry;
}

/** Sets the leaves a journal entry lists (their values after its batch) in `units`, calling `set` after each. */
export function replayEntry(
  entry: Buffer,
  units: ReadonlyMap<string, Unit>,
  set: (unit: Unit, leaf: number) => void,
): void {
  for (let pos = 0; pos + UNIT_HEADER <= entry.length;) {
    const range = { start: entry.readBigUInt64BE(pos + 1), end: entry.readBigUInt64BE(pos + 9) };
    const unit = units.get(unitId(entry[pos]!, range.start, range.end, entry[pos + 17]!));
    const count = entry.readUInt32BE(pos + 18);
    pos += UNIT_HEADER;
    for (let i = 0; i < count; i++, pos += JOURNAL_LEAF) {
      const leaf = entry.readUInt16BE(pos);
      if (unit === undefined || leaf >= unit.tree.leaves) continue; // not written: checkpoints precede every drop
      unit.tree.setLeaf(leaf, entry.readUInt32BE(pos + 2), entry.readUInt32BE(pos + 6), entry.readUInt32BE(pos + 10));
      set(unit, leaf);
    }
  }
}

/** The journal on disk: its entries in seq order, the first one's seq, and the seq after the last (both 0 with none). */
export interface Journal {
  readonly entries: Buffer[];
  readonly from: number;
  readonly next: number;
}

/**
 * Reads the kept trees on disk into `units` (every unit with a meta key is ready: it was
 * swapped in whole), a meta without a jitter share drawing one from `random`; returns the
 * journal to replay over their leaves.
 */
export async function loadUnits(engine: Engine, units: Map<string, Unit>, random: () => number): Promise<Journal> {
  const leaves = new Map<string, Array<[number, Buffer]>>();
  const journal = { entries: [] as Buffer[], from: 0, next: 0 };
  const it = engine.iterator(ALL_TREES.gte, ALL_TREES.lt);
  try {
    for (let batch = await it.nextv(1000); batch.length > 0; batch = await it.nextv(1000))
      for (const [k, v] of batch) {
        const seq = treeJournalSeq(k);
        if (seq !== undefined) {
          if (journal.entries.length === 0) journal.from = seq;
          journal.next = seq + 1;
          journal.entries.push(v); // in seq order: keys sort by it
          continue;
        }
        const p = parseTreeKey(k);
        if (p === undefined) continue;
        const id = unitId(p.n, p.range.start, p.range.end, p.depth);
        let unit = units.get(id);
        if (unit === undefined) {
          unit = newUnit(id, p.n, p.range, p.depth, 'ready');
          units.set(id, unit);
          leaves.set(id, []);
        }
        if (p.leaf === TREE_META_LEAF) {
          const meta = parseMeta(v);
          unit.builtAt = meta.builtAt;
          unit.jitter = meta.jitter ?? random(); // a meta of the first pass had none: drawn once, kept at the next build
        } else leaves.get(id)!.push([p.leaf, v]);
      }
  } finally {
    await it.close();
  }
  for (const unit of units.values())
    for (const [leaf, v] of leaves.get(unit.id)!)
      if (leaf < unit.tree.leaves && v.length === LEAF_BYTES)
        unit.tree.setLeaf(leaf, v.readUInt32BE(0), v.readUInt32BE(4), v.readUInt32BE(8));
  return journal;
}

/**
 * Delete every kept tree and journal entry on disk: what a store opened without kept trees
 * does first, since its writes will not follow them (a tree left behind would be stale when
 * kept trees are turned on again, and would hide differences from repair). Returns how many
 * keys went.
 */
export async function dropKeptTrees(engine: Engine): Promise<number> {
  let dropped = 0;
  const it = engine.keyIterator(ALL_TREES.gte, ALL_TREES.lt);
  try {
    for (let keys = await it.nextv(1000); keys.length > 0; keys = await it.nextv(1000)) {
      await engine.write(
        keys.map((key) => ({ type: 'del', key })),
        false,
      );
      dropped += keys.length;
    }
  } finally {
    await it.close();
  }
  return dropped;
}
