/**
 * The LevelDB engine: `level` with binary keys and values ('buffer' encodings, so
 * token order is byte order; docs/architecture.md). One database per node, in its data
 * directory. On Node, `level`'s Level is classic-level's class itself (the same LevelDB
 * binding, no wrapper), so its Node-only calls are there; its typings are the universal
 * ones, hence `NodeLevel` below.
 *
 * Must not: add meaning to keys; the store owns the layout.
 */
import { Level } from 'level';
import type { Engine, EngineIterator, KeyIterator, WriteOp } from './engine.js';

/** What classic-level adds on Node to `level`'s universal typings, as far as ringkv uses it. */
export type NodeLevel = Level<Buffer, Buffer> & {
  approximateSize(start: Buffer, end: Buffer): Promise<number>;
  compactRange(start: Buffer, end: Buffer): Promise<void>;
};

export interface LevelEngineOptions {
  /** LevelDB's block cache, bytes (default 8 MiB, LevelDB's default). */
  readonly cacheSize?: number;
  /** Memtable size before a flush to disk, bytes (default 4 MiB). */
  readonly writeBufferSize?: number;
}

export class LevelEngine implements Engine {
  readonly kind = 'leveldb';
  readonly #db: NodeLevel;
  readonly #openOptions: object;

  constructor(
    readonly location: string,
    options: LevelEngineOptions = {},
  ) {
    const db = new Level<Buffer, Buffer>(location, { keyEncoding: 'buffer', valueEncoding: 'buffer' }) as NodeLevel;
    if (typeof db.approximateSize !== 'function')
      throw new Error('level: this runtime has no LevelDB binding (classic-level); ringkv needs Node.js');
    this.#db = db;
    this.#openOptions = { createIfMissing: true, ...options };
  }

  open(): Promise<void> {
    return this.#db.open(this.#openOptions);
  }

  close(): Promise<void> {
    return this.#db.close();
  }

  /** LevelDB's repair of this database (closed): what its damaged files held that it can read is kept. */
  repair(): Promise<void> {
    return (Level as unknown as { repair(location: string): Promise<void> }).repair(this.location);
  }

  /** Close and open the same database again: LevelDB forgets a background error only so. */
  async reopen(): Promise<void> {
    await this.#db.close();
    await this.#db.open(this.#openOptions);
  }

  get(key: Uint8Array): Promise<Buffer | undefined> {
    return this.#db.get(key as Buffer);
  }

  getMany(keys: readonly Uint8Array[]): Promise<Array<Buffer | undefined>> {
    return this.#db.getMany(keys as Buffer[]);
  }

  /**
   * A chained batch rather than abstract-level's array batch, which copies and re-validates
   * every op in JavaScript: more work per op in the group-commit batches the store writes.
   * Options are passed only when needed: an options object costs a lookup per call.
   */
  write(ops: readonly WriteOp[], sync: boolean): Promise<void> {
    const batch = this.#db.batch();
    for (const op of ops) {
      if (op.type === 'put') batch.put(op.key as Buffer, op.value as Buffer);
      else batch.del(op.key as Buffer);
    }
    return sync ? batch.write({ sync }) : batch.write();
  }

  iterator(gte: Uint8Array, lt: Uint8Array): EngineIterator {
    const it = this.#db.iterator({ gte: gte as Buffer, lt: lt as Buffer });
    return { nextv: (n) => it.nextv(n), close: () => it.close() };
  }

  keyIterator(gte: Uint8Array, lt: Uint8Array): KeyIterator {
    const it = this.#db.keys({ gte: gte as Buffer, lt: lt as Buffer });
    return { nextv: (n) => it.nextv(n), close: () => it.close() };
  }

  approximateSize(gte: Uint8Array, lt: Uint8Array): Promise<number> {
    return this.#db.approximateSize(gte as Buffer, lt as Buffer);
  }

  /** The underlying database, for benchmarks that compare against raw LevelDB. */
  get db(): NodeLevel {
    return this.#db;
  }
}
