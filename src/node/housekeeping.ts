/**
 * A node's periodic chores that are not membership or replication: watching the disk (the
 * store refuses new writes while it is nearly full, and reopens after one failed), dropping tombstones
 * past their grace period once a repair confirmed every replica holds them, pruning the
 * clocks of keys whose history is as stable (docs/causality.md#bounded-clocks), reclaiming
 * expired values from the store's expiry index, and warning about peers configured with
 * another N.
 *
 * Owns: the chores' logic and logs. Must not: schedule itself (node.ts owns the timers).
 */
import type { Logger } from 'pino';
import type { DiskState, Store } from '../storage/index.js';
import type { Gossiper } from '../membership/gossiper.js';
import { field } from '../membership/endpoint.js';

/**
 * How often the node drops tombstones past their grace period (10 days), ms. Deletes leave
 * tombstones; without this they would pile up for as long as the node runs.
 */
export const PURGE_EVERY_MS = 60 * 60 * 1000;

/**
 * How often the node reclaims expired values, ms. Reads never return an expired value
 * whether or not it was reclaimed: this bounds only how long its bytes stay on disk.
 */
export const RECLAIM_EVERY_MS = 10 * 1000;

/** How often the node reads its disk's free space, ms: how soon it stops taking writes as the disk fills, and takes them again. */
export const DISK_EVERY_MS = 1000;

/** True when the disk refuses new writes: free space below the floor, or a write failed for want of it. */
export const refusingWrites = (d: DiskState | undefined): boolean => d !== undefined && (d.low || d.failed);

export interface HousekeepingDeps {
  readonly store: Store;
  readonly gossiper: Gossiper;
  /** This node's N. */
  readonly replicas: number;
  /**
   * The time as of which a repair confirmed every replica of the range holding `token`
   * holds what this node held (repair/runs.ts): tombstones older than it may go.
   */
  confirmedBefore(token: bigint): number;
  closing(): boolean;
  readonly log: Logger;
}

export class Housekeeping {
  readonly #warned = new Set<string>();
  /** The passes running now, by their failure message (one of each kind at a time). */
  readonly #running = new Set<string>();

  /** The store's disk as last checked (undefined before the first check, or for a store with no disk guard). */
  disk: DiskState | undefined;

  constructor(private readonly deps: HousekeepingDeps) {}

  /**
   * Read the disk's free space (store.checkDisk, which also reopens the store once space is
   * back after a write failed for want of it); log when it starts and stops refusing new
   * writes. True when that changed.
   */
  async checkDisk(): Promise<boolean> {
    let changed = false;
    await this.#pass('disk check failed; retrying shortly', async () => {
      const was = refusingWrites(this.disk);
      const d = (this.disk = await this.deps.store.checkDisk());
      if (d === undefined || refusingWrites(d) === was) return;
      changed = true;
      const figures = {
        component: 'storage',
        freeBytes: d.freeBytes,
        totalBytes: d.totalBytes,
        floorBytes: d.floorBytes,
      };
      if (d.failed)
        this.deps.log.error(
          figures,
          'a write failed for want of disk space: this node takes no new writes (other replicas take them) until space is back; free space on its disk (docs/operations.md#a-full-disk)',
        );
      else if (d.low)
        this.deps.log.warn(
          figures,
          'disk nearly full (free space below --min-free-disk): this node takes no new writes, other replicas take them; free space on its disk (docs/operations.md#a-full-disk)',
        );
      else this.deps.log.warn(figures, 'disk has room again: this node takes new writes');
    });
    return changed;
  }

  /**
   * Warn (once per peer and value) about a peer that places keys on a different number of
   * replicas: its coordinators would write and read other nodes than ours for some keys.
   */
  checkPeers(): void {
    for (const s of this.deps.gossiper.states()) {
      const n = field(s, 'replicas');
      if (n === undefined || n === String(this.deps.replicas) || this.#warned.has(`${s.id}=${n}`)) continue;
      this.#warned.add(`${s.id}=${n}`);
      this.deps.log.warn(
        { component: 'membership', peer: s.id, peerReplicas: Number(n), replicas: this.deps.replicas },
        'a peer uses a different number of replicas per key (--replicas): give every node the same value, or reads may miss writes',
      );
    }
  }

  /** Reclaim what has expired (store.reclaimExpired: the expiry index, oldest first, no scan of live data). */
  reclaimExpired(): Promise<void> {
    return this.#pass('reclaiming expired values failed; retrying shortly', async () => {
      const { dropped, rewritten } = await this.deps.store.reclaimExpired();
      if (dropped + rewritten > 0)
        this.deps.log.debug({ component: 'storage', dropped, rewritten }, 'expired values reclaimed');
    });
  }

  purgeTombstones(): Promise<void> {
    return this.#pass('tombstone purge failed; retrying next hour', async () => {
      const { purged, unconfirmed } = await this.deps.store.purgeTombstones({}, (t) => this.deps.confirmedBefore(t));
      if (purged > 0 || unconfirmed > 0)
        this.deps.log.info(
          { component: 'storage', purged, unconfirmed },
          unconfirmed > 0
            ? 'tombstones purged; some past their grace period wait for a repair of their range (ringkv repair)'
            : 'tombstones past their grace period, confirmed on every replica by a repair, purged',
        );
    });
  }

  /** Prune stable clocks (store.pruneClocks: its prune index, not the data), under the tombstone purge's repair gate. */
  pruneClocks(): Promise<void> {
    return this.#pass('clock prune failed; retrying next hour', async () => {
      const { pruned, unconfirmed } = await this.deps.store.pruneClocks({}, (t) => this.deps.confirmedBefore(t));
      if (pruned > 0 || unconfirmed > 0)
        this.deps.log.info(
          { component: 'storage', pruned, unconfirmed },
          unconfirmed > 0
            ? 'clocks pruned; some stable past their grace period wait for a repair of their range (ringkv repair)'
            : 'clocks of keys stable past their grace period, confirmed by a repair, pruned',
        );
    });
  }

  /** Run one store pass of a kind unless one of that kind is running or the node is closing; a failure is logged (`failed`), not thrown. */
  async #pass(failed: string, run: () => Promise<void>): Promise<void> {
    if (this.#running.has(failed) || this.deps.closing()) return;
    this.#running.add(failed);
    try {
      await run();
    } catch (e) {
      if (!this.deps.closing()) this.deps.log.warn({ component: 'storage', err: e }, failed);
    } finally {
      this.#running.delete(failed);
    }
  }
}
