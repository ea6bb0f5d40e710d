/**
 * Coalesced point reads: reads that arrive while a read is in flight wait and go
 * together as one `getMany`, so concurrent requests share one trip to LevelDB's thread
 * pool instead of paying one each (the per-call cost dominates for small records). A
 * lone reader is never delayed: with fewer than `lanes` reads in flight its read starts
 * at once, so light load gets parallel single reads and heavy load gets batches.
 * Measured (scratch runs): plain gets do best with 4 lanes, the libuv pool's size (16 in
 * flight: 118k/s against 107k/s with one lane); the reads of read-merge-writes with one,
 * since the write that follows waits for a batch anyway and every extra trip costs
 * thread wake-ups.
 */
import type { Engine } from './engine.js';

interface Waiter {
  readonly key: Uint8Array;
  readonly resolve: (v: Buffer | undefined) => void;
  readonly reject: (e: unknown) => void;
}

export class ReadBatcher {
  #waiting: Waiter[] = [];
  #busy = 0;

  constructor(
    private readonly engine: Engine,
    /** Reads in flight at once. */
    private readonly lanes: number,
    /** Most keys in one getMany. */
    private readonly maxBatch = 256,
  ) {}

  get(key: Uint8Array): Promise<Buffer | undefined> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ key, resolve, reject });
      if (this.#busy < this.lanes) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#busy++;
    while (this.#waiting.length > 0) {
      const group = this.#waiting.splice(0, this.maxBatch);
      try {
        if (group.length === 1) group[0]!.resolve(await this.engine.get(group[0]!.key));
        else {
          const values = await this.engine.getMany(group.map((w) => w.key));
          group.forEach((w, i) => w.resolve(values[i]));
        }
      } catch (e) {
        for (const w of group) w.reject(e);
      }
    }
    this.#busy = 0;
  }
}
