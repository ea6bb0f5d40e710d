/**
 * The adaptive governor of background work (range streaming and hint replay): a feedback
 * controller on foreground latency, as Dynamo's admission controller was (paper §6.5),
 * where every open store uses fixed rates instead.
 *
 * Each tick it is told the foreground p99 of the last window, the event loop's p99 delay,
 * and whether background work ran. While none runs it learns the idle p99 (a moving
 * average). While some runs, it keeps the foreground p99 under `latencyFactor` × idle
 * and the loop delay under `maxLoopDelayMs`: above either it halves the background
 * share at once (multiplicative decrease), below both it adds `step` (additive increase),
 * between `minShare` and 1 of the configured rates.
 *
 * Owns: the arithmetic, as a pure function of its inputs. Must not: measure or sleep
 * (the node samples latencies and applies the share to the throttles).
 */

export interface GovernorOptions {
  /** Foreground p99 may be at most this many times the idle p99 while background work runs (default 2). */
  readonly latencyFactor?: number;
  /** Event loop delay p99 above which background work backs off, ms (default 50). */
  readonly maxLoopDelayMs?: number;
  /** Least share of the configured rates background work keeps, so that it always progresses (default 0.05). */
  readonly minShare?: number;
  /** Share added per tick while foreground latency is fine (default 0.1). */
  readonly step?: number;
  /** Weight of a new idle p99 sample in the moving average (default 0.2). */
  readonly idleWeight?: number;
}

export interface GovernorState {
  /** Share of the configured background rates in force, in [minShare, 1]. */
  readonly share: number;
  /** Moving average of the foreground p99 with no background work, ms; undefined until measured. */
  readonly idleP99: number | undefined;
}

export interface GovernorSample {
  /** Foreground p99 over the last window, ms; undefined when no request completed. */
  readonly p99: number | undefined;
  /** Event loop delay p99 over the last window, ms. */
  readonly loopDelay: number;
  /** Did background work (streams, hint replay) run in the window? */
  readonly background: boolean;
}

export const INITIAL_GOVERNOR: GovernorState = { share: 1, idleP99: undefined };

/** Latencies this small are noise on any machine: never a reason to back off, ms. */
const FLOOR_MS = 5;

export function govern(state: GovernorState, s: GovernorSample, o: GovernorOptions = {}): GovernorState {
  const factor = o.latencyFactor ?? 2;
  const maxLoop = o.maxLoopDelayMs ?? 50;
  const minShare = o.minShare ?? 0.05;
  const step = o.step ?? 0.1;
  const w = o.idleWeight ?? 0.2;
  if (!s.background) {
    const idleP99 =
      s.p99 === undefined ? state.idleP99 : state.idleP99 === undefined ? s.p99 : (1 - w) * state.idleP99 + w * s.p99;
    // Nothing to govern: recover the share, so that the next background work starts at full rate unless it hurts.
    return { share: Math.min(1, state.share + step), idleP99 };
  }
  const limit = Math.max(FLOOR_MS, factor * (state.idleP99 ?? Infinity));
  const hurting = s.loopDelay > maxLoop || (s.p99 !== undefined && s.p99 > limit);
  const share = hurting ? Math.max(minShare, state.share / 2) : Math.min(1, state.share + step);
  return { share, idleP99: state.idleP99 };
}
