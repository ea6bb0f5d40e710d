/**
 * The gossip protocol and the up/down opinion, as a synchronous state machine: time,
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
 * Up/down is local: a peer is up once it speaks to us itself (any gossip message from it,
 * such as its answer to our SYN), and down when the phi detector convicts it. A newer
 * heartbeat or generation of a down peer heard from others only makes us SYN it directly
 * next round, as Cassandra confirms a peer with an echo before marking it alive: after a
 * full restart the members' persisted tables carry heartbeats of different ages, so a
 * dead node's heartbeat seems to advance for a while, and it would flap up (a cluster test
 * caught it answering as a target). For a peer that is up, every newer heartbeat,
 * first- or second-hand, feeds the detector.
 *
 * Owns: the member table (one writer), the detector, peer choice. Must not: do I/O, read
 * clocks, or decide ring ownership (ring-view.ts does).
 */

import {
  beat,
  checkDelta,
  checkDigest,
  deltaOf,
  field,
  fieldVersionOf,
  initialState,
  isAddress,
  mergeDelta,
  setField,
  statusOf,
  withHeartbeat,
  type Delta,
  type Digest,
  type EndpointState,
} from './endpoint.js';
import {
  Broadcasts,
  fullExchangeRounds,
  HashSum,
  NO_HEARTBEAT,
  retransmitLimit,
  rosterKey,
  tableKey,
  writeHeartbeats,
} from './delta.js';
import { PhiDetector, type DetectorOptions } from './phi-detector.js';

interface Envelope {
  /** Messages from another cluster name are refused. */
  readonly cluster: string;
  readonly from: string;
  /** Where to answer. */
  readonly fromAddr: string;
}
export type GossipMessage =
  | (Envelope & {
      readonly kind: 'syn';
      readonly digests: readonly Digest[];
      /** The sender's own state, whole, when it announces itself (start, restart, end of shadow). */
      readonly deltas?: readonly Delta[];
      /** Delta gossip (see DeltaSyn); absent: full Scuttlebutt, digests' versions count heartbeats. */
      readonly delta?: DeltaSyn;
    })
  | (Envelope & { readonly kind: 'ack'; readonly deltas: readonly Delta[]; readonly requests: readonly Digest[] })
  | (Envelope & {
      readonly kind: 'ack2';
      readonly deltas: readonly Delta[];
      /** The answer to a light SYN whose table hash matched: our heartbeat vector and broadcasts. */
      readonly delta?: DeltaSyn;
    });

/**
 * What a delta-gossip SYN adds. A light SYN (`tableHash` set) lists no digests: it carries
 * the sender's table hash, its heartbeats as a vector in roster order, and field changes
 * as broadcasts. The receiver, after taking the broadcasts, answers with an ACK2 carrying
 * its own vector and broadcasts when its table hash is the same (heartbeats go both ways,
 * as in a full exchange), and with a full SYN when it differs. A full SYN (no `tableHash`) lists every digest, their
 * versions being field versions and their heartbeats apart, and is answered as always.
 */
export interface DeltaSyn {
  /** The sender's generation (its digest is not in a light SYN). */
  readonly generation: number;
  /** Hash of the roster (members and generations): equal rosters order heartbeat vectors alike. */
  readonly roster: string;
  readonly tableHash?: string;
  /** One little-endian u32 heartbeat per roster member, in id order (light SYN). */
  readonly heartbeats?: Uint8Array;
  readonly broadcasts: readonly Delta[];
}

export interface Outbound {
  /** host:port */
  readonly to: string;
  readonly message: GossipMessage;
}

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

/** Most digests or deltas one message may carry (a 100k-node cluster is out of scope). */
export const MAX_ENTRIES = 10_000;
/** Direct SYNs a round sends to down peers others heard from, beyond the usual ones. */
const MAX_PROBES = 8;
/** The `gossip` field value of a node that speaks delta gossip. */
const DELTA = 'delta';
/** Messages a broadcast rides on: BROADCAST_MULT · ceil(log2(members + 1)). */
const BROADCAST_MULT = 2;
/** Bytes of broadcasts one SYN carries at most (at least one broadcast). */
const BROADCAST_BUDGET = 16 * 1024;
/** Rounds between full exchanges with one random peer up to 32 members (scaled above). */
const FULL_EXCHANGE_ROUNDS = 30;
const HEX16 = /^[0-9a-f]{16}$/;
/** Light SYNs answered light in a row while our table hash differed: then a full exchange. */
const MAX_MISMATCHES = 10;

export class Gossiper {
  readonly id: string;
  readonly clusterName: string;
  readonly detector: PhiDetector;
  /**
   * The member table. An entry's `heartbeat` (and `version`) may lag the member's heartbeat
   * in #beats: a heartbeat moves a number in place, not the entry (no new state per
   * heartbeat, a thousand a round at 1,000 members); #fresh brings an entry up to date
   * when it is read whole (state(), deltas sent, merges).
   */
  readonly #table = new Map<string, EndpointState>();
  /** Each member's slot in #beats, given when it is first put (members are never purged). */
  readonly #slots = new Map<string, number>();
  /** The heartbeat of each member by slot: never behind its #table entry's. */
  #beats = new Float64Array(64);
  /** The slot of each member in roster order (with #order). */
  #orderSlots: Int32Array | undefined;
  /** Scratch for the round's choice of live peers (kept, so that a round allocates none). */
  readonly #scratch: string[] = [];
  readonly #up = new Set<string>();
  /** When each peer we think down was last marked down (absent: up, or never up since we started). */
  readonly #downSince = new Map<string, number>();
  /** Peers gossip brought news of since we started (heardSinceStart). */
  readonly #heard = new Set<string>();
  readonly #seeds: readonly string[];
  readonly #random: () => number;
  #events: MembershipEvent[] = [];
  #shadow: boolean;
  readonly #fanout: number;
  #formerSelf: EndpointState | undefined;
  readonly #startedAt: number;
  /** Down peers that others heard from lately: SYN them directly next round. */
  readonly #probe = new Set<string>();
  #revision = 0;
  /** Delta gossip (see DeltaSyn): our side of it. */
  readonly #delta: boolean;
  readonly #tableSum = new HashSum();
  /** Each member's field version (fieldVersionOf), kept by #put. */
  readonly #fieldVersions = new Map<string, number>();
  /**
   * Delta gossip only: for each member, a version up to which we hold every field of its
   * generation counting heartbeats as full Scuttlebutt does (at least its field version;
   * see #complete). Heartbeats from vectors and digests move past it without the fields
   * between, so it is what we may claim to a peer on full Scuttlebutt.
   */
  readonly #whole = new Map<string, number>();
  /** Members that speak delta gossip (their `gossip` field names it), kept by #put. */
  readonly #speaksDelta = new Set<string>();
  readonly #rosterSum = new HashSum();
  /** Member ids sorted: the roster's order (undefined: to sort again). */
  #order: string[] | undefined;
  readonly #broadcasts = new Broadcasts();
  /** Light SYNs answered light since the last full exchange, our hash differing. */
  #mismatches = 0;
  /** Partial deltas #apply skipped (from beyond what we had seen) since this was zeroed. */
  #gaps = 0;

  constructor(o: GossiperOptions) {
    if (!o.fields.addr || !isAddress(o.fields.addr))
      throw new RangeError(`gossiper: fields.addr must be host:port, got ${o.fields.addr}`);
    this.id = o.id;
    this.clusterName = o.clusterName;
    this.#random = o.random;
    this.detector = new PhiDetector({ ...o.detector });
    this.#delta = o.delta ?? true;
    const initial = initialState(o.id, o.generation, this.#delta ? { ...o.fields, gossip: DELTA } : o.fields);
    const why = checkDelta(deltaOf(initial, 0));
    if (why !== undefined) throw new RangeError(`gossiper: ${why}`);
    for (const k of o.known ?? []) if (k.id !== o.id && checkDelta(deltaOf(k, 0)) === undefined) this.#put(k);
    this.#put(initial);
    this.#seeds = [...new Set(o.seeds)].filter((s) => s !== o.fields.addr);
    this.#shadow = o.shadow ?? false;
    this.#fanout = o.fanout ?? 2;
    this.detector.checkLocalPause(o.now);
    this.#startedAt = o.now;
  }

  get self(): EndpointState {
    // Our own heartbeat moves only by tick(), which stores a new state: never stale.
    return this.#table.get(this.id)!;
  }

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
    for (const s of this.#table.values()) yield this.#fresh(s);
  }

  state(id: string): EndpointState | undefined {
    const s = this.#table.get(id);
    return s === undefined ? undefined : this.#fresh(s);
  }

  get shadow(): boolean {
    return this.#shadow;
  }

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
    if (this.isUp(id) || !this.#table.has(id)) return undefined;
    return this.#downSince.get(id) ?? this.#startedAt;
  }

  /**
   * Whether gossip brought news of `id` since we started (its heartbeat or generation
   * moved past the state we started with, or it was new to us): only then are its fields
   * what it says now rather than what we remembered from before a restart (`known`).
   */
  heardSinceStart(id: string): boolean {
    return this.#heard.has(id);
  }

  /** Our opinion of `id` (ourselves: always up). */
  isUp(id: string): boolean {
    return id === this.id || this.#up.has(id);
  }

  /** Set one of our own fields; peers learn it at the next exchanges. A value peers would refuse throws. */
  set(name: string, value: string): void {
    const next = setField(this.self, name, value);
    const why = checkDelta(deltaOf(next, 0));
    if (why !== undefined) throw new RangeError(`gossiper: cannot set ${why}`);
    if (next.fields === this.self.fields) return;
    this.#revision++;
    if (!this.#shadow) this.#broadcasts.enqueue(this.id, next.generation, fieldVersionOf(this.self));
    this.#put(next);
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
    const paused = this.detector.checkLocalPause(now);
    if (paused > 0) this.#events.push({ type: 'paused', ms: paused });
    for (const id of this.#up) {
      if (!this.detector.isAvailable(id, now)) this.#markDown(id, now);
    }
  }

  /** Addresses of the peers we gossip with (not ourselves, not those that left or were removed). */
  peerAddresses(): string[] {
    const out: string[] = [];
    for (const s of this.#table.values()) {
      const addr = field(s, 'addr');
      if (s.id !== this.id && addr !== undefined && this.#reachable(s)) out.push(addr);
    }
    return out;
  }

  /** One gossip round at `now`. */
  tick(now: number): Outbound[] {
    const self = beat(this.self);
    this.#table.set(this.id, self);
    this.#beats[this.#slots.get(this.id)!] = self.heartbeat;
    this.judge(now);
    const live: string[] = [];
    const down: string[] = [];
    // Peers that speak delta gossip, when we do.
    const deltaPeers = new Set<string>();
    const delta = this.#delta && !this.#shadow;
    for (const s of this.#table.values()) {
      if (s.id === this.id || !this.#reachable(s)) continue;
      const addr = field(s, 'addr');
      if (addr === undefined) continue;
      (this.#up.has(s.id) ? live : down).push(addr);
      if (delta && this.#speaksDelta.has(s.id)) deltaPeers.add(addr);
    }
    const out: Outbound[] = [];
    // Light SYNs of this round share one heartbeat vector.
    let light: { heartbeats: Uint8Array; tableHash: string } | undefined;
    // Now and then (once per fullExchangeRounds on average) a full exchange with one of
    // them, to repair what broadcasts missed and a table hash collision hid.
    let full = deltaPeers.size > 0 && this.#random() < 1 / fullExchangeRounds(FULL_EXCHANGE_ROUNDS, this.#table.size);
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
        light ??= { heartbeats: this.#heartbeatVector(), tableHash: this.#tableSum.hex() };
        out.push(this.#lightSyn(to, light.heartbeats, light.tableHash));
      }
    }
    const liveTarget = chosen[0];
    // SYNs to down peers and seeds are full, so that they answer (and so show they are up).
    const fullSyn = (to: string): Outbound => this.#syn(to, [], deltaPeers.has(to) ? 'full' : 'legacy');
    if (down.length > 0 && this.#random() < down.length / (live.length + 1)) out.push(fullSyn(this.#pick(down)!));
    // Down peers others heard from: ask them ourselves (a few a round; the rest next round).
    for (const id of this.#probe) {
      if (out.length >= this.#fanout + MAX_PROBES) break;
      this.#probe.delete(id);
      const s = this.#table.get(id);
      const addr = s === undefined ? undefined : field(s, 'addr');
      if (addr !== undefined && !this.#up.has(id) && this.#reachable(s!) && !out.some((o) => o.to === addr))
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
    const checked = this.#check(input);
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
    const sender = this.#table.get(m.from);
    const own =
      m.kind !== 'syn'
        ? undefined
        : m.delta !== undefined
          ? m.delta.generation
          : m.digests.find((d) => d.id === m.from)?.generation;
    const current =
      m.kind !== 'syn' || (own !== undefined && own > 0 && sender !== undefined && own <= sender.generation);
    if (m.from !== this.id && sender !== undefined && current && !this.#up.has(m.from)) this.#arrived(m.from, now);
    return replies;
  }

  #handle(now: number, m: GossipMessage): Outbound[] {
    switch (m.kind) {
      case 'syn': {
        if (m.deltas !== undefined) this.#apply(now, m.deltas, m.from);
        const dx = m.delta;
        if (dx !== undefined) {
          this.#gaps = 0;
          this.#applyBroadcasts(now, dx.broadcasts, m.from);
          if (dx.tableHash !== undefined) {
            // A light SYN. In a shadow round our table leaves us out: answer in full.
            if (this.#shadow) return [this.#syn(m.fromAddr)];
            const sameRoster = dx.roster === this.#rosterSum.hex();
            if (dx.heartbeats !== undefined && sameRoster) this.#mergeHeartbeats(now, dx.heartbeats, m.from);
            // Tables that differ while news is in flight (broadcasts either way) converge by
            // broadcasts; a full exchange when they cannot: rosters that differ (heartbeats
            // then travel as pairs beside the digests), a broadcast skipped for a gap, no
            // news either way, or differing for MAX_MISMATCHES light answers in a row.
            if (dx.tableHash !== this.#tableSum.hex()) {
              const inFlight = dx.broadcasts.length > 0 || this.#broadcasts.size > 0;
              if (!sameRoster || this.#gaps > 0 || !inFlight || ++this.#mismatches >= MAX_MISMATCHES) {
                this.#mismatches = 0;
                return [this.#syn(m.fromAddr, [], 'full')];
              }
            }
            const delta: DeltaSyn = {
              generation: this.self.generation,
              roster: this.#rosterSum.hex(),
              heartbeats: this.#heartbeatVector(),
              broadcasts: this.#takeBroadcasts(),
            };
            return [{ to: m.fromAddr, message: { ...this.#envelope(), kind: 'ack2', deltas: [], delta } }];
          }
        }
        // Delta gossip's full SYN: versions are field versions; heartbeats come apart, and
        // go back in the ACK only when the rosters differ (else heartbeat vectors carry them).
        const delta = dx !== undefined;
        const sameRoster = delta && !this.#shadow && dx.roster === this.#rosterSum.hex();
        const deltas: Delta[] = [];
        const requests: Digest[] = [];
        let known = 0;
        for (const d of m.digests) {
          if (this.#hidden(d.id)) {
            // An earlier incarnation of our id: ask for it (formerSelf), say nothing of us.
            if (d.generation <= this.self.generation) requests.push({ id: d.id, generation: d.generation, version: 0 });
            continue;
          }
          const local = this.#table.get(d.id);
          const localBeat = local === undefined ? 0 : this.#beatOf(local.id);
          if (local !== undefined) known++;
          const version = local === undefined ? 0 : delta ? this.#fieldVersions.get(d.id)! : this.#complete(local);
          if (local === undefined || local.generation < d.generation) {
            requests.push({ id: d.id, generation: d.generation, version: 0 });
          } else if (local.generation > d.generation) {
            deltas.push(this.#deltaTo(m.from, local, 0));
          } else if (version < d.version) {
            requests.push({ id: d.id, generation: d.generation, version });
          } else if (version > d.version) {
            deltas.push(this.#deltaTo(m.from, local, d.version));
          } else if (delta && !sameRoster && localBeat > (d.heartbeat ?? 0)) {
            deltas.push({ id: d.id, generation: d.generation, heartbeat: localBeat, fields: [], since: version });
          }
          if (
            delta &&
            local !== undefined &&
            local.generation === d.generation &&
            d.id !== this.id &&
            (d.heartbeat ?? 0) > localBeat
          ) {
            this.#heartbeat(now, d.id, d.heartbeat!, m.from);
          }
        }
        if (known < this.#table.size) {
          // States the peer did not mention at all: send them whole.
          const mentioned = new Set(m.digests.map((d) => d.id));
          for (const s of this.#table.values())
            if (!mentioned.has(s.id) && !this.#hidden(s.id)) deltas.push(this.#deltaTo(m.from, s, 0));
        }
        return [{ to: m.fromAddr, message: { ...this.#envelope(), kind: 'ack', deltas, requests } }];
      }
      case 'ack': {
        this.#apply(now, m.deltas, m.from);
        const deltas: Delta[] = [];
        for (const r of m.requests) {
          const local = this.#table.get(r.id);
          if (local === undefined || local.generation < r.generation || this.#hidden(r.id)) continue;
          deltas.push(this.#deltaTo(m.from, local, local.generation === r.generation ? r.version : 0));
        }
        return deltas.length > 0 ? [{ to: m.fromAddr, message: { ...this.#envelope(), kind: 'ack2', deltas } }] : [];
      }
      case 'ack2':
        this.#apply(now, m.deltas, m.from);
        if (m.delta !== undefined) {
          this.#applyBroadcasts(now, m.delta.broadcasts, m.from);
          if (!this.#shadow && m.delta.heartbeats !== undefined && m.delta.roster === this.#rosterSum.hex())
            this.#mergeHeartbeats(now, m.delta.heartbeats, m.from);
        }
        return [];
    }
  }

  /** Take piggybacked field changes (#apply takes each only if we hold everything before it). */
  #applyBroadcasts(now: number, broadcasts: readonly Delta[], from: string): void {
    if (broadcasts.length > 0) this.#apply(now, broadcasts, from);
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
  #complete(s: EndpointState): number {
    if (!this.#delta) return this.#fresh(s).version;
    if (s.id === this.id) return this.self.version;
    return Math.max(this.#whole.get(s.id) ?? 0, this.#fieldVersions.get(s.id)!);
  }

  /**
   * What of `s` past `seen` to send to peer `to`: to a peer we do not know to speak delta
   * gossip, with a heartbeat no later than #complete, as full Scuttlebutt reads a
   * heartbeat as the version up to which the sender holds every field.
   */
  #deltaTo(to: string, s: EndpointState, seen: number): Delta {
    const d = deltaOf(this.#fresh(s), seen);
    if (!this.#delta || this.#speaksDelta.has(to)) return d;
    const complete = this.#complete(s);
    return d.heartbeat > complete ? { ...d, heartbeat: complete } : d;
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
    // A delta's heartbeat tells how far its sender holds every field (#whole) when the
    // sender is the member itself or on full Scuttlebutt (its heartbeats are versions);
    // not from a peer on delta gossip, nor one whose generation this message moves.
    const sender = this.#delta ? this.#table.get(from) : undefined;
    const legacy =
      sender !== undefined &&
      !this.#speaksDelta.has(from) &&
      !deltas.some((d) => d.id === from && d.generation !== sender.generation);
    for (const d of deltas) {
      if (d.since !== undefined && d.since > 0 && d.id !== this.id) {
        const have = this.#table.get(d.id);
        if (have === undefined || have.generation !== d.generation || this.#complete(have) < d.since) {
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
      const held = this.#table.get(d.id);
      const local = held === undefined ? undefined : this.#fresh(held);
      const merged = mergeDelta(local, d);
      if (merged !== local) this.#put(merged);
      if (this.#delta && (legacy || d.id === from) && merged.generation === d.generation) {
        let whole = Math.max(this.#whole.get(d.id) ?? 0, d.heartbeat);
        for (const f of d.fields) if (f.version > whole) whole = f.version;
        this.#whole.set(d.id, whole);
      }
      if (merged === local) continue;
      // News of a member's fields we pass on (a new member or generation comes whole in full exchanges).
      if (local !== undefined && merged.generation === local.generation && merged.fields !== local.fields) {
        this.#broadcasts.enqueue(d.id, merged.generation, d.since ?? fieldVersionOf(local));
      }
      const changed: string[] = [];
      if (merged.fields !== local?.fields) {
        for (const [name, f] of merged.fields) if (local?.fields.get(name) !== f) changed.push(name);
      }
      // Heard from the node itself, or news of a peer that is up: alive now. News of a
      // peer we think down, second-hand: probe it (see the top of this file).
      const news = (): void => {
        if (d.id === from || this.#up.has(d.id)) this.#arrived(d.id, now);
        else this.#probe.add(d.id);
      };
      if (local === undefined || merged.generation > local.generation || merged.heartbeat > local.heartbeat)
        this.#heard.add(d.id);
      if (local === undefined) {
        this.#events.push({ type: 'discovered', id: d.id });
        news();
      } else if (merged.generation > local.generation) {
        this.#events.push({ type: 'restarted', id: d.id, generation: merged.generation });
        this.detector.forget(d.id);
        news();
      } else if (merged.heartbeat > local.heartbeat) {
        news();
      }
      if (local === undefined || merged.generation !== local.generation || merged.fields !== local.fields)
        this.#revision++;
      if (changed.length > 0) this.#events.push({ type: 'changed', id: d.id, fields: changed });
      if (!this.#live(merged) && this.#up.has(d.id)) this.#markDown(d.id, now);
    }
  }

  #arrived(id: string, now: number): void {
    this.detector.report(id, now);
    const s = this.#table.get(id)!;
    if (!this.#up.has(id) && this.#live(s)) {
      this.#up.add(id);
      this.#downSince.delete(id);
      this.#events.push({ type: 'up', id });
    }
  }

  #markDown(id: string, now: number): void {
    this.#up.delete(id);
    this.#downSince.set(id, now);
    this.#events.push({ type: 'down', id });
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

  #pick<T>(xs: readonly T[]): T | undefined {
    return xs.length === 0 ? undefined : xs[Math.floor(this.#random() * xs.length)];
  }

  /** In a shadow round our own state is never sent. */
  #hidden(id: string): boolean {
    return this.#shadow && id === this.id;
  }

  #envelope(): Envelope {
    return { cluster: this.clusterName, from: this.id, fromAddr: this.address };
  }

  /**
   * A SYN listing every digest: full Scuttlebutt ('legacy', digests' versions count
   * heartbeats), or delta gossip's full SYN ('full': field versions, heartbeats apart).
   */
  #syn(to: string, deltas: readonly Delta[] = [], mode: 'legacy' | 'full' = 'legacy'): Outbound {
    const digests: Digest[] = [];
    if (mode === 'full') {
      for (const s of this.#table.values())
        digests.push({
          id: s.id,
          generation: s.generation,
          version: this.#fieldVersions.get(s.id)!,
          heartbeat: this.#beatOf(s.id),
        });
      const delta: DeltaSyn = {
        generation: this.self.generation,
        roster: this.#rosterSum.hex(),
        broadcasts: this.#takeBroadcasts(),
      };
      return { to, message: { ...this.#envelope(), kind: 'syn', digests, deltas, delta } };
    }
    for (const s of this.#table.values())
      if (!this.#hidden(s.id)) digests.push({ id: s.id, generation: s.generation, version: this.#complete(s) });
    return { to, message: { ...this.#envelope(), kind: 'syn', digests, deltas } };
  }

  #lightSyn(to: string, heartbeats: Uint8Array, tableHash: string): Outbound {
    const delta: DeltaSyn = {
      generation: this.self.generation,
      roster: this.#rosterSum.hex(),
      tableHash,
      heartbeats,
      broadcasts: this.#takeBroadcasts(),
    };
    return { to, message: { ...this.#envelope(), kind: 'syn', digests: [], delta } };
  }

  #takeBroadcasts(): Delta[] {
    return this.#broadcasts.take(retransmitLimit(BROADCAST_MULT, this.#table.size), BROADCAST_BUDGET, (id) =>
      this.state(id),
    );
  }

  /** Our heartbeats in roster order. */
  #heartbeatVector(): Uint8Array {
    const order = this.#rosterOrder();
    return writeHeartbeats(this.#beats, order.length, this.#orderSlots);
  }

  /**
   * A peer's heartbeat vector over the same roster as ours: take each newer heartbeat, in
   * place in #beats, and feed the detector from this loop (no state made per heartbeat).
   */
  #mergeHeartbeats(now: number, bytes: Uint8Array, from: string): void {
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
      this.#heartbeatMoved(now, order[i]!, from);
    }
  }

  /** A newer heartbeat of member `id` (not us), from a digest: as #apply takes one. */
  #heartbeat(now: number, id: string, heartbeat: number, from: string): void {
    const slot = this.#slots.get(id);
    if (slot === undefined || heartbeat <= this.#beats[slot]!) return;
    this.#beats[slot] = heartbeat;
    this.#heartbeatMoved(now, id, from);
  }

  #heartbeatMoved(now: number, id: string, from: string): void {
    this.#heard.add(id);
    if (this.#up.has(id)) this.detector.report(id, now);
    else if (id === from) this.#arrived(id, now);
    else this.#probe.add(id);
  }

  /** Member `id`'s heartbeat (its #table entry's may lag it). */
  #beatOf(id: string): number {
    return this.#beats[this.#slots.get(id)!]!;
  }

  /** Table entry `s` with its heartbeat brought up to date (stored back, so made once per heartbeat read). */
  #fresh(s: EndpointState): EndpointState {
    const heartbeat = this.#beats[this.#slots.get(s.id)!]!;
    if (heartbeat <= s.heartbeat) return s;
    const now = withHeartbeat(s, heartbeat);
    this.#table.set(s.id, now);
    return now;
  }

  #rosterOrder(): string[] {
    if (this.#order === undefined) {
      this.#order = [...this.#table.keys()].sort();
      this.#orderSlots = Int32Array.from(this.#order, (id) => this.#slots.get(id)!);
    }
    return this.#order;
  }

  /** Store a state, keeping the table and roster hashes current. */
  #put(next: EndpointState): void {
    const prev = this.#table.get(next.id);
    this.#table.set(next.id, next);
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

  /** The message with only its well-formed entries, and why others were skipped; or why it is refused whole. */
  #check(m: GossipMessage): string | { message: GossipMessage; skipped: string[] } {
    if (m === null || typeof m !== 'object') return 'not a message';
    if (m.cluster !== this.clusterName) return `cluster name "${show(m.cluster)}" is not ours ("${this.clusterName}")`;
    if (typeof m.from !== 'string' || m.from.length === 0) return 'no sender id';
    if (typeof m.fromAddr !== 'string' || !isAddress(m.fromAddr))
      return `sender address ${show(m.fromAddr)} is not host:port`;
    const lists: unknown[] =
      m.kind === 'syn'
        ? [m.digests, m.deltas ?? []]
        : m.kind === 'ack'
          ? [m.deltas, m.requests]
          : m.kind === 'ack2'
            ? [m.deltas]
            : [];
    if (lists.length === 0) return `unknown kind ${show((m as { kind: unknown }).kind)}`;
    for (const l of lists)
      if (!Array.isArray(l) || l.length > MAX_ENTRIES) return `lists must be arrays of at most ${MAX_ENTRIES}`;
    const skipped: string[] = [];
    const keep = <T>(xs: readonly T[], check: (x: T) => string | undefined): T[] =>
      xs.filter((x) => {
        const why = check(x);
        if (why !== undefined) skipped.push(why);
        return why === undefined;
      });
    const envelope = { cluster: m.cluster, from: m.from, fromAddr: m.fromAddr };
    let delta: DeltaSyn | undefined;
    if ((m.kind === 'syn' || m.kind === 'ack2') && m.delta !== undefined) {
      const why = checkDeltaSyn(m.delta);
      if (why !== undefined) return why;
      delta = { ...m.delta, broadcasts: keep(m.delta.broadcasts, checkDelta) };
    }
    const message: GossipMessage =
      m.kind === 'syn'
        ? {
            ...envelope,
            kind: 'syn',
            digests: keep(m.digests, checkDigest),
            deltas: keep(m.deltas ?? [], checkDelta),
            ...(delta && { delta }),
          }
        : m.kind === 'ack'
          ? { ...envelope, kind: 'ack', deltas: keep(m.deltas, checkDelta), requests: keep(m.requests, checkDigest) }
          : { ...envelope, kind: 'ack2', deltas: keep(m.deltas, checkDelta), ...(delta && { delta }) };
    return { message, skipped };
  }
}

/** Why a SYN's delta part is unacceptable (the message is refused whole), or undefined. */
function checkDeltaSyn(d: DeltaSyn): string | undefined {
  if (d === null || typeof d !== 'object') return 'delta must be an object';
  if (!Number.isSafeInteger(d.generation) || d.generation <= 0)
    return 'delta.generation must be a positive whole number';
  if (typeof d.roster !== 'string' || !HEX16.test(d.roster)) return 'delta.roster must be 16 hex digits';
  if (d.tableHash !== undefined && (typeof d.tableHash !== 'string' || !HEX16.test(d.tableHash)))
    return 'delta.tableHash must be 16 hex digits';
  if (
    d.heartbeats !== undefined &&
    (!(d.heartbeats instanceof Uint8Array) || d.heartbeats.length % 4 !== 0 || d.heartbeats.length > 4 * MAX_ENTRIES)
  ) {
    return `delta.heartbeats must be whole u32s, at most ${MAX_ENTRIES}`;
  }
  if (!Array.isArray(d.broadcasts) || d.broadcasts.length > MAX_ENTRIES)
    return `delta.broadcasts must be an array of at most ${MAX_ENTRIES}`;
  return undefined;
}

/** A value from the network for a message: never throws (String() does on some objects). */
function show(v: unknown): string {
  return typeof v === 'string'
    ? v.slice(0, 100)
    : typeof v === 'number' || typeof v === 'boolean' || v == null
      ? `${v}`
      : typeof v;
}
