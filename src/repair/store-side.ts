/**
 * This node's own side of a repair (exchange.ts): its tree of the range, and its store.
 *
 * Owns: mapping RepairSide onto the store. Must not: talk to peers.
 */
import type { KeyFilter, Store } from '../storage/index.js';
import type { RangeTree } from '../storage/range-tree.js';
import type { LeafEntry, RecordEntry, RepairSide } from './exchange.js';

/**
 * `only`: the keys the tree was built of (one N class), so leaf listings take the same
 * ones, and a push writes only those (never a deleted bucket's keys: n-classes.ts).
 */
export function storeSide(id: string, store: Store, tree: RangeTree, only?: KeyFilter): RepairSide {
  return {
    id,
    digests: async (level, indices) => indices.map((i) => tree.digest(level, i)),
    leafEntries: (leaves) => store.ranges.leafEntries(tree, leaves, only),
    records: async (keys) => {
      const got = await Promise.all(keys.map((k) => store.getRecord(k)));
      const out: RecordEntry[] = [];
      got.forEach((record, i) => record !== undefined && out.push({ key: keys[i]!, record }));
      return out;
    },
    push: async (pushed) => {
      const records = only === undefined ? pushed : pushed.filter((r) => only(r.key));
      const results = await store.mergeMany(records);
      const changed: LeafEntry[] = [];
      results.forEach(
        (r, i) =>
          r.changed && changed.push({ key: records[i]!.key, hash: store.ranges.entryHash(records[i]!.key, r.record) }),
      );
      return changed;
    },
  };
}
