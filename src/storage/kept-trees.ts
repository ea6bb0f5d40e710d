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
 * Owns: the kept units, their builds, and when journal entries and checkpoints are written.
 * Their byte layouts on disk are kept-disk.ts's, a batch's leaf deltas kept-deltas.ts's.
 * Must not: decide which units the node replicates (the node says, `track`) or a key's
 * class (`classOf` is given).
 */
import type { Engine, EngineIterator, WriteOp } from './engine.js';
import { KvError } from '../kinds/kv-errors.js';
import {
  type Delta,
  type Unit,
  deleteUnit,
  journalEntry,
  leafOp,
  loadUnits,
  metaOp,
  newUnit,
  replayEntry,
  unitId,
} from './kept-disk.js';
import { UnitIndex, batchDeltas, hashed } from './kept-deltas.js';
import { dataKeyIntact, dataSpans, tokenOfDataKey, treeJournalKey, userKeyOf } from './keys.js';
import { MAX_DEPTH, RangeTree } from './range-tree.js';
import type { Logger } from './store-options.js';
import type { Extension, QueueOp, WriteQueue } from './write-queue.js';

/** Deleting every kept tree on disk, for a store opened without them (kept-disk.ts). */

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

/** Journal entries between checkpoints: bounds the journal replayed at open and the leaves a checkpoint writes. */
export const CHECKPOINT_BATCHES = 4096;

export class KeptTrees {
  readonly depth: number;
  readonly #units = new Map<string, Unit>();
  /** Per class: registered units (ready or building), for finding a token's. */
  readonly #byClass = new UnitIndex();
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

  /** Load the kept trees on disk, and replay the journal over their leaves. */
  async load(): Promise<void> {
    const journal = await loadUnits(this.deps.engine, this.#units, () => this.#random());
    if (journal.entries.length > 0) {
      this.#journalFrom = journal.from;
      this.#seq = journal.next;
    }
    for (const entry of journal.entries) replayEntry(entry, this.#units, (u, leaf) => this.#markDirty(u, leaf));
    this.#index();
  }

  /** Marks a unit's leaf for the next checkpoint. */
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

  /** Re-indexes the registered units by class (after any is added or removed). */
  #index(): void {
    this.#byClass.reindex(this.#units.values());
  }

  /**
   * The write queue's batch hook: the leaf deltas of the batch's data ops, the journal
   * entry of ready units to write with it, and their application once it is written.
   */
  readonly extend = (ops: readonly QueueOp[]): Extension | undefined => {
    if (this.#byClass.empty) return undefined;
    const touched = batchDeltas(ops, this.#byClass, this.options.classOf);
    if (touched === undefined) return undefined;
    const entry = journalEntry(touched);
    const writes: WriteOp[] =
      entry === undefined ? [] : [{ type: 'put', key: treeJournalKey(this.#seq), value: entry }];
    return { ops: writes, apply: () => this.#applyDeltas(touched, writes.length > 0) };
  };

  /**
   * Applies a written batch's deltas to the trees (and to the pending trees of rebuilds),
   * marks the ready units' leaves for the next checkpoint, and, when the batch carried a
   * journal entry, counts it and queues a checkpoint once CHECKPOINT_BATCHES are written.
   */
  #applyDeltas(touched: Map<Unit, Map<number, Delta>>, journaled: boolean): void {
    for (const [u, leaves] of touched)
      for (const [leaf, d] of leaves) {
        u.tree.addHash(leaf, d.hi, d.lo, 1, d.count);
        u.pending?.addHash(leaf, d.hi, d.lo, 1, d.count);
        if (u.state === 'ready') this.#markDirty(u, leaf);
      }
    if (!journaled) return;
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
  }

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
        this.#queued.push(newUnit(id, u.n, { start: u.start, end: u.end }, this.depth, 'building'));
    // The drop is queued before the builds' snapshots, and `settled` covers the builds at once.
    const dropped =
      gone.length === 0
        ? undefined
        : this.deps.queue.exclusive(() => {
            const c = this.#checkpoint(); // first: no journal entry may outlive the leaves it names
            const ops: WriteOp[] = c.ops;
            for (const u of gone) {
              u.dropped = true;
              if (u.state === 'ready') deleteUnit(u, ops);
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

  /** Starts the builder unless it runs or nothing is queued: it builds the queued units one at a time. */
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

  /** A draw of the jitter's randomness, in [0, 1). */
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
    for (const token of tokens) for (const n of this.#byClass.classes()) this.#byClass.find(n, token, found);
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
    const its: EngineIterator[] = [];
    const rebuild = u.state === 'ready';
    try {
      // The snapshot and the registration at one batch boundary: every batch after it reaches the pending tree.
      await this.deps.queue.exclusive(() => this.#snapshot(u, rebuild, its));
      if (u.dropped) return;
      const scan = await this.#scan(u, its);
      if (scan === undefined) return;
      await this.deps.queue.exclusive(() => this.#swapIn(u, scan, rebuild));
    } catch (e) {
      await this.#buildFailed(u, rebuild, e);
    } finally {
      if (rebuild) u.pending = undefined; // stopped (dropped, closing) or swapped in: gathers no more deltas
      await Promise.all(its.map((it) => it.close().catch(() => {})));
    }
  }

  /**
   * A build's first step, at a batch boundary: opens the iterators over the unit's records
   * into `its` (their snapshot) and registers the unit, or for a rebuild gives it a pending tree.
   */
  #snapshot(u: Unit, rebuild: boolean, its: EngineIterator[]): undefined {
    if (u.dropped) return undefined;
    its.push(...dataSpans(u.range).map((s) => this.deps.engine.iterator(s.gte, s.lt)));
    if (rebuild) u.pending = new RangeTree(u.range, u.depth);
    else {
      this.#units.set(u.id, u);
      this.#index();
    }
    return undefined;
  }

  /** The tree of the unit's records in its snapshot, paced; undefined when the build stops (unit dropped, store closing). */
  async #scan(u: Unit, its: readonly EngineIterator[]): Promise<RangeTree | undefined> {
    const classOf = this.options.classOf;
    const scan = new RangeTree(u.range, u.depth);
    for (const it of its)
      for (let batch = await it.nextv(1000); batch.length > 0; batch = await it.nextv(1000)) {
        if (u.dropped || !this.deps.isOpen()) return undefined;
        let bytes = 0;
        for (const [k, v] of batch) {
          bytes += k.length + v.length;
          this.#counts.recordsRead++;
          if (!dataKeyIntact(k)) continue; // no key's record: the store's scans set it aside (ranges.ts)
          if (u.n === 0 || classOf?.(userKeyOf(k)) === u.n) scan.add(tokenOfDataKey(k), k, hashed(v));
        }
        await this.options.pace?.(bytes);
      }
    return scan;
  }

  /**
   * A build's last step, at a batch boundary: the scan plus the deltas since its snapshot
   * replaces the unit's tree, written with a checkpoint and the unit's new meta.
   */
  #swapIn(u: Unit, scan: RangeTree, rebuild: boolean): Extension | undefined {
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
    ops.push(metaOp(u, builtAt, jitter));
    return {
      ops,
      apply: () => {
        c.done();
        u.tree = scan;
        u.pending = undefined;
        u.state = 'ready';
        u.builtAt = builtAt;
        u.jitter = jitter;
        this.#countBuild(u, differ, scan.leaves);
      },
    };
  }

  /** Counts a build swapped in, or a rebuild with the leaves where it differed from the kept tree (logged when any did). */
  #countBuild(u: Unit, differ: readonly number[] | undefined, leaves: number): void {
    if (differ === undefined) this.#counts.builds++;
    else {
      this.#counts.rebuilds++;
      if (differ.length > 0) {
        this.#counts.rebuildMismatches++;
        this.#counts.rebuildMismatchedLeaves += differ.length;
        this.deps.log?.warn(
          { unit: u.id, leaves: differ.length, of: leaves },
          'kept tree rebuild: the kept tree differed from a scan of its records (a bug or a corruption); the scan replaces it',
        );
      }
    }
  }

  /** A build that threw: counted and logged; a rebuild's kept tree still serves, a new unit is forgotten. */
  async #buildFailed(u: Unit, rebuild: boolean, e: unknown): Promise<void> {
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
