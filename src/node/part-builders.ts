/**
 * How each of a node's parts is built from the node (RingkvNode's constructor, node.ts,
 * calls these in the order the parts must be built): gossip, housekeeping, members.json,
 * the topology view, replication, handoff, repairs, the governor, the verifier, what the
 * metrics read, the movement driver, the operator, auto cleanup, the join, the bucket
 * purge and sync, peers' Control and staged changes. Each builder takes the node's public
 * parts (NodeParts: the node itself) and what the parts read and do through it
 * (NodeLinks); a part built later than the one being built is read only inside a closure,
 * when it runs, never while building.
 *
 * Owns: what each part is given. Must not: hold state, start anything, or contain the
 * parts' logic (each part's own file does).
 */

import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Store } from '../storage/index.js';
import { tokenHex, type RangeUnit, type Ring } from '../ring/index.js';
import type { Gossiper } from '../membership/gossiper.js';
import { field, type EndpointState } from '../membership/endpoint.js';
import type { RingView } from '../membership/ring-view.js';
import type { Placement } from '../replication/coordinator.js';
import { ControlPeers } from '../transport/control-wire.js';
import type { Checkpoints } from '../streaming/checkpoints.js';
import type { Stage } from '../cluster/stage.js';
import { RepairRuns } from '../repair/runs.js';
import { Verifier } from '../repair/verify.js';
import type { TokenRange } from '../storage/keys.js';
import type { NodeSecurity } from '../security/node-security.js';
import { placementKey, type BucketTable } from '../buckets/index.js';
import type { NodeConfig } from './config.js';
import type { Identity, IdentityChange } from './identity.js';
import { Handoff } from './handoff.js';
import { Replication } from './replication.js';
import { Housekeeping } from './housekeeping.js';
import { GovernorLoop } from './governor-loop.js';
import { MembersFile } from './members-file.js';
import type { MetricSources } from './http/metric-sources.js';
import { GossipExchange } from './gossip-exchange.js';
import type { WallClock } from './wall-clock.js';
import { BucketSync } from './bucket-sync.js';
import { BucketPurge, keysHeld } from './bucket-purge.js';
import { MovementDriver, UnitSkipped } from './topology/movement-driver.js';
import { loadRemovalRepair, saveRemovalRepair, type RemovalRepairProgress } from './topology/removal-repair-file.js';
import { StagedChanges } from './topology/staged.js';
import { saveStage } from './topology/stage-file.js';
import { AutoCleanup } from './topology/auto-cleanup.js';
import { Joining } from './topology/joining.js';
import { Operator } from './topology/operator.js';
import { TopologyView } from './topology/topology-view.js';

/** How long a replica asked to repair a removal's unit (Control RepairRange) may take, ms (a repair's own peer timeout, RepairRuns' timeoutMs below, is as long). */
const UNIT_REPAIR_TIMEOUT_MS = 5 * 60_000;

/** What the parts read and do through the node (RingkvNode #links): each gets what it needs, as it is now. */
export interface NodeLinks {
  readonly id: string;
  readonly replicas: number;
  /** True once the drain is over and new calls are refused. */
  readonly closing: () => boolean;
  /** True once the node has begun to stop. */
  readonly stopping: () => boolean;
  /** This node's identity (node.json) as it is now. */
  readonly identity: () => Identity;
  /** The topology view in force. */
  readonly view: () => RingView;
  /** The topology view's keeper (topology-view.ts): its placement, and the update after gossip changed. */
  readonly topology: () => TopologyView;
  /** The periodic chores (housekeeping.ts), with the disk as last checked. */
  readonly housekeeping: () => Housekeeping;
  /** Peers' Control services. */
  readonly control: () => ControlPeers;
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
  /** Set the health services from the node's state now. */
  readonly updateHealth: () => void;
  /** A peer gossip does not show up that we heard from since we started, or that stayed silent past the settle window. */
  readonly knownDown: (peer: string) => boolean;
  /** The logger of the topology parts (movements, cleanup, staged changes). */
  readonly topologyLog: Logger;
}

/** The node's public parts and commands, as the builders read them (the node itself: a part built later is there once a closure runs). */
export interface NodeParts {
  readonly id: string;
  readonly config: NodeConfig;
  readonly log: Logger;
  readonly store: Store;
  readonly clock: WallClock;
  readonly security: NodeSecurity;
  readonly buckets: BucketTable;
  readonly gossiper: Gossiper;
  readonly replication: Replication;
  readonly handoff: Handoff;
  readonly repairs: RepairRuns;
  readonly verifier: Verifier;
  readonly driver: MovementDriver;
  readonly bucketPurge: BucketPurge;
  /** The current ring, or undefined while no member owns tokens. */
  readonly ring: Ring | undefined;
  /** Ids no longer members of the cluster (removed, or replaced). */
  readonly removed: ReadonlySet<string>;
  /** Background share now (the governor's). */
  readonly backgroundShare: number;
  /** Counters since start, for Admin Status. */
  counters(): Record<string, number>;
  /** Stop the node. */
  stop(): Promise<void>;
  /** Start (or, with `cancel`, withdraw) this node's decommission. */
  decommission(cancel: boolean): Promise<{ move: string; message: string }>;
}

/** Gossip in and out: the gossiper, seeded with the members the data dir remembered. */
export function newGossip(
  node: NodeParts,
  links: NodeLinks,
  address: string,
  known: { states: EndpointState[]; fresh: boolean },
): GossipExchange {
  const { config, log } = node;
  return new GossipExchange({
    config,
    identity: links.identity(),
    address,
    known,
    changed: () => links.topology().update(),
    stopping: links.stopping,
    peerCredentials: node.security.peerCredentials,
    log,
  });
}

/** Whom this node holds hints for, gossiped as it changes: a restarted peer waits for them. */
export function gossipHintTargets({ store, gossiper, log }: NodeParts): void {
  store.hints.onTargets = (targets) => {
    try {
      gossiper.set('hinted', targets.join(','));
    } catch (e) {
      // Over a gossip field's 64 KiB (thousands of targets): restarted peers then wait catchUpMs at most.
      log.warn({ targets: targets.length, err: (e as Error).message }, 'cannot gossip whom this node holds hints for');
    }
  };
  store.hints.onTargets([...store.hints.targets().keys()].sort());
}

/** The periodic chores (housekeeping.ts): the disk check, tombstone purges, clock pruning, expired values, peers' N. */
export function newHousekeeping(node: NodeParts, { replicas, closing }: NodeLinks): Housekeeping {
  const { store, gossiper, log } = node;
  return new Housekeeping({
    store,
    gossiper,
    replicas,
    closing,
    confirmedBefore: (t) => node.repairs.confirmedBefore(t),
    log,
  });
}

/** members.json: the members gossip knows, remembered in the data dir. */
export function newMembersFile(node: NodeParts, links: NodeLinks): MembersFile {
  return new MembersFile({
    dataDir: node.config.dataDir,
    id: links.id,
    states: () => node.gossiper.states(),
    log: node.log,
  });
}

/** The topology view, which follows gossip and remembers the members on each change. */
export function newTopologyView(node: NodeParts, { id, closing, fail }: NodeLinks, members: MembersFile): TopologyView {
  const { config, gossiper, log } = node;
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
export function newReplication(node: NodeParts, links: NodeLinks): Replication {
  const { id, view, refuse } = links;
  const { config, store, buckets, gossiper, clock, log } = node;
  const notServing = (): string | undefined =>
    links.closing()
      ? 'it is shutting down'
      : links.identity().status !== 'normal'
        ? `it is ${links.identity().status}, not yet a member`
        : undefined;
  const placement = (): Placement | undefined => links.topology().placement;
  const backgroundShare = (): number => node.backgroundShare;
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
    peerCredentials: node.security.peerCredentials,
    now: clock.now,
    log,
  });
}

/** Range streaming: the service peers pull from and this node's pulls, resumed from `checkpoints`. */
export function newHandoff(node: NodeParts, { id, addressOf, refuse }: NodeLinks, checkpoints: Checkpoints): Handoff {
  const { config, store, buckets, gossiper, log } = node;
  const repaired = (range: TokenRange, n: number | undefined, at: number): void => node.repairs.record(range, at, n);
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
      peerCredentials: node.security.peerCredentials,
      log,
    },
    checkpoints,
  );
}

/** Anti-entropy repairs of this node's ranges with their replicas, over the handoff's wire. */
export function newRepairRuns(node: NodeParts, { id, view }: NodeLinks): RepairRuns {
  const { store, gossiper, handoff, clock, log } = node;
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
export function newGovernor(node: NodeParts): GovernorLoop {
  const { handoff, config, log } = node;
  const { hintDelivery, coordinator } = node.replication;
  return new GovernorLoop({
    throttle: handoff.throttle,
    outgoing: handoff.outgoing,
    hintDelivery,
    repairing: () => node.repairs.active,
    latencies: coordinator.latencies,
    latencyFactor: config.backgroundLatencyFactor,
    log,
  });
}

/** The verification pass: records re-read from disk, a corrupt one fetched again from a replica up now. */
export function newVerifier(node: NodeParts, { id, replicas, topology }: NodeLinks): Verifier {
  const { store, handoff, gossiper, config, clock, log } = node;
  return new Verifier({
    store,
    // The key's other replicas up now, for its bucket's n, on the ring of the change in progress (or the current one).
    replicasOf: (key) => {
      const ring = topology().placement?.target;
      const n = handoff.classes().nOf(key) ?? replicas;
      return ring === undefined
        ? []
        : ring.preferenceList(placementKey(key), Math.min(n, ring.size)).filter((x) => x !== id && gossiper.isUp(x));
    },
    fetch: (peer, key) =>
      node.replication.replicas.call(peer, { op: 'read', key }, Date.now() + config.requestTimeoutMs),
    log: log.child({ component: 'verify' }),
    now: clock.now,
  });
}

/** What the metrics read when Prometheus scrapes; `ringChanges`: times the current ring changed since start. */
export function metricSources(node: NodeParts, links: NodeLinks, ringChanges: () => number): MetricSources {
  const gossiper = node.gossiper;
  const own = (name: string): number => Number(field(gossiper.state(node.id)!, name) ?? '0');
  let buckets = { digest: '', byName: new Map<string, number>() };
  return {
    counters: () => node.counters(),
    // Rebuilt when the table changes: it is read on every client request.
    buckets: () => {
      if (buckets.digest !== node.buckets.digest())
        buckets = {
          digest: node.buckets.digest(),
          byName: new Map(node.buckets.list().map((b) => [b.name, b.props.n])),
        };
      return buckets.byName;
    },
    members: () => {
      const removed = node.removed;
      const now = performance.now();
      return [...gossiper.states()].map((st) => ({
        id: st.id,
        status: removed.has(st.id) ? 'removed' : (field(st, 'status') ?? ''),
        up: st.id === node.id || gossiper.isUp(st.id),
        phi: st.id === node.id ? 0 : gossiper.detector.phi(st.id, now),
        self: st.id === node.id,
      }));
    },
    ring: () => ({
      hash: links.view().hash,
      changes: ringChanges(),
      ranges: node.ring?.tokens.length ?? 0,
    }),
    load: () => ({ bytes: own('load'), keys: own('keys') }),
    streams: () => {
      const pulls: Record<string, number> = {};
      let receivedBytes = 0,
        receivedKeys = 0,
        outgoingBytes = 0;
      for (const p of node.handoff.transfers.status()) {
        if (p.finishedAt !== undefined) continue;
        for (const r of p.ranges) {
          pulls[r.state] = (pulls[r.state] ?? 0) + 1;
          receivedBytes += r.bytes;
          receivedKeys += r.keys;
        }
      }
      for (const o of node.handoff.outgoing) outgoingBytes += o.bytes;
      return { pulls, receivedBytes, receivedKeys, outgoing: node.handoff.outgoing.size, outgoingBytes };
    },
    certificate: () => {
      const m = node.security.tls?.material;
      return m === undefined ? undefined : { subject: m.subject, validTo: m.validTo.getTime() };
    },
    repair: () => {
      const r = node.repairs.status;
      return {
        running: node.repairs.active,
        ranges: r.ranges ?? 0,
        done: r.done ?? 0,
        failed: r.failed ?? 0,
        backgroundRanges: r.background.ranges,
        backgroundBytes: r.background.bytes,
      };
    },
    trees: () => node.store.trees?.stats,
    replicaBytesSent: () => node.replication.replicaBytesSent,
    disk: () => links.housekeeping().disk,
    verify: () => node.verifier.totals,
    damagedKeys: () => node.store.damagedKeys,
  };
}

/** The movement driver: the decommission or removal this node drives, its hints handed over and units repaired. */
export function newMovementDriver(node: NodeParts, links: NodeLinks): MovementDriver {
  const { id, replicas, view, persist, announce, afterGossip, topologyLog } = links;
  const { config, gossiper, handoff } = node;
  const gossip = (f: Record<string, string>): void => {
    for (const [name, value] of Object.entries(f)) gossiper.set(name, value);
    afterGossip();
  };
  const handOverHints = (): Promise<number> =>
    node.replication.hintDelivery.handOver((target, key) => {
      const ring = links.topology().placement?.target;
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
    exit: () => void node.stop(),
    handOverHints,
    fetchTimeoutMs: 10 * 60_000,
    repairUnit: (u) => repairUnit(node, links, u),
    removalRepair,
    knownDown: (x) => links.knownDown(x),
    log: topologyLog,
  });
}

/** A unit this node replicates it repairs itself; another it asks its first replica to repair (Control RepairRange). */
async function repairUnit(node: NodeParts, { id, control }: NodeLinks, u: RangeUnit): Promise<unknown> {
  if (u.replicas.includes(id))
    return node.repairs.repairOne(
      { start: u.start, end: u.end },
      u.replicas.filter((x) => x !== id),
      u.n,
    );
  const unit = {
    start: tokenHex(u.start),
    end: tokenHex(u.end),
    n: u.n ?? 0,
    classes: [...node.handoff.classes().classes],
    replicas: [...u.replicas],
  };
  return control()
    .repairRange(u.replicas[0]!, unit, UNIT_REPAIR_TIMEOUT_MS)
    .catch((e: unknown) => {
      // A node of an older release: it cannot repair for others; the unit is left to background repair.
      if ((e as { code?: unknown })?.code === grpc.status.UNIMPLEMENTED)
        throw new UnitSkipped(
          `${u.replicas[0]} runs a release that cannot repair for a removal (no Control RepairRange)`,
        );
      throw e;
    });
}

/** The operator's commands (decommission, removal, cleanup) and transfer reports. */
export function newOperator(node: NodeParts, { id, view, identity }: NodeLinks): Operator {
  const { store, driver, handoff, log } = node;
  return new Operator({ id, store, driver, handoff, view, identity, log });
}

/** Cleanup of ranges this node no longer owns, run on its own once ownership has stood still (--cleanup-after-ms). */
export function newAutoCleanup(node: NodeParts, links: NodeLinks, operator: Operator): AutoCleanup {
  const { id, view, topologyLog } = links;
  return new AutoCleanup({
    delayMs: node.config.cleanupAfterMs,
    now: node.clock.now,
    view,
    owner: () => links.identity().status === 'normal' && (view().ring?.has(id) ?? false),
    cleanup: () => operator.cleanup(),
    log: topologyLog,
  });
}

/** This node's join, with the room its disk has for the ranges it pulls. */
export function newJoining(node: NodeParts, links: NodeLinks): Joining {
  const { config, gossiper, handoff, log } = node;
  const updateHealth = (): void => links.updateHealth();
  const room = (): number | undefined => {
    const d = links.housekeeping().disk;
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

/** The purge of deleted buckets' keys here, resuming the deletions `purged` does not list yet. */
export function newBucketPurge(node: NodeParts, log: Logger, purged: readonly string[]): BucketPurge {
  const { config, store, buckets, gossiper } = node;
  return new BucketPurge({ dataDir: config.dataDir, store, table: buckets, gossiper, log }, purged);
}

/** The bucket table's gossip and sync with peers; a change kicks the purge of deleted buckets' keys. */
export function newBucketSync(node: NodeParts, { id, control }: NodeLinks, log: Logger): BucketSync {
  const { config, buckets, gossiper, clock, store } = node;
  const purge = node.bucketPurge;
  return new BucketSync({
    id,
    dataDir: config.dataDir,
    table: buckets,
    gossiper,
    now: clock.now,
    fetch: (peer) => control().buckets(peer),
    keysHeld: (peer, name) => (peer === id ? keysHeld(store, name, 1) : control().bucketKeys(peer, name, 1)),
    changed: () => void purge.kick(),
    removed: () => node.removed,
    log,
  });
}

/** Peers' Control services, dialled with this node's credentials. */
export function newControlPeers({ config, security }: NodeParts, { id, addressOf }: NodeLinks): ControlPeers {
  return new ControlPeers(id, config.clusterName, addressOf, security.peerCredentials, config.requestTimeoutMs, () =>
    security.peerToken(),
  );
}

/** Staged topology changes, restored from `stage`: a commit admits, decommissions and removes through peers' Control. */
export function newStaged(
  node: NodeParts,
  { id, replicas, view, topologyLog }: NodeLinks,
  control: ControlPeers,
  stage: Stage,
): StagedChanges {
  const { config, handoff, gossiper, driver } = node;
  return new StagedChanges({
    id,
    replicas,
    classes: () => handoff.classes().classes,
    gossiper,
    view,
    admit: (peer) => control.admit(peer).then(() => undefined),
    decommission: (peer) => (peer === id ? node.decommission(false) : control.decommission(peer)).then(() => undefined),
    removeNode: (peer) => driver.removeNode(peer).then(() => undefined),
    saved: { stage, save: (s) => saveStage(config.dataDir, s) },
    log: topologyLog,
  });
}
