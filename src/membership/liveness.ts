/**
 * A node's up/down opinion of its peers, fed by what gossip brings. Up/down is local: a
 * peer is up once it speaks to us itself (any gossip message from it, such as its answer
 * to our SYN), and down when the phi detector convicts it. A newer heartbeat or generation
 * of a down peer heard from others only makes us SYN it directly next round (a probe), as
 * Cassandra confirms a peer with an echo before marking it alive: after a full restart the
 * members' persisted tables carry heartbeats of different ages, so a dead node's heartbeat
 * seems to advance for a while, and it would flap up (a cluster test caught it answering
 * as a target). For a peer that is up, every newer heartbeat, first- or second-hand, feeds
 * the detector.
 *
 * Owns: who is up, since when each peer is down, whom to probe, whom gossip brought news
 * of; what the detector is fed. Must not: hold or read the member table (the gossiper says
 * whether a member may be up), send anything, do I/O or read clocks.
 */

import type { PhiDetector } from './phi-detector.js';

/** What the opinion reports: a peer up or down, or a stall of our own absorbed. */
export type LivenessEvent =
  { readonly type: 'up' | 'down'; readonly id: string } | { readonly type: 'paused'; readonly ms: number };

/** Who we think up, and whom to probe. */
export class Liveness {
  readonly #detector: PhiDetector;
  readonly #startedAt: number;
  readonly #emit: (e: LivenessEvent) => void;
  readonly #mayBeUp: (id: string) => boolean;
  readonly #up = new Set<string>();
  /** When each peer we think down was last marked down (absent: up, or never up since we started). */
  readonly #downSince = new Map<string, number>();
  /** Peers gossip brought news of since we started. */
  readonly #heard = new Set<string>();
  /** Down peers that others heard from lately: the next round SYNs them directly (and drains this). */
  readonly probes = new Set<string>();

  /**
   * An opinion that thinks no one up, started at `startedAt`, feeding `detector`, telling
   * `emit` of each change; `mayBeUp` says whether a member's state lets it be up at all.
   */
  constructor(
    detector: PhiDetector,
    startedAt: number,
    emit: (e: LivenessEvent) => void,
    mayBeUp: (id: string) => boolean,
  ) {
    this.#detector = detector;
    this.#startedAt = startedAt;
    this.#emit = emit;
    this.#mayBeUp = mayBeUp;
  }

  /** Whether we think peer `id` up. */
  isUp(id: string): boolean {
    return this.#up.has(id);
  }

  /** Since when we have thought peer `id` down (ms): when we convicted it, else when we started. */
  downSince(id: string): number {
    return this.#downSince.get(id) ?? this.#startedAt;
  }

  /** Whether gossip brought news of `id` since we started. */
  heardSinceStart(id: string): boolean {
    return this.#heard.has(id);
  }

  /** Gossip brought news of `id` (its heartbeat or generation moved, or it is new to us). */
  heard(id: string): void {
    this.#heard.add(id);
  }

  /** Judge every up peer at `now`, after absorbing a stall of our own. */
  judge(now: number): void {
    const paused = this.#detector.checkLocalPause(now);
    if (paused > 0) this.#emit({ type: 'paused', ms: paused });
    for (const id of this.#up) {
      if (!this.#detector.isAvailable(id, now)) this.markDown(id, now);
    }
  }

  /** Peer `id` was heard from alive: feed the detector, and mark it up if it may be. */
  arrived(id: string, now: number): void {
    this.#detector.report(id, now);
    if (!this.#up.has(id) && this.#mayBeUp(id)) {
      this.#up.add(id);
      this.#downSince.delete(id);
      this.#emit({ type: 'up', id });
    }
  }

  /** Mark peer `id` down at `now`. */
  markDown(id: string, now: number): void {
    this.#up.delete(id);
    this.#downSince.set(id, now);
    this.#emit({ type: 'down', id });
  }

  /** Newer state of peer `id`, told by `from`: alive if from itself or up already; else probe it. */
  news(id: string, from: string, now: number): void {
    if (id === from || this.#up.has(id)) this.arrived(id, now);
    else this.probes.add(id);
  }

  /** Peer `id`'s heartbeat moved, told by `from`: feed the detector, or make it up, or probe it. */
  heartbeatMoved(id: string, from: string, now: number): void {
    this.#heard.add(id);
    if (this.#up.has(id)) this.#detector.report(id, now);
    else if (id === from) this.arrived(id, now);
    else this.probes.add(id);
  }
}
