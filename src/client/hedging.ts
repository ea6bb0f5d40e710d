/**
 * When the client sends a call to a second node ("hedges", after The Tail at Scale), and
 * how many such extra calls it may send.
 *
 * - HedgeDelay: a percentile (p99 by default) of how long calls took lately, clamped to
 *   [minMs, maxMs]: a call not answered by then is sent to the next candidate as well.
 *   At p99 about 1 call in 100 is hedged when nothing is wrong; when a node stalls, its
 *   calls are hedged after a delay the healthy nodes set. Samples are kept per kind of
 *   call (reads and writes take different times) in a ring of the last `window`.
 * - RetryBudget: a token bucket as gRPC's retry throttling: every call adds `ratio`
 *   tokens up to `maxTokens`, every extra call takes one, and none is sent without one.
 *   Extra calls therefore stay under `ratio` of calls over time, with bursts of up to
 *   `maxTokens`, so a sick cluster is not flooded by its clients' hedges.
 *
 * Pure: no clock, no I/O. Owns: the arithmetic. Must not: send anything.
 */

export interface HedgeOptions {
  /** The percentile of recent call latencies to hedge at, 0.5..0.999 (default 0.99). */
  readonly percentile?: number;
  /** Never hedge sooner than this, ms (default 5). */
  readonly minMs?: number;
  /** Never wait longer than this to hedge, ms (default 1,000). */
  readonly maxMs?: number;
}

export interface BudgetOptions {
  /** Tokens each call adds: the long-run share of extra calls (default 0.1). */
  readonly ratio?: number;
  /** The bucket's size: the burst of extra calls allowed (default 100). */
  readonly maxTokens?: number;
}

export const DEFAULT_HEDGE: Required<HedgeOptions> = { percentile: 0.99, minMs: 5, maxMs: 1000 };
export const DEFAULT_BUDGET: Required<BudgetOptions> = { ratio: 0.1, maxTokens: 100 };

/** The samples a delay is computed from, per kind. */
const WINDOW = 512;
/** Recompute the percentile after this many new samples. */
const EVERY = 32;

export class HedgeDelay {
  readonly #o: Required<HedgeOptions>;
  readonly #kinds = new Map<string, { samples: Float64Array; count: number; fresh: number; delay: number }>();

  constructor(o: HedgeOptions = {}) {
    this.#o = { ...DEFAULT_HEDGE, ...o };
    const { percentile, minMs, maxMs } = this.#o;
    if (!(percentile >= 0.5 && percentile <= 0.999)) throw new RangeError(`hedge.percentile must be 0.5 to 0.999, got ${percentile}`);
    if (!(minMs >= 0 && maxMs >= minMs && Number.isFinite(maxMs))) throw new RangeError(`hedge needs 0 <= minMs <= maxMs (finite), got minMs ${minMs}, maxMs ${maxMs}`);
  }

  /** A call of `kind` was answered after `ms`. */
  add(kind: string, ms: number): void {
    let k = this.#kinds.get(kind);
    if (k === undefined) this.#kinds.set(kind, (k = { samples: new Float64Array(WINDOW), count: 0, fresh: 0, delay: this.#o.maxMs }));
    k.samples[k.count % WINDOW] = ms;
    k.count++;
    if (++k.fresh >= EVERY || k.count === EVERY) {
      k.fresh = 0;
      const n = Math.min(k.count, WINDOW);
      const sorted = k.samples.slice(0, n).sort();
      const p = sorted[Math.min(n - 1, Math.floor(n * this.#o.percentile))]!;
      k.delay = Math.min(this.#o.maxMs, Math.max(this.#o.minMs, p));
    }
  }

  /** How long a call of `kind` waits before it is hedged, ms: maxMs until EVERY samples are in. */
  delay(kind: string): number {
    const k = this.#kinds.get(kind);
    return k === undefined || k.count < EVERY ? this.#o.maxMs : k.delay;
  }
}

/** Tokens are counted in thousandths, so that adding ratio n times is exact. */
const MILLI = 1000;

export class RetryBudget {
  readonly #ratio: number;
  readonly #max: number;
  #tokens: number;

  constructor(o: BudgetOptions = {}) {
    const { ratio, maxTokens } = { ...DEFAULT_BUDGET, ...o };
    if (!(ratio >= 0.001 && ratio <= 1)) throw new RangeError(`budget.ratio must be in [0.001, 1], got ${ratio}`);
    if (!(maxTokens >= 1 && Number.isFinite(maxTokens))) throw new RangeError(`budget.maxTokens must be at least 1, got ${maxTokens}`);
    this.#ratio = Math.round(ratio * MILLI);
    this.#max = Math.round(maxTokens * MILLI);
    this.#tokens = this.#max;
  }

  /** A call was made: it earns `ratio` of an extra one. */
  earn(): void {
    this.#tokens = Math.min(this.#max, this.#tokens + this.#ratio);
  }

  /** Take a token for an extra call; false (and nothing taken) when there is none. */
  take(): boolean {
    if (this.#tokens < MILLI) return false;
    this.#tokens -= MILLI;
    return true;
  }

  get tokens(): number {
    return this.#tokens / MILLI;
  }
}
