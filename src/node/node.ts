/**
 * One ringkv node: opens the store, serves gRPC (gossip, admin, health, reflection),
 * gossips on a timer, publishes the ring, and stops cleanly. The only place that builds
 * every part (docs/architecture.md): gossip (gossip-exchange.ts), the topology view
 * (topology-view.ts), the join (joining.ts), the movements it drives (movement-driver.ts),
 * the operator's commands (operator.ts), the governor (governor-loop.ts), members.json
 * (members-file.ts), replication and handoff.
 *
 * Owns: lifecycle, wiring and timers; node.json, of which it is the one writer (the parts
 * change it through #persist). Must not: contain the algorithms (membership/, ring/,
 * storage/ do) or the parts' logic.
 */

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import { ReflectionService } from '@grpc/reflection';
import type { Logger } from 'pino';
import { Store, type KeptTreesOptions } from '../storage/index.js';
import { tokenHex, type RangeUnit, type Ring } from '../ring/index.js';
import type { Gossiper } from '../membership/gossiper.js';
import { field, type EndpointState, type NodeStatus } from '../membership/endpoint.js';
import type { RingView } from '../membership/ring-view.js';
import { catchUp } from '../membership/catch-up.js';
import type { Placement } from '../replication/coordinator.js';
import { NODE_MAX_MESSAGE_BYTES, protos, serviceClient } from '../transport/protos.js';
import type { NodeConfig } from './config.js';
import { loadIdentity, loadMembers, loadPeers, saveIdentity, type Identity, type IdentityChange } from './identity.js';
import { Handoff } from './handoff.js';
import { Checkpoints } from '../streaming/checkpoints.js';
import { Throttle } from '../streaming/throttle.js';
import { MovementDriver, UnitSkipped } from './topology/movement-driver.js';
import { repairUnitFor } from './topology/unit-repair.js';
import { loadRemovalRepair, saveRemovalRepair, type RemovalRepairProgress } from './topology/removal-repair-file.js';
import { StagedChanges } from './topology/staged.js';
import { CONTROL_SERVICE, ControlPeers, controlService } from '../transport/control-wire.js';
import { gather } from '../transport/gather.js';
import { loadStage, saveStage } from './topology/stage-file.js';
import { EMPTY_STAGE, type Stage } from '../cluster/stage.js';
import { keyClasses } from '../cluster/n-classes.js';
import { adminService, bucketsReply, ringReply, statusReply } from '../transport/admin-service.js';
import { NodeMetrics } from './http/metrics.js';
import { HttpServer } from './http/http-server.js';
import { Replication } from './replication.js';
import { DISK_EVERY_MS, Housekeeping, PURGE_EVERY_MS, RECLAIM_EVERY_MS, refusingWrites } from './housekeeping.js';
import { AutoCleanup } from './topology/auto-cleanup.js';
import { RepairRuns } from '../repair/runs.js';
import type { TokenRange } from '../storage/keys.js';
import { Joining } from './topology/joining.js';
import { Operator } from './topology/operator.js';
import { GovernorLoop } from './governor-loop.js';
import { MembersFile } from './members-file.js';
import { GossipExchange } from './gossip-exchange.js';
import { TopologyView } from './topology/topology-view.js';
import { WallClock } from './wall-clock.js';
import { NodeSecurity } from '../security/node-security.js';
import { Admission, GuardedServer, listenAdmitted } from '../transport/admission.js';
import { fileLimitAdvice } from './file-limit.js';
import { bucketOf, placementKey, type BucketTable } from '../buckets/index.js';
import { BucketSync, loadBuckets } from './bucket-sync.js';
import { BucketPurge, keysHeld, loadPurged } from './bucket-purge.js';
import type { TransfersResponse } from '../transport/generated/ringkv/v1/TransfersResponse.js';
import { Verifier } from '../repair/verify.js';

/** A connection with no call open for this long is closed, ms. */
const IDLE_CONNECTION_MS = 60_000;
/** How often the node refreshes the load it gossips, ms. */
const LOAD_EVERY_MS = 5000;
/** How often the node judges its peers between gossip rounds, ms. */
const JUDGE_EVERY_MS = 250;
/** How often hints go to replicas that are up again, ms (a run is a no-op when none are held). */
const HINTS_EVERY_MS = 1000;
/** How often kept trees are checked for a due rebuild, ms (a rebuild is due days apart). */
const REBUILD_CHECK_MS = 60_000;
/** The health service (grpc.health.v1) that is SERVING while this node's store takes writes, and NOT_SERVING while its disk refuses them. */
export const WRITES_HEALTH_SERVICE = 'ringkv.writes';
/** How often the governor looks at foreground latency and sets the background share, ms. */
const GOVERN_EVERY_MS = 500;
/** How long a replica asked to repair a removal's unit (Control RepairRange) may take, ms (a repair's own peer timeout, RepairRuns' timeoutMs below, is as long). */
const UNIT_REPAIR_TIMEOUT_MS = 5 * 60_000;

/** What the parts read and do through the node (RingkvNode #links): each gets what it needs, as it is now. */
interface NodeLinks {
  readonly id: string;
  readonly replicas: number;
  /** True once the drain is over and new calls are refused. */
  readonly closing: () => boolean;
  /** This node's identity (node.json) as it is now. */
  readonly identity: () => Identity;
  /** The topology view in force. */
  readonly view: () => RingView;
  /** Save a change to node.json and take it. */
  readonly persist: (change: IdentityChange) => Promise<void>;
  /** Tell every peer our state now. */
  readonly announce: () => Promise<void>;
  /** Log membership events and rebuild the ring if ownership changed, after our gossip fields changed. */
  readonly afterGossip: () => void;
  /** Stop the node on a fatal error. */
  readonly fail: (err: Error) => void;
  /** Why replica and streaming calls are refused now ('node is shutting down'), if they are. */
  readonly refuse: () => string | undefined;
  /** A peer's gossiped address. */
  readonly addressOf: (peer: string) => string | undefined;
  /** The logger of the topology parts (movements, cleanup, staged changes). */
  readonly topologyLog: Logger;
}

export class RingkvNode {
  readonly config: NodeConfig;
  readonly log: Logger;
  readonly store: Store;
  /** Wall time as this node reads it (wall-clock.ts): the real clock, skewed only in fault-injection runs. */
  readonly clock: WallClock;
  readonly gossiper: Gossiper;
  /** Coordinator, replica calls and hinted handoff (replication.ts). */
  readonly replication: Replication;
  /** Range streaming: the service peers pull from, and this node's pulls (handoff.ts). */
  readonly handoff: Handoff;
  /** The decommission or removal this node drives (movement-driver.ts). */
  readonly driver: MovementDriver;
  /** Staged topology changes (plan / commit / clear) on this node (staged.ts). */
  readonly staged: StagedChanges;
  /** The topology view in force and the ring's subscribers (topology-view.ts). */
  readonly #topology: TopologyView;
  /** This node's join, while it is joining (joining.ts). */
  readonly #joining: Joining;
  /** The operator's commands and transfer reports (operator.ts). */
  readonly #operator: Operator;
  /** The share of the configured background rates in force (governor-loop.ts). */
  readonly #governor: GovernorLoop;
  readonly #members: MembersFile;
  readonly #housekeeping: Housekeeping;
  readonly #autoCleanup: AutoCleanup;
  /** Anti-entropy repairs this node runs (ringkv repair). */
  readonly repairs: RepairRuns;
  /** The verification pass (repair/verify.ts): records re-read from disk, a corrupt one restored from its replicas. */
  readonly verifier: Verifier;
  /** Prometheus metrics (metrics.ts), served with the status page when --http is set. */
  readonly metrics: NodeMetrics;
  #http: HttpServer | undefined;
  /** Peers' Control services: a staged commit's admits and decommissions, the status page's transfers. */
  #control: ControlPeers;
  /** Times the current ring changed since start, for ringkv_ring_changes_total. */
  #ringChanges = 0;
  /** Aborted at stop: background loops end. */
  readonly #background = new AbortController();
  #identity: Identity;
  readonly #server: grpc.Server;
  /** The TCP listener and what it lets in (transport/admission.ts). */
  #listening!: { port: number; close: () => void };
  #admission!: Admission;
  /** TLS and credentials (security/node-security.ts). */
  readonly security: NodeSecurity;
  /** The cluster's buckets as this node knows them (buckets/table.ts; kept in buckets.json by bucket-sync.ts). */
  readonly buckets: BucketTable;
  /** The table's gossip, sync and changes (bucket-sync.ts). */
  readonly bucketSync: BucketSync;
  /** Deleted buckets' keys reclaimed here (bucket-purge.ts). */
  readonly bucketPurge: BucketPurge;
  /**
   * '' (readiness): SERVING while the node is normal and not stopping. 'liveness':
   * SERVING while the process runs, so that a probe does not restart a node that is
   * NOT_SERVING for a long join or decommission.
   */
  readonly #health = new HealthImplementation({ '': 'NOT_SERVING', liveness: 'SERVING' });
  /** Gossip in and out, with the gossiper (gossip-exchange.ts). */
  readonly #gossip: GossipExchange;
  readonly #timers: NodeJS.Timeout[] = [];
  #stopping: Promise<void> | undefined;
  /** Set first thing in stop(): health turns NOT_SERVING and peers are told, while calls are still served. */
  #draining = false;
  /** Set once the drain is over: new calls are refused. */
  #closing = false;
  /** False from a start until no peer holds hints for this node (catch-up.ts). */
  #caughtUp = false;
  readonly #startedAt = performance.now();
  /** Whether our state of a peer is news since start, not what the members file remembered. */
  #markStopped!: () => void;
  /** Settles once the node has stopped, whoever stopped it (a signal, or the node itself on a fatal error). */
  readonly stopped = new Promise<void>((resolve) => (this.#markStopped = resolve));

  private constructor(
    config: NodeConfig,
    log: Logger,
    identity: Identity,
    store: Store,
    server: grpc.Server,
    security: NodeSecurity,
    address: string,
    known: { states: EndpointState[]; fresh: boolean },
    checkpoints: Checkpoints,
    clock: WallClock,
    stage: Stage,
    buckets: BucketTable,
    purged: readonly string[],
  ) {
    this.config = config;
    this.buckets = buckets;
    this.clock = clock;
    this.log = log;
    this.#identity = identity;
    this.store = store;
    this.#server = server;
    this.security = security;
    // The parts are built in this order, each assigned before the next is built: the later ones' closures read it.
    this.#gossip = this.#newGossip(address, known);
    this.gossiper = this.#gossip.gossiper;
    this.#gossipHintTargets();
    const links = this.#links();
    this.#housekeeping = this.#newHousekeeping(links);
    this.#members = new MembersFile({
      dataDir: config.dataDir,
      id: links.id,
      states: () => this.gossiper.states(),
      log,
    });
    this.#topology = this.#newTopologyView(links);
    this.replication = this.#newReplication(links);
    this.handoff = this.#newHandoff(links, checkpoints);
    this.repairs = this.#newRepairRuns(links);
    this.#governor = this.#newGovernor();
    this.verifier = this.#newVerifier(links);
    store.onCorrupt = (key) => this.verifier.restoreSoon(key);
    this.metrics = new NodeMetrics(this.#metricSources());
    store.onClockEntries = (entries) => this.metrics.clockEntries.observe(entries);
    this.#topology.subscribe(() => {
      this.#ringChanges++;
      this.repairs.trackKept(); // new ranges' trees are built, dropped ranges' deleted
    });
    this.driver = this.#newMovementDriver(links);
    const { id, view, identity: identityNow } = links;
    const { driver, handoff } = this;
    this.#operator = new Operator({ id, store, driver, handoff, view, identity: identityNow, log });
    this.#autoCleanup = this.#newAutoCleanup(links);
    this.#joining = this.#newJoining(links);
    const bucketLog = log.child({ component: 'buckets' });
    this.bucketPurge = new BucketPurge(
      { dataDir: config.dataDir, store, table: buckets, gossiper: this.gossiper, log: bucketLog },
      purged,
    );
    this.bucketSync = this.#newBucketSync(links, bucketLog);
    this.#control = new ControlPeers(
      id,
      config.clusterName,
      links.addressOf,
      security.peerCredentials,
      config.requestTimeoutMs,
      () => security.peerToken(),
    );
    this.staged = this.#newStaged(links, stage);
  }

  /** Gossip in and out: the gossiper, seeded with the members the data dir remembered. */
  #newGossip(address: string, known: { states: EndpointState[]; fresh: boolean }): GossipExchange {
    const { config, log } = this;
    return new GossipExchange({
      config,
      identity: this.#identity,
      address,
      known,
      changed: () => this.#topology.update(),
      stopping: () => this.#stopping !== undefined,
      peerCredentials: this.security.peerCredentials,
      log,
    });
  }

  /** Whom this node holds hints for, gossiped as it changes: a restarted peer waits for them. */
  #gossipHintTargets(): void {
    const { store, gossiper, log } = this;
    store.hints.onTargets = (targets) => {
      try {
        gossiper.set('hinted', targets.join(','));
      } catch (e) {
        // Over a gossip field's 64 KiB (thousands of targets): restarted peers then wait catchUpMs at most.
        log.warn(
          { targets: targets.length, err: (e as Error).message },
          'cannot gossip whom this node holds hints for',
        );
      }
    };
    store.hints.onTargets([...store.hints.targets().keys()].sort());
  }

  /** What the parts read and do through the node: each gets what it needs, as it is now. */
  #links(): NodeLinks {
    return {
      id: this.#identity.id,
      replicas: this.config.replicas,
      closing: () => this.#closing,
      identity: () => this.#identity,
      view: () => this.#topology.current,
      persist: (change) => this.#persist(change),
      announce: () => this.#gossip.announceNow(),
      afterGossip: () => void this.#gossip.after(),
      fail: (err) => this.#fail(err),
      refuse: () => (this.#closing ? 'node is shutting down' : undefined),
      addressOf: (peer) => this.#gossip.addressOf(peer),
      topologyLog: this.log.child({ component: 'topology' }),
    };
  }

  /** The periodic chores (housekeeping.ts): the disk check, tombstone purges, clock pruning, expired values, peers' N. */
  #newHousekeeping({ replicas, closing }: NodeLinks): Housekeeping {
    const { store, gossiper, log } = this;
    return new Housekeeping({
      store,
      gossiper,
      replicas,
      closing,
      confirmedBefore: (t) => this.repairs.confirmedBefore(t),
      log,
    });
  }

  /** The topology view, which follows gossip and remembers the members on each change. */
  #newTopologyView({ id, closing, fail }: NodeLinks): TopologyView {
    const { config, gossiper, log } = this;
    const members = this.#members;
    return new TopologyView({
      id,
      clusterName: config.clusterName,
      tokensPerNode: config.tokens,
      gossiper,
      closing,
      fail,
      changed: () => members.remember(),
      log,
    });
  }

  /** Coordinator, replica calls and hinted handoff, placed on the topology in force. */
  #newReplication({ id, view, refuse }: NodeLinks): Replication {
    const { config, store, buckets, gossiper, clock, log } = this;
    const notServing = (): string | undefined =>
      this.#closing
        ? 'it is shutting down'
        : this.#identity.status !== 'normal'
          ? `it is ${this.#identity.status}, not yet a member`
          : undefined;
    const placement = (): Placement | undefined => this.#topology.placement;
    const backgroundShare = (): number => this.#governor.share;
    return new Replication({
      id,
      config,
      store,
      buckets,
      gossiper,
      placement,
      removed: () => view().removed,
      backgroundShare,
      notServing,
      refuseReplicaCalls: refuse,
      peerCredentials: this.security.peerCredentials,
      now: clock.now,
      log,
    });
  }

  /** Range streaming: the service peers pull from and this node's pulls, resumed from `checkpoints`. */
  #newHandoff({ id, addressOf, refuse }: NodeLinks, checkpoints: Checkpoints): Handoff {
    const { config, store, buckets, gossiper, log } = this;
    const repaired = (range: TokenRange, n: number | undefined, at: number): void => this.repairs.record(range, at, n);
    return new Handoff(
      {
        id,
        config,
        store,
        buckets,
        addressOf,
        isUp: (peer) => peer === id || gossiper.isUp(peer),
        refuse,
        repaired,
        peerCredentials: this.security.peerCredentials,
        log,
      },
      checkpoints,
    );
  }

  /** Anti-entropy repairs of this node's ranges with their replicas, over the handoff's wire. */
  #newRepairRuns({ id, view }: NodeLinks): RepairRuns {
    const { store, gossiper, handoff, clock, log } = this;
    return new RepairRuns({
      id,
      classes: () => handoff.classes().classes,
      only: (n) => handoff.served(n),
      store,
      ring: () => view().ring,
      isUp: (peer) => peer === id || gossiper.isUp(peer),
      wire: handoff.repairPeers,
      timeoutMs: 5 * 60_000,
      now: clock.now,
      log: log.child({ component: 'repair' }),
    });
  }

  /** The governor: the share of the background rates that foreground latency allows. */
  #newGovernor(): GovernorLoop {
    const { handoff, config, log } = this;
    const { hintDelivery, coordinator } = this.replication;
    return new GovernorLoop({
      throttle: handoff.throttle,
      outgoing: handoff.outgoing,
      hintDelivery,
      repairing: () => this.repairs.active,
      latencies: coordinator.latencies,
      latencyFactor: config.backgroundLatencyFactor,
      log,
    });
  }

  /** The verification pass: records re-read from disk, a corrupt one fetched again from a replica up now. */
  #newVerifier({ id, replicas }: NodeLinks): Verifier {
    const { store, handoff, gossiper, config, clock, log } = this;
    return new Verifier({
      store,
      // The key's other replicas up now, for its bucket's n, on the ring of the change in progress (or the current one).
      replicasOf: (key) => {
        const ring = this.#topology.placement?.target;
        const n = handoff.classes().nOf(key) ?? replicas;
        return ring === undefined
          ? []
          : ring.preferenceList(placementKey(key), Math.min(n, ring.size)).filter((x) => x !== id && gossiper.isUp(x));
      },
      fetch: (node, key) =>
        this.replication.replicas.call(node, { op: 'read', key }, Date.now() + config.requestTimeoutMs),
      log: log.child({ component: 'verify' }),
      now: clock.now,
    });
  }

  /** The movement driver: the decommission or removal this node drives, its hints handed over and units repaired. */
  #newMovementDriver(links: NodeLinks): MovementDriver {
    const { id, replicas, view, persist, announce, afterGossip, topologyLog } = links;
    const { config, gossiper, handoff } = this;
    const gossip = (f: Record<string, string>): void => {
      for (const [name, value] of Object.entries(f)) gossiper.set(name, value);
      afterGossip();
    };
    const handOverHints = (): Promise<number> =>
      this.replication.hintDelivery.handOver((target, key) => {
        const ring = this.#topology.placement?.target;
        const n = handoff.classes().nOf(key) ?? replicas;
        return ring
          ?.preferenceList(placementKey(key), Math.min(n, ring.size))
          .find((x) => x !== id && x !== target && gossiper.isUp(x));
      });
    const removalRepair = {
      load: (move: string) => loadRemovalRepair(config.dataDir, move),
      save: (p: RemovalRepairProgress | undefined) => saveRemovalRepair(config.dataDir, p),
    };
    return new MovementDriver({
      id,
      replicas,
      gossiper,
      handoff,
      view,
      identity: links.identity,
      persist,
      gossip,
      announce,
      exit: () => void this.stop(),
      handOverHints,
      fetchTimeoutMs: 10 * 60_000,
      repairUnit: (u) => this.#repairUnit(id, u),
      removalRepair,
      knownDown: (x) => this.#knownDown(x),
      log: topologyLog,
    });
  }

  /** A unit this node replicates it repairs itself; another it asks its first replica to repair (Control RepairRange). */
  async #repairUnit(id: string, u: RangeUnit): Promise<unknown> {
    if (u.replicas.includes(id))
      return this.repairs.repairOne(
        { start: u.start, end: u.end },
        u.replicas.filter((x) => x !== id),
        u.n,
      );
    const unit = {
      start: tokenHex(u.start),
      end: tokenHex(u.end),
      n: u.n ?? 0,
      classes: [...this.handoff.classes().classes],
      replicas: [...u.replicas],
    };
    return this.#control.repairRange(u.replicas[0]!, unit, UNIT_REPAIR_TIMEOUT_MS).catch((e: unknown) => {
      // A node of an older release: it cannot repair for others; the unit is left to background repair.
      if ((e as { code?: unknown })?.code === grpc.status.UNIMPLEMENTED)
        throw new UnitSkipped(
          `${u.replicas[0]} runs a release that cannot repair for a removal (no Control RepairRange)`,
        );
      throw e;
    });
  }

  /** Cleanup of ranges this node no longer owns, run on its own once ownership has stood still (--cleanup-after-ms). */
  #newAutoCleanup({ id, view, topologyLog }: NodeLinks): AutoCleanup {
    const operator = this.#operator;
    return new AutoCleanup({
      delayMs: this.config.cleanupAfterMs,
      now: this.clock.now,
      view,
      owner: () => this.#identity.status === 'normal' && (view().ring?.has(id) ?? false),
      cleanup: () => operator.cleanup(),
      log: topologyLog,
    });
  }

  /** This node's join, with the room its disk has for the ranges it pulls. */
  #newJoining(links: NodeLinks): Joining {
    const { config, gossiper, handoff, log } = this;
    const updateHealth = (): void => this.#updateHealth();
    const room = (): number | undefined => {
      const d = this.#housekeeping.disk;
      return d === undefined ? undefined : Math.max(0, d.freeBytes - d.floorBytes);
    };
    return new Joining({
      config,
      gossiper,
      handoff,
      identity: links.identity,
      persist: links.persist,
      view: links.view,
      afterGossip: links.afterGossip,
      announce: links.announce,
      fail: links.fail,
      updateHealth,
      closing: links.closing,
      room,
      log,
    });
  }

  /** The bucket table's gossip and sync with peers; a change kicks the purge of deleted buckets' keys. */
  #newBucketSync({ id }: NodeLinks, log: Logger): BucketSync {
    const { config, buckets, gossiper, clock, store } = this;
    const purge = this.bucketPurge;
    return new BucketSync({
      id,
      dataDir: config.dataDir,
      table: buckets,
      gossiper,
      now: clock.now,
      fetch: (peer) => this.#control.buckets(peer),
      keysHeld: (node, name) => (node === id ? keysHeld(store, name, 1) : this.#control.bucketKeys(node, name, 1)),
      changed: () => void purge.kick(),
      removed: () => this.removed,
      log,
    });
  }

  /** Staged topology changes, restored from `stage`: a commit admits, decommissions and removes through peers' Control. */
  #newStaged({ id, replicas, view, topologyLog }: NodeLinks, stage: Stage): StagedChanges {
    const { config, handoff, gossiper, driver } = this;
    const control = this.#control;
    return new StagedChanges({
      id,
      replicas,
      classes: () => handoff.classes().classes,
      gossiper,
      view,
      admit: (node) => control.admit(node).then(() => undefined),
      decommission: (node) =>
        (node === id ? this.decommission(false) : control.decommission(node)).then(() => undefined),
      removeNode: (node) => driver.removeNode(node).then(() => undefined),
      saved: { stage, save: (s) => saveStage(config.dataDir, s) },
      log: topologyLog,
    });
  }

  /** What the metrics read when Prometheus scrapes. */
  #metricSources(): ConstructorParameters<typeof NodeMetrics>[0] {
    const gossiper = this.gossiper;
    const own = (name: string): number => Number(field(gossiper.state(this.id)!, name) ?? '0');
    let buckets = { digest: '', byName: new Map<string, number>() };
    return {
      counters: () => this.counters(),
      // Rebuilt when the table changes: it is read on every client request.
      buckets: () => {
        if (buckets.digest !== this.buckets.digest())
          buckets = {
            digest: this.buckets.digest(),
            byName: new Map(this.buckets.list().map((b) => [b.name, b.props.n])),
          };
        return buckets.byName;
      },
      members: () => {
        const removed = this.removed;
        const now = performance.now();
        return [...gossiper.states()].map((st) => ({
          id: st.id,
          status: removed.has(st.id) ? 'removed' : (field(st, 'status') ?? ''),
          up: st.id === this.id || gossiper.isUp(st.id),
          phi: st.id === this.id ? 0 : gossiper.detector.phi(st.id, now),
          self: st.id === this.id,
        }));
      },
      ring: () => ({
        hash: this.#topology.current.hash,
        changes: this.#ringChanges,
        ranges: this.ring?.tokens.length ?? 0,
      }),
      load: () => ({ bytes: own('load'), keys: own('keys') }),
      streams: () => {
        const pulls: Record<string, number> = {};
        let receivedBytes = 0,
          receivedKeys = 0,
          outgoingBytes = 0;
        for (const p of this.handoff.transfers.status()) {
          if (p.finishedAt !== undefined) continue;
          for (const r of p.ranges) {
            pulls[r.state] = (pulls[r.state] ?? 0) + 1;
            receivedBytes += r.bytes;
            receivedKeys += r.keys;
          }
        }
        for (const o of this.handoff.outgoing) outgoingBytes += o.bytes;
        return { pulls, receivedBytes, receivedKeys, outgoing: this.handoff.outgoing.size, outgoingBytes };
      },
      certificate: () => {
        const m = this.security.tls?.material;
        return m === undefined ? undefined : { subject: m.subject, validTo: m.validTo.getTime() };
      },
      repair: () => {
        const r = this.repairs.status;
        return {
          running: this.repairs.active,
          ranges: r.ranges ?? 0,
          done: r.done ?? 0,
          failed: r.failed ?? 0,
          backgroundRanges: r.background.ranges,
          backgroundBytes: r.background.bytes,
        };
      },
      trees: () => this.store.trees?.stats,
      replicaBytesSent: () => this.replication.replicaBytesSent,
      disk: () => this.#housekeeping.disk,
      verify: () => this.verifier.totals,
      damagedKeys: () => this.store.damagedKeys,
    };
  }

  /** Start a node: identity, store, server, gossip. Rejects with a clear error on bad config or a busy port. */
  static async start(config: NodeConfig, log: Logger): Promise<RingkvNode> {
    // Credentials first: a node whose certificates cannot be used touches nothing.
    const security = new NodeSecurity(config, log.child({ component: 'security' }));
    const files = fileLimitAdvice(config.maxConnections);
    if (files !== undefined) log.warn(files);
    const clock = new WallClock(config.clockOffsetMs);
    const { identity, known, checkpoints, buckets, purged, nodeLog, stage } = await loadDataDir(config, clock, log);
    const pacing = { share: (): number => 1 }; // the governor's, once the node has one
    const store = await openStore(config, clock, identity, buckets, nodeLog, () => pacing.share());
    const { server, admission, listening, host } = await listen(config, security, store);
    const port = listening.port;
    // resolveConfig refused wildcards; advertise is unset only when the port was 0.
    const address = config.advertise ?? `${host}:${port}`;
    const node = new RingkvNode(
      config,
      nodeLog,
      identity,
      store,
      server,
      security,
      address,
      known,
      checkpoints,
      clock,
      stage,
      buckets,
      purged,
    );
    pacing.share = () => node.backgroundShare;
    node.#listening = listening;
    node.#admission = admission;
    node.#serve();
    if (config.http !== undefined) await node.#startHttp(config.http);
    await node.#refreshLoad();
    node.#begin([...node.gossiper.peerAddresses(), ...(await loadPeers(config.dataDir))]);
    void node.bucketPurge.kick(); // deletions not purged before a restart, or learned from buckets.json
    nodeLog.info(
      {
        address,
        listen: `${host}:${port}`,
        http: node.#http?.address,
        generation: identity.generation,
        status: identity.status,
        tokens: identity.tokens?.length ?? 0,
        cluster: config.clusterName,
      },
      'node started',
    );
    return node;
  }

  /** Serve the status page and /metrics on `listen` (--http); when that fails the node stops and the error is thrown. */
  async #startHttp(listen: string): Promise<void> {
    const { security } = this;
    try {
      this.#http = await HttpServer.start(listen, {
        metrics: this.metrics,
        status: (n) => statusReply(this, n),
        ring: (n) => ringReply(this, n),
        events: () => this.#gossip.events.recent(),
        buckets: () => bucketsReply(this.buckets),
        transfers: () => this.#clusterTransfers(),
        refusal: (req, path) => {
          const details = security.httpRefusal(req.headers.authorization);
          if (details !== undefined)
            security.refused({
              path: `HTTP ${path}`,
              peer: req.socket.remoteAddress ?? 'unknown',
              code: grpc.status.UNAUTHENTICATED,
              details,
            });
          return details;
        },
        log: this.log.child({ component: 'http' }),
      });
    } catch (e) {
      await this.stop();
      throw e;
    }
  }

  get id(): string {
    return this.#identity.id;
  }

  /** Counters since start, for Admin Status. */
  counters(): Record<string, number> {
    const a = this.#admission;
    return {
      ...this.replication.counters(),
      connections: a.connections,
      connectionsIdleClosed: a.counts.idleClosed,
      callsRefusedOverLimit: a.counts.refusedOverLimit,
      requestsUndecodable: a.counts.undecodable,
      requestsArrivedLate: a.counts.arrivedLate,
    };
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
    return this.#topology.current.ring;
  }

  /** The ring once the topology change in progress is done; `ring` itself when nothing moves. */
  get targetRing(): Ring | undefined {
    return this.#topology.current.target;
  }

  /** Ids no longer members of the cluster (removed, or replaced). */
  get removed(): ReadonlySet<string> {
    return this.#topology.current.removed;
  }

  /**
   * Transfers of every member this node holds up and still a member, asked in parallel
   * through their Control service (3 s each), this node's own too: the status page's
   * /api/transfers, as `ringkv transfers` gathers them.
   */
  #clusterTransfers(): Promise<{ replies: unknown[]; unreachable: string[] }> {
    const removed = this.removed;
    const members = [...this.gossiper.states()]
      .filter(
        (st) =>
          (st.id === this.id || this.gossiper.isUp(st.id)) && !removed.has(st.id) && field(st, 'status') !== 'left',
      )
      .map((st) => st.id);
    return gather(members, (node) => this.#control.transfers(node, 3000));
  }

  /** Be told of every new ring; returns an unsubscribe function. */
  subscribe(listener: (ring: Ring | undefined) => void): () => void {
    return this.#topology.subscribe(listener);
  }

  #serve(): void {
    this.#gossip.addServices(this.#server);
    this.#server.addService(serviceClient('ringkv.v1.Admin').service, adminService(this));
    this.replication.addServices(
      this.#server,
      (impl, role) => this.metrics.instrument(impl, role),
      (operation, role, code, seconds, siblings) => this.metrics.observe(operation, role, code, seconds, siblings),
    );
    this.handoff.addServices(this.#server);
    this.#server.addService(
      serviceClient(CONTROL_SERVICE).service,
      controlService({
        clusterName: this.config.clusterName,
        admit: () => this.admit(),
        decommission: () => this.decommission(false),
        transfers: () => this.transfers(),
        buckets: () => this.buckets.entries(),
        bucketKeys: (name, limit) => keysHeld(this.store, name, limit),
        repairRange: (r) =>
          repairUnitFor(
            {
              id: this.id,
              replicas: this.config.replicas,
              view: () => this.#topology.current,
              isUp: (peer) => peer === this.id || this.gossiper.isUp(peer),
              checkClasses: (n, classes) => void this.handoff.served(n, classes),
              repairOne: (range, peers, n) => this.repairs.repairOne(range, peers, n),
            },
            r,
          ),
        refuse: () => (this.#closing ? 'node is shutting down' : undefined),
        log: this.log.child({ component: 'control' }),
      }),
    );
    this.#health.addToServer(this.#server);
    new ReflectionService(protos().definition).addToServer(this.#server);
  }

  #begin(remembered: readonly string[]): void {
    this.#gossip.announce(remembered);
    const tick = (): void => {
      this.#gossip.round();
      this.metrics.gossipRounds.inc();
      void this.#joining.step();
      this.#checkCatchUp();
      // Each round, not with the 5 s figures: a finished join must not show "streaming" for long.
      this.gossiper.set('progress', this.#operator.progress());
      if (!this.#closing) this.bucketSync.round();
      if (!this.#closing) this.driver.step();
      if (!this.#closing) this.#autoCleanup.tick();
    };
    this.#timers.push(setInterval(tick, this.config.gossipIntervalMs));
    this.#timers.push(setInterval(() => this.#gossip.judge(), JUDGE_EVERY_MS));
    this.#timers.push(
      setInterval(() => {
        void this.#refreshLoad();
        this.#housekeeping.checkPeers();
        // Channels only to addresses we still gossip with: the map stays bounded under churn.
        const peers = this.gossiper.peerAddresses();
        this.#gossip.retain(peers);
        this.replication.retainPeers(new Set(peers));
        this.handoff.retainPeers(new Set(peers));
        this.#control.retain(new Set([...peers, this.#gossip.addressOf(this.id) ?? '']));
        this.#members.remember();
        this.repairs.trackKept(); // also after a bucket-class change; nothing to do when nothing changed
      }, LOAD_EVERY_MS),
    );
    this.#timers.push(setInterval(() => void this.replication.hintDelivery.run(), HINTS_EVERY_MS));
    if (this.config.backgroundLatencyFactor > 0) {
      this.#governor.start();
      this.#timers.push(setInterval(() => this.#governor.tick(), GOVERN_EVERY_MS));
    }
    // Hourly, or a tenth of a shorter grace period.
    this.#timers.push(
      setInterval(
        () => void this.#housekeeping.purgeTombstones(),
        Math.min(PURGE_EVERY_MS, Math.max(1000, this.config.tombstoneGraceMs / 10)),
      ),
    );
    this.#timers.push(
      setInterval(
        () => void this.#housekeeping.pruneClocks(),
        Math.min(PURGE_EVERY_MS, Math.max(1000, this.store.settings.clockPruneGraceMs / 10)),
      ),
    );
    this.#timers.push(setInterval(() => void this.#housekeeping.reclaimExpired(), RECLAIM_EVERY_MS));
    this.#timers.push(setInterval(() => void this.#checkDisk(), DISK_EVERY_MS));
    // Kept trees due for their long-schedule rebuild are queued (built one at a time, paced, in the background).
    if (this.store.trees !== undefined && this.config.treeRebuildIntervalMs > 0)
      this.#timers.push(setInterval(() => this.store.trees?.rebuildDue(), REBUILD_CHECK_MS));
    if (this.config.repairIntervalMs > 0) {
      const quiet = (): boolean => this.#topology.current.movements.length === 0 && this.#identity.status === 'normal';
      void this.repairs.runBackground({
        intervalMs: this.config.repairIntervalMs,
        bytesPerSecond: this.config.repairBytesPerSecond,
        share: () => this.#governor.share,
        quiet,
        signal: this.#background.signal,
      });
    }
    if (this.config.verifyIntervalMs > 0)
      void this.verifier.runBackground({
        intervalMs: this.config.verifyIntervalMs,
        bytesPerSecond: this.config.verifyBytesPerSecond,
        share: () => this.#governor.share,
        signal: this.#background.signal,
      });
    this.#topology.update();
    this.#updateHealth();
    this.staged.resume();
  }

  /** Background share now (1 without a governor), for hint delivery and status. */
  get backgroundShare(): number {
    return this.#governor.share;
  }

  /** Admit this standby (--join manual): it joins now. */
  admit(): Promise<{ move: string; message: string }> {
    return this.#joining.admit();
  }

  /** Start (or, with `cancel`, withdraw) this node's decommission. */
  decommission(cancel: boolean): Promise<{ move: string; message: string }> {
    return this.#operator.decommission(cancel);
  }

  removeNode(target: string): Promise<{ move: string; message: string }> {
    return this.#operator.removeNode(target);
  }

  /** Delete data of ranges this node no longer replicates (after joins). Refused while anything moves. */
  cleanup(): Promise<{ deleted: number; kept: number; ranges: number }> {
    return this.#operator.cleanup();
  }

  /** What this node pulls and sends, and the movement it drives (Admin Transfers). */
  transfers(): TransfersResponse {
    return this.#operator.transfers();
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

  async #persist(change: IdentityChange): Promise<void> {
    const next = { ...this.#identity, ...change };
    await saveIdentity(this.config.dataDir, next);
    this.#identity = next;
    // A join or leave just finished: its load now, not at the next 5 s refresh (progress goes each round).
    if (change.status !== undefined) void this.#refreshLoad();
  }

  async #refreshLoad(): Promise<void> {
    try {
      // Not ranges.approximateBytes: that misses writes LevelDB has not flushed yet.
      const bytes = await this.store.approximateLoad();
      const empty = !(await this.store.ranges.holdsAny());
      this.gossiper.set('load', String(Math.round(bytes)));
      this.gossiper.set('hints', String(this.store.hints.stats().count));
      this.gossiper.set('keys', String(this.store.keyFilter.keys));
      this.gossiper.set('empty', String(empty));
      this.#gossipDisk();
    } catch (e) {
      if (!this.#stopping) this.log.warn({ component: 'storage', err: e }, 'could not measure load');
    }
  }

  #updateHealth(): void {
    const serving = !this.#draining && this.#identity.status === 'normal' && this.#caughtUp;
    this.#health.setStatus('', serving ? 'SERVING' : 'NOT_SERVING');
    // Reads and coordination go on while the disk refuses writes; this service says whether its own store takes them.
    this.#health.setStatus(
      WRITES_HEALTH_SERVICE,
      serving && !refusingWrites(this.#housekeeping.disk) ? 'SERVING' : 'NOT_SERVING',
    );
  }

  /** The disk's free space, each second: gossiped, and in health, at once when the node starts or stops refusing writes. */
  async #checkDisk(): Promise<void> {
    if (!(await this.#housekeeping.checkDisk())) return;
    this.#gossipDisk();
    this.#updateHealth();
  }

  #gossipDisk(): void {
    const d = this.#housekeeping.disk;
    if (d !== undefined)
      this.gossiper.set('disk', `${d.failed ? 'failed' : d.low ? 'low' : 'ok'} ${d.freeBytes} ${d.totalBytes}`);
  }

  /** ms to hear from peers after a start before one not heard from counts as down. */
  get #settleMs(): number {
    return 3 * this.config.gossipIntervalMs + 1000;
  }

  /** A peer gossip does not show up that we heard from since we started, or that stayed silent past the settle window. */
  #knownDown(id: string): boolean {
    return (
      !this.gossiper.isUp(id) &&
      (this.gossiper.heardSinceStart(id) || performance.now() - this.#startedAt >= this.#settleMs)
    );
  }

  /**
   * A started (or restarted) member reports NOT_SERVING until no peer it hears holds hints
   * for it, at most catchUpMs (catch-up.ts): a rolling restart that waits for health then
   * moves on only once the node has what it missed. Checked each gossip round.
   */
  #checkCatchUp(): void {
    if (this.#caughtUp || this.#identity.status !== 'normal') return;
    const elapsedMs = performance.now() - this.#startedAt;
    const c = catchUp({
      self: this.id,
      states: this.gossiper.states(),
      isUp: (id) => this.gossiper.isUp(id),
      heardSinceStart: (id) => this.gossiper.heardSinceStart(id),
      elapsedMs,
      settleMs: this.#settleMs,
      maxWaitMs: this.config.catchUpMs,
    });
    if (!c.done) return;
    this.#caughtUp = true;
    if (c.gaveUp)
      this.log.warn(
        { owedBy: c.waitingFor, ms: Math.round(elapsedMs) },
        'serving with hints still held for this node (catchUpMs passed): they arrive in the background',
      );
    else this.log.info({ ms: Math.round(elapsedMs) }, 'caught up: no peer holds hints for this node; serving');
    this.#updateHealth();
  }

  /**
   * Stop (docs/operations.md#drain-and-rolling-restarts): NOT_SERVING first; tell every
   * peer we stop (they hold us down at once and stop sending to us) and keep serving for
   * drainMs; then refuse new calls, let in-flight ones finish (at most shutdownGraceMs),
   * stop gossip, close the store cleanly. Idempotent.
   */
  stop(): Promise<void> {
    this.#draining = true;
    this.#stopping ??= (async () => {
      this.#updateHealth();
      const peersUp = [...this.gossiper.states()].some((s) => s.id !== this.id && this.gossiper.isUp(s.id));
      if (this.#identity.status === 'normal' && peersUp && this.#failure === undefined) {
        this.gossiper.set('stopping', 'true');
        const started = performance.now();
        await this.#gossip.announceNow();
        this.log.info(
          { toldMs: Math.round(performance.now() - started), drainMs: this.config.drainMs },
          'draining: peers told this node stops',
        );
        await new Promise((r) => setTimeout(r, this.config.drainMs));
      }
      this.#closing = true;
      this.staged.close();
      for (const t of this.#timers) clearInterval(t);
      this.#background.abort();
      this.#governor.stop();
      this.#listening.close();
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          this.log.warn(
            { graceMs: this.config.shutdownGraceMs },
            'in-flight requests did not finish in time; cutting them off',
          );
          this.#server.forceShutdown();
          resolve();
        }, this.config.shutdownGraceMs);
        this.#server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
        this.replication.drainStreams();
      });
      this.#admission.destroyAll();
      await this.#http?.close();
      await this.replication.stop();
      await this.bucketPurge.stop();
      this.handoff.stop();
      this.#control.close();
      await this.#joining.stop();
      this.#gossip.close();
      this.security.close();
      await this.store.close();
      this.log.info('node stopped');
      this.#markStopped();
    })();
    return this.#stopping;
  }
}

/**
 * The store's kept trees as the settings say (--tree-depth, --tree-rebuild-*), a key's
 * class from the bucket table, and builds and rebuilds paced as background repair is: to
 * --repair-bytes-per-second of data read (a build reads its range once, as a scan repair
 * did) times the governor's `share` (at least 5%, as runBackground).
 */
function keptTreesOptions(config: NodeConfig, buckets: BucketTable, share: () => number): KeptTreesOptions {
  const classes = keyClasses(buckets);
  const throttle = new Throttle(config.repairBytesPerSecond, {
    sleep: (ms) => new Promise((r) => setTimeout(r, ms).unref?.()),
  });
  return {
    depth: config.treeDepth,
    classOf: (key) => classes.nOf(key),
    rebuildIntervalMs: config.treeRebuildIntervalMs,
    rebuildJitterMs: config.treeRebuildJitterMs,
    pace: (bytes) => {
      throttle.rate = config.repairBytesPerSecond * Math.max(0.05, share());
      return throttle.take(bytes);
    },
  };
}

/** What a starting node reads from its data dir (loadDataDir), and the logger that names it. */
interface DataDir {
  readonly identity: Identity;
  readonly known: { states: EndpointState[]; fresh: boolean };
  readonly checkpoints: Checkpoints;
  readonly buckets: BucketTable;
  readonly purged: readonly string[];
  readonly nodeLog: Logger;
  readonly stage: Stage;
}

/** Read what the data dir holds for this node, saving its identity with the generation this start takes; staged changes that cannot be read are dropped with a warning. */
async function loadDataDir(config: NodeConfig, clock: WallClock, log: Logger): Promise<DataDir> {
  // A data dir without node.json is a new node; one with it is this node restarting,
  // whatever it was doing (even joining, with no tokens yet).
  const fresh = !existsSync(join(config.dataDir, 'node.json'));
  const identity = await loadIdentity(config.dataDir, { id: config.id, clusterName: config.clusterName }, clock.now());
  await saveIdentity(config.dataDir, identity);
  const known = { states: fresh ? [] : await loadMembers(config.dataDir), fresh };
  const checkpoints = await Checkpoints.open(join(config.dataDir, 'transfers.json'));
  const buckets = await loadBuckets(config.dataDir, config.replicas);
  const purged = await loadPurged(config.dataDir);
  const nodeLog = log.child({ node: identity.id });
  const stage = await loadStage(config.dataDir).catch((e: unknown) => {
    nodeLog.warn({ component: 'topology', err: (e as Error).message }, 'staged changes not restored');
    return EMPTY_STAGE;
  });
  return { identity, known, checkpoints, buckets, purged, nodeLog, stage };
}

/** Open the store in the data dir: a key's sibling policy from its bucket, kept trees paced by `share` (--kept-trees on), the disk floor. */
function openStore(
  config: NodeConfig,
  clock: WallClock,
  identity: Identity,
  buckets: BucketTable,
  log: Logger,
  share: () => number,
): Promise<Store> {
  return Store.open({
    path: join(config.dataDir, 'data'),
    durability: config.durability,
    tombstoneGraceMs: config.tombstoneGraceMs,
    ...(config.clockPruneGraceMs !== undefined ? { clockPruneGraceMs: config.clockPruneGraceMs } : {}),
    now: clock.now,
    logger: log.child({ component: 'storage' }),
    // A key's sibling policy is its bucket's, as this node's table has it now.
    policyOf: (key) => buckets.props(bucketOf(key))?.siblings ?? 'siblings',
    ...(config.keptTrees === 'on' ? { keptTrees: keptTreesOptions(config, buckets, share) } : {}),
    disk: { label: identity.id, ...(config.minFreeDisk !== undefined ? { floorBytes: config.minFreeDisk } : {}) },
  });
}

/** The gRPC server and what it admits, listening on --listen (`host` as given there). */
interface Listener {
  readonly server: GuardedServer;
  readonly admission: Admission;
  readonly listening: { port: number; close: () => void };
  readonly host: string;
}

/** Make the gRPC server and listen on --listen; when that fails, close the credentials and the store and reject. */
async function listen(config: NodeConfig, security: NodeSecurity, store: Store): Promise<Listener> {
  const admission = new Admission(
    () => ({ maxConnections: config.maxConnections, maxCallsPerConnection: config.maxCallsPerConnection }),
    (r) => security.refused(r),
  );
  const server = new GuardedServer({
    'grpc.max_receive_message_length': NODE_MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': NODE_MAX_MESSAGE_BYTES,
    // HTTP/2's own cap on a connection's streams, a little above the call limit that
    // answers RESOURCE_EXHAUSTED: so that a raw client cannot open streams without end.
    'grpc.max_concurrent_streams': config.maxCallsPerConnection + 16,
    // A connection with no call for a minute is closed (GOAWAY): clients reconnect on
    // their next call. It also closes connections HTTP/2 gave up on after a peer's
    // protocol error, which Node otherwise leaves open (the socket and its descriptor).
    'grpc.max_connection_idle_ms': IDLE_CONNECTION_MS,
    interceptors: [admission.interceptor(), ...security.interceptors()],
  });
  const colon = config.listen.lastIndexOf(':');
  const host = config.listen.slice(0, colon);
  let listening: { port: number; close: () => void };
  try {
    listening = await listenAdmitted(
      server,
      host,
      Number(config.listen.slice(colon + 1)),
      security.serverCredentials(),
      admission,
    );
  } catch (e) {
    security.close();
    await store.close();
    throw new Error(`cannot listen on ${config.listen}: ${(e as Error).message}`, { cause: e });
  }
  return { server, admission, listening, host };
}
