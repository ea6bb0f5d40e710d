/**
 * Automatic cleanup: once the ownership this node sees has stood still for `delayMs` with
 * no topology change in progress, delete the data of ranges it no longer replicates (the
 * same work as `ringkv cleanup`, operator.ts), once per ownership. Old owners keep their
 * copies for that long after a change completes, as a safety net, and never delete while
 * a change runs: the new owners are normal by then.
 *
 * Riak deletes a handed-off partition as soon as the handoff is done; Cassandra never
 * deletes until an operator runs nodetool cleanup. The default here (an hour) is between.
 *
 * Owns: when to clean. Must not: decide what to delete (operator.ts) or schedule itself.
 */
import type { Logger } from 'pino';
import type { RingView } from '../membership/ring-view.js';

export interface AutoCleanupDeps {
  /** How long ownership must stand still before cleaning; 0 = never (ringkv cleanup only). */
  readonly delayMs: number;
  now(): number;
  view(): RingView;
  /** Is this node a normal owner now? */
  owner(): boolean;
  cleanup(): Promise<{ deleted: number; kept: number; ranges: number }>;
  readonly log: Logger;
}

export class AutoCleanup {
  /** The ownership (view fingerprint) last seen, and since when, with nothing moving. */
  #seen = '';
  #since = 0;
  /** The ownership last cleaned for. */
  #cleaned = '';
  #running = false;

  constructor(private readonly deps: AutoCleanupDeps) {}

  /** Look again (every gossip round); starts a cleanup when one is due. */
  tick(): void {
    const { deps } = this;
    if (deps.delayMs === 0 || this.#running) return;
    const view = deps.view();
    const now = deps.now();
    if (view.fingerprint !== this.#seen || view.movements.length > 0 || !deps.owner()) {
      this.#seen = view.movements.length > 0 ? '' : view.fingerprint;
      this.#since = now;
      return;
    }
    if (this.#cleaned === view.fingerprint || now - this.#since < deps.delayMs) return;
    this.#running = true;
    deps.log.info({ afterMs: deps.delayMs }, 'automatic cleanup: ownership stood still; deleting data of ranges this node no longer replicates');
    deps
      .cleanup()
      .then(
        () => (this.#cleaned = view.fingerprint),
        // Refused (a change started meanwhile) or failed: try again after another delay.
        (e: unknown) => {
          this.#since = deps.now();
          deps.log.warn({ reason: (e as Error)?.message ?? String(e), retryInMs: deps.delayMs }, 'automatic cleanup put off');
        },
      )
      .finally(() => (this.#running = false));
  }
}
