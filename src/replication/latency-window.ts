/**
 * Latencies of the requests a node coordinates, over a window that its reader closes: the
 * foreground signal the background-work governor steers by (handoff/governor.ts).
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
