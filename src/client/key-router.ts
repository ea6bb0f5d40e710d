/**
 * Which nodes to send a key's request to: its replicas, as the ring a node reported
 * (Admin Ring and Status). Any node coordinates any key, but a replica does it with one
 * replica call fewer over the network, and no hop for its own copy (Dynamo §6.4's
 * client-driven coordination).
 *
 * Owns: the lookup. Pure: made from the replies, no I/O.
 */
import { tokenOf } from '../ring/hash.js';
import type { RingReply, StatusReply } from './admin.js';

export class KeyRouter {
  /** Range ends, ascending; range i is (ends[i-1], ends[i]], and the first wraps. */
  readonly #ends: bigint[];
  /** Per range, its replicas' addresses, primary first (members with no known address left out). */
  readonly #replicas: string[][];
  /** Addresses of members the answering node saw down. */
  readonly #down: ReadonlySet<string>;

  constructor(ring: RingReply, status: StatusReply) {
    // Members that serve requests: normal ones (a joining node refuses them).
    const address = new Map(
      status.members.filter((m) => m.status === 'normal' && m.address !== '').map((m) => [m.id, m.address]),
    );
    this.#down = new Set(status.members.filter((m) => (!m.up || m.stopping) && m.address !== '').map((m) => m.address));
    const ranges = ring.ranges
      .map((r) => ({ end: BigInt(`0x${r.end}`), replicas: r.replicas.flatMap((id) => address.get(id) ?? []) }))
      .sort((a, b) => (a.end < b.end ? -1 : a.end > b.end ? 1 : 0));
    this.#ends = ranges.map((r) => r.end);
    this.#replicas = ranges.map((r) => r.replicas);
  }

  /** True when the node the ring came from saw the member at `address` down. */
  isDown(address: string): boolean {
    return this.#down.has(address);
  }

  /** Every address the ring names. */
  addresses(): Set<string> {
    return new Set(this.#replicas.flat());
  }

  get size(): number {
    return this.#ends.length;
  }

  /** The addresses of `key`'s replicas, primary first; empty when the ring is. */
  replicasOf(key: Uint8Array): readonly string[] {
    const ends = this.#ends;
    if (ends.length === 0) return [];
    const t = tokenOf(key);
    // The first range whose end is at or past the token; past the last end, the first range.
    let lo = 0,
      hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (ends[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    return this.#replicas[lo === ends.length ? 0 : lo]!;
  }
}
