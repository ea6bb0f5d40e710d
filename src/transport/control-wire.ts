/**
 * The Control service (proto/ringkv/internal/v1/control.proto) on both sides: how one node
 * steers another in a topology change it drives (a staged commit admits standbys and
 * decommissions members) and gathers its peers' transfers for the status page. It is an
 * internal service: a peer calls it with the node role (authorize.ts), never through the
 * operator's Admin service and its rules. With TLS off, where no certificate names a
 * role, a node presents the admin token when the cluster has one, since these calls
 * change the cluster.
 *
 * Owns: the mapping, the cluster check, the peer client (one channel per peer address).
 * Must not: decide anything (the node's topology parts do) or know the operator API's
 * client (src/client).
 */
import * as grpc from '@grpc/grpc-js';
import { PeerChannels } from './peer-channels.js';
import { callMetadata } from '../security/credentials.js';
import type { ControlRequest, ControlRequest__Output } from './generated/ringkv/internal/v1/ControlRequest.js';
import type { MovementReply, MovementReply__Output } from './generated/ringkv/v1/MovementReply.js';
import type { TransfersResponse, TransfersResponse__Output } from './generated/ringkv/v1/TransfersResponse.js';
import type { BucketEntry } from '../buckets/index.js';
import type { BucketTable } from './generated/ringkv/internal/v1/BucketTable.js';
import type { RepairRangeReply, RepairRangeReply__Output } from './generated/ringkv/internal/v1/RepairRangeReply.js';
import type {
  RepairRangeRequest,
  RepairRangeRequest__Output,
} from './generated/ringkv/internal/v1/RepairRangeRequest.js';
import type { BucketKeysReply } from './generated/ringkv/internal/v1/BucketKeysReply.js';
import type { BucketKeysRequest__Output } from './generated/ringkv/internal/v1/BucketKeysRequest.js';
import { callUnary, type ServiceClient, type ServiceHandlers } from './protos.js';
import { toStatus } from './status.js';
import { peerRefusal } from './peer-refusal.js';

export const CONTROL_SERVICE = 'ringkv.internal.v1.Control';

export interface ControlDeps {
  readonly clusterName: string;
  admit(): Promise<MovementReply>;
  decommission(): Promise<MovementReply>;
  /** This node's transfers, as Admin Transfers replies them. */
  transfers(): TransfersResponse;
  /** This node's bucket table (buckets/table.ts). */
  buckets(): readonly BucketEntry[];
  /** How many records and hints of bucket `name` this node holds, counted up to `limit`. */
  bucketKeys(name: string, limit: number): Promise<number>;
  /** Repair a unit of a removal with its other replicas (node/topology/unit-repair.ts). */
  repairRange(r: RepairRangeRequest__Output): Promise<RepairRangeReply>;
  /** Why not to serve now (stopping), if so. */
  refuse(): string | undefined;
  readonly log: { info(o: object, m: string): void };
}

export function controlService(deps: ControlDeps): ServiceHandlers<typeof CONTROL_SERVICE> {
  const unary =
    <Res, Req extends ControlRequest__Output = ControlRequest__Output>(
      method: string,
      fn: (req: Req) => Promise<Res> | Res,
    ) =>
    (call: grpc.ServerUnaryCall<Req, Res>, cb: grpc.sendUnaryData<Res>): void => {
      const { cluster, from } = call.request;
      const refused = peerRefusal(cluster, deps.clusterName, deps.refuse());
      if (refused !== undefined) return cb(refused);
      if (method !== 'transfers' && method !== 'buckets') deps.log.info({ peer: from, method }, 'asked by a peer');
      Promise.resolve(call.request)
        .then(fn)
        .then(
          (res) => cb(null, res),
          (e: unknown) => cb(toStatus(e)),
        );
    };
  return {
    Admit: unary('admit', () => deps.admit()),
    Decommission: unary('decommission', () => deps.decommission()),
    Transfers: unary('transfers', () => deps.transfers()),
    Buckets: unary('buckets', (): BucketTable => ({
      buckets: deps.buckets().map((b) => ({
        name: b.name,
        props: Object.entries(b.props).map(([name, w]) => ({ name, value: w.value, atMs: w.at, by: w.by })),
      })),
    })),
    RepairRange: unary<RepairRangeReply, RepairRangeRequest__Output>('repairRange', (r) => deps.repairRange(r)),
    BucketKeys: unary<BucketKeysReply, BucketKeysRequest__Output>('bucketKeys', async (r) => ({
      keys: await deps.bucketKeys(r.name, Math.max(1, Math.min(r.limit, 1000))),
    })),
  };
}

/** A peer's Control service, addressed by node id (the address it gossips). */
export class ControlPeers {
  readonly #channels: PeerChannels<typeof CONTROL_SERVICE>;

  constructor(
    private readonly id: string,
    private readonly clusterName: string,
    private readonly addressOf: (id: string) => string | undefined,
    credentials: grpc.ChannelCredentials,
    private readonly deadlineMs: number,
    /** The admin token, read per call (a reload applies): with TLS off it is what lets a node's Control calls through (authorize.ts). */
    private readonly token: () => string | undefined = () => undefined,
  ) {
    this.#channels = new PeerChannels(CONTROL_SERVICE, credentials);
  }

  admit(node: string): Promise<MovementReply__Output> {
    return this.#with(node, this.deadlineMs, (c, ...rest) => callUnary(c, 'Admit', ...rest));
  }

  decommission(node: string): Promise<MovementReply__Output> {
    return this.#with(node, this.deadlineMs, (c, ...rest) => callUnary(c, 'Decommission', ...rest));
  }

  /** Node `node`'s transfers. */
  transfers(node: string, deadlineMs = this.deadlineMs): Promise<TransfersResponse__Output> {
    return this.#with(node, deadlineMs, (c, ...rest) => callUnary(c, 'Transfers', ...rest));
  }

  /** Node `node`'s bucket table. */
  async buckets(node: string): Promise<BucketEntry[]> {
    const reply = await this.#with(node, this.deadlineMs, (c, ...rest) => callUnary(c, 'Buckets', ...rest));
    return reply.buckets.map((b) => ({
      name: b.name,
      props: Object.fromEntries(b.props.map((p) => [p.name, { value: p.value, at: p.atMs, by: p.by }])),
    }));
  }

  /** Ask node `node` to repair a removal's unit with its other replicas (its answer may take as long as the repair: `deadlineMs`). */
  repairRange(
    node: string,
    unit: Omit<RepairRangeRequest, 'cluster' | 'from'>,
    deadlineMs: number,
  ): Promise<RepairRangeReply__Output> {
    return this.#with(node, deadlineMs, (c, req, ...rest) => callUnary(c, 'RepairRange', { ...req, ...unit }, ...rest));
  }

  /** How many records and hints of bucket `name` node `node` holds, counted up to `limit`. */
  async bucketKeys(node: string, name: string, limit: number): Promise<number> {
    const reply = await this.#with(node, this.deadlineMs, (c, req, ...rest) =>
      callUnary(c, 'BucketKeys', { ...req, name, limit }, ...rest),
    );
    return Number(reply.keys);
  }

  /** Close the channels of peers no longer at any of `addresses`. */
  retain(addresses: ReadonlySet<string>): void {
    this.#channels.retain(addresses);
  }

  close(): void {
    this.#channels.close();
  }

  /** A call to node `node` with this node's request, deadline and token; a node without an address fails as an unreachable one would. */
  #with<T>(
    node: string,
    deadlineMs: number,
    call: (
      client: ServiceClient<typeof CONTROL_SERVICE>,
      req: ControlRequest,
      options: grpc.CallOptions,
      metadata: grpc.Metadata | undefined,
    ) => Promise<T>,
  ): Promise<T> {
    try {
      const token = this.token();
      return call(
        this.#channels.forNode(node, this.addressOf),
        { cluster: this.clusterName, from: this.id },
        { deadline: Date.now() + deadlineMs },
        token === undefined ? undefined : callMetadata({ token }),
      );
    } catch (e) {
      return Promise.reject(e);
    }
  }
}
