/**
 * Balance metrics: each node's fair share of ownership and how far the ring is from it.
 *
 * Fair shares under zone-aware placement (placement.ts): a key's n replicas are spread
 * over the zones as evenly as the zones allow, one per zone when there are at least n
 * zones. So first the n replicas are shared among zones in proportion to zone weight,
 * no zone taking more than its node count or, with at least n zones, more than one
 * replica (water-filling); then a zone's share is split among its nodes by weight. With
 * 3 equal zones and n = 3 every zone holds exactly one replica of each key, so a node's
 * fair share is its weight's part of its zone. For n = 1 it is weight / total weight.
 * No node's share exceeds 1: a node holds at most one replica of a key.
 *
 * Must not: change the ring; used by tests, the simulator, the benchmark and the join
 * allocator (join-replicated.ts balances replicated ownership against `fairSharesOf`).
 */

import type { Ring } from './ring.js';

/** Fair share (fraction of the token space, summing to n) of every member. */
export function fairShares(ring: Ring, n = 1): Map<string, number> {
  const members = ring.members;
  const shares = fairSharesOf(
    members.map((m) => m.zone),
    members.map((m) => m.weight),
    n,
  );
  return new Map(members.map((m, v) => [m.id, shares[v]!]));
}

/**
 * The same for plain data: the fair share of node v of zone zones[v] and weight
 * weights[v] (the join allocator weighs replicated ownership against it).
 */
export function fairSharesOf(zones: readonly string[], weights: readonly number[], n = 1): Float64Array {
  const stats = new Map<string, { weight: number; nodes: number }>();
  zones.forEach((zone, v) => {
    const z = stats.get(zone) ?? { weight: 0, nodes: 0 };
    z.weight += weights[v]!;
    z.nodes += 1;
    stats.set(zone, z);
  });
  const perKeyCap = stats.size >= n ? 1 : Math.ceil(n / stats.size);
  const share = new Map<string, number>();
  let left = n;
  let open = [...stats.keys()];
  // Water-fill: give every open zone its weighted part of what is left; zones that would
  // exceed their cap get the cap and close; repeat until nobody overflows.
  for (;;) {
    const weight = open.reduce((s, z) => s + stats.get(z)!.weight, 0);
    const over = open.filter((z) => (left * stats.get(z)!.weight) / weight > Math.min(perKeyCap, stats.get(z)!.nodes));
    if (over.length === 0) {
      for (const z of open) share.set(z, (left * stats.get(z)!.weight) / weight);
      break;
    }
    for (const z of over) {
      const cap = Math.min(perKeyCap, stats.get(z)!.nodes);
      share.set(z, cap);
      left -= cap;
    }
    open = open.filter((z) => !over.includes(z));
  }
  const out = Float64Array.from(zones, (zone, v) => (share.get(zone)! * weights[v]!) / stats.get(zone)!.weight);
  // A node holds at most one replica of a key: a node whose weight would give it more
  // (n = 3, no zones, weights 2, 1, 1: 3 · 2/4 = 1.5) gets 1, and its zone's other nodes
  // share the rest by weight (water-filling again).
  for (const zone of stats.keys()) {
    for (;;) {
      let excess = 0;
      let open = 0;
      zones.forEach((z, v) => {
        if (z !== zone) return;
        if (out[v]! > 1) {
          excess += out[v]! - 1;
          out[v] = 1;
        } else if (out[v]! < 1) open += weights[v]!;
      });
      if (excess <= 1e-12 || open === 0) break;
      zones.forEach((z, v) => {
        if (z === zone && out[v]! < 1) out[v]! += (excess * weights[v]!) / open;
      });
    }
  }
  return out;
}

export interface Balance {
  /** Busiest node's ownership ÷ its fair share (1 is perfect). */
  readonly max: number;
  /** Least loaded node's ownership ÷ its fair share. */
  readonly min: number;
  /** Every node's ownership ÷ fair share. */
  readonly ratios: Map<string, number>;
}

/** How evenly the ring spreads ownership among the first n replicas. */
export function balance(ring: Ring, n = 1): Balance {
  const fair = fairShares(ring, n);
  const owned = ring.ownership(n);
  const ratios = new Map(ring.members.map((m) => [m.id, owned.get(m.id)! / fair.get(m.id)!]));
  const values = [...ratios.values()];
  return { max: Math.max(...values), min: Math.min(...values), ratios };
}
