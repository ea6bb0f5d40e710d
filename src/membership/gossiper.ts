/**
 * The gossip protocol, and the up/down opinion it feeds, as a synchronous state machine: time,
 * randomness and the network are the caller's (sans-I/O). `tick(now)` runs one round and
 * returns the messages to send; `receive(now, message)` takes one message and returns the
 * replies. The node shell sends them over gRPC; test/sim delivers them on a fake network.
 *
 * One round (default every second), as Cassandra does it: a SYN with our digests to
 * random live peers (two by default, `fanout`); with probability down/(live+1) one to a node we think down (so
 * that a partition heals and a restarted node is found); and one to a seed when we know
 * no one alive or by chance, so that separately started groups find each other. The
 * peer answers an ACK with the states we lack and requests for those it lacks; we close
 * with an ACK2 (three-way Scuttlebutt reconciliation: both sides end up with the newer
 * of each entry).
 *
 * Up/down is local (liveness.ts): a peer is up once it speaks to us itself, and down
 * when the phi detector convicts it. The messages and their check are in
 * gossip-message.ts, the table and its hashes in member-table.ts, what each side of an
 * exchange sends in scuttlebutt.ts.
 *
 * Owns: the member table (one writer), the detector, peer choice, taking what peers send.
 * Must not: do I/O, read clocks, or decide ring ownership (ring-view.ts does).
 */

import {
  beat,
  checkDelta,
  deltaOf,
  field,
  fieldVersionOf,
  initialState,
  isAddress,
  mergeDelta,
  setField,
  statusOf,
  type Delta,
  type EndpointState,
} from './endpoint.js';
import { Broadcasts, fullExchangeRounds, retransmitLimit } from './delta.js';
import { checkMessage, type DeltaSyn, type Envelope, type GossipMessage, type Outbound } from './gossip-message.js';
import { DELTA, MemberTable } from './member-table.js';
import { Liveness } from './liveness.js';
import { PhiDetector, type DetectorOptions } from './phi-detector.js';
import { answerDigests, answerRequests, synDigests, type Syn } from './scuttlebutt.js';

export { MAX_ENTRIES, type DeltaSyn, type GossipMessage, type Outbound } from './gossip-message.js';

export type MembershipEvent =
  | { readonly type: 'up' | 'down' | 'discovered'; readonly id: string }
  | { readonly type: 'restarted'; readonly id: string; readonly generation: number }
  | { readonly type: 'changed'; readonly id: string; readonly fields: readonly string[] }
  | { readonly type: 'refused'; readonly from: string; readonly reason: string }
  | { readonly type: 'paused'; readonly ms: number }
  | { readonly type: 'impostor'; readonly generation: number };

export interface GossiperOptions {
  readonly id: string;
  readonly clusterName: string;
  readonly generation: number;
  /** Our initial fields; must include `addr`. */
  readonly fields: Readonly<Record<string, string>>;
  /** Seed addresses (host:port); our own address among them is skipped. */
  readonly seeds: readonly string[];
  /** Uniform in [0, 1). */
  readonly random: () => number;
  readonly now: number;
  readonly detector?: DetectorOptions;
  /**
   * Live peers to gossip with each round (default 2). Two rather than Cassandra's one:
   * a peer's heartbeats then reach each node at steadier intervals, which narrows the
   * detector's spread and so speeds up convictions (docs/node.md#gossip); memberlist
   * gossips to 3 every 200 ms.
   */
  readonly fanout?: number;
  /**
   * Start in a shadow round (Cassandra's): learn the cluster's states without making our
   * own known (our digests leave us out, so no peer asks for us). A new node uses it to
   * check that its id is not already a member's before it shows itself; `endShadow()`.
   */
  readonly shadow?: boolean;
  /**
   * States of other members from before a restart (the table the node persisted): a
   * member that is down keeps its tokens in the ring, since ownership changes only
   * through topology changes, never because a node is silent. Not marked up: a member is
   * up once it speaks to us, as any member.
   */
  readonly known?: readonly EndpointState[];
  /**
   * Speak delta gossip to peers that gossip `gossip=delta` (default true); false: full
   * Scuttlebutt only, as releases before it (the simulator's baseline and mixed clusters).
   */
  readonly delta?: boolean;
}

/** Direct SYNs a round sends to down peers others heard from, beyond the usual ones. */
const MAX_PROBES = 8;
/** Messages a broadcast rides on: BROADCAST_MULT · ceil(log2(members + 1)). */
const BROADCAST_MULT = 2;
/** Bytes of broadcasts one SYN carries at most (at least one broadcast). */
const BROADCAST_BUDGET = 16 * 1024;
/** Rounds between full exchanges with one random peer up to 32 members (scaled above). */
const FULL_EXCHANGE_ROUNDS = 30;
/** Light SYNs answered light in a row while our table hash differed: then a full exchange. */
const MAX_MISMATCHES = 10;

/** One node's side of gossip: its member table, its detector and who it thinks up. */
export class Gossiper {
  readonly id: string;
  readonly clusterName: string;
  readonly detector: PhiDetector;
  /** The member table (member-table.ts): the states, their heartbeats, hashes and roster. */
  readonly #members: MemberTable;
  /** Who we think up, and whom to probe (liveness.ts). */
  readonly #liveness: Liveness;
  readonly #seeds: readonly string[];
  readonly #random: () => number;
  #events: MembershipEvent[] = [];
  #shadow: boolean;
  readonly #fanout: number;
  #formerSelf: EndpointState | undefined;
  #revision = 0;
  /** Delta gossip (see DeltaSyn): our side of it. */
  readonly #delta: boolean;
  readonly #broadcasts = new Broadcasts();
  /** Light SYNs answered light since the last full exchange, our hash differing. */
  #mismatches = 0;
  /** Partial deltas #apply skipped (from beyond what we had seen) since this was zeroed. */
  #gaps = 0;

  /** A gossiper holding our initial state and the `known` states of others. */
  constructor(o: GossiperOptions) {
    if (!o.fields.addr || !isAddress(o.fields.addr))
      throw new RangeError(`gossiper: fields.addr must be host:port, got ${o.fields.addr}`);
    this.id = o.id;
    this.clusterName = o.clusterName;
    this.#random = o.random;
    this.detector = new PhiDetector({ ...o.detector });
    this.#delta = o.delta ?? true;
    this.#members = new MemberTable(o.id, this.#delta);
    const initial = initialState(o.id, o.generation, this.#delta ? { ...o.fields, gossip: DELTA } : o.fields);
    const why = checkDelta(deltaOf(initial, 0));
    if (why !== undefined) throw new RangeError(`gossiper: ${why}`);
    for (const k of o.known ?? []) if (k.id !== o.id && checkDelta(deltaOf(k, 0)) === undefined) this.#members.put(k);
    this.#members.put(initial);
    this.#seeds = [...new Set(o.seeds)].filter((s) => s !== o.fields.addr);
    this.#shadow = o.shadow ?? false;
    this.#fanout = o.fanout ?? 2;
    this.detector.checkLocalPause(o.now);
    this.#liveness = new Liveness(
      this.detector,
      o.now,
      (e) => this.#events.push(e),
      (id) => this.#live(this.#members.entry(id)!),
    );
  }

  /** Our own state. */
  get self(): EndpointState {
    return this.#members.self;
  }

  /** Our address (host:port). */
  get address(): string {
    return field(this.self, 'addr')!;
  }

  /**
   * Grows whenever a state is added or restarts or any field of any state changes; heartbeats
   * alone leave it as it is. Whoever derives something from the states (the ring view) can
   * skip the work while it stands still.
   */
  get revision(): number {
    return this.#revision;
  }

  /** Every state we hold, ourselves included. */
  *states(): IterableIterator<EndpointState> {
    for (const s of this.#members.entries()) yield this.#members.fresh(s);
  }

  /** The state we hold of member `id`, if any. */
  state(id: string): EndpointState | undefined {
    const s = this.#members.entry(id);
    return s === undefined ? undefined : this.#members.fresh(s);
  }

  /** Whether we are in a shadow round (see GossiperOptions.shadow). */
  get shadow(): boolean {
    return this.#shadow;
  }

  /** End the shadow round: from now on our own state is gossiped. */
  endShadow(): void {
    this.#shadow = false;
  }

  /** The state of an earlier incarnation of our id that a peer sent us, if any. */
  get formerSelf(): EndpointState | undefined {
    return this.#formerSelf;
  }

  /**
   * Since when we have thought `id` down (ms, on our clock): when we convicted it, or, for a
   * member we have not heard from since we started, when we started. Undefined when up.
   */
  downSince(id: string): number | undefined {
    if (this.isUp(id) || this.#members.entry(id) === undefined) return undefined;
    return this.#liveness.downSince(id);
  }

  /**
   * Whether gossip brought news of `id` since we started (its heartbeat or generation
   * moved past the state we started with, or it was new to us): only then are its fields
   * what it says now rather than what we remembered from before a restart (`known`).
   */
  heardSinceStart(id: string): boolean {
    return this.#liveness.heardSinceStart(id);
  }

  /** Our opinion of `id` (ourselves: always up). */
  isUp(id: string): boolean {
    return id === this.id || this.#liveness.isUp(id);
  }

  /** Set one of our own fields; peers learn it at the next exchanges. A value peers would refuse throws. */
  set(name: string, value: string): void {
    const next = setField(this.self, name, value);
    const why = checkDelta(deltaOf(next, 0));
    if (why !== undefined) throw new RangeError(`gossiper: cannot set ${why}`);
    if (next.fields === this.self.fields) return;
    this.#revision++;
    if (!this.#shadow) this.#broadcasts.enqueue(this.id, next.generation, fieldVersionOf(this.self));
    this.#members.put(next);
  }

  /** Events since the last call, oldest first. */
  takeEvents(): MembershipEvent[] {
    const e = this.#events;
    this.#events = [];
    return e;
  }

  /**
   * SYNs to every seed, every known peer and `remembered` addresses (peers the node knew
   * before a restart): a (re)started node makes itself known at once, not over rounds.
   */
  announce(remembered: readonly string[] = []): Outbound[] {
    const to = new Set([...this.#seeds, ...remembered, ...this.peerAddresses()]);
    to.delete(this.address);
    // Our state rides along: peers learn of a restart at once, even before their
    // channel back to us has reconnected.
    const own = this.#shadow ? [] : [deltaOf(this.self, 0)];
    return [...to].map((addr) => this.#syn(addr, own));
  }

  /**
   * Judge every up peer at `now` (after absorbing a stall of our own). Each round does;
   * the node also calls it between rounds so that a conviction is not up to a round late.
   */
  judge(now: number): void {
    this.#liveness.judge(now);
  }

  /** Addresses of the peers we gossip with (not ourselves, not those that left or were removed). */
  peerAddresses(): string[] {
    const out: string[] = [];
    for (const s of this.#members.entries()) {
      const addr = field(s, 'addr');
      if (s.id !== this.id && addr !== undefined && this.#reachable(s)) out.push(addr);
    }
    return out;
  }

  /** One gossip round at `now`. */
  tick(now: number): Outbound[] {
    const self = beat(this.self);
    this.#members.setOwn(self);
    this.judge(now);
    const live: string[] = [];
    const down: string[] = [];
    // Peers that speak delta gossip, when we do.
    const deltaPeers = new Set<string>();
    const delta = this.#delta && !this.#shadow;
    for (const s of this.#members.entries()) {
      if (s.id === this.id || !this.#reachable(s)) continue;
      const addr = field(s, 'addr');
      if (addr === undefined) continue;
      (this.#liveness.isUp(s.id) ? live : down).push(addr);
      if (delta && this.#members.speaksDelta(s.id)) deltaPeers.add(addr);
    }
    const out: Outbound[] = [];
    // Light SYNs of this round share one heartbeat vector.
    let light: { heartbeats: Uint8Array; tableHash: string } | undefined;
    // Now and then (once per fullExchangeRounds on average) a full exchange with one of
    // them, to repair what broadcasts missed and a table hash collision hid.
    let full = deltaPeers.size > 0 && this.#random() < 1 / fullExchangeRounds(FULL_EXCHANGE_ROUNDS, this.#members.size);
    // `fanout` distinct live peers (a partial shuffle of `live`).
    const chosen: string[] = [];
    for (let i = 0; i < Math.min(this.#fanout, live.length); i++) {
      const j = i + Math.floor(this.#random() * (live.length - i));
      [live[i], live[j]] = [live[j]!, live[i]!];
      const to = live[i]!;
      chosen.push(to);
      if (!deltaPeers.has(to)) out.push(this.#syn(to));
      else if (full) {
        full = false;
        out.push(this.#syn(to, [], 'full'));
      } else {
        light ??= { heartbeats: this.#members.heartbeatVector(), tableHash: this.#members.tableHash() };
        out.push(this.#lightSyn(to, light.heartbeats, light.tableHash));
      }
    }
    const liveTarget = chosen[0];
    // SYNs to down peers and seeds are full, so that they answer (and so show they are up).
    const fullSyn = (to: string): Outbound => this.#syn(to, [], deltaPeers.has(to) ? 'full' : 'legacy');
    if (down.length > 0 && this.#random() < down.length / (live.length + 1)) out.push(fullSyn(this.#pick(down)!));
    // Down peers others heard from: ask them ourselves (a few a round; the rest next round).
    const probes = this.#liveness.probes;
    for (const id of probes) {
      if (out.length >= this.#fanout + MAX_PROBES) break;
      probes.delete(id);
      const s = this.#members.entry(id);
      const addr = s === undefined ? undefined : field(s, 'addr');
      if (addr !== undefined && !this.#liveness.isUp(id) && this.#reachable(s!) && !out.some((o) => o.to === addr))
        out.push(fullSyn(addr));
    }
    if (this.#seeds.length > 0) {
      const seedTarget = liveTarget === undefined || !chosen.some((c) => this.#seeds.includes(c));
      if (live.length === 0 || (seedTarget && this.#random() < this.#seeds.length / (live.length + down.length + 1))) {
        const s = this.#pick(this.#seeds)!;
        if (!out.some((o) => o.to === s)) out.push(fullSyn(s));
      }
    }
    return out;
  }

  /**
   * Take one message; returns the replies. Never throws. A message from another cluster
   * or with a bad envelope is refused whole; a bad entry (digest or state) is skipped and
   * the rest taken, so that one odd state — say from a newer release during a rolling
   * upgrade — cannot cut its sender off. Each refusal is an event.
   */
  receive(now: number, input: GossipMessage): Outbound[] {
    const from = typeof input?.fromAddr === 'string' ? input.fromAddr : '?';
    const checked = checkMessage(input, this.clusterName);
    if (typeof checked === 'string') {
      this.#events.push({ type: 'refused', from, reason: checked });
      return [];
    }
    const { message: m, skipped } = checked;
    if (skipped.length > 0) {
      this.#events.push({
        type: 'refused',
        from,
        reason: `${skipped.length} entr${skipped.length === 1 ? 'y' : 'ies'} skipped: ${skipped[0]}`,
      });
    }
    const replies = this.#handle(now, m);
    // The sender spoke to us itself: it is alive. Not if a SYN shows it newer than the
    // state we hold (a restart we have not seen: our ACK asks for it, and its ACK2 makes
    // it up), or shows nothing of it (a shadow round); an ACK or ACK2 carries its state.
    const sender = this.#members.entry(m.from);
    const own =
      m.kind !== 'syn'
        ? undefined
        : m.delta !== undefined
          ? m.delta.generation
          : m.digests.find((d) => d.id === m.from)?.generation;
    const current =
      m.kind !== 'syn' || (own !== undefined && own > 0 && sender !== undefined && own <= sender.generation);
    if (m.from !== this.id && sender !== undefined && current && !this.#liveness.isUp(m.from))
      this.#liveness.arrived(m.from, now);
    return replies;
  }

  /** The replies to checked message `m`, having taken what it carries. */
  #handle(now: number, m: GossipMessage): Outbound[] {
    switch (m.kind) {
      case 'syn':
        return this.#onSyn(now, m);
      case 'ack':
        return this.#onAck(now, m);
      case 'ack2':
        this.#onAck2(now, m);
        return [];
    }
  }

  /** A SYN: take the states and broadcasts it carries; answer a light one, else an ACK to its digests. */
  #onSyn(now: number, m: Syn): Outbound[] {
    if (m.deltas !== undefined) this.#apply(now, m.deltas, m.from);
    const dx = m.delta;
    if (dx !== undefined) {
      this.#gaps = 0;
      this.#applyBroadcasts(now, dx.broadcasts, m.from);
      if (dx.tableHash !== undefined) return this.#answerLight(now, m, dx);
    }
    const { deltas, requests } = answerDigests(this.#members, m, this.#shadow, (id, heartbeat) =>
      this.#heartbeat(now, id, heartbeat, m.from),
    );
    return [{ to: m.fromAddr, message: { ...this.#envelope(), kind: 'ack', deltas, requests } }];
  }

  /**
   * A light SYN (its broadcasts taken): take its heartbeat vector over the same roster, and
   * answer with ours in an ACK2, or with a full SYN when our tables cannot converge by
   * broadcasts alone.
   */
  #answerLight(now: number, m: Syn, dx: DeltaSyn): Outbound[] {
    // In a shadow round our table leaves us out: answer in full.
    if (this.#shadow) return [this.#syn(m.fromAddr)];
    const sameRoster = dx.roster === this.#members.rosterHash();
    if (dx.heartbeats !== undefined && sameRoster) this.#mergeHeartbeats(now, dx.heartbeats, m.from);
    // Tables that differ while news is in flight (broadcasts either way) converge by
    // broadcasts; a full exchange when they cannot: rosters that differ (heartbeats
    // then travel as pairs beside the digests), a broadcast skipped for a gap, no
    // news either way, or differing for MAX_MISMATCHES light answers in a row.
    if (dx.tableHash !== this.#members.tableHash()) {
      const inFlight = dx.broadcasts.length > 0 || this.#broadcasts.size > 0;
      if (!sameRoster || this.#gaps > 0 || !inFlight || ++this.#mismatches >= MAX_MISMATCHES) {
        this.#mismatches = 0;
        return [this.#syn(m.fromAddr, [], 'full')];
      }
    }
    const delta: DeltaSyn = {
      generation: this.self.generation,
      roster: this.#members.rosterHash(),
      heartbeats: this.#members.heartbeatVector(),
      broadcasts: this.#takeBroadcasts(),
    };
    return [{ to: m.fromAddr, message: { ...this.#envelope(), kind: 'ack2', deltas: [], delta } }];
  }

  /** An ACK: take the states it carries; answer its requests in an ACK2 (none when nothing is asked that we hold). */
  #onAck(now: number, m: Extract<GossipMessage, { kind: 'ack' }>): Outbound[] {
    this.#apply(now, m.deltas, m.from);
    const deltas = answerRequests(this.#members, m.requests, m.from, this.#shadow);
    return deltas.length > 0 ? [{ to: m.fromAddr, message: { ...this.#envelope(), kind: 'ack2', deltas } }] : [];
  }

  /** An ACK2: take the states, broadcasts and heartbeat vector it carries. */
  #onAck2(now: number, m: Extract<GossipMessage, { kind: 'ack2' }>): void {
    this.#apply(now, m.deltas, m.from);
    if (m.delta !== undefined) {
      this.#applyBroadcasts(now, m.delta.broadcasts, m.from);
      if (!this.#shadow && m.delta.heartbeats !== undefined && m.delta.roster === this.#members.rosterHash())
        this.#mergeHeartbeats(now, m.delta.heartbeats, m.from);
    }
  }

  /** Take piggybacked field changes (#apply takes each only if we hold everything before it). */
  #applyBroadcasts(now: number, broadcasts: readonly Delta[], from: string): void {
    if (broadcasts.length > 0) this.#apply(now, broadcasts, from);
  }

  /**
   * Take the deltas a peer sent. A partial one (`since` > 0: the fields newer than
   * `since`) only of a member we hold at its generation and have seen up to `since`, so
   * that every state we hold has all its fields up to the version we report — the
   * invariant Scuttlebutt's digests rest on. (A late answer to a request of an earlier
   * incarnation of ours, or a broadcast that overtook an older one, is skipped; a full
   * exchange brings what it carried.)
   */
  #apply(now: number, deltas: readonly Delta[], from: string): void {
    // A delta's heartbeat tells how far its sender holds every field (see
    // MemberTable.complete) when the sender is the member itself or on full Scuttlebutt
    // (its heartbeats are versions); not from a peer on delta gossip, nor one whose
    // generation this message moves.
    const sender = this.#delta ? this.#members.entry(from) : undefined;
    const legacy =
      sender !== undefined &&
      !this.#members.speaksDelta(from) &&
      !deltas.some((d) => d.id === from && d.generation !== sender.generation);
    for (const d of deltas) {
      if (d.since !== undefined && d.since > 0 && d.id !== this.id) {
        const have = this.#members.entry(d.id);
        if (have === undefined || have.generation !== d.generation || this.#members.complete(have) < d.since) {
          this.#gaps++;
          continue;
        }
      }
      if (d.id === this.id) {
        // Someone holds a newer generation of us: another process runs under our id.
        if (d.generation > this.self.generation) this.#events.push({ type: 'impostor', generation: d.generation });
        // In a shadow round no one has seen us, so any other state of our id is an earlier
        // incarnation's (see `shadow`); its generation can equal ours if it started in the same second.
        else if (this.#shadow) this.#formerSelf = mergeDelta(this.#formerSelf, d);
        continue;
      }
      this.#merge(now, d, from, legacy);
    }
  }

  /**
   * Take delta `d` of another member, from peer `from` (`legacy`: `d`'s heartbeat shows how
   * far `from` holds every field): store the newer state, pass field news on as a
   * broadcast, and make the events and up/down opinion follow.
   */
  #merge(now: number, d: Delta, from: string, legacy: boolean): void {
    const held = this.#members.entry(d.id);
    const local = held === undefined ? undefined : this.#members.fresh(held);
    const merged = mergeDelta(local, d);
    if (merged !== local) this.#members.put(merged);
    if (this.#delta && (legacy || d.id === from) && merged.generation === d.generation) this.#members.holdWhole(d);
    if (merged === local) return;
    // News of a member's fields we pass on (a new member or generation comes whole in full exchanges).
    if (local !== undefined && merged.generation === local.generation && merged.fields !== local.fields) {
      this.#broadcasts.enqueue(d.id, merged.generation, d.since ?? fieldVersionOf(local));
    }
    const changed: string[] = [];
    if (merged.fields !== local?.fields) {
      for (const [name, f] of merged.fields) if (local?.fields.get(name) !== f) changed.push(name);
    }
    if (local === undefined || merged.generation > local.generation || merged.heartbeat > local.heartbeat)
      this.#liveness.heard(d.id);
    // Heard from the node itself, or news of a peer that is up: alive now. News of a
    // peer we think down, second-hand: probe it (liveness.ts).
    if (local === undefined) {
      this.#events.push({ type: 'discovered', id: d.id });
      this.#liveness.news(d.id, from, now);
    } else if (merged.generation > local.generation) {
      this.#events.push({ type: 'restarted', id: d.id, generation: merged.generation });
      this.detector.forget(d.id);
      this.#liveness.news(d.id, from, now);
    } else if (merged.heartbeat > local.heartbeat) {
      this.#liveness.news(d.id, from, now);
    }
    if (local === undefined || merged.generation !== local.generation || merged.fields !== local.fields)
      this.#revision++;
    if (changed.length > 0) this.#events.push({ type: 'changed', id: d.id, fields: changed });
    if (!this.#live(merged) && this.#liveness.isUp(d.id)) this.#liveness.markDown(d.id, now);
  }

  /** Nodes that left or were removed are neither judged nor gossiped to. */
  #reachable(s: EndpointState): boolean {
    const st = statusOf(s);
    return st !== 'left' && st !== 'removed';
  }

  /** Up-able: reachable, and not draining to stop (held down until its next generation). */
  #live(s: EndpointState): boolean {
    return this.#reachable(s) && field(s, 'stopping') !== 'true';
  }

  /** One of `xs` at random (one draw), or undefined when there are none (no draw). */
  #pick<T>(xs: readonly T[]): T | undefined {
    return xs.length === 0 ? undefined : xs[Math.floor(this.#random() * xs.length)];
  }

  /** The envelope of every message we send. */
  #envelope(): Envelope {
    return { cluster: this.clusterName, from: this.id, fromAddr: this.address };
  }

  /**
   * A SYN listing every digest: full Scuttlebutt ('legacy', digests' versions count
   * heartbeats), or delta gossip's full SYN ('full': field versions, heartbeats apart).
   */
  #syn(to: string, deltas: readonly Delta[] = [], mode: 'legacy' | 'full' = 'legacy'): Outbound {
    const digests = synDigests(this.#members, mode, this.#shadow);
    if (mode === 'full') {
      const delta: DeltaSyn = {
        generation: this.self.generation,
        roster: this.#members.rosterHash(),
        broadcasts: this.#takeBroadcasts(),
      };
      return { to, message: { ...this.#envelope(), kind: 'syn', digests, deltas, delta } };
    }
    return { to, message: { ...this.#envelope(), kind: 'syn', digests, deltas } };
  }

  /** A light SYN: no digests, the round's heartbeat vector and table hash, and broadcasts. */
  #lightSyn(to: string, heartbeats: Uint8Array, tableHash: string): Outbound {
    const delta: DeltaSyn = {
      generation: this.self.generation,
      roster: this.#members.rosterHash(),
      tableHash,
      heartbeats,
      broadcasts: this.#takeBroadcasts(),
    };
    return { to, message: { ...this.#envelope(), kind: 'syn', digests: [], delta } };
  }

  /** The broadcasts one SYN or ACK2 carries, within the budget, each counted as sent once more. */
  #takeBroadcasts(): Delta[] {
    return this.#broadcasts.take(retransmitLimit(BROADCAST_MULT, this.#members.size), BROADCAST_BUDGET, (id) =>
      this.state(id),
    );
  }

  /** A peer's heartbeat vector over the same roster as ours: take each newer heartbeat. */
  #mergeHeartbeats(now: number, bytes: Uint8Array, from: string): void {
    this.#members.mergeHeartbeats(bytes, (id) => this.#liveness.heartbeatMoved(id, from, now));
  }

  /** A newer heartbeat of member `id` (not us), from a digest: as #apply takes one. */
  #heartbeat(now: number, id: string, heartbeat: number, from: string): void {
    if (this.#members.takeHeartbeat(id, heartbeat)) this.#liveness.heartbeatMoved(id, from, now);
  }
}
