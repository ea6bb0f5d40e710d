/**
 * The in-memory engine: a Map plus a sorted key array that is brought up to date only
 * when a range is read (new keys wait in an unsorted list and are sorted and merged in
 * then), so writes cost O(1) and simulations and coordinator tests can run many nodes in
 * one process. Values are copied in and out, as LevelDB
 * would, so a caller can never change stored bytes by mutating a buffer.
 *
 * Must not: be used where data must outlive the process. `write` with sync is the same
 * as without: there is no disk.
 */
import type { Engine, EngineIterator, KeyIterator, WriteOp } from './engine.js';

/** latin1 maps bytes to code units 0–255, so string order is byte order. */
function str(key: Uint8Array): string {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1');
}

export class MemoryEngine implements Engine {
  readonly kind = 'memory';
  #map = new Map<string, Buffer>();
  /** Sorted; may still hold deleted keys until the next #index(). */
  #sorted: string[] = [];
  /** Keys added since the last #index(), unsorted. */
  #added: string[] = [];
  #deleted = 0;
  #open = false;

  async open(): Promise<void> {
    if (this.#dead) throw new Error('memory engine crashed: open the one crashed() returned');
    this.#open = true;
  }

  async close(): Promise<void> {
    this.#open = false;
  }

  #check(): void {
    if (!this.#open) throw new Error('memory engine is not open');
  }

  /** The sorted array of live keys, brought up to date. */
  #index(): string[] {
    if (this.#added.length === 0 && this.#deleted === 0) return this.#sorted;
    const old = this.#deleted > 0 ? this.#sorted.filter((k) => this.#map.has(k)) : this.#sorted;
    const added = this.#added.filter((k) => this.#map.has(k)).sort();
    const out: string[] = [];
    let i = 0,
      j = 0;
    while (i < old.length || j < added.length) {
      const k = j === added.length || (i < old.length && old[i]! < added[j]!) ? old[i++]! : added[j++]!;
      if (out[out.length - 1] !== k) out.push(k); // a key deleted and added again is listed twice
    }
    this.#sorted = out;
    this.#added = [];
    this.#deleted = 0;
    return out;
  }

  /** Index of the first key ≥ k in the sorted keys. */
  static #lowerBound(keys: readonly string[], k: string): number {
    let lo = 0,
      hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (keys[mid]! < k) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  async get(key: Uint8Array): Promise<Buffer | undefined> {
    this.#check();
    const v = this.#map.get(str(key));
    return v === undefined ? undefined : Buffer.from(v);
  }

  async getMany(keys: readonly Uint8Array[]): Promise<Array<Buffer | undefined>> {
    this.#check();
    return keys.map((key) => {
      const v = this.#map.get(str(key));
      return v === undefined ? undefined : Buffer.from(v);
    });
  }

  /** With `journal`: the last batches written, each as the values its keys had before (undefined: absent), for `crashed`. */
  #journal: Array<Map<string, Buffer | undefined>> | undefined;

  constructor(options: { journal?: number } = {}) {
    if (options.journal !== undefined) {
      this.#journal = [];
      this.#journalMax = options.journal;
    }
  }

  readonly #journalMax: number = 0;

  /**
   * A simulated crash (tests): this engine closes for good, and a new one holds what a
   * crash would leave: everything but the last `lose` batches (at most the journal's
   * length), as a power cut loses a suffix of LevelDB's batches and never part of one.
   */
  crashed(lose: number): MemoryEngine {
    const journal = this.#journal ?? [];
    const map = new Map(this.#map);
    for (let i = journal.length - 1; i >= Math.max(0, journal.length - lose); i--)
      for (const [k, v] of journal[i]!) v === undefined ? map.delete(k) : map.set(k, v);
    this.#open = false;
    this.#dead = true;
    const next = new MemoryEngine({ journal: this.#journalMax });
    next.#map = map;
    next.#sorted = [...map.keys()].sort();
    return next;
  }

  #dead = false;

  async write(ops: readonly WriteOp[], _sync: boolean): Promise<void> {
    this.#check();
    if (this.#journal !== undefined) {
      const before = new Map<string, Buffer | undefined>();
      for (const op of ops) {
        const k = str(op.key);
        if (!before.has(k)) before.set(k, this.#map.get(k));
      }
      this.#journal.push(before);
      if (this.#journal.length > this.#journalMax) this.#journal.shift();
    }
    for (const op of ops) {
      const k = str(op.key);
      if (op.type === 'put') {
        if (!this.#map.has(k)) this.#added.push(k);
        this.#map.set(k, Buffer.from(op.value));
      } else if (this.#map.delete(k)) {
        this.#deleted++; // a key deleted and added again before #index() is deduplicated there
      }
    }
  }

  iterator(gte: Uint8Array, lt: Uint8Array): EngineIterator {
    this.#check();
    // A snapshot, as a LevelDB iterator reads one: the entries in range right now.
    const keys = this.#index();
    const from = MemoryEngine.#lowerBound(keys, str(gte)),
      to = MemoryEngine.#lowerBound(keys, str(lt));
    const entries: Array<[Buffer, Buffer]> = [];
    for (let i = from; i < to; i++) {
      const k = keys[i]!;
      entries.push([Buffer.from(k, 'latin1'), this.#map.get(k)!]);
    }
    let pos = 0;
    return {
      nextv: async (n: number) => {
        const out = entries.slice(pos, pos + n).map(([k, v]): [Buffer, Buffer] => [k, Buffer.from(v)]);
        pos += out.length;
        return out;
      },
      close: async () => {
        pos = entries.length;
      },
    };
  }

  keyIterator(gte: Uint8Array, lt: Uint8Array): KeyIterator {
    const it = this.iterator(gte, lt);
    return { nextv: async (n) => (await it.nextv(n)).map(([k]) => k), close: () => it.close() };
  }

  async approximateSize(gte: Uint8Array, lt: Uint8Array): Promise<number> {
    this.#check();
    const keys = this.#index();
    let size = 0;
    const to = MemoryEngine.#lowerBound(keys, str(lt));
    for (let i = MemoryEngine.#lowerBound(keys, str(gte)); i < to; i++)
      size += keys[i]!.length + this.#map.get(keys[i]!)!.length;
    return size;
  }
}
