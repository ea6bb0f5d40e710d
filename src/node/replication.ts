/**
 * The node's replication parts, wired: the replica calls (this node's LocalReplica, peers
 * over gRPC), the coordinator behind the KeyValue service, hinted handoff, and the two
 * services a node serves for them.
 *
 * Owns: the wiring and its settings. Must not: hold state of its own (node.ts owns the
 * lifecycle; replication/ and handoff/ the logic).
 */
import type { BucketTable } from '../buckets/index.js';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Store } from '../storage/index.js';
import type { Gossiper } from '../membership/gossiper.js';
import { field } from '../membership/endpoint.js';
import { Coordinator, type Placement } from '../replication/coordinator.js';
import { LocalReplica, withLocal } from '../replication/local-replica.js';
import type { ReplicaApi } from '../replication/replica-api.js';
import { HintDelivery, hintRoute } from '../hints/delivery.js';
import { Reachability, observed } from '../replication/reachability.js';
import { GrpcReplicas, ReplicaServer } from '../transport/replica-wire.js';
import type { NodeConfig } from './config.js';
import { KeyValueService } from '../transport/kv-service.js';
import { keyClasses } from '../cluster/n-classes.js';

/** A peer with this node's calls in flight that answers none of them this long is left out of targets, ms (reachability.ts). */
const PEER_SILENCE_MS = 1000;

/**
 * Replica calls a node takes from peers at once, per client request it may coordinate
 * itself: every node coordinates, and each request sends a replica at most one call.
 */
const REPLICA_CALLS_PER_REQUEST = 4;

export interface ReplicationDeps {
  readonly id: string;
  readonly config: NodeConfig;
  readonly store: Store;
  /** The bucket table requests are located in (buckets/table.ts). */
  readonly buckets: BucketTable;
  readonly gossiper: Gossiper;
  placement(): Placement | undefined;
  /** Ids no longer members (removed or replaced): their hints go to the keys' replicas. */
  removed(): ReadonlySet<string>;
  /** Share of the hint replay rate the governor allows now. */
  backgroundShare(): number;
  /** Why the node cannot coordinate now (joining, stopping), or undefined. */
  notServing(): string | undefined;
  /** Why the node cannot take replica calls now (stopping), or undefined. */
  refuseReplicaCalls(): string | undefined;
  /** How this node dials its peers (security/node-security.ts). */
  readonly peerCredentials: grpc.ChannelCredentials;
  /** The node's wall clock (wall-clock.ts): puts' expiries and what reads take as expired. */
  readonly now: () => number;
  readonly log: Logger;
}

export class Replication {
  readonly coordinator: Coordinator;
  /** Peers this node's own replica calls could not reach lately: down for targets, whatever gossip says. */
  readonly reachability: Reachability;
  readonly hintDelivery: HintDelivery;
  /** Replica calls to any node, this one included (reads of a key's copy, merges). */
  readonly replicas: ReplicaApi;
  readonly #peers: GrpcReplicas;
  readonly #local: LocalReplica;
  #server: ReplicaServer | undefined;
  #keyValue: KeyValueService | undefined;

  constructor(private readonly deps: ReplicationDeps) {
    const { id, config, store, gossiper, log } = deps;
    // Keys of deleted buckets: merges of them are not written, writes refused (the table is read live).
    this.#local = new LocalReplica(store, keyClasses(deps.buckets).deleted);
    this.#peers = new GrpcReplicas((peer) => {
      const s = gossiper.state(peer);
      return s === undefined ? undefined : field(s, 'addr');
    }, deps.peerCredentials);
    const reachLog = log.child({ component: 'coordinator' });
    const peers = this.#peers;
    this.reachability = new Reachability({
      threshold: 2,
      holdMs: 2 * config.requestTimeoutMs,
      silentMs: (peer) => peers.silentMs(peer),
      silenceMs: PEER_SILENCE_MS,
      now: () => performance.now(),
      changed: (peer, suspect) =>
        suspect
          ? reachLog.warn(
              { peer },
              'peer does not answer this node, though gossip says it is up: treating it as down here (fallbacks and hints)',
            )
          : reachLog.info({ peer }, 'peer answers this node again'),
    });
    const reach = this.reachability;
    const replicas = withLocal(id, this.#local, observed(this.#peers, reach));
    this.replicas = replicas;
    this.coordinator = new Coordinator(
      {
        self: id,
        replicas: config.replicas,
        timeoutMs: config.requestTimeoutMs,
        maxInFlight: config.maxInFlight,
        maxKeyBytes: store.settings.maxKeyBytes,
        maxValueBytes: store.settings.maxValueBytes,
        maxHintWindowMs: config.maxHintWindowMs,
        fullReads: config.readMode === 'full',
      },
      {
        placement: deps.placement,
        isUp: (peer) => peer === id || (gossiper.isUp(peer) && !reach.suspect(peer)),
        // On the gossiper's clock (performance.now, as gossip-exchange.ts drives it).
        downForMs: (peer) => {
          const since = gossiper.downSince(peer);
          return since === undefined ? 0 : performance.now() - since;
        },
        notServing: deps.notServing,
        now: deps.now,
        replicas,
        log: reachLog,
      },
    );
    this.hintDelivery = new HintDelivery(
      { self: id, bytesPerSecond: config.hintBytesPerSecond },
      {
        hints: store.hints,
        isUp: (peer) => peer !== id && gossiper.isUp(peer),
        send: (target, key, record) =>
          replicas.call(target, { op: 'merge', key, record }, Date.now() + config.requestTimeoutMs),
        share: deps.backgroundShare,
        redirect: (target) => {
          const placement = deps.placement();
          if (placement === undefined) return undefined;
          const st = gossiper.state(target);
          const gone =
            deps.removed().has(target) ||
            (st !== undefined && (field(st, 'status') === 'left' || field(st, 'status') === 'removed'));
          if (!gone && placement.target === placement.ring) return undefined;
          // The key's replicas once the change in progress is done (the current ones when none is), for its bucket's n.
          return hintRoute(placement.target, target, gone, keyClasses(deps.buckets).nOf);
        },
        keepOn: (holder, target, key, record) =>
          replicas.call(holder, { op: 'merge', key, record, hintFor: target }, Date.now() + config.requestTimeoutMs),
        log: log.child({ component: 'hints' }),
      },
    );
  }

  /**
   * Serve KeyValue (clients) and Replica (peers) on `server`: KeyValue's unary calls
   * through `wrap`, each call on a stream told to `observe` (metrics.ts times them).
   */
  addServices(
    server: grpc.Server,
    wrap: (impl: grpc.UntypedServiceImplementation, role: 'coordinator') => grpc.UntypedServiceImplementation,
    observe: (
      operation: string,
      role: 'coordinator' | 'replica',
      code: string,
      seconds: number,
      siblings?: number,
      bucket?: string,
    ) => void,
  ): void {
    this.#keyValue = new KeyValueService(this.coordinator, this.deps.buckets, (op, code, seconds, siblings, bucket) =>
      observe(op, 'coordinator', code, seconds, siblings, bucket),
    );
    server.addService(
      this.#keyValue.definition(),
      this.#keyValue.implementation((impl) => wrap(impl, 'coordinator')),
    );
    this.#server = new ReplicaServer(this.#local, {
      refuse: this.deps.refuseReplicaCalls,
      maxInFlight: REPLICA_CALLS_PER_REQUEST * this.deps.config.maxInFlight,
      observe: (op, code, seconds) => observe(op, 'replica', code, seconds),
    });
    server.addService(this.#server.definition(), this.#server.implementation());
  }

  /** Answer the calls running on clients' and peers' streams, then end them: the server's graceful shutdown waits for them. */
  drainStreams(): void {
    this.#keyValue?.drain();
    this.#server?.drain();
  }

  /** Bytes of replica calls sent to peers since start, by operation. */
  get replicaBytesSent(): ReadonlyMap<string, number> {
    return this.#peers.bytesSent;
  }

  /** Close channels to peers whose address is not in `keep`. */
  retainPeers(keep: ReadonlySet<string>): void {
    this.#peers.retain(keep);
  }

  counters(): Record<string, number> {
    return {
      ...this.coordinator.counters,
      inFlight: this.coordinator.inFlight,
      casCommitsInFlight: this.coordinator.casCommitsInFlight,
      replicaInFlight: this.#server?.inFlight ?? 0,
      hintsHeld: this.deps.store.hints.stats().count,
      hintsExpired: this.deps.store.hints.stats().expired,
      duplicateWrites: this.deps.store.writeStats.duplicates,
      hintsDelivered: this.hintDelivery.delivered,
      hintDeliveryFailures: this.hintDelivery.failed,
      hintsRefused: this.hintDelivery.refused,
      backgroundSharePercent: Math.round(this.deps.backgroundShare() * 100),
    };
  }

  /** Stop delivering hints and close the channels (the server stopped first). */
  async stop(): Promise<void> {
    await this.hintDelivery.stop();
    this.#peers.close();
  }
}
