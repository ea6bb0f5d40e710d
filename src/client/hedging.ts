/**
 * When the client sends a call to a second node ("hedges", after The Tail at Scale), and
 * how many such extra calls it may send.
 *
 * - HedgeDelay: a percentile (p99 by default) of how long calls took lately, clamped to
 *   [minMs, maxMs]: a call not answered by then is sent to the next candidate as well.
 *   At p99 about 1 call in 100 is hedged when nothing is wrong; when a node stalls, its
 *   calls are hedged after a delay the healthy nodes set. Samples are kept per kind of
 *   call (reads and writes take different times): the last 512, recomputed every 32
 *   (replication/latency-window.ts: RecentLatency).
 * - RetryBudget: a token bucket as gRPC's retry throttling: every call adds `ratio`
 *   tokens up to `maxTokens`, every extra call takes one, and none is sent without one.
 *   Extra calls therefore stay under `ratio` of calls over time, with bursts of up to
 *   `maxTokens`, so a sick cluster is not flooded by its clients' hedges.
 *
 * Pure: no clock, no I/O. Owns: the arithmetic. Must not: send anything.
 */
import { RecentLatency } from '../common/latency-window.js';

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

export class HedgeDelay {
  readonly #o: Required<HedgeOptions>;
  readonly #recent: RecentLatency;

  constructor(o: HedgeOptions = {}) {
    this.#o = { ...DEFAULT_HEDGE, ...o };
    const { percentile, minMs, maxMs } = this.#o;
    if (!(percentile >= 0.5 && percentile <= 0.999))
      throw new RangeError(`hedge.percentile must be 0.5 to 0.999, got ${percentile}`);
    if (!(minMs >= 0 && maxMs >= minMs && Number.isFinite(maxMs)))
      throw new RangeError(`hedge needs 0 <= minMs <= maxMs (finite), got minMs ${minMs}, maxMs ${maxMs}`);
    this.#recent = new RecentLatency(percentile);
  }

  /** A call of `kind` was answered after `ms`. */
  add(kind: string, ms: number): void {
    this.#recent.add(kind, ms);
  }

  /** How long a call of `kind` waits before it is hedged, ms: maxMs until enough samples are in. */
  delay(kind: string): number {
    const p = this.#recent.get(kind);
    return p === undefined ? this.#o.maxMs : Math.min(this.#o.maxMs, Math.max(this.#o.minMs, p));
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
    if (!(maxTokens >= 1 && Number.isFinite(maxTokens)))
      throw new RangeError(`budget.maxTokens must be at least 1, got ${maxTokens}`);
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
