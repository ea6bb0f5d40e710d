/**
 * Anti-entropy repair of one token range among its replicas (Dynamo §4.7, Riak's AAE,
 * Cassandra's repair): each replica builds the range's Merkle tree from its own records
 * (storage/range-tree.ts), the repairing replica compares its tree with each other's
 * top-down, lists the keys of the leaves that differ on both sides, and exchanges only the
 * records of keys that differ, merged with the causal merge (never last-write-wins).
 *
 * Two phases, so that three replicas converge in one repair: first the repairer pulls
 * from every peer what the peer has that differs (so it holds the merge of all), then it
 * pushes to every peer the keys that differed with that peer or changed here in the first
 * phase. Bytes on the wire: the tree digests asked for (8 bytes each), the listed keys of
 * differing leaves (key + 8), and the records exchanged; not a scan of the range.
 *
 * Owns: the exchange. Must not: know the network or storage (a RepairSide does), or pick
 * ranges (the scheduler does).
 */
import { differingLeaves, type RangeTree } from '../storage/range-tree.js';
import type { TokenRange } from '../storage/keys.js';

/** A key of a differing leaf, with its entry hash (16 hex digits). */
export interface LeafEntry {
  readonly key: Buffer;
  readonly hash: string;
}

export interface RecordEntry {
  readonly key: Buffer;
  readonly record: Buffer;
}

/** One replica as the repair sees it: local (the store) or a peer (over gRPC). */
export interface RepairSide {
  readonly id: string;
  /** Digests of the nodes `indices` of `level` of this replica's tree of the session's range. */
  digests(level: number, indices: readonly number[]): Promise<readonly string[]>;
  /** Every key in these leaves of the tree, with its entry hash. */
  leafEntries(leaves: readonly number[]): Promise<readonly LeafEntry[]>;
  /** The records of these keys that this replica holds. */
  records(keys: readonly Buffer[]): Promise<readonly RecordEntry[]>;
  /** Merge records into this replica; resolves with the keys whose stored versions changed, and their new entry hashes. */
  push(records: readonly RecordEntry[]): Promise<readonly LeafEntry[]>;
}

/**
 * The peers of a repair: a session with one of them, over a range and a tree depth, and
 * the N class compared (`cls.n` 0: every key; `cls.classes`: the repairer's classes)
 * (transport/repair-wire.ts over gRPC). With `kept`, the peer answers from its tree kept
 * on write, and `digests` rejects with NotKept when it has none.
 */
export interface RepairPeers {
  side(node: string, session: string, range: TokenRange, depth: number, timeoutMs: number, cls?: { readonly n: number; readonly classes: readonly number[] }, kept?: boolean): RepairSide & { finish(complete: boolean): Promise<void> };
}

/** A peer has no kept tree of the unit (not built yet, another depth, or an older release): compare by scans instead. */
export class NotKept extends Error {
  override readonly name = 'NotKept';
}

export interface RepairStats {
  /** Leaves that differed, summed over peers. */
  leavesDiffering: number;
  /** Keys whose records were exchanged (pulled or pushed), summed over peers. */
  keysExchanged: number;
  /** Bytes on the wire: digests, listed keys, records (either direction). */
  bytes: number;
  /** Bytes of the records exchanged alone. */
  recordBytes: number;
}

/**
 * Repair `range` between `local` (whose tree is `tree`) and `peers`. Every peer must have
 * built its tree of the same range at the same depth. Resolves with what was exchanged.
 */
export async function repairRange(tree: RangeTree, local: RepairSide, peers: readonly RepairSide[]): Promise<RepairStats> {
  const stats: RepairStats = { leavesDiffering: 0, keysExchanged: 0, bytes: 0, recordBytes: 0 };
  const count = (records: readonly RecordEntry[]): void => {
    stats.keysExchanged += records.length;
    for (const r of records) (stats.bytes += r.key.length + r.record.length), (stats.recordBytes += r.record.length);
  };
  /** Per peer: the keys that differed, with the peer's entry hash (undefined: it lacks the key). */
  const differing = new Map<RepairSide, Map<string, string | undefined>>();
  /** Our entry hash of every key listed, as it is now (undefined: we lack it). */
  const ours = new Map<string, string | undefined>();
  /** Keys whose records the first phase changed here. */
  const changedHere = new Set<string>();
  // Phase 1: find what differs with each peer, and pull what the peer holds of it.
  for (const peer of peers) {
    const { leaves, digests } = await differingLeaves(tree, (level, indices) => peer.digests(level, indices));
    stats.bytes += digests * 8;
    stats.leavesDiffering += leaves.length;
    const keys = new Map<string, string | undefined>();
    differing.set(peer, keys);
    if (leaves.length === 0) continue;
    const [mine, theirs] = await Promise.all([local.leafEntries(leaves), peer.leafEntries(leaves)]);
    for (const e of theirs) stats.bytes += e.key.length + 8;
    const here = new Map(mine.map((e) => [e.key.toString('latin1'), e.hash]));
    const there = new Map(theirs.map((e) => [e.key.toString('latin1'), e.hash]));
    for (const [k, h] of here) if (!ours.has(k)) ours.set(k, h);
    for (const [k, h] of there) if (here.get(k) !== h) keys.set(k, h);
    for (const k of here.keys()) if (!there.has(k)) keys.set(k, undefined);
    const wanted = [...keys].filter(([, h]) => h !== undefined).map(([k]) => Buffer.from(k, 'latin1'));
    if (wanted.length === 0) continue;
    const pulled = await peer.records(wanted);
    count(pulled);
    for (const e of await local.push(pulled)) {
      const k = e.key.toString('latin1');
      ours.set(k, e.hash);
      changedHere.add(k);
    }
  }
  // Phase 2: each peer gets our merged record of every key where it now differs from us:
  // keys that differed with it (unless the pull left us with exactly its record), and keys
  // the first phase changed here (it held what we held before).
  for (const peer of peers) {
    const theirs = differing.get(peer)!;
    const keys = new Set<string>();
    for (const [k, h] of theirs) if (ours.get(k) !== h) keys.add(k);
    for (const k of changedHere) if (!theirs.has(k)) keys.add(k);
    if (keys.size === 0) continue;
    const records = await local.records([...keys].map((k) => Buffer.from(k, 'latin1')));
    if (records.length === 0) continue;
    count(records);
    await peer.push(records);
  }
  return stats;
}
