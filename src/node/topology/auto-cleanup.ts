/**
 * Automatic cleanup, run: each gossip round it asks cluster/cleanup.ts whether a cleanup
 * is due (ownership stood still for `delayMs` with no topology change in progress, once
 * per ownership) and, when it is, runs the same work as `ringkv cleanup` (operator.ts).
 *
 * Owns: the decision's state between rounds and the cleanup running. Must not: decide
 * when to clean (cluster/cleanup.ts) or what to delete (operator.ts), or schedule itself.
 */
import type { Logger } from 'pino';
import type { RingView } from '../../membership/ring-view.js';
import {
  AUTO_CLEANUP_START,
  autoCleanupDone,
  autoCleanupPutOff,
  autoCleanupStep,
  type AutoCleanupState,
} from '../../cluster/cleanup.js';

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
  #state: AutoCleanupState = AUTO_CLEANUP_START;
  #running = false;

  constructor(private readonly deps: AutoCleanupDeps) {}

  /** Look again (every gossip round); starts a cleanup when one is due. */
  tick(): void {
    const { deps } = this;
    if (deps.delayMs === 0 || this.#running) return;
    const view = deps.view();
    const { state, clean } = autoCleanupStep(this.#state, {
      now: deps.now(),
      delayMs: deps.delayMs,
      view,
      owner: deps.owner(),
    });
    this.#state = state;
    if (!clean) return;
    this.#running = true;
    deps.log.info(
      { afterMs: deps.delayMs },
      'automatic cleanup: ownership stood still; deleting data of ranges this node no longer replicates',
    );
    deps
      .cleanup()
      .then(
        () => (this.#state = autoCleanupDone(this.#state, view.fingerprint)),
        // Refused (a change started meanwhile) or failed: try again after another delay.
        (e: unknown) => {
          this.#state = autoCleanupPutOff(this.#state, deps.now());
          deps.log.warn(
            { reason: (e as Error)?.message ?? String(e), retryInMs: deps.delayMs },
            'automatic cleanup put off',
          );
        },
      )
      .finally(() => (this.#running = false));
  }
}
