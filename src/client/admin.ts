/**
 * A typed client for a node's Admin service (proto/ringkv/v1/admin.proto): every Admin
 * call, behind the CLI's operator commands (status, ring, transfers, decommission, plan,
 * repair, ...), the status page's transfers, and tests.
 *
 * Owns: the calls and their deadlines. Must not: format output (the CLI does).
 */

import * as grpc from '@grpc/grpc-js';
import { callUnary, serviceClient, type RequestOf, type ServiceClient, type UnaryMethod } from '../transport/protos.js';
import { callMetadata, channelCredentials, type ClientSecurity } from '../security/credentials.js';
import type { Endpoint__Output } from '../transport/generated/ringkv/v1/Endpoint.js';
import type { EndpointsResponse__Output } from '../transport/generated/ringkv/v1/EndpointsResponse.js';
import type { MemberStatus__Output } from '../transport/generated/ringkv/v1/MemberStatus.js';
import type { MovementReply__Output } from '../transport/generated/ringkv/v1/MovementReply.js';
import type { BackgroundRepair__Output } from '../transport/generated/ringkv/v1/BackgroundRepair.js';
import type { PlanResponse__Output } from '../transport/generated/ringkv/v1/PlanResponse.js';
import type { PlanStep__Output } from '../transport/generated/ringkv/v1/PlanStep.js';
import type { StagedChange__Output } from '../transport/generated/ringkv/v1/StagedChange.js';
import type { RangeTransfer__Output } from '../transport/generated/ringkv/v1/RangeTransfer.js';
import type { RepairStatusResponse__Output } from '../transport/generated/ringkv/v1/RepairStatusResponse.js';
import type { RingResponse__Output } from '../transport/generated/ringkv/v1/RingResponse.js';
import type { StatusResponse__Output } from '../transport/generated/ringkv/v1/StatusResponse.js';
import type { TokenRange__Output } from '../transport/generated/ringkv/v1/TokenRange.js';
import type { TransfersResponse__Output } from '../transport/generated/ringkv/v1/TransfersResponse.js';
import { gather } from '../transport/gather.js';
import { RULES, checkOptions } from './options.js';
import type { BucketProps, BucketType } from '../buckets/index.js';
import type { Bucket__Output } from '../transport/generated/ringkv/v1/Bucket.js';
import type { BucketReply__Output } from '../transport/generated/ringkv/v1/BucketReply.js';
import type { BucketDeletionReply__Output } from '../transport/generated/ringkv/v1/BucketDeletionReply.js';

// The replies as a client decodes them (proto/ringkv/v1/admin.proto documents each field),
// under the names this client has always given them. A sub-message absent on the wire
// decodes as null; the two replies below have theirs filled in (repairReply, planReply).

/** A bucket change waits up to 5 s for every up member to have it (the node's bucket-sync.ts): its calls' deadline, ms. */
const BUCKET_CHANGE_MS = 15_000;

/** A bucket as a node reports it (admin.proto Bucket), its properties filled in. */
export interface BucketInfo {
  readonly name: string;
  readonly props: BucketProps;
  /** Its latest change: when (ms since the epoch) and on which node; 0 and '' for the default bucket unchanged. */
  readonly changedAtMs: number;
  readonly changedBy: string;
}

/** A bucket created or changed, and the up members that did not have the change yet when the call returned. */
export interface BucketChangeReply {
  readonly bucket: BucketInfo;
  readonly lagging: string[];
}

function bucketOf(b: Bucket__Output): BucketInfo {
  const p = b.props ?? { n: 0, r: 0, w: 0, ttlMs: 0, siblings: 'siblings', type: 'kv' };
  return {
    name: b.name,
    props: {
      n: p.n,
      r: p.r,
      w: p.w,
      ttlMs: p.ttlMs,
      siblings: p.siblings as BucketProps['siblings'],
      type: (p.type === '' ? 'kv' : p.type) as BucketType,
    },
    changedAtMs: b.changedAtMs,
    changedBy: b.changedBy,
  };
}

/** A deleted bucket's purge: when it was deleted, and the members that have and have not yet deleted its keys. */
export interface BucketDeletionInfo {
  readonly name: string;
  readonly deletedAtMs: number;
  readonly purged: string[];
  readonly pending: string[];
}

function deletionOf(r: BucketDeletionReply__Output): BucketDeletionInfo {
  return { name: r.name, deletedAtMs: Number(r.deletedAtMs), purged: r.purged, pending: r.pending };
}

function bucketReply(r: BucketReply__Output): BucketChangeReply {
  if (r.bucket === null) throw new Error('the node answered a bucket call without the bucket');
  return { bucket: bucketOf(r.bucket), lagging: r.lagging };
}

/** A node's repair, with `background` always there: a node that predates background repair sends none, read as none done. */
export type RepairStatusReply = Omit<RepairStatusResponse__Output, 'background'> & {
  background: BackgroundRepair__Output;
};
export type MemberStatus = MemberStatus__Output;
export type StatusReply = StatusResponse__Output;
export type TokenRange = TokenRange__Output;
export type RingReply = RingResponse__Output;
export type Endpoint = Endpoint__Output;
export type EndpointsReply = EndpointsResponse__Output;
export type RangeTransfer = RangeTransfer__Output;
export type TransfersReply = TransfersResponse__Output;
export type MovementReply = MovementReply__Output;
/** A plan whose every step names its change (a node that answers Plan always sets it; a step without is refused). */
export type PlanReply = Omit<PlanResponse__Output, 'steps'> & {
  steps: (PlanStep__Output & { change: StagedChange__Output })[];
};

const NO_BACKGROUND: BackgroundRepair__Output = { ranges: 0, keysExchanged: 0, bytes: 0, failed: 0 };

function repairReply(r: RepairStatusResponse__Output): RepairStatusReply {
  return { ...r, background: r.background ?? NO_BACKGROUND };
}

function planReply(p: PlanResponse__Output): PlanReply {
  return {
    ...p,
    steps: p.steps.map((s, i) => {
      if (s.change === null)
        throw new Error(
          `the node's plan has a step (${i + 1}) that names no change: is it a ringkv node of this version?`,
        );
      return { ...s, change: s.change };
    }),
  };
}

type Admin = ServiceClient<'ringkv.v1.Admin'>;

/** A bucket's properties as createBucket and setBucket take them: its TTL in ms, or a duration like "7d". */
export type BucketSettings = Partial<Omit<BucketProps, 'ttlMs'> & { readonly ttlMs: number | string }>;

export class AdminClient {
  readonly #client: Admin;
  readonly #metadata: grpc.Metadata | undefined;

  /** `address`: host:port of any node; `security`: TLS and the admin token (credentials.ts). */
  constructor(
    readonly address: string,
    private readonly deadlineMs = 5000,
    security: ClientSecurity = {},
  ) {
    const Client = serviceClient('ringkv.v1.Admin');
    this.#client = new Client(address, channelCredentials(security));
    this.#metadata = callMetadata(security);
  }

  status(replicas = 0): Promise<StatusReply> {
    return this.#call('status', { replicas });
  }

  ring(replicas = 0): Promise<RingReply> {
    return this.#call('ring', { replicas });
  }

  /** A key's token, replicas and current write targets (in `bucket`, default the default bucket). */
  endpoints(key: string | Uint8Array, bucket = ''): Promise<EndpointsReply> {
    return this.#call('endpoints', { key: typeof key === 'string' ? Buffer.from(key) : key, bucket });
  }

  /**
   * Create a bucket; properties left out take their defaults (n: the cluster's N; r, w: a
   * majority; no TTL; siblings; type kv). An n above the cluster's member count is refused.
   */
  async createBucket(name: string, properties?: BucketSettings): Promise<BucketChangeReply> {
    const props = checkOptions('createBucket', properties, RULES.bucket);
    return bucketReply(
      await this.#call(
        'createBucket',
        {
          name,
          props: {
            n: props.n ?? 0,
            r: props.r ?? 0,
            w: props.w ?? 0,
            ttlMs: props.ttlMs ?? 0,
            siblings: props.siblings ?? '',
            type: props.type ?? '',
          },
          set: [],
        },
        BUCKET_CHANGE_MS,
      ),
    );
  }

  /** Change the given properties of a bucket (n and type cannot change). */
  async setBucket(name: string, settings: BucketSettings): Promise<BucketChangeReply> {
    const changes = checkOptions('setBucket', settings, RULES.bucket);
    const set = Object.keys(changes).map((k) => (k === 'ttlMs' ? 'ttl_ms' : k));
    const p = {
      n: changes.n ?? 0,
      r: changes.r ?? 0,
      w: changes.w ?? 0,
      ttlMs: changes.ttlMs ?? 0,
      siblings: changes.siblings ?? '',
      type: changes.type ?? '',
    };
    return bucketReply(await this.#call('setBucket', { name, props: p, set }, BUCKET_CHANGE_MS));
  }

  /** A bucket's properties as this client's node has them. */
  async getBucket(name: string): Promise<BucketInfo> {
    return bucketReply(await this.#call('getBucket', { name, set: [] })).bucket;
  }

  /**
   * Delete a bucket: its name is unknown to requests at once, and every member deletes its
   * keys. Refused (FAILED_PRECONDITION) while a member holds a key of it, unless `purge`.
   * Answers where the purge stands: follow it with bucketDeletion.
   */
  async deleteBucket(name: string, options?: { purge?: boolean }): Promise<BucketDeletionInfo> {
    const o = checkOptions('deleteBucket', options, RULES.deleteBucket);
    return deletionOf(await this.#call('deleteBucket', { name, purge: o.purge ?? false }, BUCKET_CHANGE_MS));
  }

  /** Where a deleted bucket's purge stands (NOT_FOUND when it is not deleted). */
  async bucketDeletion(name: string): Promise<BucketDeletionInfo> {
    return deletionOf(await this.#call('getBucketDeletion', { name, set: [] }));
  }

  /** Every bucket this client's node knows, the default one first. */
  async listBuckets(): Promise<BucketInfo[]> {
    return (await this.#call('listBuckets', {})).buckets.map(bucketOf);
  }

  /** Decommission the node this client talks to (or, with `cancel`, withdraw it). */
  decommission(cancel = false): Promise<MovementReply> {
    return this.#call('decommission', { cancel });
  }

  /** Remove member `id`, which is down for good; this client's node drives it. */
  removeNode(id: string): Promise<MovementReply> {
    return this.#call('removeNode', { id });
  }

  /** Delete data this client's node holds for ranges it no longer replicates. */
  cleanup(): Promise<{ deleted: number; kept: number; ranges: number }> {
    return this.#call('cleanup', {}, 10 * 60_000);
  }

  /** Stage changes (none: show the stage) and read what they would move. */
  async plan(changes: readonly { kind: 'join' | 'leave' | 'remove'; node: string }[] = []): Promise<PlanReply> {
    return planReply(await this.#call('plan', { changes: [...changes] }));
  }

  async commit(): Promise<PlanReply> {
    return planReply(await this.#call('commit', {}));
  }

  async clear(): Promise<PlanReply> {
    return planReply(await this.#call('clear', {}));
  }

  /** Admit this client's node, a standby started with --join manual. */
  admit(): Promise<MovementReply> {
    return this.#call('admit', {});
  }

  transfers(): Promise<TransfersReply> {
    return this.#call('transfers', {});
  }

  /** Start an anti-entropy repair of the ranges this client's node replicates (overlapping `range` when given). */
  async repair(range?: { start: string; end: string }): Promise<RepairStatusReply> {
    return repairReply(await this.#call('repair', range ?? { start: '', end: '' }));
  }

  /** Fault injection: set the offset added to this client's node's wall clock (the node must run with --fault-injection on). */
  setClockOffset(offsetMs: number): Promise<{ offsetMs: number; nowMs: number }> {
    return this.#call('setClockOffset', { offsetMs });
  }

  /** The repair running on this client's node, or its last one (id '' when none). */
  async repairStatus(): Promise<RepairStatusReply> {
    return repairReply(await this.#call('repairStatus', {}));
  }

  close(): void {
    this.#client.close();
  }

  #call<M extends UnaryMethod<Admin>>(method: M, req: RequestOf<Admin, M>, deadlineMs = this.deadlineMs) {
    return callUnary(this.#client, method, req, { deadline: Date.now() + deadlineMs }, this.#metadata);
  }
}

/**
 * Transfers of every member `status` lists as up and still a member, asked in parallel
 * (3 s each): `ringkv transfers` and the status page show them. Members that do not
 * answer are listed in `unreachable`.
 */
export async function clusterTransfers(
  status: StatusReply,
  security: ClientSecurity = {},
): Promise<{ replies: TransfersReply[]; unreachable: string[] }> {
  const members = status.members.filter((m) => m.up && m.status !== 'left' && m.status !== 'removed');
  const address = new Map(members.map((m) => [m.id, m.address]));
  return gather(
    members.map((m) => m.id),
    async (id) => {
      const c = new AdminClient(address.get(id)!, 3000, security);
      try {
        return await c.transfers();
      } finally {
        c.close();
      }
    },
  );
}
