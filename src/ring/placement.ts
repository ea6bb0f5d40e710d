/**
 * Replica placement: which N distinct physical nodes hold the keys of one token range.
 *
 * The rule (deterministic, a function of the token order and the topology only):
 * walk the tokens clockwise from the range's own token and list the distinct nodes in
 * the order they are first met. Then choose N times: take the first listed node that is
 * not chosen yet and is *acceptable*: its zone has the fewest replicas so far among the
 * zones that still have unchosen nodes, and within that zone its rack has the fewest
 * replicas so far among the racks that still have unchosen nodes.
 *
 * Consequences: the first replica is the range's owner (primary); with at least N zones
 * the N replicas are in N distinct zones; with fewer zones they are spread as evenly as
 * the zones allow, then across racks. Without zones or racks it is the plain Dynamo walk.
 * It generalizes Cassandra's NetworkTopologyStrategy rack walk (skip nodes of a rack
 * already used, then fall back to the skipped ones in order).
 *
 * Movement is minimal (adding a node moves replicas only to it, removing one only from
 * it; test/property) except, as with Cassandra's racks, when the change adds the first
 * node of a new rack to a zone that has other racks, or removes the last node of one:
 * the zone's replicas may then also shift between other nodes. Zones alone never do
 * this. Settling the zone of each pick before its rack would remove that exception but
 * break minimality for ordinary joins into existing racks: the worse trade.
 *
 * One walk for everyone: the ring's replica tables (ring.ts), the join allocator's model
 * of a newcomer's replicas (join-replicated.ts, through `walkInto`) and the leave heirs
 * (leave-heirs.ts) all place replicas with this selector.
 *
 * Must not: know about keys, hashing or member ids; it works on node indices.
 */

/** The topology the rule needs, with nodes, zones and racks as dense indices. */
export interface Topology {
  /** zoneOf[node] = zone index. */
  readonly zoneOf: Uint32Array;
  /** rackOf[node] = rack index; racks are numbered across zones (zone, rack) pairs. */
  readonly rackOf: Uint32Array;
  /** Number of nodes in each zone. */
  readonly zoneSize: Uint32Array;
  /** Number of nodes in each rack. */
  readonly rackSize: Uint32Array;
  /** racksOfZone[zone] = the rack indices in that zone. */
  readonly racksOfZone: readonly Uint32Array[];
}

/** Build a Topology from per-node zone and rack names. */
export function topologyOf(zones: readonly string[], racks: readonly string[]): Topology {
  const zoneIndex = new Map<string, number>();
  const rackIndex = new Map<string, number>();
  const zoneOf = new Uint32Array(zones.length);
  const rackOf = new Uint32Array(zones.length);
  const rackZone: number[] = [];
  for (let v = 0; v < zones.length; v++) {
    const zone = zones[v]!;
    let z = zoneIndex.get(zone);
    if (z === undefined) zoneIndex.set(zone, (z = zoneIndex.size));
    const rackKey = `${zone}\u0000${racks[v]!}`;
    let r = rackIndex.get(rackKey);
    if (r === undefined) {
      rackIndex.set(rackKey, (r = rackIndex.size));
      rackZone.push(z);
    }
    zoneOf[v] = z;
    rackOf[v] = r;
  }
  const zoneSize = new Uint32Array(zoneIndex.size);
  const rackSize = new Uint32Array(rackIndex.size);
  for (let v = 0; v < zones.length; v++) {
    zoneSize[zoneOf[v]!]!++;
    rackSize[rackOf[v]!]!++;
  }
  const racksOfZone = Array.from({ length: zoneIndex.size }, (_, z) =>
    Uint32Array.from(rackZone.flatMap((rz, r) => (rz === z ? [r] : []))),
  );
  return { zoneOf, rackOf, zoneSize, rackSize, racksOfZone };
}

/**
 * Applies the placement rule. Holds scratch buffers, so that computing the lists of
 * every range allocates only the lists themselves; not reentrant.
 */
export class ReplicaSelector {
  readonly #t: Topology;
  readonly #simple: boolean;
  readonly #seen: Uint32Array;
  #stamp = 0;
  readonly #zoneUsed: Uint32Array;
  readonly #zoneLeft: Uint32Array;
  readonly #rackUsed: Uint32Array;
  readonly #rackLeft: Uint32Array;
  readonly #skipped: number[] = [];
  readonly #scratch: number[] = [];
  /** Token positions the last select() walked, from its start: a change of owner further on cannot change its answer. */
  reach = 0;

  constructor(topology: Topology) {
    this.#t = topology;
    this.#simple = topology.zoneSize.length === 1 && topology.rackSize.length === 1;
    this.#seen = new Uint32Array(topology.zoneOf.length);
    this.#zoneUsed = new Uint32Array(topology.zoneSize.length);
    this.#zoneLeft = new Uint32Array(topology.zoneSize.length);
    this.#rackUsed = new Uint32Array(topology.rackSize.length);
    this.#rackLeft = new Uint32Array(topology.rackSize.length);
  }

  /** One zone and one rack: the rule is the plain walk (the first n distinct nodes met). */
  get simple(): boolean {
    return this.#simple;
  }

  /**
   * The n replicas (node indices, in order) of the range ending at token index `start`,
   * given the owner of every token in ring order. Requires n ≤ number of distinct nodes.
   */
  select(owner: Uint32Array, start: number, n: number): number[] {
    const chosen: number[] = [];
    this.reach = this.#walk(owner, start, n, owner.length, -1, -1, false, chosen);
    return chosen;
  }

  /**
   * The rule's walk on a ring a node may join (the join allocator models a newcomer's
   * tokens with it, join-replicated.ts): as `select`, but walking at most `steps` tokens, and
   * meeting node `extra` just before token index `before`, as a token of it placed there
   * would be (-1: nowhere). `absent`: `extra` is not on the ring walked, so it does not
   * count among the nodes its zone and rack have left (it does once met). Writes up to
   * out.length picks to `out` and returns how many; `reach` is not set.
   */
  walkInto(
    owner: Uint32Array,
    start: number,
    steps: number,
    extra: number,
    before: number,
    absent: boolean,
    out: Int32Array,
  ): number {
    const chosen = this.#scratch;
    chosen.length = 0;
    this.#walk(owner, start, out.length, steps, extra, before, absent, chosen);
    for (let k = 0; k < chosen.length; k++) out[k] = chosen[k]!;
    return chosen.length;
  }

  /** The walk behind select and walkInto: picks into `chosen`, returns the tokens walked. */
  #walk(
    owner: Uint32Array,
    start: number,
    n: number,
    steps: number,
    extra: number,
    before: number,
    absent: boolean,
    chosen: number[],
  ): number {
    const m = owner.length;
    if (++this.#stamp === 0xffffffff) {
      this.#seen.fill(0);
      this.#stamp = 1;
    }
    const stamp = this.#stamp;
    if (!this.#simple) {
      this.#zoneUsed.fill(0);
      this.#rackUsed.fill(0);
      this.#zoneLeft.set(this.#t.zoneSize);
      this.#rackLeft.set(this.#t.rackSize);
      if (absent && extra >= 0) {
        this.#zoneLeft[this.#t.zoneOf[extra]!]!--;
        this.#rackLeft[this.#t.rackOf[extra]!]!--;
      }
    }
    this.#skipped.length = 0;
    const limit = Math.min(steps, m);
    let step = 0;
    for (let i = start; step < limit && chosen.length < n; step++, i = i + 1 === m ? 0 : i + 1) {
      if (i === before) this.#meet(extra, stamp, chosen, n);
      if (chosen.length < n) this.#meet(owner[i]!, stamp, chosen, n);
    }
    // The walk is done (every node met, or `steps` taken): the rest come from the skipped ones, in order.
    this.#drainSkipped(chosen, n);
    return step;
  }

  /** The walk meets node v: taken if new and acceptable (then any skipped it lets in), else skipped. */
  #meet(v: number, stamp: number, chosen: number[], n: number): void {
    if (this.#seen[v] === stamp) return;
    this.#seen[v] = stamp;
    if (this.#simple || this.#acceptable(v)) {
      this.#choose(v, chosen);
      this.#drainSkipped(chosen, n);
    } else {
      this.#skipped.push(v);
    }
  }

  #choose(v: number, chosen: number[]): void {
    chosen.push(v);
    if (this.#simple) return;
    const z = this.#t.zoneOf[v]!;
    const r = this.#t.rackOf[v]!;
    this.#zoneUsed[z]!++;
    this.#zoneLeft[z]!--;
    this.#rackUsed[r]!++;
    this.#rackLeft[r]!--;
  }

  /** After a choice the rule may accept a node skipped earlier: take those first. */
  #drainSkipped(chosen: number[], n: number): void {
    const skipped = this.#skipped;
    let again = true;
    while (again && chosen.length < n) {
      again = false;
      for (let k = 0; k < skipped.length; k++) {
        const v = skipped[k]!;
        if (this.#acceptable(v)) {
          skipped.splice(k, 1);
          this.#choose(v, chosen);
          again = true;
          break;
        }
      }
    }
  }

  #acceptable(v: number): boolean {
    const t = this.#t;
    const z = t.zoneOf[v]!;
    const level = this.#zoneUsed[z]!;
    for (let y = 0; y < this.#zoneUsed.length; y++) {
      if (this.#zoneLeft[y]! > 0 && this.#zoneUsed[y]! < level) return false;
    }
    const r = t.rackOf[v]!;
    const rackLevel = this.#rackUsed[r]!;
    for (const s of t.racksOfZone[z]!) {
      if (this.#rackLeft[s]! > 0 && this.#rackUsed[s]! < rackLevel) return false;
    }
    return true;
  }
}
