/**
 * What a removal repairs before it ends: the (range, N class) units whose copies the dead
 * node D took with it. The heirs' pulls put D's ranges back on N nodes, but (a) a write
 * that reached D and one other replica only is on the heir and that replica, not on the
 * third, and (b) a write acknowledged through D as a sloppy-quorum fallback (its hint
 * counted toward W, ring/fallbacks.ts) may be on one node only once D is gone. Repairing
 * these units among their replicas on the ring after the removal restores N copies
 * without waiting for background repair.
 *
 * The units, over the ring after the removal (`after`; D's tokens gone to its heirs):
 *  1. every unit D replicated on the ring before (`before`);
 *  2. every unit for which D could have been a fallback with only primaries down: D is
 *     among the first n nodes of the range's clockwise walk that are not its primaries,
 *     or among the first k of them in its zone, k its zone's primaries (fallbacks.ts
 *     prefers the down primary's zone). Deeper fallbacks (when nearer nodes were down
 *     too) are covered by 3 alone;
 *  3. every unit replicated by a node named in D's last gossiped `hinted` field (whom D
 *     held hints for): gossip lags, so 2 covers the hints of D's last seconds.
 * Units are per N class in use (n-classes.ts), as repair/runs.ts's repairUnits are; with
 * one class a unit has no `n` (every key).
 *
 * Owns: the choice of units and their keys. Must not: repair anything, read a clock, or
 * know who is up (the node skips a unit with a replica down).
 */
import { tokenHex, type RangeUnit, type Ring } from '../ring/index.js';

/**
 * Could `dead` have stood in, as a fallback, for a down primary of the range `i` (index
 * in `ring.tokens`) with `primaries`? It walks clockwise over the tokens' owners (Ring's
 * `walk`, which fallbacks are taken from) only as far as the answer needs.
 */
function couldStandIn(
  ring: Ring,
  owners: readonly string[],
  i: number,
  primaries: readonly string[],
  dead: string,
): boolean {
  const zone = (id: string): string => ring.member(id)!.zone;
  const deadZone = zone(dead);
  // A down primary takes the first node of its zone not yet taken, else the first not taken:
  // so at most as many of a zone as it has primaries, and at most n in all.
  let sameZone = primaries.filter((p) => zone(p) === deadZone).length;
  let any = primaries.length;
  const seen = new Set<string>(primaries);
  for (let s = 0; s < owners.length && seen.size < ring.size && (any > 0 || sameZone > 0); s++) {
    const id = owners[(i + s) % owners.length]!;
    if (seen.has(id)) continue;
    seen.add(id);
    if (id === dead) return true;
    any--;
    if (zone(id) === deadZone) sameZone--;
  }
  return false;
}

/** The owner of each token of `ring`, in token order. */
function tokenOwners(ring: Ring): string[] {
  const byToken = new Map<bigint, string>();
  for (const m of ring.members) for (const t of m.tokens) byToken.set(t, m.id);
  return ring.tokens.map((t) => byToken.get(t)!);
}

/**
 * The units a removal of `dead` repairs (see the header), in the order of `classes`
 * (ascending) then tokens. `before` holds `dead`; `after` is the ring once it is removed
 * (RingView's `target`); `hinted` are the ids of D's `hinted` field.
 */
export function removalRepairUnits(
  rings: { readonly before: Ring; readonly after: Ring | undefined },
  dead: string,
  hinted: readonly string[],
  classes: readonly number[],
): RangeUnit[] {
  const { before, after } = rings;
  if (after === undefined || !before.has(dead)) return [];
  const targets = new Set(hinted.filter((x) => x !== dead && after.has(x)));
  const out: RangeUnit[] = [];
  let owners: string[] | undefined;
  for (const n of classes) {
    const nBefore = Math.min(n, before.size);
    const nAfter = Math.min(n, after.size);
    // The ranges of `after` that hold a range of `before` D replicated or could stand in for.
    const wanted = new Set<bigint>();
    owners ??= tokenOwners(before);
    for (const [i, r] of before.ranges(nBefore).entries()) {
      if (r.replicas.includes(dead) || couldStandIn(before, owners, i, r.replicas, dead))
        wanted.add(after.rangeOf(r.end).end);
    }
    for (const r of after.ranges(nAfter)) {
      if (wanted.has(r.end) || r.replicas.some((x) => targets.has(x)))
        out.push({ start: r.start, end: r.end, replicas: r.replicas, ...(classes.length > 1 ? { n } : {}) });
    }
  }
  return out;
}

/**
 * Why node `self` refuses to repair `unit` for a removal's driver (Control RepairRange),
 * its ring being `ring` (the ring once the removal is done, as the driver's units are) and
 * the unit's class having `n` replicas; undefined when it may. The unit must be a range of
 * this ring, this node one of its replicas, and the replicas the driver named this ring's.
 */
export function unitRefusal(
  ring: Ring | undefined,
  self: string,
  unit: { readonly start: bigint; readonly end: bigint; readonly replicas: readonly string[] },
  n: number,
): string | undefined {
  const range = `(${tokenHex(unit.start)}, ${tokenHex(unit.end)}]`;
  if (ring === undefined || !ring.has(self)) return `${self} owns no ranges: it cannot repair ${range}`;
  const r = ring.rangeOf(unit.end);
  if (r.start !== unit.start || r.end !== unit.end)
    return `${range} is not a range of ${self}'s ring: the rings differ; retry once gossip settles`;
  const replicas = ring.replicasForToken(unit.end, Math.min(n, ring.size));
  if (!replicas.includes(self)) return `${self} is not a replica of ${range} (its replicas: ${replicas.join(', ')})`;
  if (replicas.length !== unit.replicas.length || !replicas.every((x) => unit.replicas.includes(x)))
    return `the replicas of ${range} differ: ${self}'s ring has ${replicas.join(', ')}, the request names ${unit.replicas.join(', ')}; retry once gossip settles`;
  return undefined;
}
