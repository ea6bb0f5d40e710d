/**
 * A byte-rate limit shared by every stream a node sends (Cassandra's
 * stream_throughput_outbound): each sender takes the bytes it is about to send and waits
 * when it is ahead of the rate. The rate may change while streams run (the governor sets
 * it); Infinity is unthrottled.
 *
 * Owns: the arithmetic of a token bucket with a one-second burst. Must not: know what is
 * sent. The clock and sleep are injected for tests.
 */

export interface ThrottleDeps {
  /** ms, monotonic. */
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export class Throttle {
  #rate: number;
  #tokens: number;
  #last: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;
  /** Bytes taken since construction. */
  taken = 0;

  constructor(bytesPerSecond: number, deps: ThrottleDeps = {}) {
    this.#now = deps.now ?? (() => performance.now());
    this.#sleep = deps.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.#rate = bytesPerSecond;
    this.#tokens = Number.isFinite(bytesPerSecond) ? bytesPerSecond : 0;
    this.#last = this.#now();
  }

  /** Bytes per second (Infinity: unthrottled). */
  get rate(): number {
    return this.#rate;
  }

  set rate(bytesPerSecond: number) {
    this.#refill();
    this.#rate = bytesPerSecond;
    if (Number.isFinite(bytesPerSecond)) this.#tokens = Math.min(this.#tokens, bytesPerSecond);
  }

  #refill(): void {
    const now = this.#now();
    if (Number.isFinite(this.#rate))
      this.#tokens = Math.min(this.#rate, this.#tokens + ((now - this.#last) / 1000) * this.#rate);
    this.#last = now;
  }

  /** Take `bytes`, waiting as long as the rate requires (a take larger than a second's worth goes into debt). */
  async take(bytes: number): Promise<void> {
    this.taken += bytes;
    if (!Number.isFinite(this.#rate)) return;
    this.#refill();
    this.#tokens -= bytes;
    if (this.#tokens >= 0) return;
    await this.#sleep((-this.#tokens / this.#rate) * 1000);
  }
}
