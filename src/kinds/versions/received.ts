/**
 * What a replica makes of versions another replica sent for a key it holds: their join,
 * causal or last-writer-wins as the key's policy says, with the entries this replica
 * pruned from its clock left out again when the copy only brings those back. Pure: the
 * store reads the key's record, calls this, and writes what comes out.
 *
 * Owns: the rules of a received copy's merge. Must not: do I/O, or know the store's
 * indexes.
 */
import type { Actor } from '../dots.js';
import { EMPTY_VERSIONS, merge, mergeLww, prunable, reprune, type Versions } from './versions.js';

/**
 * A record's clock goes into the prune index only past this many entries: one entry per
 * replica (N = 3 by default) is what a key written through several coordinators holds,
 * and indexing it would cost every such write an index entry for nothing to gain.
 */
export const PRUNE_ABOVE_ENTRIES = 3;

/**
 * Whether the entries `incoming` brings to `old` (their join: `joined`) may be ones `old`
 * pruned, for reprune to leave out. Not when the copy holds a sibling whose dot `old`'s
 * clock lacks: that dot was issued and never reached here, so it was not pruned here,
 * even when the join drops the sibling (one write issued twice under one request id,
 * whose id a delete here retired: the dot is not in the causal past of what `old` holds,
 * which reprune's argument needs). Nor when the join's clock is within
 * PRUNE_ABOVE_ENTRIES: only a longer clock is ever pruned, and a copy from a replica that
 * has not pruned holds every entry pruned here and the rest, so its join is longer; a
 * shorter one brings such a dropped dot seen elsewhere (or another replica's kept entry),
 * which the replicas must agree on, and a clock that short is never pruned again.
 * Nor when `old` still has an entry `prune` would drop (`keep`: this node's actor for the
 * key): a pass leaves none, so `old` was not pruned since it last changed, and what the
 * copy brings is history it never had. Such a copy holds only siblings `old` holds, yet
 * its clock has more: an lww write that lost by time to a sibling both hold, or a write
 * dropped for its retired id, before the copy was sent; taken as pruned, the entry stays
 * on one replica only, and repair exchanges the key every time without a change: the
 * replicas never converge (a map's register is an lww sub-key, written concurrently).
 */
function mayHavePruned(old: Versions, incoming: Versions, joined: Versions, keep: Actor | undefined): boolean {
  if (joined.clock.size <= PRUNE_ABOVE_ENTRIES) return false;
  if (!incoming.siblings.every((s) => (old.clock.get(s.actor) ?? 0) >= s.counter)) return false;
  return prunable(old, keep).length === 0;
}

/** True when every sibling of `b` is one of `a`'s (the same dot). */
function holdsAll(a: Versions, b: Versions): boolean {
  return b.siblings.every((s) => a.siblings.some((t) => t.actor === s.actor && t.counter === s.counter));
}

/**
 * `incoming` merged into `held` (undefined: the key holds nothing here), `lww` when the
 * key is last-writer-wins, `keep` this node's actor for the key (the entry a prune keeps).
 */
export function mergeReceived(
  held: Versions | undefined,
  incoming: Versions,
  lww: boolean,
  keep: Actor | undefined,
): Versions {
  const join = lww ? mergeLww : merge;
  // An lww key's incoming versions are joined even into nothing: a sender that kept siblings (a policy not yet known there) is resolved here.
  // A copy that brings back only entries this node pruned is taken as it is here (versions.ts reprune). For an lww
  // key only when the copy holds no sibling this node does not: one that lost by time is not in the causal past of
  // the winner, so its entry is news that the replicas must agree on.
  const joined = held ? join(held, incoming) : lww ? mergeLww(EMPTY_VERSIONS, incoming) : incoming;
  // Not for a copy holding no sibling (a clock alone: every sibling expired there): its entries
  // are in the causal past of nothing it holds, so they may be history this node never saw.
  // Nor when the copy may bring entries this node never had rather than pruned (mayHavePruned).
  return held &&
    incoming.siblings.length > 0 &&
    (!lww || holdsAll(held, incoming)) &&
    mayHavePruned(held, incoming, joined, keep)
    ? reprune(held, joined, keep)
    : joined;
}
