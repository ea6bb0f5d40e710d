/**
 * Token allocation for new rings, and the helpers the allocators share.
 *
 * Owns, as pure functions of plain data (docs/architecture.md):
 * - `layoutTokens`: every node of a brand-new ring at once, on equally spaced slots
 *   (Dynamo's strategy 3: equal partitions, Q/S per node);
 * - `randomTokens`: hash-derived tokens, the classic scheme, kept to compare against;
 * - `evenTokens`, `tokenCount`, `mulberry32`.
 * A node joining an existing ring gets its tokens from join-tokens.ts; assign-tokens.ts
 * decides which allocator a member goes through.
 *
 * Must not: validate members (member.ts), or do I/O.
 */

import { tokenOf } from './hash.js';
import { RING_SIZE, compareTokens } from './tokens.js';

/** The number of tokens a node of this weight gets when `perNode` is the count for weight 1. */
export function tokenCount(weight: number, perNode: number): number {
  return Math.max(1, Math.round(weight * perNode));
}

/** `count` equally spaced tokens, the first half a slot past 0. */
export function evenTokens(count: number): bigint[] {
  const q = BigInt(count);
  const half = RING_SIZE / (2n * q);
  return Array.from({ length: count }, (_, k) => (BigInt(k) * RING_SIZE) / q + half);
}

/** Hash-derived tokens for a node: the k-th is xxh64(`${seed}/${id}#${k}`), skipping any in `taken`. */
export function randomTokens(id: string, count: number, seed: string, taken: ReadonlySet<bigint>): bigint[] {
  const out: bigint[] = [];
  const mine = new Set<bigint>();
  for (let k = 0; out.length < count; k++) {
    const t = tokenOf(`${seed}/${id}#${k}`);
    if (taken.has(t) || mine.has(t)) continue;
    mine.add(t);
    out.push(t);
  }
  return out.sort(compareTokens);
}

/** mulberry32: a small, fast, seedable PRNG; enough for shuffling slots deterministically. */
export function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A node as the allocators see it: its zone (any dense key) and its token count. */
export interface LayoutNode {
  readonly zone: string;
  readonly count: number;
}

/**
 * Tokens for a brand-new ring of `nodes` (returned per node, ascending).
 *
 * Tokens sit on Q equally spaced slots, Q = Σ counts, so primary ownership is exactly
 * count/Q for every node. Each slot belongs to a zone; a zone's slots are spread evenly
 * round the ring with a seeded jitter, so that the slot after any slot is of a random
 * zone (were zones strictly interleaved, a leaving node would hand all its primary
 * ranges to the next zone's nodes). Nodes are then dealt to slots in ring order, each
 * slot going to the zone's node that best keeps three things even: how often each node
 * follows each other node (who inherits its ranges on a leave), the same within the zone
 * (who inherits its replicas), and the length of zone ring each node gets (the sum of the
 * gaps back to the previous slot of its zone: what it replicates).
 */
export function layoutTokens(nodes: readonly LayoutNode[], seed: number): bigint[][] {
  const random = mulberry32(seed);
  const zones = [...new Set(nodes.map((n) => n.zone))];
  const zoneIdx = nodes.map((n) => zones.indexOf(n.zone));
  const zoneSlots = zones.map((_, z) => nodes.reduce((s, n, v) => s + (zoneIdx[v] === z ? n.count : 0), 0));
  const q = zoneSlots.reduce((a, b) => a + b, 0);
  // Jittered zone sequence: zone z's i-th slot at (i + u) · q / Q_z, u uniform in [0, 1).
  const placed: { at: number; z: number }[] = [];
  zoneSlots.forEach((qz, z) => {
    for (let i = 0; i < qz; i++) placed.push({ at: ((i + random()) * q) / qz, z });
  });
  placed.sort((a, b) => a.at - b.at || a.z - b.z);
  const zoneOfSlot = placed.map((p) => p.z);
  // gap[k]: slots from the previous slot of the same zone (wrapping) to slot k.
  const gap = new Float64Array(q);
  const lastSlot = zones.map(() => -1);
  for (let k = 0; k < 2 * q; k++) {
    const z = zoneOfSlot[k % q]!;
    if (k >= q) gap[k - q] = k - lastSlot[z]!;
    lastSlot[z] = k;
  }
  const n = nodes.length;
  const assigned = new Float64Array(n);
  const zoneLen = new Float64Array(n);
  const follows = new Uint32Array(n * n); // follows[a·n + b]: slots of a directly followed by b
  const followsInZone = new Uint32Array(n * n);
  const members = zones.map((_, z) => nodes.flatMap((_, v) => (zoneIdx[v] === z ? [v] : [])));
  const done = zones.map(() => 0);
  const lastOfZone = zones.map(() => -1);
  const owner = new Int32Array(q);
  let prevNode = -1;
  for (let k = 0; k < q; k++) {
    const z = zoneOfSlot[k]!;
    const meanGap = q / zoneSlots[z]!;
    const pz = lastOfZone[z]!;
    let best = -1;
    let bestScore = Infinity;
    for (const v of members[z]!) {
      const c = nodes[v]!.count;
      if (assigned[v]! >= c) continue;
      // Score (lower is better), in slot units: stay on schedule (weighted most, so that
      // no node is left with a run of slots at the end), keep v's zone length on its
      // fair course, and prefer the least-used successor pairs, never v after itself.
      const behind = (c * (done[z]! + 1)) / zoneSlots[z]! - assigned[v]!;
      let score = -2 * behind + Math.abs(zoneLen[v]! + gap[k]! - (assigned[v]! + 1) * meanGap) / meanGap;
      if (prevNode >= 0) {
        if (prevNode === v) score += 4;
        score += (follows[prevNode * n + v]! * (q - nodes[prevNode]!.count)) / (nodes[prevNode]!.count * c);
      }
      if (pz >= 0 && pz !== v) {
        const zq = zoneSlots[z]! - nodes[pz]!.count;
        score += (followsInZone[pz * n + v]! * zq) / (nodes[pz]!.count * c);
      }
      if (score < bestScore) {
        bestScore = score;
        best = v;
      }
    }
    owner[k] = best;
    assigned[best]!++;
    zoneLen[best]! += gap[k]!;
    if (prevNode >= 0) follows[prevNode * n + best]!++;
    if (pz >= 0) followsInZone[pz * n + best]!++;
    done[z]!++;
    lastOfZone[z] = best;
    prevNode = best;
  }
  members.forEach((zoneNodes, z) => evenZoneLengths(zoneNodes, nodes, zoneSlots[z]!, q, owner, gap, zoneOfSlot, z));
  const out: bigint[][] = nodes.map(() => []);
  const bq = BigInt(q);
  const half = RING_SIZE / (2n * bq);
  for (let k = 0; k < q; k++) out[owner[k]!]!.push((BigInt(k) * RING_SIZE) / bq + half);
  return out;
}

/**
 * The deal leaves small differences in zone-ring length (sums of gaps). Close them by
 * swapping single slots between the longest and the shortest node of the zone: each swap
 * moves (gap_i − gap_j) from one to the other, chosen to come closest to halving their
 * difference. Stops when no swap helps or every node is within 0.1% of its fair length.
 */
function evenZoneLengths(
  zoneNodes: readonly number[],
  nodes: readonly LayoutNode[],
  zoneSlots: number,
  q: number,
  owner: Int32Array,
  gap: Float64Array,
  zoneOfSlot: readonly number[],
  z: number,
): void {
  if (zoneNodes.length < 2) return;
  const slotsOf = new Map<number, number[]>(zoneNodes.map((v) => [v, []]));
  for (let k = 0; k < q; k++) if (zoneOfSlot[k] === z) slotsOf.get(owner[k]!)!.push(k);
  const length = new Map<number, number>();
  for (const [v, ks] of slotsOf)
    length.set(
      v,
      ks.reduce((s, k) => s + gap[k]!, 0),
    );
  const fair = (v: number) => (nodes[v]!.count * q) / zoneSlots;
  for (let iter = 0; iter < 4 * q; iter++) {
    let hi = zoneNodes[0]!;
    let lo = hi;
    for (const v of zoneNodes) {
      const e = length.get(v)! / fair(v);
      if (e > length.get(hi)! / fair(hi)) hi = v;
      if (e < length.get(lo)! / fair(lo)) lo = v;
    }
    const excess = length.get(hi)! - fair(hi);
    const deficit = fair(lo) - length.get(lo)!;
    if (Math.max(excess / fair(hi), deficit / fair(lo)) < 1e-3) return;
    const want = Math.min(excess, deficit);
    let bestI = -1;
    let bestJ = -1;
    let bestMiss = want; // a swap must leave the pair closer than doing nothing
    const his = slotsOf.get(hi)!;
    const los = slotsOf.get(lo)!;
    for (let i = 0; i < his.length; i++) {
      for (let j = 0; j < los.length; j++) {
        const d = gap[his[i]!]! - gap[los[j]!]!;
        if (d <= 0) continue;
        const miss = Math.abs(want - d);
        if (miss < bestMiss) {
          bestMiss = miss;
          bestI = i;
          bestJ = j;
        }
      }
    }
    if (bestI < 0) return;
    const ki = his[bestI]!;
    const kj = los[bestJ]!;
    const d = gap[ki]! - gap[kj]!;
    owner[ki] = lo;
    owner[kj] = hi;
    his[bestI] = kj;
    los[bestJ] = ki;
    length.set(hi, length.get(hi)! - d);
    length.set(lo, length.get(lo)! + d);
  }
}
