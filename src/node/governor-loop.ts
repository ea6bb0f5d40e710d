/**
 * The governor's sampling loop: each tick it reads the foreground p99 (the coordinator's
 * latency window) and the event loop's delay, notes whether background work ran (streams
 * out, stream bytes taken, hints delivered, a repair), asks the governor (streaming/governor.ts) for
 * the share of the configured rates, and sets the stream throttle's rate by it. Hint
 * delivery reads the share itself (`share`).
 *
 * Owns: the samples and the share in force. Must not: decide the share (governor.ts does)
 * or schedule itself (node.ts owns the timers).
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Throttle } from '../streaming/throttle.js';
import { INITIAL_GOVERNOR, govern, type GovernorState } from '../streaming/governor.js';

export interface GovernorLoopDeps {
  /** The stream throttle: the bytes it let through tell of streaming, and the share sets its rate. */
  readonly throttle: Throttle;
  /** Streams this node sends now. */
  readonly outgoing: ReadonlySet<unknown>;
  /** Hint replay, whose count of hints delivered grows while it runs. */
  readonly hintDelivery: { readonly delivered: number };
  /** Is an anti-entropy repair running now (repair/runs.ts)? */
  repairing(): boolean;
  /** Foreground latencies: the p99 since the last take. */
  readonly latencies: { takeP99(): number | undefined };
  /** How many times its idle p99 the foreground p99 may be while background work runs. */
  readonly latencyFactor: number;
  readonly log: Logger;
}

interface Sampling {
  readonly delay: IntervalHistogram;
  /** The throttle's configured rate, which the share scales. */
  readonly base: number;
  taken: number;
  delivered: number;
}

export class GovernorLoop {
  #state: GovernorState = INITIAL_GOVERNOR;
  #sampling: Sampling | undefined;

  constructor(private readonly deps: GovernorLoopDeps) {}

  /** Share of the configured background rates in force (1 until the loop runs). */
  get share(): number {
    return this.#state.share;
  }

  /** Start measuring: call once, before the first tick. */
  start(): void {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    this.#sampling = {
      delay,
      base: this.deps.throttle.rate,
      taken: this.deps.throttle.taken,
      delivered: this.deps.hintDelivery.delivered,
    };
  }

  /** Stop measuring the event loop (at node stop). */
  stop(): void {
    this.#sampling?.delay.disable();
    this.#sampling = undefined;
  }

  /** One sample: foreground p99 and loop delay in, the stream throttle's rate out. */
  tick(): void {
    const s = this.#sampling;
    if (s === undefined) return;
    const { throttle, hintDelivery } = this.deps;
    const background =
      this.deps.outgoing.size > 0 ||
      throttle.taken !== s.taken ||
      hintDelivery.delivered !== s.delivered ||
      this.deps.repairing();
    s.taken = throttle.taken;
    s.delivered = hintDelivery.delivered;
    const p99 = this.deps.latencies.takeP99();
    const before = this.#state.share;
    this.#state = govern(
      this.#state,
      { p99, loopDelay: s.delay.percentile(99) / 1e6, background },
      { latencyFactor: this.deps.latencyFactor },
    );
    s.delay.reset();
    if (Number.isFinite(s.base)) throttle.rate = Math.max(1024, s.base * this.#state.share);
    if (this.#state.share < before && this.#state.share <= 0.25) {
      this.deps.log.debug(
        { component: 'governor', share: this.#state.share, p99, idleP99: this.#state.idleP99 },
        'background work slowed: foreground latency is up',
      );
    }
  }
}
