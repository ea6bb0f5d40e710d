/**
 * A deterministic simulation of many gossipers on a fake clock and an in-memory network
 * that can drop, delay and partition messages, and kill, pause and restart nodes.
 * Everything random comes from one seed, so a failing run replays exactly.
 *
 * Used by test/sim/*.test.ts and bench/sim-gossip.ts.
 *
 * Owns: the fake clock, the simulated network and the gossipers on it. Must not: read the
 * real clock (but to meter CPU time, which decides nothing), use unseeded randomness, or decide anything the gossiper decides (it runs
 * src/membership as it is and only delivers its messages).
 */

import {
  Gossiper,
  type GossipMessage,
  type GossiperOptions,
  type MembershipEvent,
  type Outbound,
} from '../src/membership/gossiper.js';
import { encodedSize } from '../src/transport/gossip-wire.js';
import { field, formatTokens, type Delta } from '../src/membership/endpoint.js';
import { nextJoinStep } from '../src/cluster/join.js';
import { ringFingerprint, ringFromStates, type RingView } from '../src/membership/ring-view.js';
import type { DetectorOptions } from '../src/membership/phi-detector.js';
import { mulberry32 } from '../src/ring/allocate-tokens.js';

export interface SimOptions {
  readonly seed: number;
  readonly intervalMs?: number;
  /** One-way delay range, ms. */
  readonly minDelayMs?: number;
  readonly maxDelayMs?: number;
  /** Probability that a message is lost. */
  readonly dropRate?: number;
  /** Probability that a message is delivered twice (each copy with its own delay). */
  readonly duplicateRate?: number;
  readonly detector?: DetectorOptions;
  readonly clusterName?: string;
  /** Also judge peers every this many ms between rounds, as the node does (0: only at rounds). */
  readonly judgeEveryMs?: number;
  /**
   * Meter each node (sim:gossip): the gossiper's CPU time (process.cpuUsage() around each
   * tick and receive) and the bytes it sends, each message encoded with the real
   * gossip-wire encoder. Off by default: encoding costs the simulation time.
   */
  readonly meter?: boolean;
  /** Options for every node's gossiper (`delta: false` runs full Scuttlebutt). */
  readonly gossiper?: Partial<Pick<GossiperOptions, 'delta'>>;
}

/** A node that joins as `ringkv node` does (cluster/join.ts), with what node.json would keep. */
interface JoinState {
  tokens: bigint[] | undefined;
  status: 'joining' | 'normal';
  startedAt: number;
  claimedAt: number;
  /** Why the node stopped itself, if it did. */
  failed: string | undefined;
  /** Time of each step taken, for tests. */
  steps: { at: number; kind: string }[];
  /** When streaming the claim's ranges is done (the sim models its time, not its data). */
  streamedAt: number | undefined;
  /** Why the node last waited, for test failures. */
  waiting: string;
  /** When the node last saw another node's movement. */
  busyAt: number;
}

interface SimNode {
  gossiper: Gossiper;
  join: JoinState | undefined;
  readonly id: string;
  readonly addr: string;
  alive: boolean;
  /** Paused until this time (SIGSTOP): ticks and deliveries wait. */
  pausedUntil: number;
  generation: number;
  readonly fields: Record<string, string>;
  readonly seeds: readonly string[];
  events: { at: number; event: MembershipEvent }[];
  tickTimer: number;
  /** The topology view this node writes by (joining nodes keep it, as node.ts does). */
  view: RingView | undefined;
  /** The gossiper's revision `view` was checked at (topology-view.ts). */
  viewRevision?: number;
  /** With `meter`: ms spent in the gossiper's tick and receive, and bytes sent (encoded), since resetMeters(). */
  cpuMs: number;
  bytesSent: number;
  /** Options for this node's gossiper, over the simulation's. */
  options: Partial<Pick<GossiperOptions, 'delta'>>;
}

interface Scheduled {
  at: number;
  seq: number;
  run: () => void;
}

/** Binary min-heap on (at, seq): events at the same time run in the order scheduled. */
class Agenda {
  readonly #h: Scheduled[] = [];
  #seq = 0;
  push(at: number, run: () => void): void {
    const h = this.#h;
    h.push({ at, seq: this.#seq++, run });
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }
  pop(): Scheduled | undefined {
    const h = this.#h;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1,
          r = l + 1;
        let m = i;
        if (l < h.length && less(h[l]!, h[m]!)) m = l;
        if (r < h.length && less(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
  peek(): Scheduled | undefined {
    return this.#h[0];
  }
}
function less(a: Scheduled, b: Scheduled): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

export class GossipSim {
  now = 0;
  readonly random: () => number;
  readonly nodes = new Map<string, SimNode>();
  readonly #byAddr = new Map<string, SimNode>();
  readonly #agenda = new Agenda();
  #o: Required<Omit<SimOptions, 'detector'>> & { detector: DetectorOptions };
  /** Partition groups: messages between nodes of different groups are dropped. */
  #group = new Map<string, number>();
  messages = 0;
  dropped = 0;
  /** With `meter`: every metered step, in time order. */
  #steps: { node: SimNode; t0: number; t1: number }[] = [];

  constructor(o: SimOptions) {
    this.#o = {
      intervalMs: 1000,
      minDelayMs: 1,
      maxDelayMs: 20,
      dropRate: 0,
      duplicateRate: 0,
      clusterName: 'sim',
      detector: {},
      judgeEveryMs: 0,
      meter: false,
      gossiper: {},
      ...o,
    };
    this.random = mulberry32(o.seed);
  }

  get intervalMs(): number {
    return this.#o.intervalMs;
  }

  /**
   * Add and start a node with the given seeds (ids of other nodes). `quiet`: do not
   * announce (for clusters that start converged through seedTables()).
   */
  add(
    id: string,
    seeds: readonly string[],
    fields: Record<string, string> = {},
    quiet = false,
    options: SimNode['options'] = {},
  ): SimNode {
    const node = this.#register(id, seeds, { status: 'normal', ...fields }, undefined);
    node.options = options;
    this.start(id, quiet);
    return node;
  }

  /**
   * Add a node that joins the way `ringkv node` does: shadow round, token pick, then
   * normal (cluster/join.ts), starting at time `at`.
   */
  addJoining(id: string, seeds: readonly string[], at: number, fields: Record<string, string> = {}): SimNode {
    const node = this.#register(id, seeds, { status: 'joining', empty: 'true', ...fields }, freshJoin());
    this.#agenda.push(at, () => this.start(id));
    return node;
  }

  #register(
    id: string,
    seeds: readonly string[],
    fields: Record<string, string>,
    join: JoinState | undefined,
  ): SimNode {
    const addr = addrOf(id);
    const node: SimNode = {
      id,
      addr,
      alive: false,
      pausedUntil: 0,
      generation: 0,
      fields: { addr, ...fields },
      seeds: seeds.map(addrOf),
      events: [],
      tickTimer: 0,
      view: undefined,
      gossiper: undefined as unknown as Gossiper,
      join,
      cpuMs: 0,
      bytesSent: 0,
      options: {},
    };
    this.nodes.set(id, node);
    this.#byAddr.set(addr, node);
    return node;
  }

  /** A joining node loses its data dir (node.json included) and starts again under the same id. */
  wipe(id: string): void {
    const n = this.#node(id);
    this.kill(id);
    n.join = freshJoin();
    n.view = undefined;
    delete n.fields.tokens;
    n.fields.status = 'joining';
    n.generation = 0;
  }

  /** (Re)start a node: a new generation, a fresh table, announce to seeds and known peers. */
  start(id: string, quiet = false): void {
    const n = this.#node(id);
    n.alive = true;
    n.pausedUntil = 0;
    n.generation = Math.max(n.generation + 1, Math.floor(this.now / 1000) + 1);
    if (n.join) n.join.startedAt = this.now;
    n.gossiper = new Gossiper({
      id,
      clusterName: this.#o.clusterName,
      generation: n.generation,
      fields: n.fields,
      seeds: n.seeds,
      random: this.random,
      now: this.now,
      detector: this.#o.detector,
      // A wiped (or new) data dir is what makes a shadow round, as in node.ts.
      shadow: n.join !== undefined && n.join.tokens === undefined && n.join.steps.length === 0,
      ...this.#o.gossiper,
      ...n.options,
    });
    n.view = undefined;
    if (!quiet) this.#sendAll(n, n.gossiper.announce());
    const timer = ++n.tickTimer;
    // First tick at a random phase, then every interval: nodes are not in lock step.
    this.#agenda.push(this.now + this.random() * this.#o.intervalMs, () => this.#tick(n, timer));
    if (this.#o.judgeEveryMs > 0)
      this.#agenda.push(this.now + this.random() * this.#o.judgeEveryMs, () => this.#judge(n, timer));
  }

  /** SIGKILL: the node stops at once; messages to it are lost. */
  kill(id: string): void {
    const n = this.#node(id);
    n.alive = false;
    n.tickTimer++;
  }

  /** SIGSTOP for `ms`: nothing runs on the node; messages to it queue until it resumes. */
  pause(id: string, ms: number): void {
    this.#node(id).pausedUntil = this.now + ms;
  }

  /** Split the nodes into groups (arrays of ids); nodes not listed form one more group. */
  partition(groups: readonly (readonly string[])[]): void {
    this.#group = new Map();
    groups.forEach((g, i) => g.forEach((id) => this.#group.set(id, i + 1)));
  }

  heal(): void {
    this.#group = new Map();
  }

  /** Change the network's loss and duplication from now on. */
  network(o: Pick<SimOptions, 'dropRate' | 'duplicateRate'>): void {
    this.#o = { ...this.#o, ...o };
  }

  /** Run until `until` (ms) or until `stop()` returns true (checked after each event). */
  run(until: number, stop?: () => boolean): boolean {
    for (;;) {
      const next = this.#agenda.peek();
      if (next === undefined || next.at > until) {
        this.now = until;
        return false;
      }
      this.#agenda.pop();
      this.now = next.at;
      next.run();
      if (stop?.()) return true;
    }
  }

  runFor(ms: number, stop?: () => boolean): boolean {
    return this.run(this.now + ms, stop);
  }

  /** Apply a change to a node's own fields (as the node shell would). */
  set(id: string, name: string, value: string): void {
    const n = this.#node(id);
    n.fields[name] = value;
    n.gossiper.set(name, value);
  }

  /** Does node `viewer` hold field `name` = `value` for node `of`? */
  sees(viewer: string, of: string, name: string, value: string): boolean {
    const s = this.#node(viewer).gossiper.state(of);
    return s !== undefined && field(s, name) === value;
  }

  /**
   * Start from a converged cluster: every node holds every other node's state and has
   * seen one heartbeat of each (so all are up), as after a long healthy run.
   */
  seedTables(): void {
    const nodes = [...this.nodes.values()];
    const deltas: Delta[] = nodes.map((n) => {
      const s = n.gossiper.self;
      return {
        id: s.id,
        generation: s.generation,
        heartbeat: s.heartbeat,
        fields: [...s.fields].map(([name, f]) => ({ name, ...f })),
      };
    });
    for (const n of nodes) {
      n.gossiper.receive(this.now, {
        kind: 'ack2',
        cluster: this.#o.clusterName,
        from: '-',
        fromAddr: '127.0.0.1:1',
        deltas,
      });
      n.gossiper.takeEvents();
    }
    // A newer heartbeat of each, heard from each node itself: every peer is up.
    for (const n of nodes) n.gossiper.tick(this.now);
    for (const n of nodes) {
      for (const p of nodes) {
        if (p === n) continue;
        const s = p.gossiper.self;
        const beat = { id: s.id, generation: s.generation, heartbeat: s.heartbeat, fields: [] };
        n.gossiper.receive(this.now, {
          kind: 'ack2',
          cluster: this.#o.clusterName,
          from: p.id,
          fromAddr: p.addr,
          deltas: [beat],
        });
      }
      n.gossiper.takeEvents();
    }
  }

  /**
   * Churn for `rounds` rounds: every `every` rounds one new node joins (seeded by the
   * first three) and one random member restarts (a new generation), so rosters differ
   * from node to node while the news spreads. Returns the convictions of members that
   * never stopped (false ones) and the ids restarted.
   */
  churn(
    rounds: number,
    every: number,
    options: SimNode['options'] = {},
  ): { falseDowns: number; restarted: Set<string> } {
    const seeds = [...this.nodes.keys()].slice(0, 3);
    const restarted = new Set<string>();
    for (const n of this.nodes.values()) n.events = [];
    for (let r = 0; r < rounds; r++) {
      if (r % every === 0) {
        this.add(`j${this.nodes.size}`, seeds, {}, false, options);
        const members = this.alive();
        const victim = members[Math.floor(this.random() * members.length)]!;
        restarted.add(victim.id);
        this.kill(victim.id);
        this.start(victim.id);
      }
      this.runFor(this.intervalMs);
    }
    let falseDowns = 0;
    for (const n of this.nodes.values()) {
      falseDowns += n.events.filter((e) => e.event.type === 'down' && !restarted.has(e.event.id)).length;
    }
    return { falseDowns, restarted };
  }

  alive(): SimNode[] {
    return [...this.nodes.values()].filter((n) => n.alive);
  }

  #node(id: string): SimNode {
    const n = this.nodes.get(id);
    if (n === undefined) throw new Error(`no simulated node ${id}`);
    return n;
  }

  #tick(n: SimNode, timer: number): void {
    if (!n.alive || n.tickTimer !== timer) return;
    if (this.now < n.pausedUntil) {
      // A stopped process runs its overdue timer once when it resumes.
      this.#agenda.push(n.pausedUntil, () => this.#tick(n, timer));
      return;
    }
    this.#sendAll(
      n,
      this.#metered(n, () => n.gossiper.tick(this.now)),
    );
    this.#collect(n);
    if (n.join?.status === 'joining') this.#stepJoin(n, n.join);
    if (!n.alive) return;
    this.#agenda.push(this.now + this.#o.intervalMs, () => this.#tick(n, timer));
  }

  #judge(n: SimNode, timer: number): void {
    if (!n.alive || n.tickTimer !== timer) return;
    if (this.now < n.pausedUntil) return this.#agenda.push(n.pausedUntil, () => this.#judge(n, timer));
    n.gossiper.judge(this.now);
    this.#collect(n);
    this.#agenda.push(this.now + this.#o.judgeEveryMs, () => this.#judge(n, timer));
  }

  /** The topology view, rebuilt when ownership changes, and gossiped as `topo` (node.ts). */
  #publish(n: SimNode): RingView {
    if (n.view !== undefined && n.viewRevision === n.gossiper.revision) return n.view;
    n.viewRevision = n.gossiper.revision;
    const fp = ringFingerprint(n.gossiper.states());
    if (n.view === undefined || n.view.fingerprint !== fp) {
      n.view = ringFromStates(n.gossiper.states(), { tokensPerNode: 16 });
      n.gossiper.set('topo', n.view.hash);
    }
    return n.view;
  }

  /** What node.ts does with the join state machine's steps, with node.json kept in `j`. */
  #stepJoin(n: SimNode, j: JoinState): void {
    for (let i = 0; i < 3 && j.status === 'joining'; i++) {
      const view = this.#publish(n);
      if (view.movements.some((m) => m.node !== n.id)) j.busyAt = this.now;
      const step = nextJoinStep({
        self: { id: n.id, zone: n.fields.zone ?? '', rack: n.fields.rack ?? '', weight: 1 },
        clusterName: this.#o.clusterName,
        tokensPerNode: 16,
        replicas: 3,
        intervalMs: this.#o.intervalMs,
        waitedMs: this.now - j.startedAt,
        quietMs: this.now - Math.max(j.startedAt, j.busyAt),
        tokens: j.tokens,
        tokensAgeMs: this.now - Math.max(j.startedAt, j.claimedAt),
        gossip: n.gossiper,
        view,
        streamed: j.streamedAt !== undefined && j.streamedAt <= this.now,
      });
      if (step.kind !== 'wait' && step.kind !== 'stream') j.steps.push({ at: this.now, kind: step.kind });
      switch (step.kind) {
        case 'wait':
          j.waiting = step.reason;
          return;
        case 'fail':
          j.failed = step.message;
          this.kill(n.id);
          return;
        case 'show':
          n.gossiper.endShadow();
          this.#sendAll(n, n.gossiper.announce());
          return;
        case 'claim':
          j.tokens = step.tokens;
          j.claimedAt = this.now;
          j.streamedAt = undefined;
          n.fields.tokens = formatTokens(step.tokens);
          n.gossiper.set('tokens', n.fields.tokens);
          break;
        case 'withdraw':
          j.tokens = undefined;
          j.streamedAt = undefined;
          n.fields.tokens = '';
          n.gossiper.set('tokens', '');
          return;
        case 'stream':
          // Streaming takes a round here; the data is not simulated.
          if (j.streamedAt === undefined) j.streamedAt = this.now + this.#o.intervalMs;
          return;
        case 'normal':
          j.status = 'normal';
          n.fields.status = 'normal';
          n.gossiper.set('status', 'normal');
          this.#publish(n);
          return;
      }
    }
  }

  #sendAll(from: SimNode, out: readonly Outbound[]): void {
    for (const o of out) this.#send(from, o.to, o.message);
  }

  /** Run one gossiper step, its CPU time counted to `n` when metering. */
  #metered(n: SimNode, step: () => Outbound[]): Outbound[] {
    if (!this.#o.meter) return step();
    // CPU time (not wall time: the machine may run other work), and the wall span for cpuLessGc.
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const out = step();
    const c = process.cpuUsage(c0);
    const t1 = performance.now();
    n.cpuMs += (c.user + c.system) / 1000;
    this.#steps.push({ node: n, t0, t1 });
    return out;
  }

  /** Zero every node's meters (cpuMs, bytesSent) and the message counts. */
  resetMeters(): void {
    for (const n of this.nodes.values()) n.cpuMs = n.bytesSent = 0;
    this.messages = this.dropped = 0;
    this.#steps = [];
  }

  /**
   * Each node's metered CPU ms since resetMeters() less the garbage collections that fell
   * in its steps (`gc`: [start, end] on performance.now(), e.g. from a PerformanceObserver):
   * one process holds every simulated node's heap, so a collection is the simulation's,
   * not the step's that it happened to interrupt.
   */
  cpuLessGc(gc: readonly (readonly [number, number])[]): Map<string, number> {
    const out = new Map<string, number>();
    for (const n of this.nodes.values()) out.set(n.id, n.cpuMs);
    const sorted = [...gc].sort((a, b) => a[0] - b[0]);
    let g = 0;
    for (const { node, t0, t1 } of this.#steps) {
      while (g < sorted.length && sorted[g]![1] <= t0) g++;
      let overlap = 0;
      for (let i = g; i < sorted.length && sorted[i]![0] < t1; i++)
        overlap += Math.min(t1, sorted[i]![1]) - Math.max(t0, sorted[i]![0]);
      if (overlap > 0) out.set(node.id, Math.max(0, out.get(node.id)! - overlap));
    }
    return out;
  }

  #send(from: SimNode, to: string, message: GossipMessage): void {
    this.messages++;
    if (this.#o.meter) from.bytesSent += encodedSize(message);
    const target = this.#byAddr.get(to);
    const o = this.#o;
    if (
      target === undefined ||
      (this.#group.get(from.id) ?? 0) !== (this.#group.get(target.id) ?? 0) ||
      (o.dropRate > 0 && this.random() < o.dropRate)
    ) {
      this.dropped++;
      return;
    }
    const deliver = (): void => {
      if (!target.alive) return void this.dropped++;
      if (this.now < target.pausedUntil) return this.#agenda.push(target.pausedUntil, deliver);
      this.#sendAll(
        target,
        this.#metered(target, () => target.gossiper.receive(this.now, message)),
      );
      this.#collect(target);
    };
    const copies = o.duplicateRate > 0 && this.random() < o.duplicateRate ? 2 : 1;
    for (let i = 0; i < copies; i++)
      this.#agenda.push(this.now + o.minDelayMs + this.random() * (o.maxDelayMs - o.minDelayMs), deliver);
  }

  #collect(n: SimNode): void {
    for (const event of n.gossiper.takeEvents()) n.events.push({ at: this.now, event });
    if (n.join !== undefined) this.#publish(n);
  }
}

function freshJoin(): JoinState {
  return {
    tokens: undefined,
    status: 'joining',
    startedAt: 0,
    claimedAt: 0,
    failed: undefined,
    steps: [],
    streamedAt: undefined,
    waiting: '',
    busyAt: 0,
  };
}

export function addrOf(id: string): string {
  return `${id}.sim:7000`;
}

/** Ids n0..n{count-1}. */
export function ids(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `n${i}`);
}
