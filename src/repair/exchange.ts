/**
 * Anti-entropy repair of one token range among its replicas (Dynamo §4.7, Riak's AAE,
 * Cassandra's repair): each replica builds the range's Merkle tree from its own records
 * (storage/range-tree.ts), the repairing replica compares its tree with each other's
 * top-down, lists the keys of the leaves that differ on both sides, and exchanges only the
 * records of keys that differ, merged with the causal merge (never last-write-wins).
 *
 * Two phases, so that three replicas converge in one repair: first the repairer pulls
 * from every peer what the peer has that differs (so it holds the merge of all), then it
 * pushes to every peer the keys where the peer differs from what the repairer holds now:
 * in the leaves that differed with that peer, by the peer's listing; in a leaf that
 * differed with another peer only, nothing unless the repairer's leaf changed since its
 * tree (then the peer lists that leaf too). Bytes on the wire: the tree digests asked for
 * (8 bytes each), the listed keys of differing leaves (key + 8), and the records
 * exchanged; not a scan of the range.
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
  side(
    node: string,
    session: string,
    range: TokenRange,
    depth: number,
    timeoutMs: number,
    cls?: { readonly n: number; readonly classes: readonly number[] },
    kept?: boolean,
  ): RepairSide & { finish(complete: boolean): Promise<void> };
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

/** The sum (mod 2^64) of entry hashes, as a tree's node digest is: 16 hex digits. */
function digestOf(hashes: Iterable<string>): string {
  let sum = 0n;
  for (const h of hashes) sum += BigInt(`0x${h}`);
  return BigInt.asUintN(64, sum).toString(16).padStart(16, '0');
}

/**
 * Repair `range` between `local` (whose tree is `tree`) and `peers`. Every peer must have
 * built its tree of the same range at the same depth. Resolves with what was exchanged.
 *
 * What it guarantees: every version any replica held when it built its tree ends on
 * every replica, even when writes land on them while the exchange runs (a replica write
 * still in flight, a hint delivered, a read repair). Such a write's own copies are its
 * writer's business; what the exchange must not do is take one landing here for a reason
 * to push nothing: a peer whose tree compared equal with ours holds what our tree held,
 * so it is sent whatever we hold now that our tree did not, wherever that came from.
 */
export async function repairRange(
  tree: RangeTree,
  local: RepairSide,
  peers: readonly RepairSide[],
): Promise<RepairStats> {
  const stats: RepairStats = { leavesDiffering: 0, keysExchanged: 0, bytes: 0, recordBytes: 0 };
  const count = (records: readonly RecordEntry[]): void => {
    stats.keysExchanged += records.length;
    for (const r of records) ((stats.bytes += r.key.length + r.record.length), (stats.recordBytes += r.record.length));
  };
  /** Per peer: the leaves that differed, and every key it listed in them with its entry hash. */
  const listed = new Map<RepairSide, { leaves: readonly number[]; hashes: Map<string, string> }>();
  // Phase 1: find what differs with each peer, and pull what the peer holds of it.
  for (const peer of peers) {
    const { leaves, digests } = await differingLeaves(tree, (level, indices) => peer.digests(level, indices));
    stats.bytes += digests * 8;
    stats.leavesDiffering += leaves.length;
    const there = new Map<string, string>();
    listed.set(peer, { leaves, hashes: there });
    if (leaves.length === 0) continue;
    const [mine, theirs] = await Promise.all([local.leafEntries(leaves), peer.leafEntries(leaves)]);
    for (const e of theirs) stats.bytes += e.key.length + 8;
    const here = new Map(mine.map((e) => [e.key.toString('latin1'), e.hash]));
    for (const e of theirs) there.set(e.key.toString('latin1'), e.hash);
    const wanted = [...there].filter(([k, h]) => here.get(k) !== h).map(([k]) => Buffer.from(k, 'latin1'));
    if (wanted.length === 0) continue;
    const pulled = await peer.records(wanted);
    count(pulled);
    await local.push(pulled);
  }
  // Phase 2: each peer gets our record of every key where it differs from what we hold
  // now, in the leaves that differed with any peer (the others are the same everywhere).
  const union = [...new Set([...listed.values()].flatMap((l) => l.leaves))].sort((a, b) => a - b);
  if (union.length === 0) return stats;
  // What we hold now in those leaves, leaf by leaf: local listings, nothing on the wire. A
  // listing per leaf, so that each entry's leaf is where the store found it (the token in
  // its data key), never a token worked out again from its key.
  const now = new Map<number, Map<string, string>>(
    await Promise.all(
      union.map(
        async (leaf) =>
          [leaf, new Map((await local.leafEntries([leaf])).map((e) => [e.key.toString('latin1'), e.hash]))] as const,
      ),
    ),
  );
  // A leaf whose entries no longer add up to our tree's digest changed here since the tree
  // (the pulls above, or a write that raced them); one that still does holds what it held.
  const moved = union.filter((leaf) => digestOf(now.get(leaf)!.values()) !== tree.digest(tree.depth, leaf));
  for (const peer of peers) {
    const { leaves, hashes } = listed.get(peer)!;
    // A leaf the peer did not list held what our tree held: it differs from ours now only if
    // ours moved since, and then the peer lists it too, so that we send only what it lacks.
    const own = new Set(leaves);
    const ask = moved.filter((leaf) => !own.has(leaf));
    const theirs = new Map(hashes);
    if (ask.length > 0)
      for (const e of await peer.leafEntries(ask)) {
        stats.bytes += e.key.length + 8;
        theirs.set(e.key.toString('latin1'), e.hash);
      }
    const keys: Buffer[] = [];
    for (const leaf of [...leaves, ...ask])
      for (const [k, h] of now.get(leaf)!) if (theirs.get(k) !== h) keys.push(Buffer.from(k, 'latin1'));
    if (keys.length === 0) continue;
    const records = await local.records(keys);
    if (records.length === 0) continue;
    count(records);
    await peer.push(records);
  }
  return stats;
}
