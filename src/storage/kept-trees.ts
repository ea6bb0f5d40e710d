/**
 * Anti-entropy trees kept on write: one RangeTree (range-tree.ts) per unit this
 * node replicates, a unit being a token range (start, end] and an N class n (0: every
 * key), at one fixed depth for every unit, so that replicas share the leaf partition
 * without counting keys first. Each is kept equal to the tree a scan of the unit's records
 * would build, hashing what is stored (expired records too: a kept tree cannot know when
 * a record becomes reclaimable; reclaimExpired's drop is a write like any other).
 *
 * How a tree follows the writes: every op on a data key carries the record it replaces
 * (write-queue.ts DataOp), and at batch assembly `extend` turns each into leaf deltas
 * `+eh(new) − eh(prior)` (sums mod 2^64 are a group, so deltas are exact), adds to the SAME
 * batch one journal entry listing the new value of every leaf it touched in a ready unit
 * ('a' keys, keys.ts), and applies the deltas in memory only once the batch is written.
 * LevelDB writes a batch atomically and a crash loses whole batches, so the leaves on
 * disk plus the journal replayed over them always equal the sum over the records on disk:
 * no rebuild after kill -9 (docs/storage.md#kept-trees-and-crash-consistency). Every
 * CHECKPOINT_BATCHES journal entries, at every drop or swap of a unit, and at close, a
 * checkpoint writes the leaves changed since the last one and deletes the journal, in one
 * batch. (Not a put per touched leaf in every batch: every write touches its own leaf, so
 * that would double LevelDB's inserts; the journal is one put per batch.)
 *
 * A unit tracked anew is built in the background: at a batch boundary (`exclusive`) the
 * builder opens its iterators (LevelDB pins their snapshot at creation) and registers the
 * unit as building, so every later batch's deltas for it gather in a pending tree; it
 * scans the snapshot, adds the pending deltas (scan at T + deltas after T = the tree now)
 * and swaps the result in, leaves and meta in one batch written alone. Until then the unit
 * has no kept tree (repair falls back to a scan). A unit no longer tracked has its leaves
 * deleted in one batch.
 *
 * Each ready unit is also rebuilt on a long schedule (`rebuildDue`: --tree-rebuild-interval-ms
 * after its last build, plus a random jitter drawn per build, both kept in its meta key so
 * they survive restarts), by the same path while its kept tree keeps serving: the pending
 * tree gathers the deltas since the snapshot, and before the swap the rebuilt tree is
 * compared leaf by leaf with the kept one. A difference (a bug, or a corrupted leaf) is
 * logged and counted, and the rebuilt tree wins: only the leaves that differ are written.
 *
 * Owns: the kept trees, their leaves on disk, their builds. Must not: decide which units
 * the node replicates (the node says, `track`) or a key's class (`classOf` is given).
 */
import { tryDecode, versionBytes, versionsSpan } from './codec.js';
import type { Engine, EngineIterator, WriteOp } from './engine.js';
import { KvError } from './kv-errors.js';
import {
  ALL_TREES,
  TREE_META_LEAF,
  dataKeyIntact,
  dataSpans,
  parseTreeKey,
  tokenOfDataKey,
  treeJournalKey,
  treeJournalSeq,
  treeKey,
  userKeyOf,
} from './keys.js';
import type { TokenRange } from './keys.js';
import { entryHashOf } from './range-hash.js';
import { hashInto } from '../ring/index.js';
import { MAX_DEPTH, RangeTree } from './range-tree.js';
import type { Logger } from './store-options.js';
import type { Extension, QueueOp, WriteQueue } from './write-queue.js';

/** A unit: class n (0: every key; else the keys `classOf` puts in class n) of range (start, end]. */
export interface KeptUnit {
  readonly n: number;
  readonly start: bigint;
  readonly end: bigint;
}

/** 16^3 = 4,096 leaves, 48 KiB a tree in memory (design 1.1). */
export const DEFAULT_TREE_DEPTH = 3;
/** Shallowest and deepest kept trees: a fixed depth must split any range, and 16^4 leaves is 768 KiB. */
export const MIN_KEPT_DEPTH = 2;

export interface KeptTreesOptions {
  /** Every kept tree's depth (MIN_KEPT_DEPTH to MAX_DEPTH). */
  readonly depth: number;
  /** A stored key's N class; undefined when it cannot be told (the key then counts in class-0 units only). */
  readonly classOf?: (key: Buffer) => number | undefined;
  /** Journal entries between checkpoints (default CHECKPOINT_BATCHES). */
  readonly checkpointBatches?: number;
  /** Called after each batch of a build's scan with the bytes (keys and values) it read: may wait (the node's pacing). */
  readonly pace?: (bytes: number) => Promise<void>;
  /** A ready unit is rebuilt by a scan this long after its last build, ms (`rebuildDue`); 0 or absent: never. */
  readonly rebuildIntervalMs?: number;
  /** Plus a random delay up to this, ms, drawn per build (so that units built together are not all rebuilt together). */
  readonly rebuildJitterMs?: number;
  /** [0, 1): the jitter's randomness (default Math.random). */
  readonly random?: () => number;
}

interface Deps {
  readonly engine: Engine;
  readonly queue: WriteQueue;
  readonly now: () => number;
  readonly log: Logger | undefined;
  readonly isOpen: () => boolean;
}

interface Unit {
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

const unitId = (n: number, start: bigint, end: bigint, depth: number): string =>
  `${n}:${start.toString(16)}:${end.toString(16)}:${depth}`;

function contains(r: TokenRange, t: bigint): boolean {
  if (r.start === r.end) return true;
  return r.start < r.end ? r.start < t && t <= r.end : t > r.start || t <= r.end;
}

/** The versions bytes an entry is hashed by (a corrupt record: its raw bytes, as Ranges.tree does). */
const hashed = (record: Buffer): Buffer => tryDecode(versionBytes, record) ?? record;
/**
 * The same for a record known intact, without checking its checksum again: a record being
 * written (every data put's value is one the store has just encoded, or stored as received
 * once skimRecord verified its checksum: store.ts #persist, #copy), or a prior its writer
 * decoded (`priorIntact`).
 */
const hashedIntact = (record: Buffer): Buffer => tryDecode(versionsSpan, record) ?? record;

const LEAF_BYTES = 12;
/** A journal entry's unit header: n (1), start (8), end (8), depth (1), leaves listed (4). */
const UNIT_HEADER = 22;
/** Each leaf listed: index (2), hi (4), lo (4), count (4). */
const JOURNAL_LEAF = 14;
/** Journal entries between checkpoints: bounds the journal replayed at open and the leaves a checkpoint writes. */
export const CHECKPOINT_BATCHES = 4096;
const kh = new Uint32Array(2);
const hb = new Uint32Array(2);
const ha = new Uint32Array(2);

/** A leaf delta being summed for one batch: hash halves mod 2^64 and a count. */
interface Delta {
  hi: number;
  lo: number;
  count: number;
}

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

export class KeptTrees {
  readonly depth: number;
  readonly #units = new Map<string, Unit>();
  /** Per class: registered units (ready or building), for finding a token's. */
  #byClass = new Map<number, Unit[]>();
  /** Units waiting for their build, in order. */
  #queued: Unit[] = [];
  #builder: Promise<void> = Promise.resolve();
  #building = false;
  /** The unit whose build runs now (registered only once its snapshot is taken). */
  #current: Unit | undefined;
  /** The next journal entry's seq, and the first not yet checkpointed. */
  #seq = 0;
  #journalFrom = 0;
  /** Leaves changed since the last checkpoint, per unit. */
  #dirty = new Map<Unit, Set<number>>();
  #checkpointQueued = false;
  /**
   * Builds finished and failed (each logged), the records they read, rebuilds of ready
   * units finished, those that found the kept tree differed from the scan, and the leaves
   * that differed: `stats`.
   */
  #counts = {
    builds: 0,
    buildFailures: 0,
    recordsRead: 0,
    rebuilds: 0,
    rebuildMismatches: 0,
    rebuildMismatchedLeaves: 0,
  };

  constructor(
    private readonly deps: Deps,
    private readonly options: KeptTreesOptions,
  ) {
    const d = options.depth;
    if (!Number.isInteger(d) || d < MIN_KEPT_DEPTH || d > MAX_DEPTH)
      throw new KvError(
        'KV_BAD_OPTION',
        `kept tree depth must be a whole number from ${MIN_KEPT_DEPTH} to ${MAX_DEPTH}, got ${String(d)}`,
      );
    this.depth = d;
  }

  /** Load the kept trees on disk (every unit with a meta key is ready: it was swapped in whole). */
  async load(): Promise<void> {
    const leaves = new Map<string, Array<[number, Buffer]>>();
    const journal: Buffer[] = [];
    const it = this.deps.engine.iterator(ALL_TREES.gte, ALL_TREES.lt);
    try {
      for (let batch = await it.nextv(1000); batch.length > 0; batch = await it.nextv(1000))
        for (const [k, v] of batch) {
          const seq = treeJournalSeq(k);
          if (seq !== undefined) {
            if (journal.length === 0) this.#journalFrom = seq;
            this.#seq = seq + 1;
            journal.push(v); // in seq order: keys sort by it
            continue;
          }
          const p = parseTreeKey(k);
          if (p === undefined) continue;
          const id = unitId(p.n, p.range.start, p.range.end, p.depth);
          let unit = this.#units.get(id);
          if (unit === undefined) {
            unit = {
              id,
              n: p.n,
              range: p.range,
              depth: p.depth,
              state: 'ready',
              tree: new RangeTree(p.range, p.depth),
              builtAt: 0,
              jitter: 0,
              pending: undefined,
              dropped: false,
            };
            this.#units.set(id, unit);
            leaves.set(id, []);
          }
          if (p.leaf === TREE_META_LEAF) {
            const meta = parseMeta(v);
            unit.builtAt = meta.builtAt;
            unit.jitter = meta.jitter ?? this.#random(); // a meta of the first pass had none: drawn once, kept at the next build
          } else leaves.get(id)!.push([p.leaf, v]);
        }
    } finally {
      await it.close();
    }
    for (const unit of this.#units.values())
      for (const [leaf, v] of leaves.get(unit.id)!)
        if (leaf < unit.tree.leaves && v.length === LEAF_BYTES)
          unit.tree.setLeaf(leaf, v.readUInt32BE(0), v.readUInt32BE(4), v.readUInt32BE(8));
    for (const entry of journal) this.#replay(entry);
    this.#index();
  }

  /** Set the leaves a journal entry lists (their values after its batch), and mark them for the next checkpoint. */
  #replay(entry: Buffer): void {
    for (let pos = 0; pos + UNIT_HEADER <= entry.length;) {
      const range = { start: entry.readBigUInt64BE(pos + 1), end: entry.readBigUInt64BE(pos + 9) };
      const unit = this.#units.get(unitId(entry[pos]!, range.start, range.end, entry[pos + 17]!));
      const count = entry.readUInt32BE(pos + 18);
      pos += UNIT_HEADER;
      for (let i = 0; i < count; i++, pos += JOURNAL_LEAF) {
        const leaf = entry.readUInt16BE(pos);
        if (unit === undefined || leaf >= unit.tree.leaves) continue; // not written: checkpoints precede every drop
        unit.tree.setLeaf(leaf, entry.readUInt32BE(pos + 2), entry.readUInt32BE(pos + 6), entry.readUInt32BE(pos + 10));
        this.#markDirty(unit, leaf);
      }
    }
  }

  #markDirty(unit: Unit, leaf: number): void {
    let set = this.#dirty.get(unit);
    if (set === undefined) this.#dirty.set(unit, (set = new Set()));
    set.add(leaf);
  }

  /**
   * The ops of a checkpoint (to write alone, or ahead of a drop or swap in its batch): the
   * leaves changed since the last one, and the deletion of the journal; `done` once written.
   */
  #checkpoint(): { ops: WriteOp[]; done: () => void } {
    const ops: WriteOp[] = [];
    for (const [u, leaves] of this.#dirty) {
      if (this.#units.get(u.id) !== u || u.state !== 'ready') continue;
      for (const leaf of leaves) {
        const [hi, lo, count] = u.tree.leaf(leaf);
        ops.push(leafOp(u, leaf, hi, lo, count));
      }
    }
    const to = this.#seq;
    for (let seq = this.#journalFrom; seq < to; seq++) ops.push({ type: 'del', key: treeJournalKey(seq) });
    return {
      ops,
      done: () => {
        this.#dirty.clear();
        this.#journalFrom = to;
      },
    };
  }

  /** Write a checkpoint now (close does, so that the next open replays no journal). */
  checkpoint(): Promise<void> {
    return this.deps.queue.exclusive(() => {
      const c = this.#checkpoint();
      return { ops: c.ops, apply: c.done };
    });
  }

  #index(): void {
    const by = new Map<number, Unit[]>();
    for (const u of this.#units.values()) {
      const list = by.get(u.n);
      if (list === undefined) by.set(u.n, [u]);
      else list.push(u);
    }
    for (const list of by.values())
      list.sort((a, b) => (a.range.end < b.range.end ? -1 : a.range.end > b.range.end ? 1 : 0));
    this.#byClass = by;
  }

  /** The registered units of class n whose range holds `token` (one, for a class's disjoint ranges). */
  #find(n: number, token: bigint, out: Unit[]): void {
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

  /**
   * The write queue's batch hook: the leaf deltas of the batch's data ops, the leaf puts
   * of ready units to write with it, and their application once it is written.
   */
  readonly extend = (ops: readonly QueueOp[]): Extension | undefined => {
    if (this.#byClass.size === 0) return undefined;
    let touched: Map<Unit, Map<number, Delta>> | undefined;
    const units: Unit[] = [];
    const perClass = this.#byClass.size > 1 || !this.#byClass.has(0);
    for (const op of ops) {
      if (op.prior === undefined) continue; // not a data key (the queue refuses a data op without one)
      const dk = op.key as Buffer;
      const token = tokenOfDataKey(dk);
      units.length = 0;
      this.#find(0, token, units);
      if (perClass) {
        const n = this.options.classOf?.(userKeyOf(dk));
        if (n !== undefined && n !== 0) this.#find(n, token, units);
      }
      if (units.length === 0) continue;
      const before =
        op.prior === null ? undefined : op.priorIntact === true ? hashedIntact(op.prior) : hashed(op.prior);
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
      for (const u of units) {
        const leaf = u.tree.leafOf(token);
        let leaves = touched.get(u);
        if (leaves === undefined) touched.set(u, (leaves = new Map()));
        let d = leaves.get(leaf);
        if (d === undefined) leaves.set(leaf, (d = { hi: 0, lo: 0, count: 0 }));
        if (before !== undefined) addTo(d, hb[0]!, hb[1]!, -1);
        if (after !== undefined) addTo(d, ha[0]!, ha[1]!, 1);
      }
    }
    if (touched === undefined) return undefined;
    let size = 0;
    for (const [u, leaves] of touched) if (u.state === 'ready') size += UNIT_HEADER + leaves.size * JOURNAL_LEAF;
    const writes: WriteOp[] = [];
    if (size > 0) {
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
      writes.push({ type: 'put', key: treeJournalKey(this.#seq), value: entry });
    }
    const done = touched;
    return {
      ops: writes,
      apply: () => {
        for (const [u, leaves] of done)
          for (const [leaf, d] of leaves) {
            u.tree.addHash(leaf, d.hi, d.lo, 1, d.count);
            u.pending?.addHash(leaf, d.hi, d.lo, 1, d.count);
            if (u.state === 'ready') this.#markDirty(u, leaf);
          }
        if (writes.length === 0) return;
        this.#seq++;
        if (
          this.#seq - this.#journalFrom >= (this.options.checkpointBatches ?? CHECKPOINT_BATCHES) &&
          !this.#checkpointQueued
        ) {
          this.#checkpointQueued = true;
          this.checkpoint()
            .catch((e: unknown) =>
              this.deps.log?.warn(
                { err: (e as Error).message },
                'kept tree checkpoint failed: the journal grows until the next one',
              ),
            )
            .finally(() => (this.#checkpointQueued = false));
        }
      },
    };
  };

  /**
   * The units this node replicates now: new ones are queued for a build (in the
   * background, one at a time), ones no longer listed (or of another depth) are dropped
   * and their leaves deleted. Resolves once the drop is written.
   */
  async track(units: readonly KeptUnit[]): Promise<void> {
    const want = new Map<string, KeptUnit>();
    for (const u of units) {
      if (!Number.isInteger(u.n) || u.n < 0 || u.n > 254)
        throw new KvError('KV_BAD_OPTION', `a kept tree's class must be 0 to 254, got ${String(u.n)}`);
      dataSpans(u); // checks the bounds
      want.set(unitId(u.n, u.start, u.end, this.depth), u);
    }
    const gone = [...this.#units.values()].filter((u) => !want.has(u.id));
    this.#queued = this.#queued.filter((u) => want.has(u.id));
    const current = this.#current;
    if (current !== undefined && !want.has(current.id)) current.dropped = true; // stops before or after its snapshot
    for (const [id, u] of want)
      if (!this.#units.has(id) && !this.#queued.some((q) => q.id === id) && !(current?.id === id && !current.dropped))
        this.#queued.push({
          id,
          n: u.n,
          range: { start: u.start, end: u.end },
          depth: this.depth,
          state: 'building',
          tree: new RangeTree({ start: u.start, end: u.end }, this.depth),
          builtAt: 0,
          jitter: 0,
          pending: undefined,
          dropped: false,
        });
    // The drop is queued before the builds' snapshots, and `settled` covers the builds at once.
    const dropped =
      gone.length === 0
        ? undefined
        : this.deps.queue.exclusive(() => {
            const c = this.#checkpoint(); // first: no journal entry may outlive the leaves it names
            const ops: WriteOp[] = c.ops;
            for (const u of gone) {
              u.dropped = true;
              if (u.state === 'ready') {
                for (let i = 0; i < u.tree.leaves; i++)
                  if (nonzero(u.tree.leaf(i))) ops.push({ type: 'del', key: treeKey(u.n, u.range, u.depth, i) });
                ops.push({ type: 'del', key: treeKey(u.n, u.range, u.depth, TREE_META_LEAF) });
              }
            }
            return {
              ops,
              apply: () => {
                c.done();
                for (const u of gone) this.#units.delete(u.id);
                this.#index();
              },
            };
          });
    this.#startBuilds();
    await dropped;
  }

  #startBuilds(): void {
    if (this.#building || this.#queued.length === 0) return;
    this.#building = true;
    this.#builder = (async () => {
      try {
        for (let u = this.#next(); u !== undefined && this.deps.isOpen(); u = this.#next()) {
          this.#current = u;
          await this.#build(u);
        }
      } finally {
        this.#current = undefined;
        this.#building = false;
      }
    })();
  }

  /** The next unit to build: a unit without a tree before a rebuild of one that has its kept tree. */
  #next(): Unit | undefined {
    const i = this.#queued.findIndex((u) => u.state === 'building');
    return i >= 0 ? this.#queued.splice(i, 1)[0] : this.#queued.shift();
  }

  #random(): number {
    const r = (this.options.random ?? Math.random)();
    return r >= 0 && r < 1 ? r : 0;
  }

  /** When a ready unit is due for its rebuild (ms), or undefined (rebuilds off). */
  #rebuildAt(u: Unit): number | undefined {
    const every = this.options.rebuildIntervalMs ?? 0;
    return every > 0 ? u.builtAt + every + Math.floor(u.jitter * (this.options.rebuildJitterMs ?? 0)) : undefined;
  }

  /**
   * Queue a rebuild of every ready unit whose time has come (--tree-rebuild-interval-ms
   * after its last build, plus its jitter): a scan of a snapshot plus the deltas since,
   * as a new unit's build, while its kept tree keeps serving; compared leaf by leaf with
   * the kept tree before it replaces it (a difference is a bug or a corruption: logged and
   * counted; the scan wins). The node calls this now and then; returns how many it queued.
   */
  rebuildDue(): number {
    const now = this.deps.now();
    let queued = 0;
    for (const u of this.#units.values()) {
      const at = this.#rebuildAt(u);
      if (at !== undefined && at <= now && this.#queueRebuild(u)) queued++;
    }
    if (queued > 0) this.#startBuilds();
    return queued;
  }

  /**
   * Rebuild every unit over these tokens now, whatever its schedule, and resolve once done:
   * true when each is built from a scan that began after this call (a unit still building
   * its first tree counts once that build is done). What the store asks once it finds
   * that the kept trees may hash what its records no longer hold (a data key damaged on
   * disk); false when a unit's rebuild failed or the store closed first.
   */
  async rebuildNow(tokens: readonly bigint[]): Promise<boolean> {
    const found: Unit[] = [];
    for (const token of tokens) for (const n of this.#byClass.keys()) this.#find(n, token, found);
    const units = new Set(found);
    const since = this.deps.now();
    for (const u of units) this.#queueRebuild(u, true);
    this.#startBuilds();
    await this.settled();
    return [...units].every((u) => !u.dropped && u.state === 'ready' && u.builtAt >= since);
  }

  /** Queue a rebuild of a ready unit unless one is queued (or, without `again`, running). */
  #queueRebuild(u: Unit, again = false): boolean {
    if (u.state !== 'ready' || u.dropped || this.#queued.includes(u) || (!again && u === this.#current)) return false;
    this.#queued.push(u);
    return true;
  }

  /** A build: of a unit tracked anew (no tree yet), or a rebuild of a ready one (its kept tree serves meanwhile). */
  async #build(u: Unit): Promise<void> {
    let its: EngineIterator[] = [];
    const classOf = this.options.classOf;
    const rebuild = u.state === 'ready';
    try {
      // The snapshot and the registration at one batch boundary: every batch after it reaches the pending tree.
      await this.deps.queue.exclusive(() => {
        if (u.dropped) return undefined;
        its = dataSpans(u.range).map((s) => this.deps.engine.iterator(s.gte, s.lt));
        if (rebuild) u.pending = new RangeTree(u.range, u.depth);
        else {
          this.#units.set(u.id, u);
          this.#index();
        }
        return undefined;
      });
      if (u.dropped) return;
      const scan = new RangeTree(u.range, u.depth);
      for (const it of its)
        for (let batch = await it.nextv(1000); batch.length > 0; batch = await it.nextv(1000)) {
          if (u.dropped || !this.deps.isOpen()) return;
          let bytes = 0;
          for (const [k, v] of batch) {
            bytes += k.length + v.length;
            this.#counts.recordsRead++;
            if (!dataKeyIntact(k)) continue; // no key's record: the store's scans set it aside (ranges.ts)
            if (u.n === 0 || classOf?.(userKeyOf(k)) === u.n) scan.add(tokenOfDataKey(k), k, hashed(v));
          }
          await this.options.pace?.(bytes);
        }
      await this.deps.queue.exclusive(() => {
        if (u.dropped) return undefined;
        scan.plus(rebuild ? u.pending! : u.tree); // the deltas since the snapshot
        const builtAt = this.deps.now();
        const jitter = this.#random();
        // A rebuild writes the leaves that differ (the others are on disk already, after the checkpoint's); a build, all.
        const differ = rebuild ? differingLeafIndices(u.tree, scan) : undefined;
        const c = this.#checkpoint();
        const ops: WriteOp[] = c.ops; // first: a leaf written after them in the batch wins
        if (differ !== undefined)
          for (const i of differ) {
            const [hi, lo, count] = scan.leaf(i);
            ops.push(leafOp(u, i, hi, lo, count));
          }
        else
          for (let i = 0; i < scan.leaves; i++) {
            const [hi, lo, count] = scan.leaf(i);
            if (hi !== 0 || lo !== 0 || count !== 0) ops.push(leafOp(u, i, hi, lo, count));
          }
        ops.push({
          type: 'put',
          key: treeKey(u.n, u.range, u.depth, TREE_META_LEAF),
          value: Buffer.from(JSON.stringify({ builtAt, jitter })),
        });
        return {
          ops,
          apply: () => {
            c.done();
            u.tree = scan;
            u.pending = undefined;
            u.state = 'ready';
            u.builtAt = builtAt;
            u.jitter = jitter;
            if (differ === undefined) this.#counts.builds++;
            else {
              this.#counts.rebuilds++;
              if (differ.length > 0) {
                this.#counts.rebuildMismatches++;
                this.#counts.rebuildMismatchedLeaves += differ.length;
                this.deps.log?.warn(
                  { unit: u.id, leaves: differ.length, of: scan.leaves },
                  'kept tree rebuild: the kept tree differed from a scan of its records (a bug or a corruption); the scan replaces it',
                );
              }
            }
          },
        };
      });
    } catch (e) {
      this.#counts.buildFailures++;
      if (rebuild) {
        u.pending = undefined;
        this.deps.log?.warn(
          { unit: u.id, err: (e as Error).message },
          'kept tree rebuild failed: the kept tree still serves; the rebuild is tried again at the next check',
        );
        return;
      }
      this.deps.log?.warn(
        { unit: u.id, err: (e as Error).message },
        'kept tree build failed: the unit is built again when next tracked',
      );
      if (!u.dropped && this.#units.get(u.id) === u) {
        // Nothing of it is on disk while it builds: forgetting it is enough.
        await this.deps.queue
          .exclusive(() => ({ ops: [], apply: () => (this.#units.delete(u.id), this.#index()) }))
          .catch(() => {});
      }
    } finally {
      if (rebuild) u.pending = undefined; // stopped (dropped, closing) or swapped in: gathers no more deltas
      await Promise.all(its.map((it) => it.close().catch(() => {})));
    }
  }

  /** Resolves when no build is running or queued (tests, benchmarks). */
  async settled(): Promise<void> {
    while (this.#building) await this.#builder;
  }

  /** A copy of the ready kept tree of a unit (a consistent snapshot), or undefined (not tracked, not built yet). */
  tree(unit: KeptUnit): RangeTree | undefined {
    const u = this.#units.get(unitId(unit.n, unit.start, unit.end, this.depth));
    return u?.state === 'ready' ? u.tree.clone() : undefined;
  }

  /** When a ready unit's tree was built (ms), undefined otherwise. */
  builtAt(unit: KeptUnit): number | undefined {
    const u = this.#units.get(unitId(unit.n, unit.start, unit.end, this.depth));
    return u?.state === 'ready' ? u.builtAt : undefined;
  }

  /**
   * Units kept (ready or building), ready, building (no tree yet, scan running), being
   * rebuilt (scan running, kept tree serving) and queued for a build or rebuild; the
   * counters; journal entries written since the last checkpoint.
   */
  get stats(): {
    kept: number;
    ready: number;
    building: number;
    rebuilding: number;
    queued: number;
    journal: number;
    builds: number;
    buildFailures: number;
    recordsRead: number;
    rebuilds: number;
    rebuildMismatches: number;
    rebuildMismatchedLeaves: number;
  } {
    let ready = 0,
      building = 0,
      rebuilding = 0;
    for (const u of this.#units.values()) {
      if (u.state === 'ready') ready++;
      else building++;
      if (u.pending !== undefined) rebuilding++;
    }
    return {
      kept: this.#units.size,
      ready,
      building,
      rebuilding,
      queued: this.#queued.length,
      journal: this.#seq - this.#journalFrom,
      ...this.#counts,
    };
  }

  /** Every unit with a ready tree. */
  readyUnits(): KeptUnit[] {
    return [...this.#units.values()]
      .filter((u) => u.state === 'ready' && u.depth === this.depth)
      .map((u) => ({ n: u.n, start: u.range.start, end: u.range.end }));
  }
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

/** The leaves where two trees of one unit differ (hash or count). */
function differingLeafIndices(a: RangeTree, b: RangeTree): number[] {
  const out: number[] = [];
  for (let i = 0; i < a.leaves; i++) {
    const [ah, al, ac] = a.leaf(i),
      [bh, bl, bc] = b.leaf(i);
    if (ah !== bh || al !== bl || ac !== bc) out.push(i);
  }
  return out;
}

const nonzero = ([hi, lo, count]: [number, number, number]): boolean => hi !== 0 || lo !== 0 || count !== 0;

/** The op that stores a leaf's value: a put, or a delete of an empty leaf (absent reads as empty). */
function leafOp(u: Unit, leaf: number, hi: number, lo: number, count: number): WriteOp {
  const key = treeKey(u.n, u.range, u.depth, leaf);
  if (hi === 0 && lo === 0 && count === 0) return { type: 'del', key };
  const value = Buffer.allocUnsafe(LEAF_BYTES);
  value.writeUInt32BE(hi, 0);
  value.writeUInt32BE(lo, 4);
  value.writeUInt32BE(count, 8);
  return { type: 'put', key, value };
}
