/**
 * What the client knows of each node's health from its own calls: calls in flight, how
 * fast it answers lately, whether it answers at all, and whether it refused lately. The
 * client orders a key's replicas by it (healthy and less busy first, the better of two),
 * and puts a node that stopped answering at the back without waiting for a deadline.
 *
 * A node is **unresponsive** when it has had calls in flight for `stallMs` without
 * answering any of them. It is responsive again at its next answer. When the client
 * itself stalled (its timers fired late: `late()`), every node's silence starts again,
 * so that none is blamed for the client's own pause (the local-health idea of SWIM's
 * Lifeguard).
 *
 * Pure: the clock is injected.
 *
 * Owns: the per-node figures and the order they imply. Must not: send anything.
 */

export interface HealthOptions {
  /** Calls in flight with no answer for this long make a node unresponsive, ms. */
  readonly stallMs: number;
  readonly now: () => number;
}

/** How a call to a node ended, as the client saw it. */
export type Ending = 'answered' | 'refused' | 'unreachable' | 'timeout';

interface Figures {
  inFlight: number;
  /** When it last made progress: answered anything, or got its first call in flight. */
  progressAt: number;
  /** Answer latency, exponentially weighted (ms); NaN before the first. */
  latency: number;
  latencyAt: number;
  /** Refused (UNAVAILABLE, or asked to be left alone) until then. */
  avoidUntil: number;
}

/** Weight of a new latency sample in the average. */
const ALPHA = 0.2;
/** Scores within this factor of each other are as good (order(): no reordering on noise). */
const AS_GOOD = 1.5;
/** Past this, ms, a node's latency figure decays to the typical one: a node avoided gets chances again. */
const LATENCY_HALF_LIFE_MS = 1000;

export class NodeHealth {
  readonly #nodes = new Map<string, Figures>();
  /** Median-ish latency across nodes: what an unknown node is assumed to have. */
  #typical = NaN;

  constructor(readonly options: HealthOptions) {}

  #of(address: string): Figures {
    let f = this.#nodes.get(address);
    if (f === undefined) {
      f = { inFlight: 0, progressAt: this.options.now(), latency: NaN, latencyAt: -Infinity, avoidUntil: -Infinity };
      this.#nodes.set(address, f);
    }
    return f;
  }

  /** A call was sent to `address`. */
  sent(address: string): void {
    const f = this.#of(address);
    if (f.inFlight === 0) f.progressAt = this.options.now();
    f.inFlight++;
  }

  /** A call sent `ms` ago to `address` ended so; `ms` NaN: an answer whose time says nothing of the node's latency (a batch's). */
  ended(address: string, ending: Ending, ms: number): void {
    const f = this.#of(address);
    const now = this.options.now();
    f.inFlight = Math.max(0, f.inFlight - 1);
    if (ending === 'timeout') return; // no answer: no progress
    f.progressAt = now;
    if (ending === 'answered' && !Number.isNaN(ms)) {
      f.latency = Number.isNaN(f.latency) ? ms : f.latency + ALPHA * (ms - f.latency);
      f.latencyAt = now;
      this.#typical = Number.isNaN(this.#typical) ? ms : this.#typical + (ALPHA / 4) * (ms - this.#typical);
    }
  }

  /** Leave `address` alone (at the back of the order) for `ms`: it refused, or asked to be. */
  avoid(address: string, ms: number): void {
    const f = this.#of(address);
    f.avoidUntil = Math.max(f.avoidUntil, this.options.now() + ms);
  }

  inFlight(address: string): number {
    return this.#nodes.get(address)?.inFlight ?? 0;
  }

  /** It has calls in flight and answered none of them for stallMs. */
  unresponsive(address: string): boolean {
    const f = this.#nodes.get(address);
    return f !== undefined && f.inFlight > 0 && this.options.now() - f.progressAt > this.options.stallMs;
  }

  /**
   * A timer of the client's fired `ms` late: past stallMs / 2, the client itself was
   * stalled (a long GC, a busy loop), and what looked like silence may be its own.
   */
  late(ms: number): void {
    if (ms <= this.options.stallMs / 2) return;
    const now = this.options.now();
    for (const f of this.#nodes.values()) f.progressAt = Math.max(f.progressAt, now);
  }

  /** Not unresponsive, and not asked to be left alone. */
  healthy(address: string): boolean {
    const f = this.#nodes.get(address);
    return f === undefined || (f.avoidUntil <= this.options.now() && !this.unresponsive(address));
  }

  /** Expected wait at `address`, for choosing: (calls in flight + 1) × its latency, which decays to the typical one when not refreshed. */
  score(address: string): number {
    const f = this.#nodes.get(address);
    const typical = Number.isNaN(this.#typical) ? 1 : this.#typical;
    if (f === undefined || Number.isNaN(f.latency)) return typical;
    const age = this.options.now() - f.latencyAt;
    const w = age <= 0 ? 1 : Math.pow(0.5, age / LATENCY_HALF_LIFE_MS);
    return (f.inFlight + 1) * (w * f.latency + (1 - w) * typical);
  }

  /**
   * `candidates` (already in turn, to spread load) in the order to try them: the healthy
   * ones first — the better of the first two (two choices), then the rest from the less
   * to the more busy — then those `down` says the cluster shows down, then the unhealthy
   * ones. A node is better only by more than 1.5×, so that noise does not reorder nodes
   * that are as good as each other: those keep their turn.
   */
  order(candidates: readonly string[], down: (address: string) => boolean = () => false): string[] {
    const good: string[] = [],
      clusterDown: string[] = [],
      bad: string[] = [];
    for (const a of candidates) (!this.healthy(a) ? bad : down(a) ? clusterDown : good).push(a);
    if (good.length < 2) return [...good, ...clusterDown, ...bad];
    const score = new Map(good.map((a) => [a, this.score(a)]));
    const better = (a: string, b: string): boolean => score.get(a)! * AS_GOOD < score.get(b)!;
    if (better(good[1]!, good[0]!)) [good[0], good[1]] = [good[1]!, good[0]!];
    // The rest: those as good as the best of them in turn, then the others from the less busy.
    const rest = good.slice(1);
    const best = rest.reduce((m, a) => Math.min(m, score.get(a)!), Infinity);
    const close = rest.filter((a) => score.get(a)! <= best * AS_GOOD);
    const far = rest.filter((a) => score.get(a)! > best * AS_GOOD).sort((a, b) => score.get(a)! - score.get(b)!);
    return [good[0]!, ...close, ...far, ...clusterDown, ...bad];
  }

  /** Forget nodes no longer in `keep` with nothing in flight (addresses of nodes that left). */
  retain(keep: ReadonlySet<string>): void {
    for (const [a, f] of this.#nodes) if (!keep.has(a) && f.inFlight === 0) this.#nodes.delete(a);
  }
}
