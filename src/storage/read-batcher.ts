/**
 * Coalesced point reads: reads that arrive while a read is in flight wait and go
 * together as one `getMany`, so concurrent requests share one trip to LevelDB's thread
 * pool instead of paying one each (the per-call cost dominates for small records). A
 * lone reader is never delayed: with fewer than `lanes` reads in flight its read starts
 * at once, so light load gets parallel single reads and heavy load gets batches.
 * Plain gets take 4 lanes, the libuv pool's size, so that every pool thread has a read;
 * the reads of read-merge-writes take one, since the write that follows waits for a batch
 * anyway and every extra trip costs thread wake-ups (docs/benchmarks.md#batching-inside-the-store).
 *
 * With `burst`, a read starts at the end of the current burst of callbacks (the tick)
 * rather than at once, so that the writers a batch of reads or writes just released,
 * which all come back in that burst, read together: started at once, the first of them
 * would go alone and the rest in a second trip, a wasted trip for one key on every round.
 * With `cap`, a getMany takes at most that many keys and the rest wait for the next one.
 *
 * Owns: batching and lanes. Must not: reorder or drop a read.
 */
import type { Engine } from './engine.js';

interface Waiter {
  readonly key: Uint8Array;
  readonly resolve: (v: Buffer | undefined) => void;
  readonly reject: (e: unknown) => void;
}

export interface ReadBatcherOptions {
  /** Reads in flight at once. */
  readonly lanes: number;
  /** Most keys in one getMany (default 256). */
  readonly maxBatch?: number;
  /** Start reads at the end of the current tick, with whatever arrived in it. */
  readonly burst?: boolean;
  /** Most keys in the next getMany, asked as it starts (at least 1). */
  readonly cap?: () => number;
}

export class ReadBatcher {
  #waiting: Waiter[] = [];
  #busy = 0;
  readonly #lanes: number;
  readonly #maxBatch: number;
  readonly #burst: boolean;
  readonly #cap: (() => number) | undefined;
  readonly #start = (): void => void this.#drain();

  constructor(
    private readonly engine: Engine,
    options: ReadBatcherOptions,
  ) {
    this.#lanes = options.lanes;
    this.#maxBatch = options.maxBatch ?? 256;
    this.#burst = options.burst ?? false;
    this.#cap = options.cap;
  }

  get(key: Uint8Array): Promise<Buffer | undefined> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ key, resolve, reject });
      if (this.#busy < this.#lanes) {
        this.#busy++; // counted now: more reads in this tick join this lane, not new ones
        if (this.#burst) process.nextTick(this.#start);
        else this.#start();
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#waiting.length > 0) {
      const n = this.#cap === undefined ? this.#maxBatch : Math.max(1, Math.min(this.#maxBatch, this.#cap()));
      const group = this.#waiting.length <= n ? this.#waiting : this.#waiting.slice(0, n);
      this.#waiting = this.#waiting.length <= n ? [] : this.#waiting.slice(n);
      try {
        if (group.length === 1) group[0]!.resolve(await this.engine.get(group[0]!.key));
        else {
          const values = await this.engine.getMany(group.map((w) => w.key));
          for (let i = 0; i < group.length; i++) group[i]!.resolve(values[i]);
        }
      } catch (e) {
        for (const w of group) w.reject(e);
      }
    }
    this.#busy--; // one lane done (others may still be reading)
  }
}
