/**
 * Whether a restarted node has caught up enough to serve: the writes it missed while it
 * was away are, as far as the cluster knows, with it again. Peers kept them as hints
 * (sloppy quorum) and gossip whom they hold hints for (the `hinted` field); a restarted
 * node reports NOT_SERVING until no peer it can hear names it, so that a rolling restart
 * that waits for health moves on only once the node holds what it missed.
 *
 * A pure function of the gossip table as the node sees it, and the clock.
 */
import { field, statusOf, type EndpointState } from './endpoint.js';

export interface CatchUpInput {
  readonly self: string;
  /** The gossip table (our own state included: skipped). */
  readonly states: Iterable<EndpointState>;
  readonly isUp: (id: string) => boolean;
  /**
   * Whether the state we hold of `id` came from gossip since we started (its heartbeat or
   * generation moved), not from what the node remembered at start: only then is its
   * `hinted` field news (a delta carries every field newer than what we had).
   */
  readonly heardSinceStart: (id: string) => boolean;
  /** ms since the node started. */
  readonly elapsedMs: number;
  /**
   * ms to hear from peers before one not heard from counts as down: until then, a peer
   * we have not heard from may hold hints for us.
   */
  readonly settleMs: number;
  /** ms after which the node serves whatever is still owed (anti-entropy repairs the rest). */
  readonly maxWaitMs: number;
}

export interface CatchUp {
  readonly done: boolean;
  /** Peers holding hints for us, or whose news we have not had yet (down ones only until settleMs). */
  readonly waitingFor: readonly string[];
  /** Done because maxWaitMs passed with hints still owed. */
  readonly gaveUp: boolean;
}

/** Hints owed to `self` by peers it can hear, per the gossip table; see the file's comment. */
export function catchUp(o: CatchUpInput): CatchUp {
  const waiting: string[] = [];
  let peers = 0;
  for (const s of o.states) {
    if (s.id === o.self) continue;
    const status = statusOf(s);
    if (status === 'left' || status === 'removed') continue;
    peers++;
    if (!o.isUp(s.id)) {
      if (o.elapsedMs < o.settleMs) waiting.push(s.id);
      continue;
    }
    const hinted = field(s, 'hinted');
    if (!o.heardSinceStart(s.id)) waiting.push(s.id);
    else if (hinted?.split(',').includes(o.self)) waiting.push(s.id);
  }
  waiting.sort();
  // Until settleMs, an empty table is one gossip has not filled yet, not a cluster of one.
  if (waiting.length === 0 && (peers > 0 || o.elapsedMs >= o.settleMs))
    return { done: true, waitingFor: [], gaveUp: false };
  const gaveUp = o.elapsedMs >= o.maxWaitMs;
  return { done: gaveUp, waitingFor: waiting, gaveUp };
}
