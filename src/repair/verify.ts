/**
 * The verification pass (a scrub, as Cassandra's `nodetool verify`): every record this node
 * holds read again from disk, at a paced rate, so that one damaged on disk (a flipped bit,
 * a bad block of a table file) is found though no read reaches it. Anti-entropy cannot:
 * the kept trees hash records as they were written and never read them again. Each
 * corrupt record found is fetched again at once from the key's other replicas and merged
 * here (the store sets the bad bytes aside and writes what they hold).
 *
 * Owns: the pass (its scan, pacing and restores), its schedule and its figures. Must not:
 * pick replicas (`replicasOf`), reach peers (`fetch`) or hold a timer of its own beyond the
 * loop of `runBackground`.
 */
import type { Logger } from 'pino';
import type { Store } from '../storage/index.js';
import { showKey } from '../kinds/kv-errors.js';

export interface VerifyDeps {
  readonly store: Store;
  /** The other replicas of a stored key that are up now (none: it cannot be restored now). */
  replicasOf(key: Buffer): string[];
  /** A replica's record of `key` (undefined: it holds none); throws when it cannot answer. */
  fetch(node: string, key: Buffer): Promise<Buffer | undefined>;
  readonly log: Logger;
  now(): number;
}

/** One pass's figures. */
export interface VerifyPass {
  readonly startedAtMs: number;
  /** 0 while it runs. */
  finishedAtMs: number;
  /** Records read and found whole, and their bytes. */
  records: number;
  bytes: number;
  /** Records that failed their checksum; of those, restored from a replica, and not (no replica held it or answered). */
  corrupt: number;
  restored: number;
  unrestored: number;
}

export interface VerifyOptions {
  /** Bytes read per second, times `share()` (the latency governor's share of the background). */
  readonly bytesPerSecond: number;
  share(): number;
  readonly signal: AbortSignal;
}

/** Keys restoreSoon holds at most: past it (a disk failing everywhere) the pass finds the rest. */
const MAX_WAITING = 10_000;

export class Verifier {
  /** The pass running now, or the last one; undefined before the first. */
  last: VerifyPass | undefined;
  /** Since start: passes finished, and the sums of their figures (the running pass's included). */
  readonly totals = { passes: 0, records: 0, bytes: 0, corrupt: 0, restored: 0, unrestored: 0 };

  constructor(private readonly deps: VerifyDeps) {}

  /** One pass over the whole store, paced; resolves with its figures (partial when `signal` aborted it). */
  async pass(o: VerifyOptions): Promise<VerifyPass> {
    const p: VerifyPass = {
      startedAtMs: this.deps.now(),
      finishedAtMs: 0,
      records: 0,
      bytes: 0,
      corrupt: 0,
      restored: 0,
      unrestored: 0,
    };
    this.last = p;
    const before = { restored: this.totals.restored, unrestored: this.totals.unrestored };
    let t0 = performance.now(),
      paced = 0;
    // Batches of 256 records or 1 MiB: the pace is checked between them.
    for await (const batch of this.deps.store.ranges.scan({ start: 0n, end: 0n })) {
      if (o.signal.aborted) break;
      for (const e of batch.entries) {
        p.records++;
        p.bytes += e.record.length;
        this.totals.records++;
        this.totals.bytes += e.record.length;
      }
      // Restored one at a time with those reads find (the store may have told restoreSoon already: each key once).
      p.corrupt += batch.corrupt.length;
      for (const key of batch.corrupt) this.restoreSoon(key);
      if (batch.corrupt.length > 0) {
        await this.#queue;
        p.restored = this.totals.restored - before.restored;
        p.unrestored = this.totals.unrestored - before.unrestored;
      }
      // Pace: the bytes read since the last pause at the allowed rate, less the time they took.
      const wait =
        ((p.bytes - paced) / (o.bytesPerSecond * Math.max(0.05, o.share()))) * 1000 - (performance.now() - t0);
      if (wait > 50) {
        await sleep(Math.min(wait, 10_000), o.signal);
        t0 = performance.now();
        paced = p.bytes;
      }
    }
    p.finishedAtMs = this.deps.now();
    this.totals.passes++;
    if (p.corrupt > 0)
      this.deps.log.warn(
        { records: p.records, corrupt: p.corrupt, restored: p.restored, unrestored: p.unrestored },
        'verification pass found records corrupt on disk',
      );
    else this.deps.log.info({ records: p.records, bytes: p.bytes }, 'verification pass found every record whole');
    return p;
  }

  /** A pass every `intervalMs` (the first one interval after start), until `signal` aborts. */
  async runBackground(o: VerifyOptions & { readonly intervalMs: number }): Promise<void> {
    while (!o.signal.aborted) {
      await sleep(o.intervalMs, o.signal);
      if (o.signal.aborted) return;
      try {
        await this.pass(o);
      } catch (e) {
        if (!o.signal.aborted)
          this.deps.log.warn({ err: (e as Error).message }, 'verification pass failed; the next one runs at its time');
      }
    }
  }

  /**
   * Restore a record found corrupt elsewhere (a read, a stream's or a repair's scan: the
   * store's onCorrupt), soon and once: one restore at a time, a key already waiting not
   * queued again. The verification pass restores what it finds itself.
   */
  restoreSoon(key: Buffer): void {
    const id = key.toString('latin1');
    if (this.#waiting.has(id) || this.#waiting.size >= MAX_WAITING) return;
    this.#waiting.add(id);
    this.#queue = this.#queue
      .then(async () => void (await this.#restore(key)))
      .catch((e: unknown) =>
        this.deps.log.warn({ key: showKey(key), err: (e as Error).message }, 'restoring a corrupt record failed'),
      )
      .finally(() => this.#waiting.delete(id));
  }

  /** Keys waiting for restoreSoon, by their bytes. */
  readonly #waiting = new Set<string>();
  #queue: Promise<void> = Promise.resolve();

  /** Fetch a corrupt record's key from its other replicas and merge each copy here; true when one did. */
  async #restore(key: Buffer): Promise<boolean> {
    this.totals.corrupt++;
    let merged = 0;
    for (const node of this.deps.replicasOf(key)) {
      try {
        const record = await this.deps.fetch(node, key);
        if (record === undefined) continue;
        await this.deps.store.merge(key, record);
        merged++;
      } catch (e) {
        this.deps.log.debug(
          { peer: node, key: showKey(key), err: (e as Error).message },
          'a replica could not give a corrupt record again',
        );
      }
    }
    if (merged > 0) {
      this.totals.restored++;
      this.deps.log.warn(
        { key: showKey(key), from: merged },
        'a record corrupt on disk was restored from its replicas',
      );
      return true;
    }
    this.totals.unrestored++;
    this.deps.log.error(
      { key: showKey(key) },
      'a record corrupt on disk could not be restored: no other replica gave it; a read or repair of the key will, once one can',
    );
    return false;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    t.unref?.();
    signal.addEventListener('abort', done, { once: true });
  });
}
