/**
 * Sloppy-quorum targets: the nodes a request for a key goes to when some of its
 * replicas are down (Dynamo §4.6; riak_core's annotated preference list).
 *
 * Owns: the pure rule. Every primary that is up is a target in its place; every primary
 * that is down is replaced by a fallback, annotated with the primary it stands in for
 * (where a hint for it is kept): the first node in clockwise walk order that is up and may
 * stand in (`canStandIn`: not one that is leaving the ring, whose hints would leave with
 * it), is not a primary and is not already a fallback, preferring one in the down primary's zone
 * so that the replicas stay spread over zones. When no such node is left, the down
 * primary has no target, and the caller sees fewer than n.
 *
 * Must not: decide what "up" means (the failure detector does) or talk to anyone.
 */

export interface Target {
  /** The node to send to. */
  readonly id: string;
  /** Set on a fallback: the down primary it stands in for. */
  readonly for?: string;
}

/**
 * @param primaries the key's preference list (n replicas, primary first)
 * @param walk every node in clockwise order from the key's range
 * @param zoneOf a node's zone
 * @param isUp the caller's opinion of a node
 * @param canStandIn whether an up node may be a fallback (default: every up node)
 */
export function targetsWithFallbacks(
  primaries: readonly string[],
  walk: readonly string[],
  zoneOf: (id: string) => string,
  isUp: (id: string) => boolean,
  canStandIn: (id: string) => boolean = () => true,
): Target[] {
  const taken = new Set(primaries);
  const out: Target[] = [];
  for (const p of primaries) {
    if (isUp(p)) {
      out.push({ id: p });
      continue;
    }
    let pick: string | undefined;
    let anyZone: string | undefined;
    for (const id of walk) {
      if (taken.has(id) || !isUp(id) || !canStandIn(id)) continue;
      if (zoneOf(id) === zoneOf(p)) {
        pick = id;
        break;
      }
      anyZone ??= id;
    }
    pick ??= anyZone;
    if (pick === undefined) continue;
    taken.add(pick);
    out.push({ id: pick, for: p });
  }
  return out;
}
