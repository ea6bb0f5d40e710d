/**
 * The node's range-streaming parts, wired: the Handoff service peers pull ranges from
 * (throttled per node), the puller with its checkpoints, and the plans of the movements
 * this node takes part in.
 *
 * Owns: the wiring, and turning the current topology view into "what this node pulls for
 * movement M", for each N class of the bucket table (cluster/n-classes.ts). Must not: decide the topology (membership/ does) or how a range is moved
 * (handoff/ does).
 */
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { KeyFilter, Store } from '../storage/index.js';
import type { BucketTable } from '../buckets/index.js';
import { keyClasses, servedFilter, type KeyClasses } from '../cluster/n-classes.js';
import type { RingView } from '../membership/ring-view.js';
import type { Checkpoints } from '../streaming/checkpoints.js';
import { movementTransfers, type Transfer } from '../cluster/transfer-plan.js';
import { Throttle } from '../streaming/throttle.js';
import { Transfers, rangeKey, type PullItem, type PullResult } from '../streaming/transfers.js';
import { GrpcHandoff, handoffDefinition, handoffService, type OutgoingStream } from '../transport/handoff-wire.js';
import { GrpcRepair, repairService } from '../transport/repair-wire.js';
import type { TokenRange } from '../storage/keys.js';
import { serviceClient } from '../transport/protos.js';
import type { NodeConfig } from './config.js';

export interface HandoffDeps {
  readonly id: string;
  readonly config: NodeConfig;
  readonly store: Store;
  /** The bucket table: each bucket's n, so each key's N class. */
  readonly buckets: BucketTable;
  addressOf(id: string): string | undefined;
  isUp(id: string): boolean;
  /** Why not to serve streams now (stopping), if so. */
  refuse(): string | undefined;
  /** A repairer finished a complete repair of `range` (of N class `n`; undefined: every key) with this node, whose tree was built at `at`. */
  repaired(range: TokenRange, n: number | undefined, at: number): void;
  /** How this node dials its peers (security/node-security.ts). */
  readonly peerCredentials: grpc.ChannelCredentials;
  readonly log: Logger;
}

export class Handoff {
  readonly throttle: Throttle;
  readonly transfers: Transfers;
  readonly peers: GrpcHandoff;
  /** Peers as sides of anti-entropy repairs (repair/runs.ts). */
  readonly repairPeers: GrpcRepair;
  readonly outgoing = new Set<OutgoingStream>();
  readonly #abort = new AbortController();

  constructor(
    private readonly deps: HandoffDeps,
    readonly checkpoints: Checkpoints,
  ) {
    const { id, config, store, log } = deps;
    this.throttle = new Throttle(config.streamBytesPerSecond === 0 ? Infinity : config.streamBytesPerSecond);
    this.peers = new GrpcHandoff(id, config.clusterName, deps.addressOf, deps.peerCredentials);
    this.repairPeers = new GrpcRepair(id, config.clusterName, deps.addressOf, deps.peerCredentials);
    // A source that has not yet heard of a bucket's deletion may still send its keys: they are not written.
    const ingest = {
      ingest: (entries: readonly { readonly key: Buffer; readonly record: Buffer }[]) => {
        const classes = this.classes();
        return store.ingest(entries.filter((e) => !classes.deleted(e.key)));
      },
    };
    this.transfers = new Transfers({
      store: ingest,
      checkpoints,
      source: this.peers,
      isUp: deps.isUp,
      leaverWaitMs: deps.config.leaverWaitMs,
      log: log.child({ component: 'handoff' }),
    });
  }

  addServices(server: grpc.Server): void {
    server.addService(
      handoffDefinition(),
      handoffService({
        clusterName: this.deps.config.clusterName,
        store: this.deps.store,
        throttle: this.throttle,
        refuse: this.deps.refuse,
        knows: (peer) => peer === this.deps.id || this.deps.addressOf(peer) !== undefined,
        only: (n, classes) => this.served(n, classes),
        fetch: (move, from, items) => this.transfers.pull(move, from, items, this.#abort.signal),
        outgoing: this.outgoing,
        log: this.deps.log.child({ component: 'handoff' }),
      }),
    );
    server.addService(
      serviceClient('ringkv.internal.v1.Repair').service,
      repairService({
        clusterName: this.deps.config.clusterName,
        store: this.deps.store,
        now: Date.now,
        refuse: this.deps.refuse,
        only: (n, classes) => this.served(n, classes),
        dropped: (key) => this.dropped(key),
        finished: (range, n, at) => this.deps.repaired(range, n === 0 ? undefined : n, at),
        log: this.deps.log.child({ component: 'repair' }),
      }),
    );
  }

  /** Whether a stored key is of a deleted bucket, as the bucket table is now. */
  dropped(key: Buffer): boolean {
    return this.classes().deleted(key);
  }

  /** The N classes of the bucket table as it is now. */
  classes(): KeyClasses {
    return keyClasses(this.deps.buckets);
  }

  /**
   * The keys a stream or repair tree of class `n` (0: every key), planned on `classes`
   * (default: this node's own), takes here; throws BK_NOT_READY when it cannot tell now
   * (n-classes.ts).
   */
  served(n: number, classes?: readonly number[]): KeyFilter {
    const k = this.classes();
    return servedFilter(k, n, classes ?? k.classes);
  }

  /**
   * Every transfer of the view's movements (current ring → target ring), per N class;
   * `leaverGone` where the replica leaving a range is a node being removed or replaced
   * (dead for good).
   */
  plan(view: RingView): (Transfer & { leaverGone: boolean })[] {
    return movementTransfers(view, this.classes().classes);
  }

  /** What `node` pulls in the view's movements. */
  pullsOf(view: RingView, node: string): PullItem[] {
    return this.plan(view).filter((t) => t.to === node);
  }

  /** Has this node pulled every range it gains in the view, for movement `move`? */
  pulled(view: RingView, move: string): boolean {
    return this.pullsOf(view, this.deps.id).every((t) => this.checkpoints.isDone(move, rangeKey(t)));
  }

  /** Pull what this node gains in the view, for movement `move`. */
  pullOwn(view: RingView, move: string): Promise<PullResult> {
    return this.transfers.pull(move, this.deps.id, this.pullsOf(view, this.deps.id), this.#abort.signal);
  }

  retainPeers(keep: ReadonlySet<string>): void {
    this.peers.retain(keep);
    this.repairPeers.retain(keep);
  }

  /** Cut every pull short and close the channels. */
  stop(): void {
    this.#abort.abort();
    this.peers.close();
    this.repairPeers.close();
  }
}
