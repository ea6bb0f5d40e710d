/**
 * Phi-accrual failure detector (Hayashibara et al., 2004), one arrival window per peer.
 *
 * φ(t) = −log10 P(the next heartbeat arrives later than t after the last one), with
 * inter-arrival times modelled as a normal distribution over the last `windowSize`
 * intervals (as Akka does; Cassandra uses an exponential model, under which φ 8 needs
 * ~18 mean intervals — 18 s at 1 s gossip, past our 10 s detection target). The
 * standard deviation is floored at `minStdMs` so that a very regular peer is not
 * convicted by one late round, and `acceptablePauseMs` is added to the mean to absorb
 * gossip's own jitter (a heartbeat reaches us through random peers, not directly).
 * Intervals longer than `maxSampleMs` are not learnt: a restart or a pause is not what
 * normal arrivals look like (Cassandra drops intervals over 2 s the same way).
 *
 * Local pause guard: if our own clock jumped more than `localPauseMs` between two
 * interpretations, this process stalled (GC, SIGSTOP, overloaded host); the silence it
 * saw is its own, so every window's last arrival is moved forward by the stall before
 * anyone is judged (Cassandra skips conviction after a local pause for the same reason).
 *
 * Owns: the statistics. Must not: read a clock (time is passed in) or decide up/down
 * policy beyond the threshold (the gossiper does).
 */

export interface DetectorOptions {
  /** φ above which a peer is convicted. 8 is Cassandra's default; raise to 10–12 on noisy hosts. */
  readonly threshold?: number;
  /** Intervals remembered per peer (Cassandra: 1000). */
  readonly windowSize?: number;
  /** Floor of the standard deviation, ms. */
  readonly minStdMs?: number;
  /** Added to the mean interval, ms: jitter that is normal, not failure. */
  readonly acceptablePauseMs?: number;
  /** Intervals longer than this are not learnt, ms. */
  readonly maxSampleMs?: number;
  /** Expected interval before a window has samples, ms (the gossip interval). */
  readonly firstIntervalMs?: number;
  /** A gap between our own interpretations longer than this is our own stall, ms. */
  readonly localPauseMs?: number;
}

export const DEFAULT_DETECTOR: Required<DetectorOptions> = {
  threshold: 8,
  windowSize: 1000,
  minStdMs: 500,
  acceptablePauseMs: 1000,
  maxSampleMs: 4000,
  firstIntervalMs: 1000,
  localPauseMs: 5000,
};

class ArrivalWindow {
  /** Grows to `size`, then wraps: a peer heard from a few times costs a few numbers. */
  readonly #samples: number[] = [];
  readonly #size: number;
  #count = 0;
  #next = 0;
  #sum = 0;
  #sumSq = 0;
  last: number;

  constructor(size: number, now: number) {
    this.#size = size;
    this.last = now;
  }

  add(now: number, maxSample: number): void {
    const interval = now - this.last;
    this.last = now;
    if (interval <= 0 || interval > maxSample) return;
    if (this.#count === this.#size) {
      const old = this.#samples[this.#next]!;
      this.#sum -= old;
      this.#sumSq -= old * old;
    } else {
      this.#count++;
    }
    this.#samples[this.#next] = interval;
    this.#next = (this.#next + 1) % this.#size;
    this.#sum += interval;
    this.#sumSq += interval * interval;
  }

  stats(first: number): { mean: number; std: number } {
    if (this.#count === 0) return { mean: first, std: first / 4 };
    const mean = this.#sum / this.#count;
    const variance = Math.max(0, this.#sumSq / this.#count - mean * mean);
    return { mean, std: Math.sqrt(variance) };
  }
}

/** φ for an elapsed time given the interval distribution (exported for tests). */
export function phi(elapsed: number, mean: number, std: number): number {
  const z = (elapsed - mean) / std;
  // P(X > elapsed) = erfc(z/√2)/2; −log10 of it, computed from erfc to stay finite far out.
  const p = 0.5 * erfc(z / Math.SQRT2);
  return p > 0 ? -Math.log10(p) : Infinity;
}

/** Complementary error function (Numerical Recipes' Chebyshev fit, relative error < 1.2e-7). */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

export class PhiDetector {
  readonly options: Required<DetectorOptions>;
  readonly #windows = new Map<string, ArrivalWindow>();
  #lastInterpret: number | undefined;
  readonly #z: number;

  constructor(options: DetectorOptions = {}) {
    this.options = { ...DEFAULT_DETECTOR, ...options };
    const o = this.options;
    if (!(o.threshold > 0) || !(o.minStdMs > 0) || !(o.firstIntervalMs > 0) || !(o.windowSize >= 1)) {
      throw new RangeError('detector options: threshold, minStdMs, firstIntervalMs and windowSize must be positive');
    }
    this.#z = zFor(o.threshold);
  }

  /** A heartbeat from `id` arrived at `now`. */
  report(id: string, now: number): void {
    const w = this.#windows.get(id);
    if (w === undefined) this.#windows.set(id, new ArrivalWindow(this.options.windowSize, now));
    else w.add(now, this.options.maxSampleMs);
  }

  /** Forget `id`'s history (it restarted, or left the cluster). */
  forget(id: string): void {
    this.#windows.delete(id);
  }

  has(id: string): boolean {
    return this.#windows.has(id);
  }

  /** φ of `id` at `now`; 0 for a peer never heard from (nothing to judge it on). */
  phi(id: string, now: number): number {
    const w = this.#windows.get(id);
    if (w === undefined) return 0;
    const { mean, std } = w.stats(this.options.firstIntervalMs);
    return phi(now - w.last, mean + this.options.acceptablePauseMs, Math.max(std, this.options.minStdMs));
  }

  /**
   * Call once per round before judging peers. Returns the length of our own stall when
   * one was detected (and absorbed), else 0.
   */
  checkLocalPause(now: number): number {
    const prev = this.#lastInterpret;
    this.#lastInterpret = now;
    if (prev === undefined) return 0;
    const gap = now - prev;
    if (gap <= this.options.localPauseMs) return 0;
    for (const w of this.#windows.values()) w.last = Math.min(now, w.last + gap);
    return gap;
  }

  /**
   * φ(id) < threshold. φ grows with the silence, so this compares the silence with the
   * point where φ reaches the threshold (mean + z·sd, z solved once) instead of taking
   * a logarithm per peer per round: a node of a 1,000-node cluster judges everyone each round.
   */
  isAvailable(id: string, now: number): boolean {
    const w = this.#windows.get(id);
    if (w === undefined) return true;
    const { mean, std } = w.stats(this.options.firstIntervalMs);
    return now - w.last < mean + this.options.acceptablePauseMs + this.#z * Math.max(std, this.options.minStdMs);
  }
}

/** z with phi(z, 0, 1) = threshold, by bisection (phi is increasing in z). */
function zFor(threshold: number): number {
  let lo = -40,
    hi = 40;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (phi(mid, 0, 1) < threshold) lo = mid;
    else hi = mid;
  }
  return lo;
}
