/**
 * Which peers this node could not reach lately, as its own replica calls found.
 *
 * Gossip carries heartbeats along any path, so a peer this node cannot reach while others
 * can — a partial partition: a bridge, a majorities ring, a one-way cut — stays up in the
 * failure detector, and every request that targets it waits the whole timeout. So the
 * coordinator also trusts its own calls: a peer whose last `threshold` calls in a row got
 * no answer (unreachable, or timed out) is suspect until `holdMs` after the last such
 * failure, or until a call to it succeeds. Targets treat a suspect as down: a write goes
 * to a fallback with a hint, as for any down replica (sloppy quorum), and a read to the
 * other replicas. When the hold runs out, the next request tries the peer again.
 *
 * Waiting for failures takes a call's whole deadline, so the peer's silence counts too
 * (`silentMs`, what the peer's stream reports: calls in flight and no answer to any): a
 * peer silent for longer than `silenceMs` is suspect at once, and is not as soon as it
 * answers anything. A paused or cut-off peer is left out within a second, where gossip's
 * failure detector takes ten (as SWIM learns from its probes and Lifeguard from local
 * health, not from heartbeats alone).
 *
 * Pure: the clock is injected.
 */
import { noAnswer, type ReplicaApi } from './replica-api.js';

export interface ReachabilityOptions {
  /** Failures in a row that make a peer suspect. */
  readonly threshold: number;
  /** How long after its last failure a peer stays suspect, ms. */
  readonly holdMs: number;
  readonly now: () => number;
  /** Told when a peer turns suspect and when it answers again (for failures in a row). */
  readonly changed?: (peer: string, suspect: boolean) => void;
  /** How long a peer has had this node's calls in flight without answering any, ms. */
  readonly silentMs?: (peer: string) => number;
  /** Silent longer than this, ms: suspect. */
  readonly silenceMs?: number;
}

export class Reachability {
  readonly #failures = new Map<string, { inRow: number; lastAt: number }>();

  constructor(readonly options: ReachabilityOptions) {}

  failed(peer: string): void {
    const f = this.#failures.get(peer) ?? { inRow: 0, lastAt: 0 };
    const was = this.suspect(peer);
    f.inRow++;
    f.lastAt = this.options.now();
    this.#failures.set(peer, f);
    if (!was && this.suspect(peer)) this.options.changed?.(peer, true);
  }

  succeeded(peer: string): void {
    const f = this.#failures.get(peer);
    if (f === undefined) return;
    this.#failures.delete(peer);
    if (f.inRow >= this.options.threshold) this.options.changed?.(peer, false);
  }

  /** Whether requests should leave `peer` out for now. */
  suspect(peer: string): boolean {
    const { silentMs, silenceMs } = this.options;
    if (silentMs !== undefined && silenceMs !== undefined && silentMs(peer) > silenceMs) return true;
    const f = this.#failures.get(peer);
    return f !== undefined && f.inRow >= this.options.threshold && this.options.now() - f.lastAt < this.options.holdMs;
  }

  /** The peers suspect now. */
  suspects(): string[] {
    return [...this.#failures.keys()].filter((p) => this.suspect(p));
  }
}

/** `remote` with every call's outcome told to `reach`. */
export function observed(remote: ReplicaApi, reach: Reachability): ReplicaApi {
  return {
    call: (node, c, deadline) =>
      remote.call(node, c, deadline).then(
        (v) => (reach.succeeded(node), v),
        (e: unknown) => {
          if (noAnswer(e)) reach.failed(node);
          else reach.succeeded(node); // it answered, with a refusal
          throw e;
        },
      ),
  };
}
