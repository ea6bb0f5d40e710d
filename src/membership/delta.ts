/**
 * The parts of delta gossip (gossiper.ts) that are plain data structures: the additive
 * hashes a SYN compares tables and rosters by, the heartbeat vector's byte form, and the
 * queue of field changes piggybacked on SYNs (memberlist's TransmitLimitedQueue).
 *
 * A table hash is the sum mod 2^64 (two 32-bit halves) of a hash of each member's
 * (id, generation, field version): adding or replacing one member's term keeps it current
 * in O(1), and two tables with the same members at the same field versions have the same
 * hash whatever their heartbeats. The roster hash does the same over (id, generation):
 * equal rosters list the same members in the same (sorted id) order, so a heartbeat
 * vector is one u32 per member in that order.
 *
 * Owns: those hashes, the vector's layout, the queue. Must not: know the protocol's
 * messages or decide what to send to whom (the gossiper does), keep time or do I/O.
 */

import { deltaOf, type Delta, type EndpointState } from './endpoint.js';

/** A 64-bit sum as two u32 halves, kept in place. */
export class HashSum {
  lo = 0;
  hi = 0;
  add(key: string, sign: 1 | -1): void {
    this.lo = (this.lo + sign * hash32(key, 0x9747b28c)) >>> 0;
    this.hi = (this.hi + sign * hash32(key, 0x5bd1e995)) >>> 0;
  }
  /** 16 hex digits. */
  hex(): string {
    return this.hi.toString(16).padStart(8, '0') + this.lo.toString(16).padStart(8, '0');
  }
  /** The hex of this sum less one term (a node in a shadow round leaves itself out). */
  hexWithout(key: string): string {
    const h = new HashSum();
    h.lo = this.lo;
    h.hi = this.hi;
    h.add(key, -1);
    return h.hex();
  }
}

/** The term a member adds to the table hash. */
export function tableKey(id: string, generation: number, fieldVersion: number): string {
  return `${id}\n${generation}\n${fieldVersion}`;
}

/** The term a member adds to the roster hash. */
export function rosterKey(id: string, generation: number): string {
  return `${id}\n${generation}`;
}

/** Murmur3's 32-bit mix over UTF-16 code units, seeded. */
export function hash32(s: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    let k = Math.imul(s.charCodeAt(i), 0xcc9e2d51);
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    h ^= k;
    h = (Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64) | 0;
  }
  h ^= s.length;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * A heartbeat vector slot no heartbeat fills: heartbeats are versions of a per-node
 * counter that grows about once a round (2^32 rounds of 1 s are 136 years); one beyond
 * u32 is sent as this and travels in digests instead.
 */
export const NO_HEARTBEAT = 0xffffffff;

/**
 * The vector: one little-endian u32 per member, in roster order; member i's heartbeat is
 * `heartbeats[slots[i]]` (`heartbeats[i]` without `slots`).
 */
export function writeHeartbeats(
  heartbeats: readonly number[] | Float64Array,
  count: number,
  slots?: Int32Array,
): Uint8Array {
  const out = new Uint8Array(count * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < count; i++) {
    const h = heartbeats[slots === undefined ? i : slots[i]!]!;
    view.setUint32(i * 4, h < NO_HEARTBEAT ? h : NO_HEARTBEAT, true);
  }
  return out;
}

/** One member's queued news: its fields newer than `since`, for generation `generation`. */
interface Broadcast {
  readonly generation: number;
  since: number;
  sent: number;
}

/**
 * Field changes waiting to be piggybacked, one entry per member: "its fields newer than
 * `since`", read from the table when sent, so a newer change of a field replaces the
 * older one by itself (memberlist's NamedBroadcast). A receiver takes an entry only if it
 * holds every field up to `since` (see gossiper.ts), so a member's fields stay complete up
 * to its field version — the Scuttlebutt invariant digests rely on. Each entry rides on at
 * most `limit` messages, the least sent first, within a byte budget per message.
 */
export class Broadcasts {
  readonly #queue = new Map<string, Broadcast>();

  get size(): number {
    return this.#queue.size;
  }

  /** Queue the fields of (id, generation) newer than `since`; merges with what is queued. */
  enqueue(id: string, generation: number, since: number): void {
    const have = this.#queue.get(id);
    if (have !== undefined && have.generation === generation) {
      have.since = Math.min(have.since, since);
      have.sent = 0;
    } else if (have === undefined || have.generation < generation) {
      this.#queue.set(id, { generation, since, sent: 0 });
    }
  }

  /**
   * The broadcasts for one message, least sent first, within `budget` bytes (at least
   * one), each counted as sent once more; those sent `limit` times leave the queue, as do
   * those whose member `state` no longer holds at their generation.
   */
  take(limit: number, budget: number, state: (id: string) => EndpointState | undefined): Delta[] {
    if (this.#queue.size === 0) return [];
    const all = [...this.#queue];
    all.sort((a, b) => a[1].sent - b[1].sent);
    const out: Delta[] = [];
    let bytes = 0;
    for (const [id, b] of all) {
      const s = state(id);
      if (s === undefined || s.generation !== b.generation) {
        this.#queue.delete(id);
        continue;
      }
      const d = deltaOf(s, b.since);
      let size = id.length + 32;
      for (const f of d.fields) size += f.name.length + f.value.length + 16;
      if (out.length > 0 && bytes + size > budget) break;
      bytes += size;
      out.push({ ...d, since: b.since });
      if (++b.sent >= limit) this.#queue.delete(id);
    }
    return out;
  }
}

/** Messages a broadcast rides on in a cluster of `members`: mult · ceil(log2(members + 1)). */
export function retransmitLimit(mult: number, members: number): number {
  return mult * Math.max(1, Math.ceil(Math.log2(members + 1)));
}

/**
 * Rounds between full exchanges with one random peer: `base` up to 32 members, scaled by
 * ceil(log2 N − log2 32) + 1 above (memberlist's pushPullScale).
 */
export function fullExchangeRounds(base: number, members: number): number {
  if (members <= 32) return base;
  return base * (Math.ceil(Math.log2(members) - 5) + 1);
}
