/**
 * Per-key mutual exclusion inside one process: a read-merge-write of a key never
 * interleaves with another write of the same key (docs/architecture.md). Waiters are
 * served in arrival order. Keys that nobody holds cost nothing: the map holds only
 * locked keys.
 */
export class KeyLocks {
  /**
   * key → the queue of waiters; presence means the key is held. null: held, nobody
   * waiting (most keys, most of the time: no array for them).
   */
  readonly #held = new Map<string, Array<() => void> | null>();

  /** Take the lock on `key`: undefined when it was free (taken now), else a promise. */
  acquire(key: string): Promise<void> | undefined {
    const queue = this.#held.get(key);
    if (queue === undefined) {
      this.#held.set(key, null);
      return undefined;
    }
    return new Promise<void>((resolve) => {
      if (queue === null) this.#held.set(key, [resolve]);
      else queue.push(resolve);
    });
  }

  /** Hand the lock to the next waiter, or free it. */
  release(key: string): void {
    const queue = this.#held.get(key);
    if (queue === undefined) throw new Error(`release of a key that is not locked`);
    const next = queue?.shift();
    if (next) next();
    else this.#held.delete(key);
  }

  /** Run fn holding the lock on key. */
  async with<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const wait = this.acquire(key);
    if (wait) await wait;
    try {
      return await fn();
    } finally {
      this.release(key);
    }
  }

  /** How many keys are held right now (for tests and metrics). */
  get size(): number {
    return this.#held.size;
  }
}
