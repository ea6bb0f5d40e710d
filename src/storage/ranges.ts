/**
 * Operations on token ranges (start, end], as the ring reports ranges: what streaming,
 * cleanup after ownership moves, and Merkle-tree anti-entropy need. `store.ranges`.
 *
 * Owns: batched scans that report corrupt records instead of sending them, exact and
 * estimated sizes, order-independent range digests, and deleting a range without losing
 * a write that races the cleanup. Every scan that sends, compares or deletes keys takes an
 * optional `KeyFilter` (a user key → whether to include it): how a range is taken one N
 * class of buckets at a time (cluster/n-classes.ts). Must not: decide which ranges to move
 * (handoff does) or what a key's class is (the caller's filter does).
 */
import {
  EXTRAS_FORMAT,
  decodeRecord,
  recordFormat,
  recordIntact,
  tryDecode,
  versionBytes,
} from '../kinds/versions/codec.js';
import type { Actors } from './actors.js';
import type { Engine } from './engine.js';
import { KvError, showKey } from '../kinds/kv-errors.js';
import type { KeyLocks } from './key-lock.js';
import {
  dataKey,
  dataKeyIntact,
  dataSpans,
  expiryKey,
  tokenHalves,
  tokenOfDataKey,
  tombstoneKey,
  userKeyOf,
} from './keys.js';
import type { Span, TokenRange } from './keys.js';
import { RangeHash, entryHex } from './range-hash.js';
import { RangeTree } from './range-tree.js';
import { batches } from './scan.js';
import type { BatchLimits } from './scan.js';
import type { Logger } from './store-options.js';
import { nextExpiry, withoutExpired } from '../kinds/versions/versions.js';
import type { QueueOp, WriteQueue } from './write-queue.js';

export interface ScanEntry {
  readonly key: Buffer;
  /** The stored record: pass it to merge() on another node. */
  readonly record: Buffer;
}

/** Which user keys of a range a scan takes (undefined: all); it may throw to end the scan. */
export type KeyFilter = (key: Buffer) => boolean;

/** A page of a parent's sub-keys (Store.readRange). */
export interface RangeRead {
  /** The intact records, in key order. */
  readonly records: ScanEntry[];
  /** Keys whose records failed their checksum: reported and skipped, never returned. */
  readonly corrupt: Buffer[];
  /** The key to start the next page after (the last one read); undefined when the span is read to its end. */
  readonly next: Buffer | undefined;
}

export interface ScanBatch {
  readonly entries: ScanEntry[];
  /** Keys whose records failed their checksum: reported and skipped, never sent. */
  readonly corrupt: Buffer[];
}

interface Deps {
  readonly engine: Engine;
  readonly queue: WriteQueue;
  readonly locks: KeyLocks;
  readonly actors: Actors;
  readonly log: Logger | undefined;
  /** Told the key of each corrupt record a scan or range read skips. */
  readonly corrupt?: (key: Buffer) => void;
  /** Told each entry whose data key is damaged (`dataKeyIntact`), which every range operation skips. */
  readonly damaged?: (dk: Buffer, record: Buffer) => void;
  readonly isOpen: () => boolean;
  readonly guard: <T>(fn: () => Promise<T>) => Promise<T>;
  /** The node's wall clock, ms: what has expired. */
  readonly now: () => number;
}

/**
 * True when `record` holds only expired siblings and may be dropped whole (versions.ts
 * `withoutExpired`): a range operation treats it as already reclaimed, so streams and
 * repairs neither send it nor count it as a difference between replicas that reclaimed it
 * and replicas that have not yet. Only version 3 records can expire: the rest are not decoded.
 */
export function reclaimable(record: Buffer, now: number): boolean {
  if (recordFormat(record) !== EXTRAS_FORMAT) return false;
  const rec = tryDecode(decodeRecord, record);
  return rec !== undefined && withoutExpired(rec.versions, now) === 'drop';
}

export class Ranges {
  /** Records read by range operations (scans, trees, leaf listings, deletes): what a repair costs in reads. */
  recordsRead = 0;

  constructor(private readonly deps: Deps) {}

  /** The records of `range` in batches; `counted` false: not in recordsRead (holdsAny). */
  async *#batches(
    range: TokenRange,
    limits: BatchLimits,
    after?: Uint8Array,
    counted = true,
  ): AsyncGenerator<Array<[Buffer, Buffer]>> {
    if (!this.deps.isOpen()) throw new KvError('KV_CLOSED', 'the store is closed; open it again to use it');
    for await (const batch of batches(
      this.deps.engine,
      after === undefined ? dataSpans(range) : spansAfter(range, after),
      limits,
    )) {
      if (counted) this.recordsRead += batch.length;
      yield this.#whole(batch);
    }
  }

  /**
   * The entries whose keys are whole: one with a damaged key (a byte flipped on disk) is
   * no key's record, so no range operation sends, hashes, counts or deletes it as one; the
   * store is told (it sets the entry aside and has the kept trees rebuilt).
   */
  #whole(batch: Array<[Buffer, Buffer]>): Array<[Buffer, Buffer]> {
    let out: Array<[Buffer, Buffer]> | undefined;
    for (let i = 0; i < batch.length; i++) {
      const entry = batch[i]!;
      if (dataKeyIntact(entry[0])) {
        out?.push(entry);
        continue;
      }
      out ??= batch.slice(0, i);
      this.deps.log?.error(
        { key: showKey(userKeyOf(entry[0])) },
        "a data key damaged on disk (its token is not its key's) skipped by a range scan",
      );
      this.deps.damaged?.(entry[0], entry[1]);
    }
    return out ?? batch;
  }

  /**
   * The records of a token range (start, end], in token order, in batches; with `after`
   * (a user key the range holds), only those that come after it: how a stream resumes.
   * With `only`, the keys it takes (a batch may then hold fewer, or none).
   */
  async *scan(
    range: TokenRange,
    limits: BatchLimits = {},
    after?: Uint8Array,
    only?: KeyFilter,
  ): AsyncGenerator<ScanBatch> {
    for await (const batch of this.#batches(range, limits, after)) {
      const entries: ScanEntry[] = [],
        corrupt: Buffer[] = [];
      const now = this.deps.now();
      for (const [k, v] of batch) {
        if (reclaimable(v, now)) continue;
        const key = userKeyOf(k);
        if (only !== undefined && !only(key)) continue;
        if (recordIntact(v)) entries.push({ key, record: v });
        else {
          corrupt.push(key);
          this.deps.log?.error({ key: showKey(userKeyOf(k)) }, 'corrupt record skipped by a range scan');
          this.deps.corrupt?.(key);
        }
      }
      yield { entries, corrupt };
    }
  }

  /**
   * Up to `limit` records of one span (a parent's sub-keys: Store.readRange), and about
   * `maxBytes` (at least one record), in key order, from one snapshot. A corrupt record is
   * reported and skipped; `next` is the last key read when more follow.
   */
  async readSpan(span: Span, limit: number, maxBytes: number): Promise<RangeRead> {
    const it = this.deps.engine.iterator(span.gte, span.lt);
    const records: ScanEntry[] = [],
      corrupt: Buffer[] = [];
    let read = 0,
      bytes = 0,
      last: Buffer | undefined,
      more = false;
    try {
      // Up to one more than the page (nextv may give fewer than asked): whether the span goes on.
      for (
        let chunk = await it.nextv(limit + 1);
        chunk.length > 0 && !more;
        chunk = more ? [] : await it.nextv(limit + 1 - read)
      ) {
        for (const [k, v] of this.#whole(chunk)) {
          if (read === limit || (read > 0 && bytes + k.length + v.length > maxBytes)) {
            more = true;
            break;
          }
          read++;
          bytes += k.length + v.length;
          last = userKeyOf(k);
          if (recordIntact(v)) records.push({ key: last, record: v });
          else {
            corrupt.push(last);
            this.deps.log?.error({ key: showKey(last) }, 'corrupt record skipped by a range read');
            this.deps.corrupt?.(last);
          }
        }
      }
    } finally {
      await it.close();
    }
    this.recordsRead += read;
    return { records, corrupt, next: more ? last : undefined };
  }

  /**
   * Whether the store holds a data record that is not past its expiry (a node's `empty`
   * flag): the first record in token order. Not counted in recordsRead, which is what range
   * operations such as a repair cost, not this periodic look.
   */
  async holdsAny(): Promise<boolean> {
    for await (const batch of this.#batches({ start: 0n, end: 0n }, { batchCount: 1 }, undefined, false)) {
      const [, v] = batch[0] ?? [];
      if (v !== undefined) return !reclaimable(v, this.deps.now()); // none: a damaged key, skipped
    }
    return false;
  }

  /** Keys and their key + record bytes in a token range, counted exactly by a scan. */
  async stats(range: TokenRange): Promise<{ keys: number; bytes: number }> {
    let keys = 0,
      bytes = 0;
    for await (const batch of this.#batches(range, { batchCount: 1000, batchBytes: 1 << 24 })) {
      keys += batch.length;
      for (const [k, v] of batch) bytes += k.length + v.length;
    }
    return { keys, bytes };
  }

  /** LevelDB's estimate of the bytes a token range takes on disk: cheap, approximate. */
  async approximateBytes(range: TokenRange): Promise<number> {
    let total = 0;
    for (const s of dataSpans(range))
      total += await this.deps.guard(() => this.deps.engine.approximateSize(s.gte, s.lt));
    return total;
  }

  /**
   * A 64-bit hash of every version in a token range, for Merkle-tree anti-entropy
   * (range-hash.ts): it does not depend on write order or on this node's bookkeeping,
   * and changes when any version changes. A corrupt record contributes its raw bytes,
   * so it differs from any replica.
   */
  async hash(range: TokenRange): Promise<{ hash: string; keys: number }> {
    const digest = new RangeHash();
    const now = this.deps.now();
    for await (const batch of this.#batches(range, { batchCount: 1000, batchBytes: 1 << 24 }))
      for (const [k, v] of batch) if (!reclaimable(v, now)) digest.add(k, tryDecode(versionBytes, v) ?? v);
    return { hash: digest.hex, keys: digest.count };
  }

  /**
   * The Merkle tree of a token range at `depth` (range-tree.ts), built by one scan: what a
   * replica compares with the others'. Entries are hashed as `hash` hashes them, so the
   * root is `hash(range)`. With `only`, of the keys it takes. With `stored`, expired
   * records are hashed too, as a kept tree hashes them (kept-trees.ts).
   */
  async tree(range: TokenRange, depth: number, only?: KeyFilter, stored = false): Promise<RangeTree> {
    const tree = new RangeTree(range, depth);
    const now = this.deps.now();
    for await (const batch of this.#batches(range, { batchCount: 1000, batchBytes: 1 << 24 }))
      for (const [k, v] of batch)
        if ((stored || !reclaimable(v, now)) && (only === undefined || only(userKeyOf(k))))
          tree.add(tokenOfDataKey(k), k, tryDecode(versionBytes, v) ?? v);
    return tree;
  }

  /**
   * Every key stored in these leaves of `tree`, with its entry hash as the tree hashes it
   * (16 hex digits): what replicas compare once their trees differ in a leaf. With `only`,
   * the keys it takes (the filter the tree was built with).
   */
  async leafEntries(
    tree: RangeTree,
    leaves: readonly number[],
    only?: KeyFilter,
  ): Promise<{ key: Buffer; hash: string }[]> {
    const out: { key: Buffer; hash: string }[] = [];
    const now = this.deps.now();
    for (const leaf of leaves) {
      const range = tree.leafRange(leaf);
      if (range === undefined) continue;
      for await (const batch of this.#batches(range, { batchCount: 1000, batchBytes: 1 << 24 }))
        for (const [k, v] of batch) {
          if (reclaimable(v, now)) continue;
          const key = userKeyOf(k);
          if (only === undefined || only(key)) out.push({ key, hash: entryHex(k, tryDecode(versionBytes, v) ?? v) });
        }
    }
    return out;
  }

  /** The entry hash `leafEntries` gives a user key holding `record`. */
  entryHash(key: Buffer, record: Buffer): string {
    const [hi, lo] = tokenHalves(key);
    return entryHex(dataKey(hi, lo, key), tryDecode(versionBytes, record) ?? record);
  }

  /**
   * Delete a token range after its ownership moved away. A key written since the scan
   * saw it is kept (compare-and-delete under the key's lock), so a write that raced the
   * cleanup is never lost; it is counted in `kept`. With `only`, the keys it may delete
   * (the others stay, and are not counted).
   */
  async delete(
    range: TokenRange,
    limits: BatchLimits = {},
    only?: KeyFilter,
  ): Promise<{ deleted: number; kept: number }> {
    let deleted = 0,
      kept = 0;
    for await (const scanned of this.#batches(range, { batchCount: 256, ...limits })) {
      const batch = only === undefined ? scanned : scanned.filter(([k]) => only(userKeyOf(k)));
      if (batch.length === 0) continue;
      const keys = batch.map(([k]) => k);
      const lockKeys = keys.map((k) => k.toString('latin1'));
      for (const lk of lockKeys) {
        const wait = this.deps.locks.acquire(lk);
        if (wait) await wait;
      }
      try {
        await this.deps.guard(async () => {
          const now = await this.deps.engine.getMany(keys);
          const ops: QueueOp[] = [];
          batch.forEach(([k, v], i) => {
            if (now[i] === undefined || !now[i]!.equals(v)) return void kept++;
            ops.push({ type: 'del', key: k, prior: v });
            const rec = tryDecode(decodeRecord, v);
            if (rec?.deletedAt !== undefined) ops.push({ type: 'del', key: tombstoneKey(rec.deletedAt, k) });
            const due = rec === undefined ? undefined : nextExpiry(rec.versions);
            if (due !== undefined) ops.push({ type: 'del', key: expiryKey(due, k) });
            deleted++;
          });
          if (ops.length === 0) return;
          await this.deps.actors.retire();
          await this.deps.queue.write(ops);
        });
      } finally {
        for (const lk of lockKeys) this.deps.locks.release(lk);
      }
    }
    return { deleted, kept };
  }
}

/**
 * The spans of `range` that come after user key `after` in token order: the span that
 * holds its data key starts just past it, earlier spans are dropped. A key outside the
 * range resumes nothing: the whole range is scanned.
 */
function spansAfter(range: TokenRange, after: Uint8Array): Span[] {
  const [hi, lo] = tokenHalves(after);
  const dk = dataKey(hi, lo, after);
  const spans = dataSpans(range);
  const i = spans.findIndex((s) => Buffer.compare(s.gte, dk) <= 0 && Buffer.compare(dk, s.lt) < 0);
  if (i < 0) return spans;
  // The least key greater than dk in byte order is dk followed by a zero byte.
  return [{ gte: Buffer.concat([dk, Buffer.from([0])]), lt: spans[i]!.lt }, ...spans.slice(i + 1)];
}
