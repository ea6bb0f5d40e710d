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
 *
 * Must not: change the ring; used by tests, the simulator and the benchmark.
 */

import type { Ring } from './ring.js';

/** Fair share (fraction of the token space, summing to n) of every member. */
export function fairShares(ring: Ring, n = 1): Map<string, number> {
  const zones = new Map<string, { weight: number; nodes: number }>();
  for (const m of ring.members) {
    const z = zones.get(m.zone) ?? { weight: 0, nodes: 0 };
    z.weight += m.weight;
    z.nodes += 1;
    zones.set(m.zone, z);
  }
  const perKeyCap = zones.size >= n ? 1 : Math.ceil(n / zones.size);
  const share = new Map<string, number>();
  let left = n;
  let open = [...zones.keys()];
  // Water-fill: give every open zone its weighted part of what is left; zones that would
  // exceed their cap get the cap and close; repeat until nobody overflows.
  for (;;) {
    const weight = open.reduce((s, z) => s + zones.get(z)!.weight, 0);
    const over = open.filter((z) => (left * zones.get(z)!.weight) / weight > Math.min(perKeyCap, zones.get(z)!.nodes));
    if (over.length === 0) {
      for (const z of open) share.set(z, (left * zones.get(z)!.weight) / weight);
      break;
    }
    for (const z of over) {
      const cap = Math.min(perKeyCap, zones.get(z)!.nodes);
      share.set(z, cap);
      left -= cap;
    }
    open = open.filter((z) => !over.includes(z));
  }
  return new Map(ring.members.map((m) => [m.id, (share.get(m.zone)! * m.weight) / zones.get(m.zone)!.weight]));
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
