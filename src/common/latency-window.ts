/**
 * Latencies of the requests a node coordinates, over a window that its reader closes: the
 * foreground signal the background-work governor steers by (streaming/governor.ts).
 *
 * Bounded: at most `capacity` samples a window; past that each new one replaces a random
 * earlier one (reservoir sampling), so the percentile stays fair at any request rate.
 */
export class LatencyWindow {
  readonly #samples: Float64Array;
  #count = 0;
  #seen = 0;

  constructor(capacity = 4096) {
    this.#samples = new Float64Array(capacity);
  }

  add(ms: number): void {
    this.#seen++;
    if (this.#count < this.#samples.length) this.#samples[this.#count++] = ms;
    else {
      const i = Math.floor(Math.random() * this.#seen);
      if (i < this.#samples.length) this.#samples[i] = ms;
    }
  }

  /** The window's p99 (undefined when empty), and start a new window. */
  takeP99(): number | undefined {
    if (this.#count === 0) return undefined;
    const sorted = this.#samples.slice(0, this.#count).sort();
    const p = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;
    this.#count = 0;
    this.#seen = 0;
    return p;
  }
}

/**
 * A percentile of the latest `window` latencies of each kind of call, recomputed every
 * `every` samples: what a hedge (the client's) or a speculative call (the coordinator's)
 * waits for before it goes to a second node. Unlike LatencyWindow it never resets: it
 * follows the recent calls, whatever the rate.
 */
export class RecentLatency {
  readonly #kinds = new Map<string, { samples: Float64Array; count: number; fresh: number; value: number }>();

  constructor(
    readonly percentile: number,
    readonly window = 512,
    readonly every = 32,
  ) {
    if (!(percentile > 0 && percentile < 1)) throw new RangeError(`a percentile is in (0, 1), got ${percentile}`);
  }

  add(kind: string, ms: number): void {
    let k = this.#kinds.get(kind);
    if (k === undefined)
      this.#kinds.set(kind, (k = { samples: new Float64Array(this.window), count: 0, fresh: 0, value: NaN }));
    k.samples[k.count % this.window] = ms;
    k.count++;
    if (++k.fresh >= this.every) {
      k.fresh = 0;
      const n = Math.min(k.count, this.window);
      const sorted = k.samples.slice(0, n).sort();
      k.value = sorted[Math.min(n - 1, Math.floor(n * this.percentile))]!;
    }
  }

  /** The percentile for `kind`, or undefined before `every` samples. */
  get(kind: string): number | undefined {
    const v = this.#kinds.get(kind)?.value;
    return v === undefined || Number.isNaN(v) ? undefined : v;
  }
}
