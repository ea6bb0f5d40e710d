/**
 * One ringkv node: opens the store, serves gRPC (gossip, admin, health, reflection),
 * gossips on a timer, publishes the ring, and stops cleanly. The only place that builds
 * every part (docs/architecture.md): gossip (gossip-exchange.ts), the topology view
 * (topology-view.ts), the join (joining.ts), the movements it drives (movement-driver.ts),
 * the operator's commands (operator.ts), the governor (governor-loop.ts), members.json
 * (members-file.ts), replication and handoff. What each part is given is in
 * part-builders.ts; the data dir, store and listener a start opens first in
 * node-startup.ts; the gRPC services and the HTTP port in node-services.ts.
 *
 * Owns: lifecycle, the order parts are built and started in, and timers; node.json, of
 * which it is the one writer (the parts change it through #persist). Must not: contain
 * the algorithms (membership/, ring/, storage/ do) or the parts' logic.
 */

import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from 'pino';
import type { Store } from '../storage/index.js';
import type { Ring } from '../ring/index.js';
import type { Gossiper } from '../membership/gossiper.js';
import type { NodeStatus } from '../membership/endpoint.js';
import { catchUp } from '../membership/catch-up.js';
import type { NodeConfig } from './config.js';
import { loadPeers, saveIdentity, type Identity, type IdentityChange } from './identity.js';
import type { Handoff } from './handoff.js';
import type { MovementDriver } from './topology/movement-driver.js';
import type { StagedChanges } from './topology/staged.js';
import type { ControlPeers } from '../transport/control-wire.js';
import { NodeMetrics } from './http/metrics.js';
import type { HttpServer } from './http/http-server.js';
import type { Replication } from './replication.js';
import { DISK_EVERY_MS, PURGE_EVERY_MS, RECLAIM_EVERY_MS, refusingWrites, type Housekeeping } from './housekeeping.js';
import type { AutoCleanup } from './topology/auto-cleanup.js';
import type { RepairRuns } from '../repair/runs.js';
import type { Joining } from './topology/joining.js';
import type { Operator } from './topology/operator.js';
import type { GovernorLoop } from './governor-loop.js';
import type { MembersFile } from './members-file.js';
import type { GossipExchange } from './gossip-exchange.js';
import type { TopologyView } from './topology/topology-view.js';
import { WallClock } from './wall-clock.js';
import { NodeSecurity } from '../security/node-security.js';
import type { Admission } from '../transport/admission.js';
import { fileLimitAdvice } from './file-limit.js';
import type { BucketTable } from '../buckets/index.js';
import type { BucketSync } from './bucket-sync.js';
import type { BucketPurge } from './bucket-purge.js';
import type { TransfersResponse } from '../transport/generated/ringkv/v1/TransfersResponse.js';
import type { Verifier } from '../repair/verify.js';
import { listen, loadDataDir, openStore, type Opened } from './node-startup.js';
import { addServices, startHttp } from './node-services.js';
import {
  gossipHintTargets,
  metricSources,
  newAutoCleanup,
  newBucketPurge,
  newBucketSync,
  newControlPeers,
  newGossip,
  newGovernor,
  newHandoff,
  newHousekeeping,
  newJoining,
  newMembersFile,
  newMovementDriver,
  newOperator,
  newReplication,
  newRepairRuns,
  newStaged,
  newTopologyView,
  newVerifier,
  type NodeLinks,
} from './part-builders.js';

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
  /** What the parts read and do through the node (part-builders.ts). */
  readonly #links: NodeLinks;
  readonly #timers: NodeJS.Timeout[] = [];
  #stopping: Promise<void> | undefined;
  /** Set first thing in stop(): health turns NOT_SERVING and peers are told, while calls are still served. */
  #draining = false;
  /** Set once the drain is over: new calls are refused. */
  #closing = false;
  /** False from a start until no peer holds hints for this node (catch-up.ts). */
  #caughtUp = false;
  readonly #startedAt = performance.now();
  /** Settles `stopped`. */
  #markStopped!: () => void;
  /** Settles once the node has stopped, whoever stopped it (a signal, or the node itself on a fatal error). */
  readonly stopped = new Promise<void>((resolve) => (this.#markStopped = resolve));

  private constructor(opened: Opened) {
    const { config, nodeLog: log, store, security, buckets } = opened;
    this.config = config;
    this.buckets = buckets;
    this.clock = opened.clock;
    this.log = log;
    this.#identity = opened.identity;
    this.store = store;
    this.#server = opened.server;
    this.security = security;
    this.#links = this.#newLinks();
    const links = this.#links;
    // The parts are built in this order, each assigned before the next is built: the later ones' closures read it.
    this.#gossip = newGossip(this, links, opened.address, opened.known);
    this.gossiper = this.#gossip.gossiper;
    gossipHintTargets(this);
    this.#housekeeping = newHousekeeping(this, links);
    this.#members = newMembersFile(this, links);
    this.#topology = newTopologyView(this, links, this.#members);
    this.replication = newReplication(this, links);
    this.handoff = newHandoff(this, links, opened.checkpoints);
    this.repairs = newRepairRuns(this, links);
    this.#governor = newGovernor(this);
    this.verifier = newVerifier(this, links);
    store.onCorrupt = (key) => this.verifier.restoreSoon(key);
    this.metrics = new NodeMetrics(metricSources(this, links, () => this.#ringChanges));
    store.onClockEntries = (entries) => this.metrics.clockEntries.observe(entries);
    this.#topology.subscribe(() => {
      this.#ringChanges++;
      this.repairs.trackKept(); // new ranges' trees are built, dropped ranges' deleted
    });
    this.driver = newMovementDriver(this, links);
    this.#operator = newOperator(this, links);
    this.#autoCleanup = newAutoCleanup(this, links, this.#operator);
    this.#joining = newJoining(this, links);
    const bucketLog = log.child({ component: 'buckets' });
    this.bucketPurge = newBucketPurge(this, bucketLog, opened.purged);
    this.bucketSync = newBucketSync(this, links, bucketLog);
    this.#control = newControlPeers(this, links);
    this.staged = newStaged(this, links, this.#control, opened.stage);
  }

  /** What the parts read and do through the node: each gets what it needs, as it is now. */
  #newLinks(): NodeLinks {
    return {
      id: this.#identity.id,
      replicas: this.config.replicas,
      closing: () => this.#closing,
      stopping: () => this.#stopping !== undefined,
      identity: () => this.#identity,
      view: () => this.#topology.current,
      topology: () => this.#topology,
      housekeeping: () => this.#housekeeping,
      control: () => this.#control,
      persist: (change) => this.#persist(change),
      announce: () => this.#gossip.announceNow(),
      afterGossip: () => void this.#gossip.after(),
      fail: (err) => this.#fail(err),
      refuse: () => (this.#closing ? 'node is shutting down' : undefined),
      addressOf: (peer) => this.#gossip.addressOf(peer),
      updateHealth: () => this.#updateHealth(),
      knownDown: (peer) => this.#knownDown(peer),
      topologyLog: this.log.child({ component: 'topology' }),
    };
  }

  /** Start a node: identity, store, server, gossip. Rejects with a clear error on bad config or a busy port. */
  static async start(config: NodeConfig, log: Logger): Promise<RingkvNode> {
    // Credentials first: a node whose certificates cannot be used touches nothing.
    const security = new NodeSecurity(config, log.child({ component: 'security' }));
    const files = fileLimitAdvice(config.maxConnections);
    if (files !== undefined) log.warn(files);
    const clock = new WallClock(config.clockOffsetMs);
    const dir = await loadDataDir(config, clock, log);
    const { identity, buckets, nodeLog } = dir;
    const pacing = { share: (): number => 1 }; // the governor's, once the node has one
    const store = await openStore(config, clock, identity, buckets, nodeLog, () => pacing.share());
    const { server, admission, listening, host } = await listen(config, security, store);
    const port = listening.port;
    // resolveConfig refused wildcards; advertise is unset only when the port was 0.
    const address = config.advertise ?? `${host}:${port}`;
    const node = new RingkvNode({ ...dir, config, clock, store, server, security, address });
    pacing.share = () => node.backgroundShare;
    node.#listening = listening;
    node.#admission = admission;
    addServices(node, node.#links, node.#server, node.#gossip, node.#health);
    if (config.http !== undefined) node.#http = await startHttp(config.http, node, node.#links, node.#gossip);
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

  /** Be told of every new ring; returns an unsubscribe function. */
  subscribe(listener: (ring: Ring | undefined) => void): () => void {
    return this.#topology.subscribe(listener);
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
