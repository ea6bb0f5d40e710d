/**
 * The hint store: versions a fallback node holds for a primary that was down (sloppy
 * quorum, docs/architecture.md), kept durably until they are delivered. One hint per
 * (target node, key): a second hint for the same key merges into the first, so hints
 * for a hot key never pile up, and replay sends the key's merged versions once.
 *
 * Owns: adding (with a byte and count cap: a full store refuses with KV_HINTS_FULL, it
 * never grows without bound; hint storms are a known failure of hinted handoff), listing per target in token order,
 * and deleting once delivered — only if the hint is unchanged since it was read, so a
 * hint that grew during delivery is kept. Must not: deliver anything (handoff does).
 *
 * A hint has an age: the time it was first stored, kept in its record's deleted-at field
 * (this node's bookkeeping, which a receiver ignores; a hint is never a tombstone of this
 * store). A hint older than `clockPruneGraceMs` is dropped, not delivered, and a write
 * hinted for a key whose hint is past it replaces the old hint: a hint is the one copy
 * that can arrive after the rest of the cluster moved on, and past the grace period a key
 * may have had its tombstone purged or its clock pruned, so the stale versions would come
 * back (Cassandra's hint TTL defaults to gc_grace for the same reason). Hints stored by an
 * earlier release have no time: they are aged from when this store opened.
 *
 * A counter's hint (record format 4, counter.ts) is the join of the issuer's records
 * hinted for the key (a delta is refused: it applies only in order, and a hint is delivered
 * whenever its target is back), its time in the counter header's held-since field. Its log
 * is trimmed to LOG_MAX as every counter's is, and that loses nothing: the trim keeps the
 * greatest ops of the union (top-K), so the target ends with the same log whether it
 * merges the hint or each record one by one, trim(T ∪ trim(d1 ∪ … ∪ dk)) =
 * trim(T ∪ d1 ∪ … ∪ dk); and the voids the
 * joins infer along the way are kept whole. So a hint is bounded as any counter record
 * (entries per actor, LOG_MAX ops, voids per raced duplicate) under the same caps.
 */
import { DecodeError } from '../kinds/index.js';
import { encodeRecord, headerTime, tryDecode } from '../kinds/versions/codec.js';
import { join as joinCounters } from '../kinds/counter/counter.js';
import { encodeCounter } from '../kinds/counter/counter-record.js';
import { decodeHeld, isCounter, isJoined, joinHeld, kindOf, type Held } from './held.js';
import type { Engine, WriteOp } from './engine.js';
import { KvError, showKey } from '../kinds/kv-errors.js';
import type { KeyLocks } from './key-lock.js';
import { hintKey, hintSpan, parseHintKey, tokenHalves, userKey } from './keys.js';
import type { Key } from './keys.js';
import type { StoreSettings } from './store-options.js';
import { batches } from './scan.js';
import type { BatchLimits } from './scan.js';
import { merge, mergeLww } from '../kinds/versions/versions.js';
import { subKeyPolicy } from '../buckets/index.js';
import { reclaimable } from './ranges.js';
import type { WriteQueue } from './write-queue.js';

const timeOf = (r: Held): number | undefined => (isCounter(r) || isJoined(r) ? r.heldSince : r.deletedAt);

export interface Hint {
  readonly key: Buffer;
  /** The versions owed to the target: send them, then `remove` with these same bytes. */
  readonly record: Buffer;
}

export interface HintStats {
  readonly count: number;
  /** Hints dropped since the store opened because they were older than the grace period. */
  readonly expired: number;
  readonly bytes: number;
  readonly maxCount: number;
  readonly maxBytes: number;
}

interface Deps {
  readonly engine: Engine;
  readonly queue: WriteQueue;
  readonly locks: KeyLocks;
  readonly settings: StoreSettings;
  readonly guard: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Throws (KV_DISK_FULL) when the disk has no room for a new hint. */
  readonly room?: () => void;
  /** The node's wall clock, ms: hints that hold only expired siblings are dropped, not delivered. */
  readonly now: () => number;
}

/** Two hinted records of one kind for `key`, joined (the caller checked the kinds): a map's register last-writer-wins (buckets/subkeys.ts subKeyPolicy), as the store joins it. */
function join(key: Buffer, a: Held, b: Held): Held {
  if (isCounter(a) && isCounter(b)) return { state: joinCounters(a.state, b.state), ownerEpoch: undefined };
  if (isJoined(a) && isJoined(b)) return joinHeld(a, b);
  if ('versions' in a && 'versions' in b)
    return {
      versions: (subKeyPolicy(key) === 'lww' ? mergeLww : merge)(a.versions, b.versions),
      ownerEpoch: undefined,
      deletedAt: undefined,
    };
  throw new TypeError('a counter and versions cannot join');
}

export class HintStore {
  #count = 0;
  #expired = 0;
  /** When the store opened: the age of a hint an earlier release stored (it has no time). */
  #openedAt = 0;
  #bytes = 0;
  readonly #perTarget = new Map<string, { count: number; bytes: number }>();

  /** Told the ids hints are held for whenever that set changes (the node gossips it). */
  onTargets: ((targets: readonly string[]) => void) | undefined;

  constructor(private readonly deps: Deps) {}

  /** Count what is stored (once, at open). */
  async load(): Promise<void> {
    this.#openedAt = this.deps.now();
    for await (const batch of batches(this.deps.engine, [hintSpan()], { batchCount: 1000 })) {
      for (const [k, v] of batch) this.#account(parseHintKey(k).target, 1, k.length + v.length);
    }
  }

  #account(target: string, count: number, bytes: number): void {
    this.#count += count;
    this.#bytes += bytes;
    const t = this.#perTarget.get(target) ?? { count: 0, bytes: 0 };
    const had = t.count > 0;
    t.count += count;
    t.bytes += bytes;
    if (t.count === 0) this.#perTarget.delete(target);
    else this.#perTarget.set(target, t);
    if (had !== t.count > 0) this.onTargets?.([...this.#perTarget.keys()].sort());
  }

  /** Keep `record` (from a put or merge) for delivery to node `target`. */
  add(target: string, userKeyOrString: Key, record: Uint8Array): Promise<void> {
    return this.deps.guard(async () => {
      this.deps.room?.();
      const key = userKey(userKeyOrString, this.deps.settings.maxKeyBytes);
      let incoming: Held;
      try {
        incoming = decodeHeld(record);
      } catch (e) {
        if (!(e instanceof DecodeError)) throw e;
        throw new KvError(
          'KV_BAD_RECORD',
          `the hinted record for key ${showKey(key)} does not decode (${e.message}); it was not stored`,
        );
      }
      const [hi, lo] = tokenHalves(key);
      const hk = hintKey(target, hi, lo, key);
      await this.deps.locks.with(hk.toString('latin1'), async () => {
        const old = await this.deps.engine.get(hk);
        const now = this.deps.now();
        // A hint we wrote ourselves: if it no longer decodes, or is past the grace period, the newer versions replace it.
        let joined = incoming,
          since = now;
        if (old !== undefined) {
          let held: Held | undefined;
          try {
            held = decodeHeld(old);
          } catch (e) {
            if (!(e instanceof DecodeError)) throw e;
          }
          if (held !== undefined && kindOf(held) !== kindOf(incoming))
            throw new KvError(
              'KV_WRONG_TYPE',
              `the hint for key ${showKey(key)} holds ${kindOf(held)}, and a record of ${kindOf(incoming)} cannot join it; it was not stored. A key's type is its bucket's: one of these nodes has it wrong`,
            );
          const at = held === undefined ? now : this.#timeOf(timeOf(held));
          if (held !== undefined && !this.#tooOld(at, now)) ((joined = join(key, held, incoming)), (since = at));
        }
        // The hint keeps the time of its oldest part: that is what may be stale.
        const value = isCounter(joined)
          ? encodeCounter(joined.state, undefined, since)
          : isJoined(joined)
            ? joined.joined.encode(joined.value, since)
            : encodeRecord({ versions: joined.versions, ownerEpoch: undefined, deletedAt: since });
        if (value.length > this.deps.settings.maxRecordBytes)
          throw new KvError(
            'KV_RECORD_TOO_LARGE',
            `the hint for key ${showKey(key)} would hold ${value.length} bytes, over the limit of ${this.deps.settings.maxRecordBytes}`,
          );
        const addCount = old === undefined ? 1 : 0;
        const addBytes = value.length + (old === undefined ? hk.length : -old.length);
        const { hintMaxCount, hintMaxBytes } = this.deps.settings;
        if (this.#count + addCount > hintMaxCount || this.#bytes + addBytes > hintMaxBytes)
          throw new KvError(
            'KV_HINTS_FULL',
            `the hint store is full (${this.#count} hints, ${this.#bytes} bytes; limits ${hintMaxCount} hints, ${hintMaxBytes} bytes): ` +
              `the write was not hinted; deliver hints to nodes that are back, or raise hints.maxBytes`,
          );
        // Reserve before writing, so concurrent adds cannot all pass the check.
        this.#account(target, addCount, addBytes);
        try {
          await this.deps.queue.write([{ type: 'put', key: hk, value }]);
        } catch (e) {
          this.#account(target, -addCount, -addBytes);
          throw e;
        }
      });
    });
  }

  /** The hint held for `target` for one key, or undefined: a fallback answering a read. */
  get(target: string, userKeyOrString: Key): Promise<Buffer | undefined> {
    return this.deps.guard(async () => {
      const key = userKey(userKeyOrString, this.deps.settings.maxKeyBytes);
      const [hi, lo] = tokenHalves(key);
      return this.deps.engine.get(hintKey(target, hi, lo, key));
    });
  }

  /** A hint's time, from its record's deleted-at field; an earlier release's hint (none) is aged from the open. */
  #timeOf(at: number | undefined): number {
    return at ?? this.#openedAt;
  }

  #tooOld(at: number, now: number): boolean {
    return now - at > this.deps.settings.clockPruneGraceMs;
  }

  /**
   * The hints held for `target`, in token order, in batches. A hint whose versions have
   * all expired and may be dropped (ranges.ts `reclaimable`) is removed here instead of
   * listed: delivering it would only have the target reclaim it. So is a hint older than
   * the grace period (see above): delivering it could resurrect what the cluster forgot.
   */
  async *list(target: string, limits: BatchLimits = {}): AsyncGenerator<Hint[]> {
    for await (const batch of batches(this.deps.engine, [hintSpan(target)], limits)) {
      const hints: Hint[] = [];
      const now = this.deps.now();
      for (const [k, v] of batch) {
        const key = parseHintKey(k).key;
        if (reclaimable(v, now)) await this.remove(target, key, v);
        else if (this.#tooOld(this.#timeOf(tryDecode(headerTime, v)), now)) {
          if (await this.remove(target, key, v)) this.#expired++;
        } else hints.push({ key, record: v });
      }
      if (hints.length > 0) yield hints;
    }
  }

  /**
   * Drop a delivered hint. Only if it still holds exactly `delivered` (the bytes that were
   * sent): a hint that merged new versions since is kept for the next delivery.
   * Returns whether it was removed.
   */
  remove(target: string, userKeyOrString: Key, delivered: Uint8Array): Promise<boolean> {
    return this.deps.guard(async () => {
      const key = userKey(userKeyOrString, this.deps.settings.maxKeyBytes);
      const [hi, lo] = tokenHalves(key);
      const hk = hintKey(target, hi, lo, key);
      return this.deps.locks.with(hk.toString('latin1'), async () => {
        const now = await this.deps.engine.get(hk);
        if (now === undefined || !now.equals(delivered)) return false;
        const op: WriteOp = { type: 'del', key: hk };
        await this.deps.queue.write([op]);
        this.#account(target, -1, -(hk.length + now.length));
        return true;
      });
    });
  }

  /** Nodes that hints are held for, with how many and how many bytes. */
  targets(): Map<string, { count: number; bytes: number }> {
    return new Map([...this.#perTarget].map(([t, s]) => [t, { ...s }]));
  }

  stats(): HintStats {
    return {
      count: this.#count,
      expired: this.#expired,
      bytes: this.#bytes,
      maxCount: this.deps.settings.hintMaxCount,
      maxBytes: this.deps.settings.hintMaxBytes,
    };
  }
}
