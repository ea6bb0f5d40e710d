/**
 * Hinted handoff: versions this node keeps for a replica that was down (or failed a
 * write) go to that replica once the failure detector sees it up again, and are deleted
 * only after it took them (Dynamo §4.6; Cassandra's HintsDispatcher).
 *
 * Bounded (hint storms are a known failure of hinted handoff): one delivery run at a time; per target, batches of
 * `batchCount` hints with at most `concurrency` calls in flight; the bytes sent per
 * second stay under `bytesPerSecond` (Cassandra's default is 1,024 KiB/s). A target
 * that fails a call is left until the next run.
 *
 * Owns: when and how fast hints go out. Must not: decide who is up (membership does) or
 * what a hint holds (the store does).
 */
import { placementKey } from '../buckets/index.js';
import type { HintStore } from '../storage/index.js';
import type { Ring } from '../ring/index.js';
import { transient } from '../replication/replica-api.js';

export interface HintDeliveryOptions {
  readonly self: string;
  /** Throttle: bytes of hinted records sent per second, at most. */
  readonly bytesPerSecond: number;
  readonly batchCount?: number;
  readonly concurrency?: number;
}

export interface HintDeliveryDeps {
  readonly hints: Pick<HintStore, 'targets' | 'list' | 'remove'>;
  /** The failure detector's opinion of the target. */
  isUp(id: string): boolean;
  /** Send one hinted record to its target (a replica merge); rejects if the target did not take it. */
  send(target: string, key: Buffer, record: Buffer): Promise<unknown>;
  /**
   * Where a target's hints go instead of to it, key by key: for a node that left or was
   * removed, the key's replicas; while the ring changes, the key's future replicas when
   * the target is not one of them (a hint delivered to a node giving up the range would
   * miss its new owner). Undefined (or a key mapped to undefined): to the target itself.
   */
  redirect?(target: string): ((key: Buffer) => readonly string[] | undefined) | undefined;
  /** Keep `record` as a hint for `target` on node `holder` (a leaving node hands its hints over). */
  keepOn?(holder: string, target: string, key: Buffer, record: Buffer): Promise<unknown>;
  readonly log: {
    debug(o: object, m: string): void;
    info(o: object, m: string): void;
    warn(o: object, m: string): void;
  };
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Share of `bytesPerSecond` in force now (the governor's; default 1). */
  readonly share?: () => number;
}

export class HintDelivery {
  /** Hints handed over and deleted here. */
  delivered = 0;
  /** Delivery runs to a target cut short by a failure to reach it (its hints stay). */
  failed = 0;
  /** Hints their target refused (they stay, and do not hold up the others). */
  refused = 0;
  #running: Promise<void> | undefined;

  /** Is a delivery run going? (Background work, for the governor.) */
  get running(): boolean {
    return this.#running !== undefined;
  }

  #stopped = false;
  /** Hints refused before (target/key), so that each is warned about once. */
  readonly #refusedBefore = new Set<string>();
  readonly #now: () => number;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(
    private readonly options: HintDeliveryOptions,
    private readonly deps: HintDeliveryDeps,
  ) {
    this.#now = deps.now ?? (() => performance.now());
    this.#sleep = deps.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  /** Deliver to every target that is up now; a no-op while a run is going. */
  run(): Promise<void> {
    this.#running ??= this.#run().finally(() => (this.#running = undefined));
    return this.#running;
  }

  /** Stop after the hints in flight; waits for the run to end. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#running?.catch(() => undefined);
  }

  async #run(): Promise<void> {
    for (const target of this.deps.hints.targets().keys()) {
      if (this.#stopped) return;
      const redirect = this.deps.redirect?.(target);
      if (redirect === undefined && (target === this.options.self || !this.deps.isUp(target))) continue;
      await this.#deliverTo(target, redirect);
    }
  }

  /**
   * Hand every hint this node holds over before it leaves the cluster: to its target when
   * that is up (as a delivery), else as a hint on `holderOf(target, key)`, a live replica.
   * Resolves with how many could not be handed over (the caller tries again later).
   */
  async handOver(holderOf: (target: string, key: Buffer) => string | undefined): Promise<number> {
    let left = 0;
    for (const target of this.deps.hints.targets().keys()) {
      for await (const batch of this.deps.hints.list(target, { batchCount: 256 })) {
        for (const h of batch) {
          try {
            const up = target !== this.options.self && this.deps.isUp(target);
            const holder = up ? undefined : holderOf(target, h.key);
            if (up) await this.deps.send(target, h.key, h.record);
            else if (holder !== undefined && this.deps.keepOn) await this.deps.keepOn(holder, target, h.key, h.record);
            else {
              left++;
              continue;
            }
            await this.deps.hints.remove(target, h.key, h.record);
          } catch (e) {
            left++;
            this.deps.log.debug(
              { peer: target, err: (e as Error)?.message ?? String(e) },
              'a hint could not be handed over yet',
            );
          }
        }
      }
    }
    return left;
  }

  async #deliverTo(
    target: string,
    redirect: ((key: Buffer) => readonly string[] | undefined) | undefined,
  ): Promise<void> {
    const started = this.#now();
    let bytes = 0,
      sent = 0;
    const batchCount = this.options.batchCount ?? 256;
    const width = this.options.concurrency ?? 8;
    try {
      for await (const batch of this.deps.hints.list(target, { batchCount })) {
        for (let i = 0; i < batch.length; i += width) {
          if (this.#stopped || (redirect === undefined && !this.deps.isUp(target))) return;
          const group = batch.slice(i, i + width);
          await Promise.all(
            group.map(async (h) => {
              try {
                const to = redirect?.(h.key);
                if (to === undefined) {
                  if (!this.deps.isUp(target)) return; // this key waits for its target
                  await this.deps.send(target, h.key, h.record);
                } else {
                  // Every replica it goes to must take it (one that is down keeps the hint for a later run).
                  if (to.length === 0 || !to.every((x) => x === this.options.self || this.deps.isUp(x))) return;
                  await Promise.all(to.map((x) => this.deps.send(x, h.key, h.record)));
                }
              } catch (e) {
                if (transient(e)) throw e;
                // The target refuses this hint itself (say, the key is at its sibling cap there):
                // keep it for a later run, and do not let it hold up the hints behind it.
                this.refused++;
                // Warn once per hint, not once a second for as long as the target keeps refusing it.
                const id = `${target}/${h.key.toString('latin1')}`;
                const first = !this.#refusedBefore.has(id);
                if (first) {
                  if (this.#refusedBefore.size >= MAX_REMEMBERED) this.#refusedBefore.clear();
                  this.#refusedBefore.add(id);
                }
                const fields = { peer: target, err: (e as Error)?.message ?? String(e) };
                if (first) this.deps.log.warn(fields, 'a hint was refused by its target; kept, and retried every run');
                else this.deps.log.debug(fields, 'a hint was refused again');
                return;
              }
              // Only if unchanged since it was read: a hint that grew meanwhile goes next run.
              if (await this.deps.hints.remove(target, h.key, h.record)) this.delivered++;
            }),
          );
          sent += group.length;
          bytes += group.reduce((s, h) => s + h.record.length, 0);
          const ahead =
            (bytes / (this.options.bytesPerSecond * (this.deps.share?.() ?? 1))) * 1000 - (this.#now() - started);
          if (ahead > 0) await this.#sleep(ahead);
        }
      }
    } catch (e) {
      this.failed++;
      this.deps.log.debug(
        { peer: target, err: (e as Error)?.message ?? String(e) },
        'hint delivery stopped; retrying next run',
      );
    } finally {
      if (sent > 0)
        this.deps.log.info(
          { peer: target, hints: sent, bytes, ms: Math.round(this.#now() - started) },
          'hints delivered',
        );
    }
  }
}

/**
 * Where `target`'s hint for a key goes instead of to it (HintDeliveryDeps.redirect), key
 * by key: the key's replicas in `after` (the ring once the change in progress is done;
 * a sub-key's are its parent's, buckets/subkeys.ts) for the n of its bucket (`nOf`,
 * buckets of different n: cluster/n-classes.ts); undefined
 * (to the target itself) when the target is not `gone` and stays one of them. A key whose
 * n is unknown (its bucket not yet in this node's table) goes nowhere yet: it is kept.
 */
export function hintRoute(
  after: Ring,
  target: string,
  gone: boolean,
  nOf: (key: Buffer) => number | undefined,
): (key: Buffer) => readonly string[] | undefined {
  return (key) => {
    const n = nOf(key);
    if (n === undefined) return [];
    const to = after.preferenceList(placementKey(key), Math.min(n, after.size)); // a sub-key goes where its parent does
    return !gone && to.includes(target) ? undefined : to;
  };
}

/** Refused hints remembered for warning once; past this the memory starts over. */
const MAX_REMEMBERED = 10_000;
