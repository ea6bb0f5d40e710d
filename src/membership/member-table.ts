/**
 * The member table: the state held of each member, ourselves included, and what the
 * gossiper reads it by, kept current on every write. A member's heartbeat lives in a flat
 * array by slot, moved in place (no new state per heartbeat, a thousand a round at 1,000
 * members), so a stored entry's `heartbeat` (and `version`) may lag it; `fresh` brings an
 * entry up to date when it is read whole. Beside them: each member's field version, the
 * table and roster hashes delta gossip compares (delta.ts), the roster's order, and how
 * far we hold every field of each member (`complete`).
 *
 * Owns: the table (the gossiper its one writer) and that bookkeeping. Must not: decide
 * what to send or to whom, judge who is up (the gossiper does), do I/O or read clocks.
 */

import { deltaOf, field, fieldVersionOf, withHeartbeat, type Delta, type EndpointState } from './endpoint.js';
import { HashSum, NO_HEARTBEAT, rosterKey, tableKey, writeHeartbeats } from './delta.js';

/** The `gossip` field value of a node that speaks delta gossip. */
export const DELTA = 'delta';

/** The states held of each member, with their heartbeats, hashes and roster order. */
export class MemberTable {
  /** Our own id. */
  readonly id: string;
  /** Whether we speak delta gossip. */
  readonly delta: boolean;
  /** Each member's entry, in the order first put. */
  readonly #states = new Map<string, EndpointState>();
  /** Each member's slot in #beats, given when it is first put (members are never purged). */
  readonly #slots = new Map<string, number>();
  /** The heartbeat of each member by slot: never behind its #states entry's. */
  #beats = new Float64Array(64);
  /** Member ids sorted: the roster's order (undefined: to sort again). */
  #order: string[] | undefined;
  /** The slot of each member in roster order (with #order). */
  #orderSlots: Int32Array | undefined;
  readonly #tableSum = new HashSum();
  readonly #rosterSum = new HashSum();
  /** Each member's field version (fieldVersionOf), kept by put. */
  readonly #fieldVersions = new Map<string, number>();
  /**
   * Delta gossip only: for each member, a version up to which we hold every field of its
   * generation counting heartbeats as full Scuttlebutt does (at least its field version;
   * see `complete`). Heartbeats from vectors and digests move past it without the fields
   * between, so it is what we may claim to a peer on full Scuttlebutt.
   */
  readonly #whole = new Map<string, number>();
  /** Members that speak delta gossip (their `gossip` field names it), kept by put. */
  readonly #speaksDelta = new Set<string>();

  /** An empty table for node `id`, which speaks delta gossip when `delta`. */
  constructor(id: string, delta: boolean) {
    this.id = id;
    this.delta = delta;
  }

  /** Members held, ourselves included. */
  get size(): number {
    return this.#states.size;
  }

  /** Our own entry: never stale, as our heartbeat moves only by `setOwn`. */
  get self(): EndpointState {
    return this.#states.get(this.id)!;
  }

  /** Member `id`'s entry as stored (its heartbeat may lag `beatOf(id)`). */
  entry(id: string): EndpointState | undefined {
    return this.#states.get(id);
  }

  /** Every entry as stored, in the order first put. */
  entries(): IterableIterator<EndpointState> {
    return this.#states.values();
  }

  /** Entry `s` with its heartbeat brought up to date (stored back, so made once per heartbeat read). */
  fresh(s: EndpointState): EndpointState {
    const heartbeat = this.#beats[this.#slots.get(s.id)!]!;
    if (heartbeat <= s.heartbeat) return s;
    const now = withHeartbeat(s, heartbeat);
    this.#states.set(s.id, now);
    return now;
  }

  /** Store a state, keeping the table and roster hashes current. */
  put(next: EndpointState): void {
    const prev = this.#states.get(next.id);
    this.#states.set(next.id, next);
    let slot = this.#slots.get(next.id);
    if (slot === undefined) {
      slot = this.#slots.size;
      this.#slots.set(next.id, slot);
      if (slot === this.#beats.length) {
        const grown = new Float64Array(2 * slot);
        grown.set(this.#beats);
        this.#beats = grown;
      }
    }
    // A new generation starts its heartbeats anew; the same one never moves them back.
    const beats = this.#beats;
    beats[slot] =
      prev === undefined || prev.generation !== next.generation
        ? next.heartbeat
        : Math.max(beats[slot]!, next.heartbeat);
    if (prev !== undefined && prev.generation === next.generation && prev.fields === next.fields) return;
    if (prev === undefined) this.#order = undefined;
    else this.#tableSum.add(tableKey(prev.id, prev.generation, this.#fieldVersions.get(prev.id)!), -1);
    const fv = fieldVersionOf(next);
    this.#fieldVersions.set(next.id, fv);
    if (field(next, 'gossip')?.split(',').includes(DELTA)) this.#speaksDelta.add(next.id);
    else this.#speaksDelta.delete(next.id);
    this.#tableSum.add(tableKey(next.id, next.generation, fv), 1);
    if (prev === undefined || prev.generation !== next.generation) {
      this.#whole.delete(next.id);
      if (prev !== undefined) this.#rosterSum.add(rosterKey(prev.id, prev.generation), -1);
      this.#rosterSum.add(rosterKey(next.id, next.generation), 1);
    }
  }

  /** Store our own state after a heartbeat of ours (its fields as they were). */
  setOwn(s: EndpointState): void {
    this.#states.set(this.id, s);
    this.#beats[this.#slots.get(this.id)!] = s.heartbeat;
  }

  /** Member `id`'s heartbeat (its stored entry's may lag it). */
  beatOf(id: string): number {
    return this.#beats[this.#slots.get(id)!]!;
  }

  /** Member `id`'s field version: its version, heartbeats left out. */
  fieldVersion(id: string): number {
    return this.#fieldVersions.get(id)!;
  }

  /** Whether member `id` speaks delta gossip. */
  speaksDelta(id: string): boolean {
    return this.#speaksDelta.has(id);
  }

  /** The table hash, 16 hex digits: members, generations and field versions. */
  tableHash(): string {
    return this.#tableSum.hex();
  }

  /** The roster hash, 16 hex digits: members and generations. */
  rosterHash(): string {
    return this.#rosterSum.hex();
  }

  /**
   * The version up to which we hold every field of `s`, heartbeats counted as full
   * Scuttlebutt counts them: what a digest or request on full Scuttlebutt may report, and
   * the most a partial delta may start after. On full Scuttlebutt it is the state's
   * version. In delta gossip a heartbeat from a vector or a digest moves a state's version
   * without the fields before it, so it is #whole (at least the field version): claiming
   * the heartbeat instead would tell an older peer we hold fields of `s` we lack, and that
   * peer would never ask for them again (a mixed cluster, as in a rolling upgrade, would
   * keep an old field for ever).
   */
  complete(s: EndpointState): number {
    if (!this.delta) return this.fresh(s).version;
    if (s.id === this.id) return this.self.version;
    return Math.max(this.#whole.get(s.id) ?? 0, this.#fieldVersions.get(s.id)!);
  }

  /**
   * Delta `d`, taken from its member or a peer on full Scuttlebutt, shows we hold every
   * field of its member up to its heartbeat and its fields' versions: raise #whole so.
   */
  holdWhole(d: Delta): void {
    let whole = Math.max(this.#whole.get(d.id) ?? 0, d.heartbeat);
    for (const f of d.fields) if (f.version > whole) whole = f.version;
    this.#whole.set(d.id, whole);
  }

  /**
   * What of `s` past `seen` to send to peer `to`: to a peer we do not know to speak delta
   * gossip, with a heartbeat no later than `complete`, as full Scuttlebutt reads a
   * heartbeat as the version up to which the sender holds every field.
   */
  deltaTo(to: string, s: EndpointState, seen: number): Delta {
    const d = deltaOf(this.fresh(s), seen);
    if (!this.delta || this.#speaksDelta.has(to)) return d;
    const complete = this.complete(s);
    return d.heartbeat > complete ? { ...d, heartbeat: complete } : d;
  }

  /** Our heartbeats in roster order. */
  heartbeatVector(): Uint8Array {
    const order = this.#rosterOrder();
    return writeHeartbeats(this.#beats, order.length, this.#orderSlots);
  }

  /**
   * A peer's heartbeat vector over the same roster as ours: take each newer heartbeat of
   * another member, in place, and call `moved` with its id (no state made per heartbeat).
   */
  mergeHeartbeats(bytes: Uint8Array, moved: (id: string) => void): void {
    const order = this.#rosterOrder();
    const slots = this.#orderSlots!;
    if (bytes.length !== order.length * 4) return;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const beats = this.#beats;
    const self = this.#slots.get(this.id);
    for (let i = 0; i < order.length; i++) {
      const h = view.getUint32(i * 4, true);
      const slot = slots[i]!;
      if (h === NO_HEARTBEAT || h <= beats[slot]! || slot === self) continue;
      beats[slot] = h;
      moved(order[i]!);
    }
  }

  /** Take `heartbeat` for member `id` if it is held and the heartbeat newer; whether it was. */
  takeHeartbeat(id: string, heartbeat: number): boolean {
    const slot = this.#slots.get(id);
    if (slot === undefined || heartbeat <= this.#beats[slot]!) return false;
    this.#beats[slot] = heartbeat;
    return true;
  }

  /** Member ids in roster order (sorted), with #orderSlots. */
  #rosterOrder(): string[] {
    if (this.#order === undefined) {
      this.#order = [...this.#states.keys()].sort();
      this.#orderSlots = Int32Array.from(this.#order, (id) => this.#slots.get(id)!);
    }
    return this.#order;
  }
}
