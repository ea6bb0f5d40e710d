/**
 * The node-local store: every replica, hint and piece of node metadata a ringkv node
 * keeps. Replication, handoff and anti-entropy all write through it. Its one promise:
 * no acknowledged version is ever silently lost or overwritten.
 *
 * Owns: validation and limits (a request's own checks are request-checks.ts's and
 * sub-ops.ts's), per-key serialisation of read-merge-write, choosing the actor that
 * issues a dot, tombstone bookkeeping and purging, the expiry index and the reclamation
 * of expired siblings, the clock prune index and the pruning of stable clocks, a key's
 * sibling policy (as `policyOf` says), durability (group commit), token-range scans,
 * counts, hashes and deletes, batched merges (and streaming's copy of records of keys
 * new here, `ingest`), and running each kind of record (src/kinds): a counter's
 * increment (`counterUpdate`, record format 4), the presence writes of set elements as
 * sub-keys in one batch (`writeMany`) and the paged read of a parent's sub-keys
 * (`readRange`); the steps of a joined kind (`step`: a compare-and-set register's
 * Paxos steps, format 5; kinds/record-kind.ts), whose records merge by the kind's join. Every merge dispatches
 * on the record's format: a counter joins a counter, a register a register; a record met
 * by one of another kind is refused (KV_WRONG_TYPE). Must not: network anything, decide
 * ownership (docs/architecture.md), or know a bucket's type (the coordinator checks an op
 * against it; the store's guard is the stored format).
 *
 * Dots are issued by actors.ts, which guarantees that none is ever issued twice.
 */
import {
  DecodeError,
  REGISTER,
  joinedKindOf,
  asBuffer,
  recordKind,
  type JoinedKind,
  type KindStep,
} from '../kinds/index.js';
import { decodeHeld, isCounter, isJoined, isVersions, joinHeld, kindOf, type Held, type HeldJoined } from './held.js';
import { DataTypeError, isSubKey, placementKey, subKey, subKeyPolicy, type SiblingPolicy } from '../buckets/index.js';
import { tokenOf } from '../ring/index.js';
import { randomBytes as cryptoRandomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Actors, fileCleanMark } from './actors.js';
import {
  clockBytes,
  contextFromClock,
  decodeContext,
  decodeRecord,
  encodeRecord,
  isCounterRecord,
  spliceRecord,
  tryDecode,
  versionBytes,
  viewRecord,
} from '../kinds/versions/codec.js';
import { skimRecord } from '../kinds/versions/skim.js';
import {
  EMPTY_COUNTER,
  applyDelta,
  checkAmount,
  counterWriteId,
  reset as resetCounter,
  resetAboveEntry,
  entryConflicts,
  increment,
  join as joinCounters,
  sameCounter,
  value as counterValue,
} from '../kinds/counter/counter.js';
import {
  decodeCounterContext,
  decodeCounterDelta,
  encodeCounter,
  encodeCounterDelta,
} from '../kinds/counter/counter-record.js';
import type { CounterDelta, CounterState } from '../kinds/counter/counter.js';
import type { StoredCounter } from '../kinds/counter/counter-record.js';
import type { ClockSpan, Context, StoredRecord } from '../kinds/versions/codec.js';
import type { RecordSkim } from '../kinds/versions/skim.js';
import { withIoErrors } from './engine.js';
import { DiskGuard, type DiskState, type StatFs } from './disk.js';
import type { Engine } from './engine.js';
import { KvError, checkValueSize, showKey } from '../kinds/kv-errors.js';
import { HintStore } from './hints.js';
import { Ranges } from './ranges.js';
import { KeyFilter } from './key-filter.js';
import {
  ALL_DATA,
  DATA,
  PRUNES,
  contextCheckOf,
  subKeyDataSpan,
  dataKey,
  dataKeyOfExpiry,
  dataKeyOfPrune,
  dataKeyOfTombstone,
  expiriesBy,
  expiryKey,
  metaKey,
  pruneKey,
  quarantineKey,
  tokenHalves,
  tokenOfDataKey,
  tombstoneKey,
  tombstoneTime,
  tombstonesBefore,
  userKey,
  userKeyOf,
} from './keys.js';
import type { Key } from './keys.js';
import { KeyLocks } from './key-lock.js';
import { LevelEngine } from './level-engine.js';
import { settings } from './store-options.js';
import type { Durability, HintLimits, Logger, StoreLimits, StoreSettings } from './store-options.js';
import { checkRequestId, writeIdOf } from './request-checks.js';
import {
  MAX_RANGE_BYTES,
  MAX_RANGE_KEYS,
  MAX_SUB_OPS,
  MAX_WRITE_MANY_BYTES,
  PRESENT,
  checkSubOp,
  subWriteId,
  type SubOp,
  type SubWrite,
  type WriteManyResult,
} from './sub-ops.js';
import { batches } from './scan.js';
import type { BatchLimits } from './scan.js';
import {
  EMPTY_VERSIONS,
  isDeleted,
  isDuplicate,
  liveIds,
  merge,
  mergeLww,
  nextExpiry,
  prunable,
  prune,
  sameVersions,
  update,
  updateLww,
  withoutExpired,
} from '../kinds/versions/versions.js';
import { PRUNE_ABOVE_ENTRIES, mergeReceived } from '../kinds/versions/received.js';
import type { Versions } from '../kinds/versions/versions.js';
import type { Actor, WriteId } from '../kinds/dots.js';
import type { RangeRead } from './ranges.js';
import { WriteQueue } from './write-queue.js';
import type { QueueOp } from './write-queue.js';
import { KeptTrees } from './kept-trees.js';
import { dropKeptTrees } from './kept-disk.js';
import type { KeptTreesOptions } from './kept-trees.js';
import { ReadBatcher } from './read-batcher.js';

/** LevelDB's memtable (its default write buffer, 4 MiB) and the one being flushed: what its size estimate can miss. */
const UNFLUSHED_MAX_BYTES = 2 * (4 << 20);
/** The file in the database's directory whose presence says the store was closed cleanly (actors.ts). */
const CLEAN_MARK = 'RINGKV-CLEAN';

export interface StoreOptions {
  /** The engine to use; or give `path` for LevelDB in that directory. */
  readonly engine?: Engine;
  readonly path?: string;
  /** 'default': acknowledged once the OS holds the write; 'sync': once fsynced (docs/storage.md#durability). */
  readonly durability?: Durability;
  readonly limits?: StoreLimits;
  readonly hints?: HintLimits;
  /** Keep tombstones this long after the key was deleted here, ms (default 10 days). */
  readonly tombstoneGraceMs?: number;
  /** Prune a key's clock once its history has been stable this long, ms; hints older than this are dropped (default: tombstoneGraceMs). */
  readonly clockPruneGraceMs?: number;
  /** Wall clock in ms (injected for tests). */
  readonly now?: () => number;
  /** Source of the store id (injected for tests). */
  readonly randomBytes?: (n: number) => Buffer;
  readonly logger?: Logger;
  /**
   * A key's sibling policy (its bucket's: buckets/bucket.ts), given its stored key:
   * 'lww' keeps one sibling per key, the last written (versions.ts: updateLww, mergeLww).
   * Absent: every key keeps its concurrent siblings.
   */
  readonly policyOf?: (key: Buffer) => SiblingPolicy;
  /** Keep anti-entropy trees on write (kept-trees.ts); absent: none are kept (repair scans). */
  readonly keptTrees?: KeptTreesOptions;
  /**
   * The disk under the store (disk.ts): new writes are refused (KV_DISK_FULL) while its
   * free space is below `floorBytes` (default: 5% of it, at most 1 GiB) or after a write
   * failed for want of space, until `checkDisk` finds space back and reopens the engine.
   * `path`: the directory whose filesystem is measured (default: the store's `path`; a
   * store on an `engine` and no `path` has no guard). `label` names the node in messages.
   */
  readonly disk?: {
    readonly path?: string;
    readonly floorBytes?: number;
    readonly label?: string;
    readonly statfs?: StatFs;
  };
}

export interface ReadResult {
  /** Every live sibling's value: empty when the key is absent, deleted or expired. */
  readonly values: Buffer[];
  /** Opaque causal context: pass it to put/delete to supersede exactly what this read saw. */
  readonly context: Buffer;
  /** Versions held, tombstones included. */
  readonly versions: number;
  /** True when versions are held but none is a live value (tombstones, expired values). */
  readonly deleted: boolean;
}

export interface WriteResult {
  /** The context after the write (covers the new version). */
  readonly context: Buffer;
  readonly versions: number;
  /** The key's record after the write, to send to the other replicas (merge). */
  readonly record: Buffer;
  /** True when the write's request id showed it was applied here before: nothing was written. */
  readonly duplicate?: boolean;
}

export interface WriteOptions {
  /**
   * The request's id (1 to MAX_REQUEST_ID_BYTES bytes, the same on every attempt of one
   * request): a write whose request this key has seen before, with the same value and
   * context, is not applied again (docs/causality.md#safe-to-send-twice).
   */
  readonly requestId?: Uint8Array;
  /** A put's expiry, ms since the epoch (its coordinator's clock): reads leave the value out from then on. */
  readonly expiresAt?: number;
}

export interface MergeResult {
  /** False when the incoming record held nothing new: nothing was written. */
  readonly changed: boolean;
  readonly versions: number;
  readonly record: Buffer;
}

/** What `counterUpdate` returns. */
export interface CounterUpdateResult {
  /** The key's whole counter record after the increment (format 4): what a read of this replica returns. */
  readonly record: Buffer;
  /**
   * The increment's delta (counter.ts encodeCounterDelta): what the other replicas merge.
   * A replica that missed an earlier delta of this issuer refuses it (KV_COUNTER_GAP) and
   * is sent `record`, the full state. A duplicate's delta is the full state.
   */
  readonly delta: Buffer;
  /** True when the request id showed the increment was applied here before: no dot was issued, nothing written. */
  readonly duplicate: boolean;
  /** The counter's value here after the increment. */
  readonly value: bigint;
}

/** One sub-key of a writeMany call, checked: its op, the context a remove carries, its write id, and its record as read under its lock. */
interface SubItem extends Locked {
  readonly at: number;
  readonly k: Buffer;
  readonly op: SubOp;
  /** A remove's context, decoded: a versions context, or (a counter field's reset) the state a read saw; undefined for an add. */
  readonly seen: { readonly versions: Context } | { readonly counter: CounterState } | undefined;
  readonly id: WriteId | undefined;
}

/** The engine's message when an open failed because its files are damaged (LEVEL_CORRUPTION, through causes); undefined for another failure. */
function corruption(e: unknown): string | undefined {
  for (let x = e, depth = 0; x instanceof Error && depth < 5; x = x.cause, depth++)
    if ((x as { code?: unknown }).code === 'LEVEL_CORRUPTION') return x.message;
  return undefined;
}

/** A record received from another node: a counter's may be a delta, with a base (counter.ts CounterDelta). */
type Received = StoredRecord | (StoredCounter & { readonly base?: CounterDelta['base'] }) | HeldJoined;

const EMPTY = Buffer.alloc(0);
/** Where the clock of the record #persist last encoded lies (a put's context is it). */
const persisted: ClockSpan = { start: 0, end: 0, format: 1 };
/** The skim of the record Store.ingest is copying (codec.ts skimRecord reuses one). */
const skim: RecordSkim = {
  format: 0,
  versionsStart: 0,
  versionsEnd: 0,
  actors: 0,
  siblings: 0,
  retired: 0,
  deleted: false,
  nextExpiry: undefined,
};

/** A key of a batch taken under its lock (#batchChange), with its record as read then, and decoded. */
interface Locked {
  readonly dk: Buffer;
  readonly hi: number;
  readonly lo: number;
  readonly lock: string;
  /** The key's record before the batch (read under its lock), undefined when absent: what a tree delta subtracts. */
  stored: Buffer | undefined;
  /** `stored` decoded; undefined when absent, or corrupt (then set aside). */
  old: Held | undefined;
}

/** One key of a merged batch: its first record, and any more the batch gave for it. */
interface BatchItem extends Locked {
  readonly k: Buffer;
  readonly record: Buffer;
  readonly at: number;
  more: { readonly record: Buffer; readonly at: number }[] | undefined;
}

/** A prune index entry's value: when the record last changed (u64 ms), and its length and checksum then (what shows it changed since by a path that does not index). */
function pruneStamp(at: number, record: Buffer): Buffer {
  const b = Buffer.allocUnsafe(16);
  b.writeUInt32BE(Math.floor(at / 0x100000000), 0);
  b.writeUInt32BE(at >>> 0, 4);
  b.writeUInt32BE(record.length >>> 0, 8);
  record.copy(b, 12, record.length - 4); // the record's CRC-32 (codec.ts)
  return b;
}

function stampTime(stamp: Buffer): number {
  return stamp.length === 16 ? stamp.readUInt32BE(0) * 0x100000000 + stamp.readUInt32BE(4) : 0;
}

function stampMatches(stamp: Buffer, record: Buffer): boolean {
  return (
    stamp.length === 16 &&
    stamp.readUInt32BE(8) === record.length >>> 0 &&
    stamp.compare(record, record.length - 4, record.length, 12, 16) === 0
  );
}

export class Store {
  readonly settings: StoreSettings;
  readonly hints: HintStore;
  /** Token-range scans, sizes, digests and deletes (ranges.ts). */
  readonly ranges: Ranges;
  /** The anti-entropy trees kept on write, when the store was opened with `keptTrees`. */
  readonly trees: KeptTrees | undefined;
  readonly #engine: Engine;
  readonly #queue: WriteQueue;
  readonly #locks = new KeyLocks();
  /** Reads of read-merge-writes: one batch in flight, at most half of #rmw. */
  readonly #reads: ReadBatcher;
  /** Plain reads (get, getRecord): up to the thread pool's size in flight. */
  readonly #gets: ReadBatcher;
  readonly #now: () => number;
  readonly #policyOf: ((key: Buffer) => SiblingPolicy) | undefined;
  readonly #log: Logger | undefined;
  readonly #actors: Actors;
  readonly #keys: KeyFilter;
  #keyFilterStart: Promise<void> = Promise.resolve();
  readonly #disk: DiskGuard | undefined;
  #open = false;
  #active = 0;
  /** Read-merge-writes in #change (waiting for their lock, reading or writing). */
  #rmw = 0;
  #idle: (() => void) | undefined;
  /** Writes whose request id showed they were applied before. */
  #duplicates = 0;

  /** Told the key of every record found corrupt on disk, by a read, a write, a scan or a range read (the node fetches it again from its replicas). */
  onCorrupt: ((key: Buffer) => void) | undefined;

  /** Told the clock entries of every record written (the node's `ringkv_clock_entries` histogram). */
  onClockEntries: ((entries: number) => void) | undefined;

  private constructor(
    engine: Engine,
    s: StoreSettings,
    actors: Actors,
    options: StoreOptions,
    disk: DiskGuard | undefined,
  ) {
    this.#engine = engine;
    this.#disk = disk;
    this.#actors = actors;
    this.settings = s;
    this.#queue = new WriteQueue(engine, s.durability === 'sync', undefined, (key) => key[0] === DATA);
    // Half the read-merge-writes in progress per getMany: concurrent writers settle into
    // two groups that take turns, one reading while the other writes, so both trips
    // overlap. One group of all of them (no cap) left the pool idle half the time.
    this.#reads = new ReadBatcher(engine, { lanes: 1, burst: true, cap: () => Math.ceil(this.#rmw / 2) });
    this.#gets = new ReadBatcher(engine, { lanes: 4 });
    this.#now = options.now ?? Date.now;
    this.#policyOf = options.policyOf;
    this.#log = options.logger;
    const guard = <T>(fn: () => Promise<T>) => this.#guard(fn);
    this.hints = new HintStore({
      engine,
      queue: this.#queue,
      locks: this.#locks,
      settings: s,
      guard,
      room: () => this.#roomForWrite(),
      now: this.#now,
    });
    this.ranges = new Ranges({
      engine,
      queue: this.#queue,
      locks: this.#locks,
      actors,
      log: this.#log,
      isOpen: () => this.#open,
      guard,
      now: this.#now,
      corrupt: (key) => this.onCorrupt?.(key),
      damaged: (dk, bytes) => this.#setAsideDamaged(dk, bytes),
    });
    this.trees =
      options.keptTrees === undefined
        ? undefined
        : new KeptTrees(
            { engine, queue: this.#queue, now: this.#now, log: this.#log, isOpen: () => this.#open },
            options.keptTrees,
          );
    this.#queue.extend = this.trees?.extend;
    this.#keys = new KeyFilter(
      (add) => this.#scanTokens(add),
      (e) => {
        if (this.#open)
          this.#log?.warn({ err: (e as Error).message }, 'key filter build failed: new-key writes keep reading first');
      },
    );
  }

  /**
   * Size and build the key filter: from the count saved at the last clean close, else
   * from LevelDB's size estimate at ~100 bytes a key (records are larger than that).
   */
  async #startKeyFilter(): Promise<void> {
    try {
      const [saved] = await this.#engine.getMany([metaKey('key-count')]);
      const expected =
        saved !== undefined
          ? Number(saved.toString())
          : (await this.#engine.approximateSize(ALL_DATA.gte, ALL_DATA.lt)) / 100;
      await this.#keys.start(Number.isFinite(expected) ? expected : 0);
    } catch (e) {
      this.#log?.warn({ err: (e as Error).message }, 'key filter not started: new-key writes keep reading first');
    }
  }

  /** Every data key's token halves, for the key filter; stops (throwing) if the store closes. */
  async #scanTokens(add: (hi: number, lo: number) => void): Promise<void> {
    const it = this.#engine.keyIterator(ALL_DATA.gte, ALL_DATA.lt);
    try {
      for (let keys = await it.nextv(1000); keys.length > 0; keys = await it.nextv(1000)) {
        if (!this.#open) throw new KvError('KV_CLOSED', 'the store closed during the key filter scan');
        for (const k of keys) add(k.readUInt32BE(1), k.readUInt32BE(5));
      }
    } finally {
      await it.close();
    }
  }

  static async open(options: StoreOptions): Promise<Store> {
    if ((options.engine === undefined) === (options.path === undefined))
      throw new KvError('KV_BAD_OPTION', 'give exactly one of engine or path (a data directory for LevelDB)');
    const s = settings(options);
    const raw = options.engine ?? new LevelEngine(options.path!);
    const diskPath = options.disk?.path ?? options.path;
    const disk =
      diskPath === undefined
        ? undefined
        : new DiskGuard(diskPath, options.disk?.floorBytes, options.disk?.label, options.disk?.statfs);
    let repaired = false;
    const mark = options.path === undefined ? undefined : fileCleanMark(join(options.path, CLEAN_MARK));
    try {
      if (options.path !== undefined) await mkdir(options.path, { recursive: true }); // LevelDB makes only the last level
      try {
        await raw.open();
      } catch (e) {
        const damage = corruption(e);
        if (damage === undefined || raw.repair === undefined) throw e;
        // The records the damaged files held are lost here and come back from the other replicas (reads, the
        // verification pass, repair); the kept trees, which would still claim them, are dropped below and rebuilt.
        options.logger?.error(
          { reason: damage },
          'the database does not open, its files are damaged: repairing it (LevelDB RepairDB); what it cannot recover comes back from the other replicas',
        );
        await mark?.clear(); // first: a crash from here on must not look like a clean shutdown (actors.ts)
        await raw.repair();
        await raw.open();
        repaired = true;
      }
    } catch (e) {
      throw new KvError(
        'KV_IO',
        `cannot open the ${raw.kind} database${options.path ? ` in ${options.path}` : ''}: ${(e as Error).message}`,
        { cause: e },
      );
    }
    const engine = withIoErrors(raw, (e) => disk?.noteFailure(e) ?? false);
    let store: Store;
    try {
      const { actors, uncleanShutdown } = await Actors.open(engine, options.randomBytes ?? cryptoRandomBytes, {
        ...(mark ? { mark } : {}),
        lostWrites: repaired,
      });
      if (uncleanShutdown)
        options.logger?.warn(
          { floor: actors.floor, id: actors.id },
          'store was not closed cleanly: a new actor id, earlier epochs retired',
        );
      store = new Store(engine, s, actors, options, disk);
      await disk?.check();
      await store.hints.load();
      // A repaired database lost records its kept trees still hash: they go, and are built again by a scan.
      if (repaired && (await dropKeptTrees(engine)) > 0)
        options.logger?.warn({}, 'kept anti-entropy trees dropped after the repair: they are built again');
      // Before the first write: the leaves on disk are what deltas add to. Without kept
      // trees, any left from an earlier run go: these writes will not follow them.
      if (store.trees !== undefined) await store.trees.load();
      else if ((await dropKeptTrees(engine)) > 0)
        options.logger?.warn(
          {},
          'kept anti-entropy trees dropped: this store is opened without them, and they would go stale',
        );
    } catch (e) {
      await raw.close().catch(() => {}); // release the database (its lock) for whoever fixes it
      throw e;
    }
    store.#open = true;
    store.#keyFilterStart = store.#startKeyFilter(); // in the background: until it is done, every write reads first
    return store;
  }

  /**
   * Wait for operations in flight, mark the shutdown clean, close the engine. The engine
   * is closed even when the last writes fail (a full disk): the next open then takes the
   * shutdown as unclean, and rebuilds what a clean one saves.
   */
  async close(): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    if (this.#active > 0) await new Promise<void>((resolve) => (this.#idle = resolve));
    await this.#keyFilterStart;
    await this.#keys.settled(); // a scan in progress sees #open false and stops
    await this.trees?.settled(); // a build in progress sees #open false and stops
    try {
      await this.trees?.checkpoint(); // the next open replays no journal
      // How many keys the filter holds, to size it at the next open without a second scan.
      if (this.#keys.ready)
        await this.#engine.write(
          [{ type: 'put', key: metaKey('key-count'), value: Buffer.from(String(this.#keys.stats.keys)) }],
          false,
        );
      await this.#actors.markClean();
    } catch (e) {
      await this.#engine.close().catch(() => {});
      throw e;
    }
    await this.#engine.close();
  }

  /**
   * Read the free space of the store's disk (its guard's figures; undefined without one),
   * and open the engine again when a write failed for want of space and space is back:
   * LevelDB keeps that failure and refuses every write until then. Called on a timer by
   * the node. What was acknowledged before the failure is in LevelDB's log, which the
   * reopen replays.
   */
  async checkDisk(): Promise<DiskState | undefined> {
    const disk = this.#disk;
    if (disk === undefined || !this.#open) return disk?.state;
    await disk.check();
    if (disk.recoverable() && this.#engine.reopen !== undefined) {
      try {
        await this.#engine.reopen();
        disk.recovered();
        this.#log?.warn(
          { free: disk.state.freeBytes },
          'store reopened: disk space is back after a write failed for want of it; writes are taken again',
        );
      } catch (e) {
        this.#log?.error(
          { err: (e as Error).message },
          'store reopen after a full disk failed; writes stay refused, and it is tried again',
        );
      }
    }
    return disk.state;
  }

  /** KV_DISK_FULL unless the disk has room for a new write (a guard's floor, or a failed write not recovered). */
  #roomForWrite(): void {
    const refused = this.#disk?.refusal();
    if (refused !== undefined) throw refused;
  }

  /** #enter for a new write (a put, an update, a merge, a Paxos step): refused, nothing counted, when the disk has no room. */
  #enterWrite(): void {
    this.#enter();
    try {
      this.#roomForWrite();
    } catch (e) {
      this.#leave();
      throw e;
    }
  }

  /**
   * Bytes of data the store holds, estimated (what `ringkv status` shows as Load).
   * LevelDB's size estimate reads only its table files, so writes still in the memtable
   * (4 MiB, and one more while it is flushed) are missing from it: a node that took 1 MiB
   * of writes showed 0 B. Data bytes written since the estimate last changed are added to
   * it, at most what the memtables hold: when the estimate changes (a flush, or a
   * compaction), what was written before is taken to be in the tables. The figure can
   * lag by up to a memtable after a flush; it never counts a write twice for long.
   */
  async approximateLoad(): Promise<number> {
    const written = this.#queue.bytesWritten;
    const onDisk = await this.#guard(() => this.#engine.approximateSize(ALL_DATA.gte, ALL_DATA.lt));
    if (this.#engine.kind !== 'leveldb') return onDisk; // no memtable: the figure is whole
    if (this.#loadBase === undefined) this.#loadBase = { onDisk, written: 0 };
    else if (onDisk !== this.#loadBase.onDisk) this.#loadBase = { onDisk, written };
    return onDisk + Math.min(UNFLUSHED_MAX_BYTES, Math.max(0, written - this.#loadBase.written));
  }

  /** The size estimate when approximateLoad last saw it change, and the bytes written by then. */
  #loadBase: { onDisk: number; written: number } | undefined;

  /** This store's id (8 bytes, hex): the prefix of every actor it issues dots under. */
  get id(): string {
    return this.#actors.id;
  }

  /** Count an operation in flight (close waits for them); refuse once closed. */
  #enter(): void {
    if (!this.#open) throw new KvError('KV_CLOSED', 'the store is closed; open it again to use it');
    this.#active++;
  }

  #leave(): void {
    if (--this.#active === 0 && this.#idle) this.#idle();
  }

  async #guard<T>(fn: () => Promise<T>): Promise<T> {
    this.#enter();
    try {
      return await fn();
    } finally {
      this.#leave();
    }
  }

  /** A key's bytes (checked), its data key and token halves, and the 32-bit check its contexts carry. */
  #locate(key: Key): { k: Buffer; dk: Buffer; hi: number; lo: number; check: number } {
    const k = userKey(key, this.settings.maxKeyBytes);
    const [hi, lo] = tokenHalves(k);
    // contextCheckOf(k) is lo for any key but a sub-key (which shares its parent's token): no second hash.
    return { k, dk: dataKey(hi, lo, k), hi, lo, check: isSubKey(k) ? contextCheckOf(k) : lo };
  }

  /** Run a decoder over stored bytes; a failure is a corrupt record, reported with its key. */
  #checked<T>(dk: Buffer, decode: () => T): T {
    try {
      return decode();
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      throw this.#corrupt(dk, e);
    }
  }

  /** A decoder's failure on stored bytes as KV_CORRUPT_RECORD, logged with its key. */
  #corrupt(dk: Buffer, e: DecodeError): KvError {
    this.#log?.error({ key: showKey(userKeyOf(dk)), reason: e.message }, 'corrupt record');
    this.onCorrupt?.(userKeyOf(dk));
    return new KvError(
      'KV_CORRUPT_RECORD',
      `the record of key ${showKey(userKeyOf(dk))} is corrupt on disk (${e.message}); repair it from another replica`,
      { cause: e },
    );
  }

  /** KV_WRONG_TYPE: a key holding `held` met by an operation (or record) of the other kind. */
  /** KV_COUNTER_GAP: a counter's delta this replica cannot apply in order; nothing was written. */
  #gap(dk: Buffer, what: string): KvError {
    return new KvError(
      'KV_COUNTER_GAP',
      `the counter at key ${showKey(userKeyOf(dk))} was sent ${what}; nothing was written. Send the issuer's full state (its record) instead`,
    );
  }

  #wrongType(dk: Buffer, held: string, what: string): KvError {
    return new KvError(
      'KV_WRONG_TYPE',
      `key ${showKey(userKeyOf(dk))} holds ${held}, and ${what} cannot change that; nothing was written. A key's type is its bucket's, fixed at creation: use the operation of that type`,
    );
  }

  /** Entries with damaged data keys set aside since open (ranges.ts `damaged`). */
  damagedKeys = 0;
  /** The damaged data keys (latin1) being set aside now: a scan that meets one again leaves it to the first. */
  readonly #settingAside = new Set<string>();

  /**
   * Set aside an entry whose data key is damaged (a byte flipped on disk). The key it was
   * written under is missing here now (or shows an older version) while the kept trees
   * still hash what it held, so first the trees over its token (the stored one, and its
   * user key's, which differ when the flip hit the token) are rebuilt from the records,
   * which skip damaged keys; and every epoch issued so far is retired (a key rolled back
   * to an older version must not issue its lost version's counter again). Only then do
   * its bytes go under the quarantine prefix and the data key go, in one batch, without a
   * kept-tree delta (the trees never held this key): a crash before that leaves the entry
   * for the next scan, which starts over.
   */
  #setAsideDamaged(dk: Buffer, bytes: Buffer): void {
    const id = dk.toString('latin1');
    if (this.#settingAside.has(id)) return;
    this.#settingAside.add(id);
    void (async () => {
      const tokens = [tokenOfDataKey(dk)];
      try {
        tokens.push(tokenOf(placementKey(userKeyOf(dk))));
      } catch {
        // no user key to place: the stored token alone
      }
      if (this.trees !== undefined && !(await this.trees.rebuildNow(tokens)))
        throw new Error('the kept trees over its token were not rebuilt');
      await this.#guard(async () => {
        await this.#actors.retireAll();
        await this.#queue.write([
          { type: 'put', key: quarantineKey(dk), value: bytes },
          { type: 'del', key: dk, prior: null },
        ]);
      });
      this.damagedKeys++;
    })()
      .catch((e: unknown) =>
        this.#log?.warn(
          { err: (e as Error).message },
          'setting aside a damaged data key failed: the next scan finds it again',
        ),
      )
      .finally(() => this.#settingAside.delete(id));
  }

  /** Decode a key's record (of either kind) for a read-merge-write. A corrupt one is set aside (an op), not lost. */
  #loadForWrite(dk: Buffer, bytes: Buffer, ops: QueueOp[]): Held | undefined {
    try {
      return decodeHeld(bytes); // not through #checked: its closure would cost every write one
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      this.#corrupt(dk, e); // logged; the write goes on
      ops.push({ type: 'put', key: quarantineKey(dk), value: bytes });
      return undefined;
    }
  }

  /**
   * Read-merge-write of one key under its lock: `change` gets the stored record
   * (undefined when absent or set aside as corrupt) and pushes the ops to write; they are
   * written, as one batch, before the result is returned. `change` is synchronous: every
   * await on this path costs a trip through the microtask queue, per write.
   */
  async #change<T>(
    dk: Buffer,
    hi: number,
    lo: number,
    change: (old: Held | undefined, ops: QueueOp[], stored: Buffer | undefined) => T,
  ): Promise<T> {
    const lockKey = dk.toString('latin1');
    this.#rmw++;
    const wait = this.#locks.acquire(lockKey);
    if (wait) await wait;
    try {
      const ops: QueueOp[] = [];
      // A key the filter has never seen has no record: skip the read (key-filter.ts).
      const stored = this.#keys.mightHave(hi, lo) ? await this.#reads.get(dk) : undefined;
      try {
        const old = stored === undefined ? undefined : this.#loadForWrite(dk, stored, ops);
        // A record set aside took its dots with it: write the key under a new actor.
        if (stored !== undefined && old === undefined) await this.#actors.retire();
        const result = change(old, ops, stored);
        if (ops.length > 0) await this.#queue.write(ops);
        return result;
      } finally {
        // After the write landed (or failed: a key added in vain costs one read later),
        // while the lock is still ours.
        this.#keys.add(hi, lo, stored === undefined);
      }
    } finally {
      this.#rmw--;
      this.#locks.release(lockKey);
    }
  }

  /** Refuse a record of `n` siblings past the sibling cap; warn near it. */
  #checkSiblings(dk: Buffer, n: number): void {
    if (n > this.settings.maxSiblings)
      throw new KvError(
        'KV_TOO_MANY_SIBLINGS',
        `key ${showKey(userKeyOf(dk))} would hold ${n} concurrent versions, over the limit of ${this.settings.maxSiblings}; read it and write back one value with the read's context to resolve them`,
      );
    if (n >= this.settings.warnSiblings)
      this.#log?.warn(
        { key: showKey(userKeyOf(dk)), siblings: n },
        'many siblings: clients are writing without contexts or racing',
      );
  }

  /** Refuse a record over the size cap. */
  #checkRecordSize(dk: Buffer, bytes: number): void {
    if (bytes > this.settings.maxRecordBytes)
      throw new KvError(
        'KV_RECORD_TOO_LARGE',
        `key ${showKey(userKeyOf(dk))} would hold ${bytes} bytes of versions, over the limit of ${this.settings.maxRecordBytes}; resolve its siblings (read, then write one value with the read's context) or raise limits.maxRecordBytes`,
      );
  }

  /**
   * The index ops of a record of dk that goes from (wasDeletedAt, wasDue) to (deletedAt,
   * due): the tombstone index and the expiry index (each record's earliest expiry), in the
   * record's own batch. #persist and Store.ingest's copied records both use it.
   */
  #indexOps(
    dk: Buffer,
    wasDeletedAt: number | undefined,
    wasDue: number | undefined,
    deletedAt: number | undefined,
    due: number | undefined,
    ops: QueueOp[],
  ): void {
    if (wasDeletedAt !== undefined) ops.push({ type: 'del', key: tombstoneKey(wasDeletedAt, dk) });
    if (deletedAt !== undefined) ops.push({ type: 'put', key: tombstoneKey(deletedAt, dk), value: EMPTY });
    if (wasDue !== due) {
      if (wasDue !== undefined) ops.push({ type: 'del', key: expiryKey(wasDue, dk) });
      if (due !== undefined) ops.push({ type: 'put', key: expiryKey(due, dk), value: EMPTY });
    }
  }

  /**
   * Queue the ops that store `versions` for dk (record and tombstone index) and return
   * the record; `prior` is the record it replaces as stored (a corrupt one set aside too); refuse (before anything is written) versions over the sibling or size cap.
   */
  #persist(
    dk: Buffer,
    old: StoredRecord | undefined,
    prior: Buffer | undefined,
    versions: Versions,
    ownerEpoch: number | undefined,
    ops: QueueOp[],
    clockAt?: ClockSpan,
  ): Buffer {
    this.#checkSiblings(dk, versions.siblings.length);
    const deletedAt = isDeleted(versions) ? this.#now() : undefined;
    this.#indexOps(
      dk,
      old?.deletedAt,
      old === undefined ? undefined : nextExpiry(old.versions),
      deletedAt,
      nextExpiry(versions),
      ops,
    );
    const record = encodeRecord({ versions, ownerEpoch, deletedAt }, clockAt);
    this.#checkRecordSize(dk, record.length);
    ops.push({ type: 'put', key: dk, value: record, prior: prior ?? null, priorIntact: old !== undefined }); // old was decoded from prior
    // The prune index: a record whose clock may be pruned has an entry saying when it last changed.
    if (this.#prunableClock(versions, ownerEpoch))
      ops.push({ type: 'put', key: pruneKey(dk), value: pruneStamp(this.#now(), record) });
    else if (old !== undefined && this.#prunableClock(old.versions, old.ownerEpoch))
      ops.push({ type: 'del', key: pruneKey(dk) });
    this.onClockEntries?.(versions.clock.size);
    return record;
  }

  /**
   * Queue the op that stores a counter for dk and return its record. A counter has no
   * tombstone, expiry or clock to index: only the size cap applies.
   */
  #persistCounter(
    dk: Buffer,
    old: StoredCounter | undefined,
    prior: Buffer | undefined,
    state: CounterState,
    ownerEpoch: number | undefined,
    ops: QueueOp[],
  ): Buffer {
    const record = encodeCounter(state, ownerEpoch);
    this.#checkRecordSize(dk, record.length);
    ops.push({ type: 'put', key: dk, value: record, prior: prior ?? null, priorIntact: old !== undefined }); // old was decoded from prior
    return record;
  }

  /** Queue the op that stores a joined kind's state for dk and return its record: only the size cap applies. */
  #persistJoined<S>(
    dk: Buffer,
    old: HeldJoined | undefined,
    prior: Buffer | undefined,
    kind: JoinedKind<S>,
    state: S,
    ops: QueueOp[],
  ): Buffer {
    const record = kind.encode(state);
    this.#checkRecordSize(dk, record.length);
    ops.push({ type: 'put', key: dk, value: record, prior: prior ?? null, priorIntact: old !== undefined }); // old was decoded from prior
    return record;
  }

  /** This node's actor for a key whose record has this owner epoch (none: a key only merged here). */
  #ownActor(ownerEpoch: number | undefined): Actor | undefined {
    return ownerEpoch === undefined ? undefined : this.#actors.actor(ownerEpoch);
  }

  /**
   * True when a record's clock has entries `prune` could drop, and enough of them to be
   * worth indexing. A deleted key is left to the tombstone purge, which drops it whole.
   */
  #prunableClock(v: Versions, ownerEpoch: number | undefined): boolean {
    return v.clock.size > PRUNE_ABOVE_ENTRIES && !isDeleted(v) && prunable(v, this.#ownActor(ownerEpoch)).length > 0;
  }

  /**
   * All live values of a key and the causal context that covers them. Concurrent reads
   * share getMany trips (read-batcher.ts): fewer LevelDB calls, and less CPU, per get.
   */
  async get(key: Key): Promise<ReadResult> {
    this.#enter();
    try {
      const { dk, check } = this.#locate(key);
      const bytes = await this.#gets.get(dk);
      if (bytes === undefined)
        return { values: [], context: contextFromClock(check, undefined), versions: 0, deleted: false };
      if (isCounterRecord(bytes) || joinedKindOf(bytes) !== undefined)
        throw this.#wrongType(dk, recordKind(bytes), 'a get (which reads versions)');
      const view = this.#checked(dk, () => viewRecord(bytes, this.#now()));
      return {
        values: view.values,
        context: contextFromClock(check, view.clock, view.format),
        versions: view.siblings,
        deleted: view.siblings > 0 && view.values.length === 0,
      };
    } finally {
      this.#leave();
    }
  }

  /** The stored record of a key (checked), or undefined: what a replica sends a coordinator. */
  async getRecord(key: Key): Promise<Buffer | undefined> {
    this.#enter();
    try {
      const { dk } = this.#locate(key);
      const bytes = await this.#gets.get(dk);
      if (bytes !== undefined) this.#checked(dk, () => versionBytes(bytes)); // the checksum; the receiver's merge decodes the rest
      return bytes;
    } finally {
      this.#leave();
    }
  }

  /**
   * Write a value that supersedes exactly what `context` (from a get) saw; without a
   * context it is a new sibling. Acknowledged when durable per the durability mode.
   */
  put(key: Key, value: Uint8Array, context?: Uint8Array, o: WriteOptions = {}): Promise<WriteResult> {
    if (!(value instanceof Uint8Array))
      return Promise.reject(
        new KvError('KV_BAD_VALUE', `a value must be bytes (a Uint8Array or Buffer), got ${typeof value}`),
      );
    try {
      checkValueSize(value.length, this.settings.maxValueBytes);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.#write(key, value, context, o);
  }

  /** A tombstone that supersedes exactly what `context` saw; a concurrent put survives it. */
  delete(key: Key, context?: Uint8Array, o: WriteOptions = {}): Promise<WriteResult> {
    return this.#write(key, null, context, o);
  }

  async #write(
    key: Key,
    value: Uint8Array | null,
    context: Uint8Array | undefined,
    o: WriteOptions,
  ): Promise<WriteResult> {
    this.#enterWrite();
    try {
      const { k, dk, hi, lo, check } = this.#locate(key);
      const expiresAt = o.expiresAt;
      if (expiresAt !== undefined && (!Number.isSafeInteger(expiresAt) || expiresAt < 1))
        throw new KvError(
          'KV_BAD_OPTION',
          `expiresAt must be a time in ms since the epoch (a positive integer), got ${String(expiresAt)}; give a put a TTL, and the coordinator sets it`,
        );
      if (expiresAt !== undefined && value === null)
        throw new KvError('KV_BAD_OPTION', 'a delete cannot expire: its tombstone is kept until it is purged');
      const lww = this.#lww(k);
      let ctx;
      try {
        ctx = decodeContext(context ?? EMPTY, check);
      } catch (e) {
        if (!(e instanceof DecodeError)) throw e;
        throw new KvError(
          'KV_BAD_CONTEXT',
          `bad causal context for key ${showKey(k)}: ${e.message}; pass the context returned by a get of this key, or none`,
        );
      }
      const id = o.requestId === undefined ? undefined : this.#writeId(o.requestId, value, context ?? EMPTY);
      return await this.#change(dk, hi, lo, (old, ops, stored) => {
        if (old !== undefined && !isVersions(old))
          throw this.#wrongType(dk, kindOf(old), `a ${value === null ? 'delete' : 'put'}`);
        const local = old?.versions ?? EMPTY_VERSIONS;
        if (id !== undefined && stored !== undefined && isDuplicate(local, id)) {
          // Applied here before (another coordinator, an earlier attempt): answer as then, write nothing.
          this.#duplicates++;
          const { clock, format } = clockBytes(stored);
          return {
            context: contextFromClock(check, clock, format),
            versions: local.siblings.length,
            record: stored,
            duplicate: true,
          };
        }
        const epoch = this.#actors.epochFor(old?.ownerEpoch);
        // The value is copied into the record right away: no copy of it is kept.
        const now = this.#now(),
          info = { seenIds: ctx.ids, id, now, expiresAt };
        const versions = lww
          ? updateLww(local, ctx.clock, this.#actors.actor(epoch), value, now, info)
          : update(local, ctx.clock, this.#actors.actor(epoch), value, info);
        const record = this.#persist(dk, old, stored, versions, epoch, ops, persisted);
        return {
          context: contextFromClock(check, record.subarray(persisted.start, persisted.end), persisted.format),
          versions: versions.siblings.length,
          record,
        };
      });
    } finally {
      this.#leave();
    }
  }

  #writeId(requestId: Uint8Array, value: Uint8Array | null, context: Uint8Array): WriteId {
    return writeIdOf(checkRequestId(requestId), value, context);
  }

  /**
   * Increment (a negative amount: decrement) the counter at `key` as its issuer: a
   * read-modify-write under the key's lock, a new dot of this node's actor for the key
   * (actors.ts, the record's owner epoch, as for a put). With a request id, an increment
   * this key's log already holds (the same request again, through any coordinator) issues
   * nothing and answers `duplicate`, with the full state for its delta, so a second
   * coordinator can finish what a failed first one began (counter.ts). A key holding
   * versions is refused (KV_WRONG_TYPE), as are a zero or unsafe amount (KV_BAD_AMOUNT)
   * and a sum past 2^53 - 1 (KV_COUNTER_OVERFLOW); nothing is written then.
   */
  async counterUpdate(
    key: Key,
    amount: number,
    o: { readonly requestId?: Uint8Array } = {},
  ): Promise<CounterUpdateResult> {
    this.#enterWrite();
    try {
      const { dk, hi, lo } = this.#locate(key);
      checkAmount(amount);
      const id = o.requestId === undefined ? undefined : counterWriteId(checkRequestId(o.requestId), amount);
      return await this.#change(dk, hi, lo, (old, ops, stored) => {
        if (old !== undefined && !isCounter(old)) throw this.#wrongType(dk, kindOf(old), 'a counter increment');
        const epoch = this.#actors.epochFor(old?.ownerEpoch);
        const inc = increment(old?.state ?? EMPTY_COUNTER, this.#actors.actor(epoch), amount, id);
        const delta = encodeCounterDelta(inc.delta);
        if (inc.duplicate) {
          this.#duplicates++;
          return { record: stored!, delta, duplicate: true, value: counterValue(inc.state) }; // a logged id: old came from stored
        }
        return {
          record: this.#persistCounter(dk, old, stored, inc.state, epoch, ops),
          delta,
          duplicate: false,
          value: counterValue(inc.state),
        };
      });
    } finally {
      this.#leave();
    }
  }

  /**
   * Step `step` of the joined kind `kind` on `key` (record-kind.ts): its argument checked,
   * then the step run on the key's state under its lock, the new state written (when it
   * changed) before the reply returns, durable as every write is. KV_WRONG_TYPE for a key
   * holding another kind's record.
   */
  async step<S, A, R>(key: Key, kind: JoinedKind<S>, step: KindStep<S, A, R>, arg: A): Promise<R> {
    step.check(arg, { maxValueBytes: this.settings.maxValueBytes });
    this.#enterWrite();
    try {
      const { dk, hi, lo } = this.#locate(key);
      return await this.#change(dk, hi, lo, (old, ops, stored) => {
        if (old !== undefined && !(isJoined(old) && old.joined === kind))
          throw this.#wrongType(dk, kindOf(old), step.what);
        const before = old === undefined ? kind.empty : (old.value as S);
        const { state, reply } = step.run(before, arg);
        if (old === undefined || !kind.same(state, before)) this.#persistJoined(dk, old, stored, kind, state, ops);
        return reply;
      });
    } finally {
      this.#leave();
    }
  }

  /**
   * The writes of one request on sub-keys of `parent` (a named bucket's stored key: a
   * set's elements, a map's fields), as their issuer: each op as SubOp says, all in ONE
   * write batch, so a replica applies a request whole or not at all. Modelled on
   * mergeMany: every sub-key's lock taken in key order (no deadlock with a batch or a range
   * delete), one getMany for the sub-keys that may be held, one write. With a request id,
   * an op this sub-key has seen (its write id: the request id, the op and its operand) is
   * not applied again and answers with the record as held. Refused whole, nothing written,
   * for: no op or more than MAX_SUB_OPS, or one sub-key twice (DT_BAD_OP); an op whose path
   * names no sub-key it applies to (DT_BAD_OP; a malformed path: its DT_* code); a remove
   * without a context (DT_NO_CONTEXT) or with another key's (KV_BAD_CONTEXT); a value over
   * the limit (KV_VALUE_TOO_LARGE) or a bad amount (KV_BAD_AMOUNT); a sub-key holding a
   * record of the other kind (KV_WRONG_TYPE); a cap.
   */
  async writeMany(
    parent: Key,
    subOps: readonly SubOp[],
    o: { readonly requestId?: Uint8Array } = {},
  ): Promise<WriteManyResult> {
    this.#enterWrite();
    try {
      if (!Array.isArray(subOps) || subOps.length === 0 || subOps.length > MAX_SUB_OPS)
        throw new DataTypeError(
          'DT_BAD_OP',
          `an update carries 1 to ${MAX_SUB_OPS} ops, got ${Array.isArray(subOps) ? subOps.length : typeof subOps}; split a larger one into several requests`,
        );
      const p = userKey(parent, this.settings.maxKeyBytes);
      const requestId = o.requestId === undefined ? undefined : checkRequestId(o.requestId);
      const byLock = new Map<string, SubItem>();
      subOps.forEach((op, at) => {
        checkSubOp(op, at, this.settings.maxValueBytes);
        const { k, dk, hi, lo, check } = this.#locate(subKey(p, op.path));
        const lock = dk.toString('latin1');
        if (byLock.has(lock))
          throw new DataTypeError(
            'DT_BAD_OP',
            `op ${at} names the same element or field as op ${byLock.get(lock)!.at}; give each once per request`,
          );
        let seen, id;
        if (op.op === 'remove') {
          if (!(op.context instanceof Uint8Array) || op.context.length === 0)
            throw new DataTypeError(
              'DT_NO_CONTEXT',
              `op ${at}: a remove needs the context a read of that element or field returned; read it first (a remove supersedes only what its reader saw)`,
            );
          try {
            seen =
              op.path.element === undefined && op.path.fields?.at(-1)?.type === 'counter'
                ? { counter: decodeCounterContext(op.context, check) }
                : { versions: decodeContext(op.context, check) };
          } catch (e) {
            if (!(e instanceof DecodeError)) throw e;
            throw new KvError(
              'KV_BAD_CONTEXT',
              `op ${at}: bad causal context for ${showKey(k)}: ${e.message}; pass the context a read of this element or field returned`,
            );
          }
        }
        if (requestId !== undefined) id = subWriteId(requestId, op);
        byLock.set(lock, { at, k, dk, hi, lo, lock, op, seen, id, stored: undefined, old: undefined });
      });
      const writes = new Array<SubWrite>(subOps.length);
      // Any refusal below throws out of the batch: nothing of the call is written.
      await this.#batchChange([...byLock.values()], (items, ops) => {
        const now = this.#now();
        let bytes = 0;
        for (const it of items) {
          const w = (writes[it.at] = this.#subWrite(it, now, ops));
          bytes += w.key.length + w.record.length + (w.delta?.length ?? 0);
        }
        // What the issuer answers (every record, to send on) must fit one message: refused before anything is written.
        if (bytes > MAX_WRITE_MANY_BYTES)
          throw new DataTypeError(
            'DT_BAD_OP',
            `the update's records would be ${bytes} bytes, over the limit of ${MAX_WRITE_MANY_BYTES} one update may write; split it into smaller updates (fewer ops, or smaller values)`,
          );
      });
      const duplicates = writes.filter((w) => w.duplicate).length;
      this.#duplicates += duplicates;
      return { writes, duplicate: duplicates === writes.length };
    } finally {
      this.#leave();
    }
  }

  /** One op of writeMany, on its sub-key's record as read under its lock: the record after it, its delta (an increment's), or the record as held for an op seen before. */
  #subWrite(it: SubItem, now: number, ops: QueueOp[]): SubWrite {
    const { op, old } = it;
    if (old !== undefined && isJoined(old)) throw this.#wrongType(it.dk, kindOf(old), `an ${op.op} op`);
    const epoch = this.#actors.epochFor(old?.ownerEpoch);
    if (it.seen !== undefined && 'counter' in it.seen) {
      // A counter field's remove: its reset, a full state the other replicas join (no delta).
      if (old !== undefined && !isCounter(old)) throw this.#wrongType(it.dk, kindOf(old), 'a counter field reset');
      const state = resetCounter(old?.state ?? EMPTY_COUNTER, it.seen.counter);
      if (resetAboveEntry(state) !== undefined)
        throw new KvError(
          'KV_BAD_CONTEXT',
          `op ${it.at}: the context does not match the counter held for ${showKey(it.k)} (it counts more than this replica does at the same point); pass the context a read of this counter returned`,
        );
      if (old !== undefined && sameCounter(state, old.state))
        return { key: it.k, record: it.stored!, duplicate: false }; // nothing new to write
      return { key: it.k, record: this.#persistCounter(it.dk, old, it.stored, state, epoch, ops), duplicate: false };
    }
    if (op.op === 'increment') {
      if (old !== undefined && !isCounter(old)) throw this.#wrongType(it.dk, kindOf(old), 'a counter field increment');
      const inc = increment(old?.state ?? EMPTY_COUNTER, this.#actors.actor(epoch), op.amount, it.id);
      if (inc.duplicate) return { key: it.k, record: it.stored!, duplicate: true }; // a logged id: old came from stored; its delta would be this same full state
      return {
        key: it.k,
        record: this.#persistCounter(it.dk, old, it.stored, inc.state, epoch, ops),
        delta: encodeCounterDelta(inc.delta),
        duplicate: false,
      };
    }
    if (old !== undefined && !isVersions(old)) throw this.#wrongType(it.dk, kindOf(old), `an ${op.op} op`);
    const local = old?.versions ?? EMPTY_VERSIONS;
    if (it.id !== undefined && it.stored !== undefined && isDuplicate(local, it.id))
      return { key: it.k, record: it.stored, duplicate: true };
    const actor = this.#actors.actor(epoch);
    // add and assign supersede all this replica holds (its own clock and live ids); remove, what the reader saw.
    const seen = (it.seen !== undefined && 'versions' in it.seen ? it.seen.versions : undefined) ?? {
      clock: local.clock,
      ids: liveIds(local),
    };
    const value = op.op === 'add' ? PRESENT : op.op === 'assign' ? op.value : null;
    const info = { seenIds: seen.ids, id: it.id, now };
    const versions = this.#lww(it.k)
      ? updateLww(local, seen.clock, actor, value, now, info)
      : update(local, seen.clock, actor, value, info);
    return { key: it.k, record: this.#persist(it.dk, old, it.stored, versions, epoch, ops), duplicate: false };
  }

  /**
   * A page of `parent`'s sub-keys (a set's elements, a map's fields), in key order: up to
   * `limit` (1 to MAX_RANGE_KEYS) records and MAX_RANGE_BYTES, after the sub-key `after`
   * (the previous page's `next`), from one snapshot of the parent's span (keys.ts
   * subKeyDataSpan). Corrupt records are reported apart, never returned; `next` is where
   * the following page starts, undefined once the span is read.
   */
  async readRange(parent: Key, after: Uint8Array | undefined, limit: number): Promise<RangeRead> {
    this.#enter();
    try {
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_RANGE_KEYS)
        throw new KvError(
          'KV_BAD_OPTION',
          `a range read's limit must be 1 to ${MAX_RANGE_KEYS} sub-keys, got ${String(limit)}; read a larger set in pages`,
        );
      const span = subKeyDataSpan(userKey(parent, this.settings.maxKeyBytes));
      let gte = span.gte;
      if (after !== undefined) {
        const { dk } = this.#locate(after);
        if (Buffer.compare(dk, span.gte) < 0 || Buffer.compare(dk, span.lt) >= 0)
          throw new KvError(
            'KV_BAD_OPTION',
            `the page's start ${showKey(asBuffer(after))} is no sub-key of this parent; pass the previous page's next, or nothing for the first page`,
          );
        gte = Buffer.concat([dk, Buffer.from([0])]); // the least data key after dk
      }
      return await this.ranges.readSpan({ gte, lt: span.lt }, limit, MAX_RANGE_BYTES);
    } finally {
      this.#leave();
    }
  }

  /**
   * Merge a record from another node (replication, read repair, handoff, hints,
   * anti-entropy) into this node's versions of the key. Idempotent: merging what is
   * already here writes nothing.
   */
  async merge(key: Key, record: Uint8Array): Promise<MergeResult> {
    this.#enterWrite();
    try {
      const { k, dk, hi, lo } = this.#locate(key);
      const incoming = this.#incoming(k, record);
      return await this.#change(dk, hi, lo, (old, ops, stored) => this.#mergeInto(dk, old, incoming, ops, stored));
    } finally {
      this.#leave();
    }
  }

  /**
   * merge() of many records in one pass: every key's lock (taken in key order, as range
   * deletes take theirs, so that two batches never deadlock), one getMany for the keys that
   * may have a record, one write batch. Each key gets the same causal merge as merge(); a
   * key given twice gets both records. Per-key merges of a streamed batch would cost a
   * promise, a read-batcher and a write-queue entry each; this pays those once per batch
   * (figures: docs/benchmarks.md#batching-inside-the-store). While a batch holds its locks,
   * a write to one of its keys waits for the batch's write.
   *
   * Resolves with each entry's result. A key that cannot be merged (bad key, a record that
   * does not decode, over a cap) is not written; the others are, and then the call rejects
   * with the first such error in entry order, as Promise.all over merge() would.
   */
  async mergeMany(entries: readonly { readonly key: Key; readonly record: Uint8Array }[]): Promise<MergeResult[]> {
    const results: MergeResult[] = new Array<MergeResult>(entries.length);
    await this.#mergeBatch(entries, results);
    return results;
  }

  /**
   * mergeMany for range streaming, where most keys are new to this node: a key the key
   * filter says this node has never held is not decoded at all. Its record is checked
   * without building anything (codec.ts skimRecord: the checksum and every rule of the
   * decoder), and stored as its received versions section under a new header, with the
   * same tombstone and expiry index entries, caps and bookkeeping as a merge into nothing
   * writes (byte for byte: test/property/ingest.property.test.ts). Keys that may be held,
   * keys given twice, last-writer-wins keys whose record a merge would change, and records
   * the skim does not accept (which the decoder then refuses with KV_BAD_RECORD, or
   * accepts) take mergeMany's path. The locks are held from the filter check to the
   * write, so a foreground write to one of the keys waits for the batch (and is merged
   * with it), never overwritten by it. Rejects as mergeMany does; resolves with how many
   * keys took each path.
   */
  async ingest(
    entries: readonly { readonly key: Key; readonly record: Uint8Array }[],
  ): Promise<{ copied: number; merged: number }> {
    return this.#mergeBatch(entries, undefined);
  }

  /** mergeMany (with `results`), or ingest (without: new keys are copied, not decoded). */
  async #mergeBatch(
    entries: readonly { readonly key: Key; readonly record: Uint8Array }[],
    results: MergeResult[] | undefined,
  ): Promise<{ copied: number; merged: number }> {
    this.#enterWrite();
    try {
      let failed: { at: number; error: unknown } | undefined;
      const fail = (at: number, error: unknown): void => {
        if (failed === undefined || at < failed.at) failed = { at, error };
      };
      const byLock = new Map<string, BatchItem>();
      for (let at = 0; at < entries.length; at++) {
        const e = entries[at]!;
        try {
          const { k, dk, hi, lo } = this.#locate(e.key);
          const record = asBuffer(e.record);
          const lock = dk.toString('latin1');
          const same = byLock.get(lock);
          if (same === undefined)
            byLock.set(lock, { k, dk, hi, lo, lock, record, at, more: undefined, stored: undefined, old: undefined });
          else (same.more ??= []).push({ record, at });
        } catch (error) {
          fail(at, error);
        }
      }
      let copied = 0,
        merged = 0;
      await this.#batchChange([...byLock.values()], (items, ops) => {
        const now = this.#now();
        for (const it of items) {
          const own: QueueOp[] = [];
          try {
            // Absent (the filter said so, or the read found nothing), given once: copied if the skim accepts it.
            if (results === undefined && it.stored === undefined && it.more === undefined && this.#copy(it, now, own)) {
              copied++;
            } else {
              const incoming = this.#incomingOf(it, fail);
              if (incoming === undefined) continue;
              const result = this.#mergeInto(it.dk, it.old, incoming, own, it.stored);
              if (results !== undefined) {
                results[it.at] = result;
                for (const m of it.more ?? []) results[m.at] = result;
              }
              merged++;
            }
            for (const op of own) ops.push(op);
          } catch (error) {
            fail(it.at, error);
            for (const m of it.more ?? []) fail(m.at, error);
          }
        }
      });
      if (failed !== undefined) throw failed.error;
      return { copied, merged };
    } finally {
      this.#leave();
    }
  }

  /**
   * The read-merge-write of a batch of keys (mergeMany, ingest, writeMany), as #change is
   * of one: every key's lock, taken in key order (so two batches, or a batch and a range
   * delete, never deadlock); one getMany for the keys the key filter may hold (a key it has
   * never seen has no record: no read, key-filter.ts); each record decoded (a corrupt one
   * set aside: it took its dots with it, so the actor is retired before anything issues a
   * dot, as #change does); then `change` (synchronous) gets the items sorted, each with its
   * record as read and decoded, and pushes the ops; then one write. If `change` throws,
   * nothing is written.
   */
  async #batchChange<T extends Locked>(
    unsorted: T[],
    change: (items: readonly T[], ops: QueueOp[]) => void,
  ): Promise<void> {
    const items = unsorted.sort((a, b) => Buffer.compare(a.dk, b.dk));
    let held = 0;
    try {
      for (const it of items) {
        const wait = this.#locks.acquire(it.lock);
        held++;
        if (wait) await wait;
      }
      const reads = items.filter((it) => this.#keys.mightHave(it.hi, it.lo));
      if (reads.length > 0)
        (await this.#engine.getMany(reads.map((it) => it.dk))).forEach((v, i) => (reads[i]!.stored = v));
      try {
        const ops: QueueOp[] = [];
        let setAside = false;
        for (const it of items) {
          if (it.stored === undefined) continue;
          it.old = this.#loadForWrite(it.dk, it.stored, ops);
          if (it.old === undefined) setAside = true;
        }
        if (setAside) await this.#actors.retire();
        change(items, ops);
        if (ops.length > 0) await this.#queue.write(ops);
      } finally {
        // After the write landed (or failed), while the locks are still ours (as in #change).
        for (const it of items) this.#keys.add(it.hi, it.lo, it.stored === undefined);
      }
    } finally {
      for (let i = 0; i < held; i++) this.#locks.release(items[i]!.lock);
    }
  }

  /**
   * Store an absent key's received record without decoding it: its versions section as
   * received under the header, index entries and caps #persist gives a key merged into
   * nothing (no owner epoch; deleted-at now when tombstones only). False when the record
   * must be decoded instead: the skim did not accept it, or the key is last-writer-wins
   * and joining its versions into nothing could change them (more than one sibling, or
   * retired ids that versions.ts joinRetired would trim), or its clock is long enough
   * that the prune index may need an entry for it (#persist decides).
   */
  #copy(it: BatchItem, now: number, ops: QueueOp[]): boolean {
    if (!skimRecord(it.record, skim) || skim.actors > PRUNE_ABOVE_ENTRIES) return false;
    if ((skim.siblings > 1 || skim.retired > 1) && this.#lww(it.k)) return false;
    this.#checkSiblings(it.dk, skim.siblings);
    const deletedAt = skim.deleted ? now : undefined;
    this.#indexOps(it.dk, undefined, undefined, deletedAt, skim.nextExpiry, ops);
    // Received with no bookkeeping (a replica that merged it in), and live: already the record to store, as it is.
    const asIs = deletedAt === undefined && skim.versionsStart === 2;
    const record = asIs
      ? it.record
      : spliceRecord(skim.format, it.record.subarray(skim.versionsStart, skim.versionsEnd), deletedAt);
    this.#checkRecordSize(it.dk, record.length);
    ops.push({ type: 'put', key: it.dk, value: record, prior: null }); // called only for a key not stored here
    return true;
  }

  /** A batch item's incoming record (its records joined, when given more than once); undefined when none decodes. */
  #incomingOf(it: BatchItem, fail: (at: number, error: unknown) => void): Received | undefined {
    let incoming: Received | undefined;
    for (const { record, at } of [{ record: it.record, at: it.at }, ...(it.more ?? [])]) {
      try {
        const v = this.#incoming(it.k, record);
        incoming = incoming === undefined ? v : this.#joinIncoming(it.dk, incoming, v);
      } catch (error) {
        fail(at, error);
      }
    }
    return incoming;
  }

  /**
   * Two records received for one key, joined (their bookkeeping dropped); KV_WRONG_TYPE for
   * a counter and versions, KV_COUNTER_GAP for a counter's delta (which applies only in
   * order, to what is stored: the sender sends the full state).
   */
  #joinIncoming(dk: Buffer, a: Received, b: Received): Received {
    if (isCounter(a) && isCounter(b)) {
      if (a.base !== undefined || b.base !== undefined)
        throw this.#gap(dk, 'two records for it in one batch, one of them a delta');
      return { state: joinCounters(a.state, b.state), ownerEpoch: undefined };
    }
    if (isVersions(a) && isVersions(b))
      return {
        versions: this.#join(userKeyOf(dk))(a.versions, b.versions),
        ownerEpoch: undefined,
        deletedAt: undefined,
      };
    if (isJoined(a) && isJoined(b) && a.joined === b.joined) return joinHeld(a, b);
    throw this.#wrongType(dk, 'no record yet', `one batch giving it both ${kindOf(a)} and ${kindOf(b)}`);
  }

  /** A record sent by another node, of either kind (a counter's: a delta, or a full state); KV_BAD_RECORD when it does not decode. */
  #incoming(k: Buffer, record: Uint8Array): Received {
    try {
      const joined = joinedKindOf(record);
      if (joined !== undefined) return { joined, value: joined.decode(record).state };
      return isCounterRecord(record) ? { ...decodeCounterDelta(record), ownerEpoch: undefined } : decodeRecord(record);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      throw new KvError(
        'KV_BAD_RECORD',
        `the record sent for key ${showKey(k)} does not decode (${e.message}); it was not stored`,
      );
    }
  }

  /** How a key's versions join: causally (siblings), or last writer wins. */
  #join(k: Buffer): (a: Versions, b: Versions) => Versions {
    return this.#lww(k) ? mergeLww : merge;
  }

  /** Whether a key's versions are last-writer-wins: a map's register by its path (subkeys.ts subKeyPolicy), any other key by its bucket's policy. */
  #lww(k: Buffer): boolean {
    return (subKeyPolicy(k) ?? this.#policyOf?.(k)) === 'lww';
  }

  /**
   * The merge of a received record into a key's stored one, by format: a counter's join
   * (#mergeCounter), or the causal merge of versions. A counter met by versions, or
   * versions by a counter, is refused (KV_WRONG_TYPE) with nothing written.
   */
  #mergeInto(
    dk: Buffer,
    old: Held | undefined,
    received: Received,
    ops: QueueOp[],
    stored: Buffer | undefined,
  ): MergeResult {
    if (isCounter(received)) {
      if (old !== undefined && !isCounter(old)) throw this.#wrongType(dk, kindOf(old), "a counter's record");
      return this.#mergeCounter(dk, old, received, ops, stored);
    }
    if (isJoined(received)) {
      const kind = received.joined;
      if (old !== undefined && !(isJoined(old) && old.joined === kind))
        throw this.#wrongType(dk, kindOf(old), `the record of ${kind.name}`);
      const joined = old === undefined ? received.value : kind.join(old.value, received.value);
      if (old !== undefined && kind.same(joined, old.value)) return { changed: false, versions: 1, record: stored! };
      return { changed: true, versions: 1, record: this.#persistJoined(dk, old, stored, kind, joined, ops) };
    }
    if (old !== undefined && !isVersions(old)) throw this.#wrongType(dk, kindOf(old), 'a record of versions');
    return this.#mergeVersions(dk, old, received.versions, ops, stored);
  }

  /**
   * A received counter (a delta or a full state) applied to a key's stored one (none: the
   * empty counter). A delta that does not follow what is stored of its issuer is refused
   * with KV_COUNTER_GAP, nothing written: the sender sends its full state (counter.ts
   * applyDelta says why).
   */
  #mergeCounter(
    dk: Buffer,
    old: StoredCounter | undefined,
    incoming: CounterDelta,
    ops: QueueOp[],
    stored: Buffer | undefined,
  ): MergeResult {
    const merged = applyDelta(old?.state ?? EMPTY_COUNTER, incoming);
    if (merged === undefined) throw this.#gap(dk, 'a delta of an issuer it missed an earlier increment of');
    if (resetAboveEntry(merged) !== undefined)
      throw new KvError(
        'KV_BAD_RECORD',
        `the counter state sent for key ${showKey(userKeyOf(dk))} resets more than its replicas counted (a reset made from a context that is not this counter's); nothing was written`,
      );
    if (old === undefined)
      return {
        changed: true,
        versions: 1,
        record: this.#persistCounter(dk, undefined, stored, merged, undefined, ops),
      };
    const conflicts = entryConflicts(old.state, incoming.state);
    if (conflicts.length > 0)
      this.#log?.error(
        { key: showKey(userKeyOf(dk)), actors: conflicts.map((a) => Buffer.from(a, 'latin1').toString('hex')) },
        'counter entries with one floor and different sums: a corrupt replica (the join keeps the greater)',
      );
    if (sameCounter(merged, old.state)) return { changed: false, versions: 1, record: stored! };
    return { changed: true, versions: 1, record: this.#persistCounter(dk, old, stored, merged, old.ownerEpoch, ops) };
  }

  /** The causal merge of `incoming` into a key's stored versions: the ops to write, if any. */
  #mergeVersions(
    dk: Buffer,
    old: StoredRecord | undefined,
    incoming: Versions,
    ops: QueueOp[],
    stored: Buffer | undefined,
  ): MergeResult {
    const merged = mergeReceived(old?.versions, incoming, this.#lww(userKeyOf(dk)), this.#ownActor(old?.ownerEpoch));
    if (old && sameVersions(merged, old.versions))
      return { changed: false, versions: merged.siblings.length, record: stored! };
    const out = this.#persist(dk, old, stored, merged, old?.ownerEpoch, ops);
    return { changed: true, versions: merged.siblings.length, record: out };
  }

  /**
   * Reclaim expired siblings, reading the expiry index from the oldest entry up to now:
   * no scan of live data. Each record due is rewritten without its expired siblings, or
   * dropped whole when versions.ts `withoutExpired` says it may be; a record left with
   * no siblings keeps its clock as a tombstone does, for the tombstone purge. Every entry
   * is checked against its record under the key's lock (a record written since has a
   * new entry, in the same batch as the record).
   */
  async reclaimExpired(limits: BatchLimits = {}): Promise<{ dropped: number; rewritten: number; stale: number }> {
    if (!this.#open) throw new KvError('KV_CLOSED', 'the store is closed; open it again to use it');
    let dropped = 0,
      rewritten = 0,
      stale = 0;
    const now = this.#now();
    for await (const batch of batches(this.#engine, [expiriesBy(now)], { batchCount: 256, ...limits })) {
      await this.#guard(async () => {
        // Records may be dropped: keys written again later take a new actor (actors.ts).
        await this.#actors.retire();
        await Promise.all(
          batch.map(([xk]) => {
            const dk = dataKeyOfExpiry(xk);
            const [hi, lo] = [dk.readUInt32BE(1), dk.readUInt32BE(5)];
            return this.#change(dk, hi, lo, (old, ops, stored) => {
              ops.push({ type: 'del', key: xk });
              const due = old === undefined || !isVersions(old) ? undefined : nextExpiry(old.versions);
              if (old === undefined || !isVersions(old) || due === undefined || !expiryKey(due, dk).equals(xk))
                return void stale++; // the record changed or went since (a counter or register never expires)
              const after = withoutExpired(old.versions, now);
              if (after === old.versions) return void ops.pop(); // nothing expired (the entry is due, so not expected): the entry stays
              if (after === 'drop') {
                ops.push({ type: 'del', key: dk, prior: stored ?? null });
                if (old.deletedAt !== undefined) ops.push({ type: 'del', key: tombstoneKey(old.deletedAt, dk) });
                dropped++;
              } else {
                ops.pop(); // #persist moves the entry itself
                this.#persist(dk, old, stored, after, old.ownerEpoch, ops);
                rewritten++;
              }
            });
          }),
        );
      });
    }
    return { dropped, rewritten, stale };
  }

  /**
   * Drop keys that have been tombstones only for longer than the grace period. A key
   * written or merged since keeps its record (its index entry is stale and goes). With
   * `confirmedBefore` (a token → the time as of which a repair confirmed every replica of
   * its range holds what this node held), a tombstone also waits for that: purged while a
   * replica still holds the old value, it would come back at the next repair or read.
   */
  async purgeTombstones(
    limits: BatchLimits = {},
    confirmedBefore?: (token: bigint) => number,
  ): Promise<{ purged: number; unconfirmed: number }> {
    if (!this.#open) throw new KvError('KV_CLOSED', 'the store is closed; open it again to use it');
    let purged = 0,
      unconfirmed = 0;
    const before = this.#now() - this.settings.tombstoneGraceMs;
    for await (const batch of batches(this.#engine, [tombstonesBefore(before)], { batchCount: 256, ...limits })) {
      for (const [tk] of batch) {
        const dk = dataKeyOfTombstone(tk);
        // Past its grace, but no repair has yet confirmed every replica holds it: keep it.
        if (confirmedBefore !== undefined && tombstoneTime(tk) >= confirmedBefore(tokenOfDataKey(dk))) {
          unconfirmed++;
          continue;
        }
        const lockKey = dk.toString('latin1');
        await this.#locks.with(lockKey, () =>
          this.#guard(async () => {
            const bytes = await this.#engine.get(dk);
            const ops: QueueOp[] = [{ type: 'del', key: tk }];
            const rec = bytes === undefined ? undefined : tryDecode(decodeRecord, bytes);
            if (rec?.deletedAt !== undefined && rec.deletedAt < before && tombstoneKey(rec.deletedAt, dk).equals(tk)) {
              ops.push({ type: 'del', key: dk, prior: bytes });
              await this.#actors.retire();
              purged++;
            }
            await this.#queue.write(ops);
          }),
        );
      }
    }
    return { purged, unconfirmed };
  }

  /**
   * Prune the clocks of keys whose history is stable (docs/causality.md#bounded-clocks):
   * unchanged here for `clockPruneGraceMs` and, with `confirmedBefore` (as for the
   * tombstone purge), confirmed by a repair on every replica since. Reads the prune
   * index (one entry per record whose clock has entries to drop), not the data; a record
   * changed since its entry was written by a path that does not index it gets a new
   * entry. Each batch that prunes first moves new keys to a fresh epoch, so that a pruned
   * record may drop this node's own old actor too (its next write takes the fresh one):
   * then every replica prunes a converged key to the same bytes, and repair sees no
   * difference. Returns what it did: pruned, still unconfirmed, and stale entries.
   */
  async pruneClocks(
    limits: BatchLimits = {},
    confirmedBefore?: (token: bigint) => number,
  ): Promise<{ pruned: number; unconfirmed: number; stale: number }> {
    if (!this.#open) throw new KvError('KV_CLOSED', 'the store is closed; open it again to use it');
    let pruned = 0,
      unconfirmed = 0,
      stale = 0;
    const now = this.#now();
    const stableBefore = now - this.settings.clockPruneGraceMs;
    for await (const batch of batches(this.#engine, [PRUNES], { batchCount: 256, ...limits })) {
      const due: Array<[Buffer, Buffer]> = [];
      for (const [pk, stamp] of batch) {
        const at = stampTime(stamp);
        if (at >= stableBefore) continue;
        // Past the grace, but no repair has yet confirmed every replica holds what this one did since: wait.
        if (confirmedBefore !== undefined && at >= confirmedBefore(tokenOfDataKey(dataKeyOfPrune(pk)))) unconfirmed++;
        else due.push([pk, stamp]);
      }
      if (due.length === 0) continue;
      await this.#guard(async () => {
        await this.#actors.retire();
        const current = this.#actors.epochFor(undefined);
        await Promise.all(
          due.map(([pk, stamp]) => {
            const dk = dataKeyOfPrune(pk);
            return this.#change(dk, dk.readUInt32BE(1), dk.readUInt32BE(5), (old, ops, stored) => {
              if (
                old === undefined ||
                stored === undefined ||
                !isVersions(old) ||
                !this.#prunableClock(old.versions, old.ownerEpoch)
              ) {
                ops.push({ type: 'del', key: pk }); // gone, or nothing to prune any more (a counter has no clock)
                return void stale++;
              }
              if (!stampMatches(stamp, stored)) {
                ops.push({ type: 'put', key: pk, value: pruneStamp(this.#now(), stored) }); // changed since, unindexed: stable from now
                return void stale++;
              }
              // The own actor stays only if new writes still use it (the record was written since the retire above).
              const owner = old.ownerEpoch === current ? current : undefined;
              const after = prune(old.versions, this.#ownActor(owner));
              if (after === old.versions) ops.push({ type: 'del', key: pk });
              else {
                this.#persist(dk, old, stored, after, owner, ops);
                pruned++;
              }
            });
          }),
        );
      });
    }
    return { pruned, unconfirmed, stale };
  }

  /** The key filter's state (key-filter.ts), and a promise that it has finished building. */
  get keyFilter(): { ready: boolean; keys: number; capacity: number; bytes: number; settled: Promise<void> } {
    return { ...this.#keys.stats, settled: this.#keyFilterStart.then(() => this.#keys.settled()) };
  }

  /** Writes acknowledged, engine batches written (group commit shares batches), and writes recognised as duplicates (not written again). */
  get writeStats(): { writes: number; batches: number; duplicates: number } {
    return { writes: this.#queue.writes, batches: this.#queue.batches, duplicates: this.#duplicates };
  }
}
