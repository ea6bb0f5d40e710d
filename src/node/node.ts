/**
 * One ringkv node: opens the store, serves gRPC (gossip, admin, health, reflection),
 * gossips on a timer, takes its tokens when it joins, publishes the ring, and stops
 * cleanly. The only place that builds every part (DESIGN.md).
 *
 * Owns: lifecycle and wiring; the one writer of the node's own gossip state and of
 * node.json. Must not: contain the algorithms (membership/, ring/, storage/ do).
 */

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { ReflectionService } from '@grpc/reflection';
import type { Logger } from 'pino';
import { Store } from '../storage/index.js';
import type { Ring } from '../ring/index.js';
import { Gossiper } from '../membership/gossiper.js';
import { field, formatTokens, type EndpointState, type NodeStatus } from '../membership/endpoint.js';
import { ringFingerprint, ringFromStates, type RingView } from '../membership/ring-view.js';
import { describeMovement, nextJoinStep } from '../membership/join.js';
import type { Placement } from '../replication/coordinator.js';
import { GossipSender, fromWire } from '../transport/gossip-wire.js';
import { NODE_MAX_MESSAGE_BYTES, WIRE_SCHEMA, protos, serviceClient } from '../transport/protos.js';
import type { NodeConfig } from './config.js';
import { loadIdentity, loadMembers, loadPeers, saveIdentity, saveMembers, type Identity } from './identity.js';
import { Handoff } from './handoff.js';
import { Checkpoints } from '../handoff/checkpoints.js';
import { MovementDriver, MovementRefused } from './movement-driver.js';
import { StagedChanges } from './staged.js';
import { AdminClient } from '../client/admin.js';
import { INITIAL_GOVERNOR, govern, type GovernorState } from '../handoff/governor.js';
import { adminService } from './admin-service.js';
import { logMembershipEvent } from './membership-log.js';
import { Replication } from './replication.js';
import { Housekeeping, PURGE_EVERY_MS } from './housekeeping.js';

/** How often the node refreshes the load it gossips, ms. */
const LOAD_EVERY_MS = 5000;
/** How often the node judges its peers between gossip rounds, ms. */
const JUDGE_EVERY_MS = 250;
/** How often hints go to replicas that are up again, ms (a run is a no-op when none are held). */
const HINTS_EVERY_MS = 1000;
/** How often the governor looks at foreground latency and sets the background share, ms. */
const GOVERN_EVERY_MS = 500;

export class RingkvNode {
  readonly config: NodeConfig;
  readonly log: Logger;
  readonly store: Store;
  readonly gossiper: Gossiper;
  /** Coordinator, replica calls and hinted handoff (replication.ts). */
  readonly replication: Replication;
  /** Range streaming: the service peers pull from, and this node's pulls (handoff.ts). */
  readonly handoff: Handoff;
  /** The decommission or removal this node drives (movement-driver.ts). */
  readonly driver: MovementDriver;
  /** Staged topology changes (plan / commit / clear) on this node (staged.ts). */
  readonly staged: StagedChanges;
  readonly #housekeeping: Housekeeping;
  #identity: Identity;
  readonly #server: grpc.Server;
  readonly #health: HealthImplementation;
  readonly #sender: GossipSender;
  readonly #startedAt = performance.now();
  /** When our tokens were picked (or the node started, for tokens from node.json). */
  #tokensSince = performance.now();
  readonly #timers: NodeJS.Timeout[] = [];
  #view: RingView = { ring: undefined, target: undefined, movements: [], removed: new Set(), conflicts: [], fingerprint: '', hash: '' };
  #placement: Placement | undefined;
  readonly #listeners = new Set<(ring: Ring | undefined) => void>();
  #stopping: Promise<void> | undefined;
  /** Set first thing in stop(), so that health turns NOT_SERVING before anything else. */
  #closing = false;
  #markStopped!: () => void;
  /** Settles once the node has stopped, whoever stopped it (a signal, or the node itself on a fatal error). */
  readonly stopped = new Promise<void>((resolve) => (this.#markStopped = resolve));
  #lastJoinReason = '';
  readonly #membershipLog: Logger;

  private constructor(
    config: NodeConfig,
    log: Logger,
    identity: Identity,
    store: Store,
    server: grpc.Server,
    address: string,
    known: { states: EndpointState[]; fresh: boolean },
    checkpoints: Checkpoints,
  ) {
    this.config = config;
    this.log = log;
    this.#identity = identity;
    this.store = store;
    this.#server = server;
    this.#health = new HealthImplementation({ '': 'NOT_SERVING' });
    const fields: Record<string, string> = {
      addr: address,
      zone: config.zone,
      rack: config.rack,
      weight: String(config.weight),
      status: identity.status,
      // The wire contract this node speaks, for rolling upgrades to check.
      schema: WIRE_SCHEMA,
      // Replicas per key: a cluster setting every node must share (housekeeping.ts checks).
      replicas: String(config.replicas),
    };
    if (identity.tokens !== undefined) fields.tokens = formatTokens(identity.tokens);
    if (identity.removing !== undefined) fields.removing = identity.removing;
    if (identity.removed.length > 0) fields.removed = identity.removed.join(',');
    if (identity.replaces !== undefined) fields.replaces = identity.replaces;
    if (identity.status === 'joining' && config.join === 'manual' && !identity.admitted) fields.standby = 'true';
    this.gossiper = new Gossiper({
      id: identity.id,
      clusterName: config.clusterName,
      generation: identity.generation,
      fields,
      seeds: config.seeds,
      random: Math.random,
      now: performance.now(),
      detector: { threshold: config.phiThreshold, firstIntervalMs: config.gossipIntervalMs },
      // A node with a new data dir first checks, unseen, that its id is not a member's.
      shadow: known.fresh,
      known: known.states,
    });
    this.#membershipLog = log.child({ component: 'membership' });
    const peerLog = log.child({ component: 'gossip' });
    this.#sender = new GossipSender(Math.max(1000, 2 * config.gossipIntervalMs), (to, err) =>
      peerLog.debug({ peer: to, code: err.code, err: err.details }, 'gossip message not delivered'),
    );
    this.#housekeeping = new Housekeeping({ store, gossiper: this.gossiper, replicas: config.replicas, closing: () => this.#closing, log });
    this.replication = new Replication({
      id: identity.id,
      config,
      store,
      gossiper: this.gossiper,
      placement: () => this.#placement,
      removed: () => this.#view.removed,
      backgroundShare: () => this.#governor.share,
      notServing: () => (this.#closing ? 'it is shutting down' : this.#identity.status !== 'normal' ? `it is ${this.#identity.status}, not yet a member` : undefined),
      refuseReplicaCalls: () => (this.#closing ? 'node is shutting down' : undefined),
      log,
    });
    this.handoff = new Handoff(
      {
        id: identity.id,
        config,
        store,
        addressOf: (peer) => {
          const st = this.gossiper.state(peer);
          return st === undefined ? undefined : field(st, 'addr');
        },
        isUp: (peer) => peer === identity.id || this.gossiper.isUp(peer),
        refuse: () => (this.#closing ? 'node is shutting down' : undefined),
        log,
      },
      checkpoints,
    );
    this.driver = new MovementDriver({
      id: identity.id,
      replicas: config.replicas,
      gossiper: this.gossiper,
      handoff: this.handoff,
      view: () => this.#view,
      identity: () => this.#identity,
      persist: (change) => this.#persist(change),
      gossip: (f) => {
        for (const [name, value] of Object.entries(f)) this.gossiper.set(name, value);
        this.#afterGossip();
      },
      announce: async () => {
        const sends = this.gossiper.announce().map((o) => this.#sender.send(o.to, o.message));
        await Promise.race([Promise.all(sends), new Promise((r) => setTimeout(r, 1000))]);
      },
      exit: () => void this.stop(),
      fetchTimeoutMs: 10 * 60_000,
      log: log.child({ component: 'topology' }),
    });
    const remote = async (node: string, fn: (c: AdminClient) => Promise<unknown>): Promise<void> => {
      const st = this.gossiper.state(node);
      const addr = st === undefined ? undefined : field(st, 'addr');
      if (addr === undefined) throw new MovementRefused(`no address known for ${node}`);
      const c = new AdminClient(addr, config.requestTimeoutMs);
      try {
        await fn(c);
      } finally {
        c.close();
      }
    };
    this.staged = new StagedChanges({
      id: identity.id,
      replicas: config.replicas,
      gossiper: this.gossiper,
      view: () => this.#view,
      admit: (node) => remote(node, (c) => c.admit()),
      decommission: (node) => (node === this.id ? this.decommission(false).then(() => undefined) : remote(node, (c) => c.decommission(false))),
      removeNode: (node) => this.driver.removeNode(node).then(() => undefined),
      log: log.child({ component: 'topology' }),
    });
  }

  /** Start a node: identity, store, server, gossip. Rejects with a clear error on bad config or a busy port. */
  static async start(config: NodeConfig, log: Logger): Promise<RingkvNode> {
    // A data dir without node.json is a new node; one with it is this node restarting,
    // whatever it was doing (even joining, with no tokens yet).
    const fresh = !existsSync(join(config.dataDir, 'node.json'));
    const identity = await loadIdentity(config.dataDir, { id: config.id, clusterName: config.clusterName }, Date.now());
    await saveIdentity(config.dataDir, identity);
    const known = { states: fresh ? [] : await loadMembers(config.dataDir), fresh };
    const checkpoints = await Checkpoints.open(join(config.dataDir, 'transfers.json'));
    const nodeLog = log.child({ node: identity.id });
    const store = await Store.open({
      path: join(config.dataDir, 'data'),
      durability: config.durability,
      logger: nodeLog.child({ component: 'storage' }),
    });
    const server = new grpc.Server({
      'grpc.max_receive_message_length': NODE_MAX_MESSAGE_BYTES,
      'grpc.max_send_message_length': NODE_MAX_MESSAGE_BYTES,
    });
    let port: number;
    try {
      port = await new Promise<number>((resolve, reject) =>
        server.bindAsync(config.listen, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
      );
    } catch (e) {
      await store.close();
      throw new Error(`cannot listen on ${config.listen}: ${(e as Error).message}`, { cause: e });
    }
    const host = config.listen.slice(0, config.listen.lastIndexOf(':'));
    const address = config.advertise ?? `${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${port}`;
    const node = new RingkvNode(config, nodeLog, identity, store, server, address, known, checkpoints);
    node.#serve();
    await node.#refreshLoad();
    node.#begin([...node.gossiper.peerAddresses(), ...(await loadPeers(config.dataDir))]);
    nodeLog.info(
      { address, listen: `${host}:${port}`, generation: identity.generation, status: identity.status, tokens: identity.tokens?.length ?? 0, cluster: config.clusterName },
      'node started',
    );
    return node;
  }

  get id(): string {
    return this.#identity.id;
  }

  /** Counters since start, for Admin Status. */
  counters(): Record<string, number> {
    return this.replication.counters();
  }

  get address(): string {
    return this.gossiper.address;
  }

  get status(): NodeStatus {
    return this.#identity.status;
  }

  get generation(): number {
    return this.#identity.generation;
  }

  /** The current ring (immutable), or undefined while no member owns tokens. */
  get ring(): Ring | undefined {
    return this.#view.ring;
  }

  /** Ids no longer members of the cluster (removed, or replaced). */
  get removed(): ReadonlySet<string> {
    return this.#view.removed;
  }

  /** Be told of every new ring; returns an unsubscribe function. */
  subscribe(listener: (ring: Ring | undefined) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #serve(): void {
    this.#server.addService(serviceClient('ringkv.internal.v1.Gossip').service, {
      exchange: (call: grpc.ServerUnaryCall<Parameters<typeof fromWire>[0], object>, cb: grpc.sendUnaryData<object>) => {
        if (this.#stopping) return cb({ code: grpc.status.UNAVAILABLE, details: 'node is shutting down' });
        const now = performance.now();
        const replies = this.gossiper.receive(now, fromWire(call.request));
        const refused = this.#afterGossip();
        for (const r of replies) this.#sender.send(r.to, r.message);
        if (refused !== undefined) {
          const code = refused.startsWith('cluster name') ? grpc.status.FAILED_PRECONDITION : grpc.status.INVALID_ARGUMENT;
          return cb({ code, details: refused });
        }
        cb(null, {});
      },
    });
    this.#server.addService(serviceClient('ringkv.v1.Admin').service, adminService(this));
    this.replication.addServices(this.#server);
    this.handoff.addServices(this.#server);
    this.#health.addToServer(this.#server);
    new ReflectionService(protos().definition).addToServer(this.#server);
  }

  #begin(remembered: readonly string[]): void {
    for (const o of this.gossiper.announce(remembered)) this.#sender.send(o.to, o.message);
    const tick = (): void => {
      const out = this.gossiper.tick(performance.now());
      this.#afterGossip();
      for (const o of out) this.#sender.send(o.to, o.message);
      void this.#stepJoin();
      if (!this.#closing) this.driver.step();
    };
    this.#timers.push(setInterval(tick, this.config.gossipIntervalMs));
    // Judge peers between rounds too, so that a conviction is not up to a round late.
    this.#timers.push(
      setInterval(() => {
        this.gossiper.judge(performance.now());
        this.#logEvents(); // up/down is not ownership: no ring to rebuild
      }, JUDGE_EVERY_MS),
    );
    this.#timers.push(
      setInterval(() => {
        void this.#refreshLoad();
        this.#housekeeping.checkPeers();
        // Channels only to addresses we still gossip with: the map stays bounded under churn.
        const peers = this.gossiper.peerAddresses();
        this.#sender.retain(new Set([...this.config.seeds, ...peers]));
        this.replication.retainPeers(new Set(peers));
        this.handoff.retainPeers(new Set(peers));
        this.#rememberMembers();
      }, LOAD_EVERY_MS),
    );
    this.#timers.push(setInterval(() => void this.replication.hintDelivery.run(), HINTS_EVERY_MS));
    if (this.config.backgroundLatencyFactor > 0) this.#startGovernor();
    this.#timers.push(setInterval(() => void this.#housekeeping.purgeTombstones(), PURGE_EVERY_MS));
    this.#publishIfChanged();
    this.#updateHealth();
  }

  /** Log membership events, rebuild the ring if ownership changed. Returns why a message was refused, if it was. */
  #afterGossip(): string | undefined {
    const refused = this.#logEvents();
    this.#publishIfChanged();
    return refused;
  }

  /** Log the gossiper's events; returns why a message was refused, if one was. */
  #logEvents(): string | undefined {
    let refused: string | undefined;
    for (const e of this.gossiper.takeEvents()) {
      logMembershipEvent(this.#membershipLog, this.gossiper, e);
      if (e.type === 'refused') refused = e.reason;
    }
    return refused;
  }

  /** The governor's state: the share of the configured background rates in force. */
  #governor: GovernorState = INITIAL_GOVERNOR;

  /** Background share now (1 without a governor), for hint delivery and status. */
  get backgroundShare(): number {
    return this.#governor.share;
  }

  /** Every GOVERN_EVERY_MS: foreground p99 and loop delay in, the stream throttle's rate out. */
  #startGovernor(): void {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    let taken = this.handoff.throttle.taken;
    let delivered = this.replication.hintDelivery.delivered;
    const base = this.handoff.throttle.rate;
    this.#timers.push(
      setInterval(() => {
        const background = this.handoff.outgoing.size > 0 || this.handoff.throttle.taken !== taken || this.replication.hintDelivery.delivered !== delivered;
        taken = this.handoff.throttle.taken;
        delivered = this.replication.hintDelivery.delivered;
        const p99 = this.replication.coordinator.latencies.takeP99();
        const before = this.#governor.share;
        this.#governor = govern(this.#governor, { p99, loopDelay: delay.percentile(99) / 1e6, background }, { latencyFactor: this.config.backgroundLatencyFactor });
        delay.reset();
        if (Number.isFinite(base)) this.handoff.throttle.rate = Math.max(1024, base * this.#governor.share);
        if (this.#governor.share < before && this.#governor.share <= 0.25) this.log.debug({ component: 'governor', share: this.#governor.share, p99, idleP99: this.#governor.idleP99 }, 'background work slowed: foreground latency is up');
      }, GOVERN_EVERY_MS),
    );
  }

  #savedMembers = '';
  #savingMembers = false;
  /**
   * Keep members.json in step with the member table (only when a state's generation or
   * a field changed, not on heartbeats): what a restart starts from.
   */
  #rememberMembers(): void {
    if (this.#savingMembers) return;
    const others = [...this.gossiper.states()].filter((st) => st.id !== this.id);
    const key = others.map((st) => `${st.id}/${st.generation}/${[...st.fields.values()].reduce((m, f) => Math.max(m, f.version), 0)}`).sort().join(' ');
    if (key === this.#savedMembers) return;
    this.#savingMembers = true;
    saveMembers(this.config.dataDir, others).then(
      () => {
        this.#savedMembers = key;
        this.#savingMembers = false;
      },
      (e: unknown) => {
        this.#savingMembers = false;
        this.log.warn({ err: e }, 'could not save members.json');
      },
    );
  }

  #publishIfChanged(): void {
    // The fingerprint is cheap; building a ring is not (80 ms at 1,000 nodes): build only on change.
    if (ringFingerprint(this.gossiper.states()) === this.#view.fingerprint) return;
    const view = ringFromStates(this.gossiper.states(), { tokensPerNode: this.config.tokens });
    this.#view = view;
    if (view.removed.has(this.id) && !this.#closing) {
      this.#fail(new Error(`node ${this.id} was removed from cluster ${this.config.clusterName} (ringkv removenode or a replacement): it must not serve its old ranges. To bring this machine back, move its data dir away and start it as a new node`));
      return;
    }
    this.#placement = view.ring === undefined ? undefined : { ring: view.ring, target: view.target ?? view.ring };
    // Peers read this to know that we write to the pending ranges of this view.
    this.gossiper.set('topo', view.hash);
    this.#rememberMembers();
    for (const c of view.conflicts) {
      this.log.warn({ component: 'ring', peer: c.id, token: c.token.toString(16), owner: c.owner }, 'member left out of the ring: a token of it is already owned');
    }
    this.log.info(
      { component: 'ring', owners: view.ring?.size ?? 0, tokens: view.ring?.tokens.length ?? 0, movements: view.movements.map(describeMovement), topo: view.hash },
      'ring changed',
    );
    for (const l of this.#listeners) {
      try {
        l(view.ring);
      } catch (e) {
        this.log.error({ err: e }, 'ring subscriber failed');
      }
    }
  }

  #joinBusy = false;
  /** When this node last saw another node's topology change in progress (or started). */
  #busySince = performance.now();
  /** The pull of our join's ranges, while it runs. */
  #bootstrap: Promise<void> | undefined;
  /** Take the join state machine's steps (membership/join.ts) until it waits. One run a gossip round. */
  async #stepJoin(): Promise<void> {
    if (this.#identity.status !== 'joining' || this.#joinBusy || this.#closing) return;
    this.#joinBusy = true;
    const log = this.log.child({ component: 'join' });
    try {
      for (let i = 0; i < 3 && this.#identity.status === 'joining' && !this.#closing; i++) {
        const move = this.#identity.move;
        if (this.#view.movements.some((m) => m.node !== this.id)) this.#busySince = performance.now();
        const step = nextJoinStep({
          self: { id: this.id, zone: this.config.zone, rack: this.config.rack, weight: this.config.weight },
          clusterName: this.config.clusterName,
          tokensPerNode: this.config.tokens,
          intervalMs: this.config.gossipIntervalMs,
          waitedMs: performance.now() - this.#startedAt,
          quietMs: performance.now() - this.#busySince,
          tokens: this.#identity.tokens,
          tokensAgeMs: performance.now() - this.#tokensSince,
          gossip: this.gossiper,
          view: this.#view,
          streamed: move !== undefined && this.handoff.pulled(this.#view, move),
          replaces: this.#identity.replaces ?? this.config.replace,
          standby: this.config.join === 'manual' && !this.#identity.admitted,
        });
        switch (step.kind) {
          case 'wait':
            if (step.reason !== this.#lastJoinReason) log.info({ reason: step.reason }, 'joining: waiting');
            this.#lastJoinReason = step.reason;
            return;
          case 'fail':
            return this.#fail(new Error(step.message));
          case 'show':
            this.gossiper.endShadow();
            for (const o of this.gossiper.announce()) this.#sender.send(o.to, o.message);
            log.info('shadow round over: no member has this id; showing this node to the cluster');
            return;
          case 'claim':
            if (step.clash !== undefined) log.warn({ peer: step.clash }, 'a token of ours is claimed by another member first: picking new tokens');
            // A new move id each claim: ranges pulled for an earlier claim missed the writes since.
            await this.#persist({ tokens: step.tokens, move: `join-${this.id}-${randomBytes(6).toString('hex')}`, replaces: this.#identity.replaces ?? this.config.replace });
            this.#tokensSince = performance.now();
            // Whom we replace goes with the claim: peers must never see the dead node's tokens claimed as a join.
            if (this.#identity.replaces !== undefined) this.gossiper.set('replaces', this.#identity.replaces);
            this.gossiper.set('tokens', formatTokens(step.tokens));
            this.#afterGossip();
            log.info({ tokens: step.tokens.length, alone: step.alone }, step.alone ? 'no seed answered: forming a new cluster' : 'tokens picked');
            break;
          case 'withdraw':
            await this.#withdraw();
            log.info({ first: describeMovement(step.first) }, 'another topology change goes first: claim withdrawn, joining after it');
            return;
          case 'stream':
            this.#startBootstrap(move!, log);
            return;
          case 'normal':
            await this.#persist({ status: 'normal', move: undefined });
            this.gossiper.set('status', 'normal');
            log.info({ reason: step.reason }, 'joined: status normal');
            this.#afterGossip();
            this.#updateHealth();
            return;
        }
      }
    } catch (e) {
      this.log.error({ component: 'join', err: e }, 'join step failed; retrying next round');
    } finally {
      this.#joinBusy = false;
    }
  }

  /** Give up our token claim: gossip no tokens, forget them and the move. */
  async #withdraw(): Promise<void> {
    await this.#persist({ tokens: undefined, move: undefined });
    this.gossiper.set('tokens', '');
    this.#afterGossip();
  }

  /** Pull the ranges our claim gains, in the background; the next join step sees the result. */
  #startBootstrap(move: string, log: Logger): void {
    if (this.#bootstrap !== undefined) return;
    const started = performance.now();
    const ranges = this.handoff.pullsOf(this.#view, this.id).length;
    log.info({ ranges, move }, 'streaming the ranges this node gains');
    this.#bootstrap = this.handoff.pullOwn(this.#view, move).then(
      (r) => {
        log.info({ ranges, keys: r.keys, bytes: r.bytes, ms: Math.round(performance.now() - started) }, 'ranges streamed');
        void this.#stepJoin();
      },
      (e: unknown) => {
        if (!this.#closing) log.warn({ err: (e as Error)?.message ?? String(e) }, 'streaming failed; retrying next round');
      },
    ).finally(() => (this.#bootstrap = undefined));
  }

  /** Admit this standby (--join manual): it joins now. */
  async admit(): Promise<{ move: string; message: string }> {
    if (this.#identity.status !== 'joining') throw new MovementRefused(`${this.id} is ${this.#identity.status}: only a joining standby can be admitted`);
    if (this.config.join !== 'manual' || this.#identity.admitted) return { move: '', message: `${this.id} is joining already` };
    await this.#persist({ admitted: true });
    this.gossiper.set('standby', 'false');
    this.#afterGossip();
    this.log.info({ component: 'join' }, 'admitted by an operator: joining');
    void this.#stepJoin();
    return { move: '', message: `${this.id} admitted: it joins now` };
  }

  /** Start (or, with `cancel`, withdraw) this node's decommission. */
  async decommission(cancel: boolean): Promise<{ move: string; message: string }> {
    if (cancel) {
      await this.driver.cancelDecommission();
      return { move: '', message: `${this.id}: decommission cancelled; the node is normal again` };
    }
    const move = await this.driver.decommission();
    return { move, message: `${this.id} is leaving: once every member sees it, the nodes that gain its ranges pull them; then it goes left and exits` };
  }

  async removeNode(target: string): Promise<{ move: string; message: string }> {
    const move = await this.driver.removeNode(target);
    return { move, message: move === '' ? `${target} owned no data: removed` : `removing ${target}: the nodes that gain its ranges pull them from the surviving replicas (driven by ${this.id})` };
  }

  /** Delete data of ranges this node no longer replicates (after joins). Refused while anything moves. */
  async cleanup(): Promise<{ deleted: number; kept: number; ranges: number }> {
    const view = this.#view;
    if (view.movements.length > 0) throw new MovementRefused(`${describeMovement(view.movements[0]!)}: cleanup waits until no topology change is in progress (the old copies may still be needed)`);
    if (this.#identity.status !== 'normal' || view.ring === undefined || !view.ring.has(this.id)) throw new MovementRefused(`${this.id} is ${this.#identity.status}, not an owner: nothing to clean up against`);
    const n = Math.min(this.config.replicas, view.ring.size);
    let deleted = 0, kept = 0, ranges = 0;
    for (const r of view.ring.ranges(n)) {
      if (r.replicas.includes(this.id)) continue;
      // The ring may have changed meanwhile: stop rather than delete by a stale one.
      if (this.#view !== view) throw new MovementRefused('the ring changed during cleanup; run it again');
      const res = await this.store.ranges.delete({ start: r.start, end: r.end });
      deleted += res.deleted;
      kept += res.kept;
      ranges++;
    }
    this.log.info({ component: 'topology', deleted, kept, ranges }, 'cleanup: data of ranges this node no longer replicates deleted');
    return { deleted, kept, ranges };
  }

  /** What this node pulls and sends, and the movement it drives (Admin Transfers). */
  transfers(): Record<string, unknown> {
    const d = this.driver.status;
    return {
      nodeId: this.id,
      movements: this.#view.movements.map(describeMovement),
      pulls: this.handoff.transfers.status().map((p) => ({
        move: p.move,
        requestedBy: p.from,
        startedAtMs: p.startedAt,
        finishedAtMs: p.finishedAt ?? 0,
        ranges: p.ranges.map((r) => ({ start: r.start, end: r.end, state: r.state, peer: r.source, keys: r.keys, bytes: r.bytes, share: r.share, fallbackSource: r.fallbackSource, error: r.error })),
      })),
      outgoing: [...this.handoff.outgoing].map((o) => ({ start: o.start, end: o.end, state: 'active', peer: o.to, keys: o.keys, bytes: o.bytes, share: 0, fallbackSource: false, error: '' })),
      drive: d === undefined ? undefined : { kind: d.movement.kind, node: d.movement.node, move: d.move, phase: d.phase, startedAtMs: d.startedAt, gainers: d.gainers },
      streamBytesPerSecond: Number.isFinite(this.handoff.throttle.rate) ? this.handoff.throttle.rate : 0,
    };
  }

  #failure: Error | undefined;
  /** Why the node stopped itself, if it did. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  #fail(err: Error): void {
    this.#failure = err;
    this.log.fatal({ err: err.message }, 'cannot continue: stopping');
    void this.stop();
  }

  async #persist(change: Partial<Pick<Identity, 'tokens' | 'status' | 'move' | 'removing' | 'removed' | 'replaces' | 'admitted'>>): Promise<void> {
    const next = { ...this.#identity, ...change };
    await saveIdentity(this.config.dataDir, next);
    this.#identity = next;
  }

  async #refreshLoad(): Promise<void> {
    try {
      const all = { start: 0n, end: 0n };
      const bytes = await this.store.ranges.approximateBytes(all);
      let empty = true;
      for await (const batch of this.store.ranges.scan(all, { batchCount: 1 })) {
        empty = batch.entries.length === 0 && batch.corrupt.length === 0;
        break;
      }
      this.gossiper.set('load', String(Math.round(bytes)));
      this.gossiper.set('hints', String(this.store.hints.stats().count));
      this.gossiper.set('progress', this.#progress());
      this.gossiper.set('keys', String(this.store.keyFilter.keys));
      this.gossiper.set('empty', String(empty));
    } catch (e) {
      if (!this.#stopping) this.log.warn({ component: 'storage', err: e }, 'could not measure load');
    }
  }

  /**
   * A joiner stopped before it became normal gives up its claim and tells the cluster it
   * left, so that it blocks no other topology change and shows in no status as a joiner
   * that never comes. Started again, it joins afresh (node.json still says joining).
   * (Killed with SIGKILL it cannot: it stays a pending joiner until it restarts, or an
   * operator removes it.)
   */
  async #leaveUnjoined(): Promise<void> {
    try {
      if (this.#identity.tokens !== undefined) await this.#persist({ tokens: undefined, move: undefined });
      if (this.#identity.tokens !== undefined || this.gossiper.self.fields.has('tokens')) this.gossiper.set('tokens', '');
      this.gossiper.set('status', 'left');
      const sends = this.gossiper.announce().map((o) => this.#sender.send(o.to, o.message));
      await Promise.race([Promise.all(sends), new Promise((r) => setTimeout(r, 1000))]);
      this.log.info('stopped before joining: told the cluster this node left; it joins afresh when started again');
    } catch (e) {
      this.log.warn({ err: e }, 'could not tell the cluster this joiner left');
    }
  }

  /** Ranges done/total of the movement this node streams (its join) or drives, for status; '' when none. */
  #progress(): string {
    const d = this.driver.status;
    if (d !== undefined && d.phase === 'streaming') return `${d.gainers.filter((g) => g.state === 'done').reduce((s, g) => s + g.ranges, 0)}/${d.gainers.reduce((s, g) => s + g.ranges, 0)}`;
    const move = this.#identity.move;
    if (this.#identity.status !== 'joining' || move === undefined) return '';
    const total = this.handoff.pullsOf(this.#view, this.id).length;
    const pull = this.handoff.transfers.status().find((p) => p.move === move);
    return total === 0 ? '' : `${pull?.ranges.filter((r) => r.state === 'done').length ?? 0}/${total}`;
  }

  #updateHealth(): void {
    const serving = !this.#closing && this.#identity.status === 'normal';
    this.#health.setStatus('', serving ? 'SERVING' : 'NOT_SERVING');
  }

  /**
   * Stop: NOT_SERVING first, refuse new calls, let in-flight ones finish (at most
   * shutdownGraceMs), stop gossip, close the store cleanly. Idempotent.
   */
  stop(): Promise<void> {
    this.#closing = true;
    this.#stopping ??= (async () => {
      this.#updateHealth();
      for (const t of this.#timers) clearInterval(t);
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          this.log.warn({ graceMs: this.config.shutdownGraceMs }, 'in-flight requests did not finish in time; cutting them off');
          this.#server.forceShutdown();
          resolve();
        }, this.config.shutdownGraceMs);
        this.#server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
      await this.replication.stop();
      this.handoff.stop();
      await this.#bootstrap?.catch(() => undefined);
      if (this.#identity.status === 'joining') await this.#leaveUnjoined();
      this.#sender.close();
      await this.store.close();
      this.log.info('node stopped');
      this.#markStopped();
    })();
    return this.#stopping;
  }
}
