/**
 * The claim functions: who gets which tokens when a ring is made, when a node joins and
 * when one leaves, for a cluster of N replicas. As in riak_core, claiming is apart from
 * the ring: these take a ring (or members), the change and N, and return tokens or heirs
 * (claimJoin, leaveHeirs) or the ring built from them (claimRing, joinRing, leaveRing).
 * The `Ring` itself only holds tokens and answers placement questions.
 *
 * N is the caller's: the node's `replicas` setting (`--replicas`). The allocators balance
 * what each node replicates among N (join-tokens.ts, leave-heirs.ts); a ring claimed for
 * one N answers lookups for any n, only less evenly for another.
 *
 * Owns: checking a claim's input (N, the joiner, the leaver) and handing it to the
 * allocators. Must not: hold allocation logic (assign-tokens.ts, join-tokens.ts,
 * leave-heirs.ts do), or do I/O. Deterministic: the same input gives the same tokens and
 * heirs on every node.
 */

import { assignTokens } from './assign-tokens.js';
import { RingError } from './ring-errors.js';
import { chooseHeirs } from './leave-heirs.js';
import { type Member, byId, normalizeMember, normalizeMembers } from './member.js';
import { type RingOptions, resolveOptions } from './ring-options.js';
import { Ring } from './ring.js';

/** Throws RING_BAD_REPLICAS unless `replicas` is an integer ≥ 1. */
function checkReplicas(replicas: number): void {
  if (!Number.isInteger(replicas) || replicas < 1) {
    throw new RingError(
      'RING_BAD_REPLICAS',
      `replicas (the cluster's N) must be an integer ≥ 1, got ${String(replicas)}`,
    );
  }
}

/**
 * A new ring of `members`, those without tokens given theirs for N = `replicas`:
 * - `allocation: 'random'`: hash-derived, each independently of the others;
 * - balanced (default), when nobody has tokens yet: all at once, laid out evenly;
 * - balanced, otherwise: one at a time in id order, each joining the members that have
 *   tokens by then, exactly as `claimJoin` would.
 * The result depends only on the members, the options and N, not on the members' order.
 */
export function claimRing(members: readonly Member[], replicas: number, options: RingOptions = {}): Ring {
  checkReplicas(replicas);
  const resolved = resolveOptions(options);
  const normalized = normalizeMembers(members);
  if (normalized.length === 0) {
    throw new RingError('RING_EMPTY', 'a ring needs at least one member; pass [{ id: "n1" }] or more');
  }
  return Ring.build(assignTokens(normalized, resolved, replicas), resolved);
}

/**
 * The tokens `member` claims joining `ring` in a cluster of N = `replicas`, with the
 * ring's options; nobody else's tokens move. A member given with tokens keeps them.
 */
export function claimJoin(ring: Ring, member: Member, replicas: number): readonly bigint[] {
  checkReplicas(replicas);
  const m = normalizeMember(member);
  if (ring.has(m.id))
    throw new RingError('RING_DUPLICATE_MEMBER', `${m.id} is already a member; remove it first to change it`);
  const joined = assignTokens([...ring.members, m].sort(byId), ring.options, replicas);
  return joined.find((x) => x.id === m.id)!.tokens;
}

/** `ring` with `member` joined, its tokens claimed for N = `replicas` (claimJoin). */
export function joinRing(ring: Ring, member: Member, replicas: number): Ring {
  return ring.withMember({ ...member, tokens: claimJoin(ring, member, replicas) });
}

/**
 * Who inherits each of `id`'s tokens when it leaves `ring` in a cluster of N =
 * `replicas`: token → heir, heirs chosen for balance (leave-heirs.ts). Every token keeps
 * its place; the data that moves is exactly what dropping the tokens would move (see
 * docs/ring.md for the guarantee and its limits). Empty when `id` is the last member.
 */
export function leaveHeirs(ring: Ring, id: string, replicas: number): Map<bigint, string> {
  checkReplicas(replicas);
  if (!ring.has(id)) throw new RingError('RING_UNKNOWN_MEMBER', `${String(id)} is not a member of this ring`);
  return ring.size === 1 ? new Map() : chooseHeirs(ring, id, replicas);
}

/** `ring` after `id` leaves, its tokens handed to heirs chosen for N = `replicas` (leaveHeirs). */
export function leaveRing(ring: Ring, id: string, replicas: number): Ring {
  return ring.withoutMember(id, leaveHeirs(ring, id, replicas));
}
