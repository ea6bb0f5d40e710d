/**
 * The narrow engine under the store: an ordered map of byte keys to byte values with
 * atomic batches and range iterators. LevelDB (level-engine.ts) in production, memory
 * (memory-engine.ts) for simulations and coordinator tests; both pass one shared suite
 * (test/unit/storage/engine.test.ts), as every abstract-level backend passes the same
 * tests.
 *
 * Must not: know about records, versions or tokens. Everything above it lives in the store.
 */
import { KvError } from '../kinds/kv-errors.js';

export type WriteOp =
  | { readonly type: 'put'; readonly key: Uint8Array; readonly value: Uint8Array }
  | { readonly type: 'del'; readonly key: Uint8Array };

export interface EngineIterator {
  /** Up to `n` next entries in key order; an empty array at the end. */
  nextv(n: number): Promise<Array<[Buffer, Buffer]>>;
  close(): Promise<void>;
}

export interface KeyIterator {
  /** Up to `n` next keys in order; an empty array at the end. */
  nextv(n: number): Promise<Buffer[]>;
  close(): Promise<void>;
}

export interface Engine {
  /** For messages and logs: 'leveldb' or 'memory'. */
  readonly kind: string;
  open(): Promise<void>;
  close(): Promise<void>;
  get(key: Uint8Array): Promise<Buffer | undefined>;
  getMany(keys: readonly Uint8Array[]): Promise<Array<Buffer | undefined>>;
  /**
   * Apply all ops atomically, in order. With sync, resolve only once the batch is on
   * stable storage (fsync); without, once the OS holds it (survives a process crash).
   */
  write(ops: readonly WriteOp[], sync: boolean): Promise<void>;
  /** Entries with gte ≤ key < lt, in key order, from a snapshot taken now. */
  iterator(gte: Uint8Array, lt: Uint8Array): EngineIterator;
  /** The keys alone, likewise (no values are read). */
  keyIterator(gte: Uint8Array, lt: Uint8Array): KeyIterator;
  /** Bytes that keys in [gte, lt) take on disk; an estimate, may lag recent writes. */
  approximateSize(gte: Uint8Array, lt: Uint8Array): Promise<number>;
  /**
   * Close and open the database again, keeping what it holds: what clears an error the
   * engine keeps until then (LevelDB's background error after ENOSPC). Calls made while it
   * runs may fail; iterators open across it are closed. Absent: the engine keeps none.
   */
  reopen?(): Promise<void>;
  /**
   * Rebuild a closed database that does not open because its files are damaged (LevelDB's
   * RepairDB: a table file missing or unreadable), keeping what it can read; what was in
   * the damaged files is lost here. Absent: the engine cannot.
   */
  repair?(): Promise<void>;
}

/**
 * The engine with its failures turned into KvErrors, so that everything above sees one
 * stable code and the cause: KV_DISK_FULL for a want of space (ENOSPC), KV_IO for the rest
 * (permissions, a closed database, a damaged file). `noted` sees each failure first (the
 * store's disk guard, which tells ENOSPC apart).
 */
export function withIoErrors(engine: Engine, noted: (e: unknown) => boolean = () => false): Engine {
  const fail = (what: string) => (e: unknown) => {
    const code = noted(e) ? 'KV_DISK_FULL' : 'KV_IO';
    throw new KvError(code, `${engine.kind} ${what} failed: ${(e as Error)?.message ?? String(e)}`, { cause: e });
  };
  return {
    kind: engine.kind,
    ...(engine.reopen === undefined ? {} : { reopen: () => engine.reopen!().catch(fail('reopen')) }),
    open: () => engine.open().catch(fail('open')),
    close: () => engine.close().catch(fail('close')),
    get: (key) => engine.get(key).catch(fail('read')),
    getMany: (keys) => engine.getMany(keys).catch(fail('read')),
    write: (ops, sync) => engine.write(ops, sync).catch(fail('write')),
    iterator: (gte, lt) => {
      const it = engine.iterator(gte, lt);
      return { nextv: (n) => it.nextv(n).catch(fail('scan')), close: () => it.close().catch(fail('scan')) };
    },
    keyIterator: (gte, lt) => {
      const it = engine.keyIterator(gte, lt);
      return { nextv: (n) => it.nextv(n).catch(fail('scan')), close: () => it.close().catch(fail('scan')) };
    },
    approximateSize: (gte, lt) => engine.approximateSize(gte, lt).catch(fail('size estimate')),
  };
}
