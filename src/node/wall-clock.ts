/**
 * The node's wall clock: Date.now() plus an offset. ringkv reads wall time only where a
 * time must mean the same on every node or survive a restart — the generation a node
 * starts with, when a tombstone was written and may be purged, when a range was last
 * repaired, how long ownership has stood still before cleanup. Durations and deadlines
 * use the monotonic clock or the real one and never pass through here.
 *
 * The offset is 0 in production. Fault-injection runs (test/jepsen) start nodes with
 * --clock-offset-ms and --fault-injection on, and change the offset while the node runs
 * (admin SetClockOffset) to skew and strobe each node's clock as Jepsen's clock nemesis
 * does with the system clock — which one machine cannot do per process.
 */
/** The largest clock offset a node takes, either way: a day. */
export const MAX_CLOCK_OFFSET_MS = 24 * 60 * 60 * 1000;

export class WallClock {
  /** What `offsetMs` may be at most, either way (checked by the callers that set it from outside). */
  readonly maxOffsetMs = MAX_CLOCK_OFFSET_MS;
  #offsetMs: number;

  constructor(offsetMs = 0) {
    this.#offsetMs = offsetMs;
  }

  /** Wall time, ms since the epoch, as this node believes it to be. */
  readonly now = (): number => Date.now() + this.#offsetMs;

  get offsetMs(): number {
    return this.#offsetMs;
  }

  set offsetMs(ms: number) {
    this.#offsetMs = ms;
  }
}
