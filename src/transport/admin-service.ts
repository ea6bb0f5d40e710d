/**
 * The Admin gRPC service (proto/ringkv/v1/admin.proto): membership as this node sees it,
 * the ring it derived, transfers, and the operator's topology commands (decommission,
 * removenode, cleanup), which it hands to the node.
 *
 * Owns: turning the node's state into replies; an error's status comes from its code
 * (status.ts). Must not: decide or change state itself (the node and its movement driver
 * do).
 */

import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import { tokenHex, tokenOf, type Ring } from '../ring/index.js';
import { field, parseTokens, type EndpointState } from '../membership/endpoint.js';
import type { Gossiper } from '../membership/gossiper.js';
import {
  BucketError,
  PROPERTY_NAMES,
  bucketName,
  typeOf,
  type BucketInfo,
  type BucketProps,
  type BucketTable,
  type BucketType,
  type SiblingPolicy,
} from '../buckets/index.js';
import { toStatus, type OperatorErrorCode } from './status.js';
import type { Bucket } from './generated/ringkv/v1/Bucket.js';
import type { ListBucketsResponse } from './generated/ringkv/v1/ListBucketsResponse.js';
import type { BucketProps__Output } from './generated/ringkv/v1/BucketProps.js';
import type { CleanupResponse } from './generated/ringkv/v1/CleanupResponse.js';
import type { Endpoint } from './generated/ringkv/v1/Endpoint.js';
import type { MemberStatus } from './generated/ringkv/v1/MemberStatus.js';
import type { MovementReply } from './generated/ringkv/v1/MovementReply.js';
import type { PlanResponse } from './generated/ringkv/v1/PlanResponse.js';
import type { RepairStatusResponse } from './generated/ringkv/v1/RepairStatusResponse.js';
import type { RingResponse } from './generated/ringkv/v1/RingResponse.js';
import type { StatusResponse } from './generated/ringkv/v1/StatusResponse.js';
import type { TokenRange } from './generated/ringkv/v1/TokenRange.js';
import type { TransfersResponse } from './generated/ringkv/v1/TransfersResponse.js';
import type { ServiceHandlers } from './protos.js';
import type { BucketDeletionReply } from './generated/ringkv/v1/BucketDeletionReply.js';

/** Most replicas a request may ask about. */
const MAX_REPLICAS = 16;

interface AdminDeps {
  readonly id: string;
  readonly config: { readonly clusterName: string; readonly replicas: number; readonly faultInjection: 'off' | 'on' };
  readonly gossiper: Gossiper;
  readonly ring: Ring | undefined;
  /** The ring once the topology change in progress is done; `ring` itself when nothing moves. */
  readonly targetRing: Ring | undefined;
  /** Ids that are no longer members (removed, or replaced). */
  readonly removed: ReadonlySet<string>;
  /** This node's counters (coordinator, hinted handoff). */
  counters(): Record<string, number>;
  decommission(cancel: boolean): Promise<MovementReply>;
  removeNode(id: string): Promise<MovementReply>;
  cleanup(): Promise<CleanupResponse>;
  transfers(): TransfersResponse;
  admit(): Promise<MovementReply>;
  readonly clock: { offsetMs: number; readonly maxOffsetMs: number; now(): number };
  readonly repairs: {
    start(only?: { start: bigint; end: bigint }): RepairStatusResponse;
    readonly status: RepairStatusResponse;
  };
  readonly bucketSync: {
    readonly table: BucketTable;
    checkN(n: number): void;
    create(name: string, props: BucketProps): Promise<BucketChange>;
    delete(name: string, purge: boolean): Promise<DeletionStatus>;
    deletionStatus(name: string): DeletionStatus | undefined;
    set(name: string, changes: Readonly<Record<string, string>>): Promise<BucketChange>;
  };
  readonly staged: {
    plan(changes: readonly { kind: string; node: string }[]): Promise<PlanResponse>;
    commit(): Promise<PlanResponse>;
    clear(): Promise<PlanResponse>;
  };
}

/** A deleted bucket's purge across the members (node/bucket-sync.ts). */
interface DeletionStatus {
  readonly deletion: { readonly name: string; readonly at: number };
  readonly purged: readonly string[];
  readonly pending: readonly string[];
}

/** A change made, and the up members that did not have it yet. */
interface BucketChange {
  readonly bucket: BucketInfo;
  readonly lagging: string[];
}

function bucketOut(b: BucketInfo): Bucket {
  return {
    name: b.name,
    props: {
      n: b.props.n,
      r: b.props.r,
      w: b.props.w,
      ttlMs: b.props.ttlMs,
      siblings: b.props.siblings,
      type: typeOf(b.props),
    },
    changedAtMs: b.changedAt,
    changedBy: b.changedBy,
  };
}

/** A request's properties when it sends none: proto3's defaults (0 and '': "the default"). */
const NO_PROPS: BucketProps__Output = { n: 0, r: 0, w: 0, ttlMs: 0, siblings: '', type: '' };

/** The properties `set` names, as text (the table's form). */
function propertyChanges(props: BucketProps__Output | null, set: readonly string[]): Record<string, string> {
  if (set.length === 0)
    throw new AdminRefusal('OP_BAD_ARGUMENT', `name the properties to change (${PROPERTY_NAMES.join(', ')})`);
  const p = props ?? NO_PROPS;
  const text: Record<string, string> = {
    n: String(p.n),
    r: String(p.r),
    w: String(p.w),
    ttl_ms: String(p.ttlMs),
    siblings: p.siblings,
    type: p.type,
  };
  return Object.fromEntries(
    set.map((name) => {
      if (!Object.hasOwn(text, name))
        throw new BucketError(
          'BK_BAD_PROPERTY',
          `unknown bucket property ${JSON.stringify(name)}: use one of ${PROPERTY_NAMES.join(', ')}`,
        );
      return [name, text[name]!];
    }),
  );
}

/** A request this service refuses itself, before the node sees it. */
class AdminRefusal extends Error {
  override readonly name = 'AdminRefusal';

  constructor(
    readonly code: OperatorErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** An operator command: its reply, or its error as the status its code maps to (status.ts; no code: INTERNAL). */
function operator<Req, Res>(fn: (req: Req) => Promise<Res>) {
  return (call: grpc.ServerUnaryCall<Req, Res>, cb: grpc.sendUnaryData<Res>): void => {
    fn(call.request).then(
      (res) => cb(null, res),
      (e: unknown) => cb(toStatus(e)),
    );
  };
}

function replicasOf(requested: number, clusterN: number): number | Refusal {
  const n = requested === 0 ? clusterN : requested;
  return n > MAX_REPLICAS
    ? { code: grpc.status.INVALID_ARGUMENT, details: `replicas must be 1 to ${MAX_REPLICAS}, got ${n}` }
    : n;
}

function memberStatus(node: AdminDeps, s: EndpointState, ownership: number): MemberStatus {
  const g = node.gossiper;
  return {
    id: s.id,
    address: field(s, 'addr') ?? '',
    zone: field(s, 'zone') ?? '',
    rack: field(s, 'rack') ?? '',
    status: node.removed.has(s.id) ? 'removed' : (field(s, 'status') ?? ''),
    up: g.isUp(s.id),
    generation: s.generation,
    heartbeat: s.heartbeat,
    tokens: parseTokens(field(s, 'tokens') ?? '')?.length ?? 0,
    ownership,
    loadBytes: Number(field(s, 'load') ?? '0'),
    weight: Number(field(s, 'weight') ?? '1'),
    phi: s.id === node.id ? 0 : g.detector.phi(s.id, performance.now()),
    hints: Number(field(s, 'hints') ?? '0'),
    progress: field(s, 'progress') ?? '',
    stopping: field(s, 'stopping') === 'true',
    ...diskOf(field(s, 'disk')),
  };
}

/** The gossiped `disk` field (`state free total`, node.ts) as MemberStatus's disk figures; unknown: "" and 0s. */
function diskOf(value: string | undefined): { disk: string; diskFreeBytes: number; diskTotalBytes: number } {
  const [state = '', free = '0', total = '0'] = (value ?? '').split(' ');
  return { disk: state, diskFreeBytes: Number(free) || 0, diskTotalBytes: Number(total) || 0 };
}

/** A refusal as the gRPC handlers and the HTTP status page both return it. */
export interface Refusal {
  readonly code: grpc.status;
  readonly details: string;
}

/** A deletion's purge as Admin DeleteBucket and GetBucketDeletion answer it. */
function deletionReply(s: DeletionStatus): BucketDeletionReply {
  return { name: s.deletion.name, deletedAtMs: s.deletion.at, purged: [...s.purged], pending: [...s.pending] };
}

/** Admin ListBuckets: every bucket `table` holds, the default one first. */
export function bucketsReply(table: BucketTable): ListBucketsResponse {
  return { buckets: table.list().map(bucketOut) };
}

/** Admin Status: members as this node sees them; `replicas` 0 is the cluster's N. */
export function statusReply(node: AdminDeps, replicas: number): StatusResponse | Refusal {
  const n = replicasOf(replicas, node.config.replicas);
  if (typeof n !== 'number') return n;
  const ring = node.ring;
  const owned = ring?.ownership(Math.min(n, ring.size)) ?? new Map<string, number>();
  const members = [...node.gossiper.states()]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((s) => memberStatus(node, s, owned.get(s.id) ?? 0));
  return { clusterName: node.config.clusterName, nodeId: node.id, replicas: n, members, counters: node.counters() };
}

/** Admin Ring: the current ring's ranges and, while something moves, the target ring's. */
export function ringReply(node: AdminDeps, replicas: number): RingResponse | Refusal {
  const n = replicasOf(replicas, node.config.replicas);
  if (typeof n !== 'number') return n;
  const ring = node.ring;
  if (ring === undefined)
    return {
      code: grpc.status.FAILED_PRECONDITION,
      details: 'no member owns tokens yet: the cluster is still forming',
    };
  const rangesOf = (r: Ring): TokenRange[] =>
    r
      .ranges(Math.min(n, r.size))
      .map((x): TokenRange => ({ start: tokenHex(x.start), end: tokenHex(x.end), replicas: [...x.replicas] }));
  const target = node.targetRing;
  return {
    replicas: n,
    ranges: rangesOf(ring),
    pending: target === undefined || target === ring ? [] : rangesOf(target),
  };
}

type AdminHandlers = ServiceHandlers<'ringkv.v1.Admin'>;

/** The Admin service's handlers: what this node sees, the operator's commands, and the bucket table's calls. */
export function adminService(node: AdminDeps): AdminHandlers {
  return { ...readCalls(node), ...commandCalls(node), ...bucketCalls(node) };
}

/** The calls that read this node's view: Status, Ring, Endpoints, Transfers and RepairStatus. */
function readCalls(
  node: AdminDeps,
): Pick<AdminHandlers, 'Status' | 'Ring' | 'Endpoints' | 'Transfers' | 'RepairStatus'> {
  return {
    Status: (call, cb) => {
      const reply = statusReply(node, call.request.replicas);
      return 'code' in reply ? cb(reply) : cb(null, reply);
    },
    Ring: (call, cb) => {
      const reply = ringReply(node, call.request.replicas);
      return 'code' in reply ? cb(reply) : cb(null, reply);
    },
    Endpoints: endpoints(node),
    Transfers: (_call, cb) => cb(null, node.transfers()),
    RepairStatus: (_call, cb) => cb(null, node.repairs.status),
  };
}

/** Admin Endpoints: a key's token, its preference list, and the replicas a write to it would go to now. */
function endpoints(node: AdminDeps): AdminHandlers['Endpoints'] {
  return (call, cb) => {
    let located;
    try {
      located = node.bucketSync.table.locate(call.request.bucket, call.request.key);
    } catch (e) {
      return cb(toStatus(e));
    }
    const { key, bucket } = located;
    const ring = node.ring;
    if (ring === undefined) {
      return cb({
        code: grpc.status.FAILED_PRECONDITION,
        details: 'no member owns tokens yet: the cluster is still forming',
      });
    }
    const n = Math.min(bucket.n, ring.size);
    const isUp = (id: string): boolean => id === node.id || node.gossiper.isUp(id);
    const endpoint = (id: string, hintFor = ''): Endpoint => {
      const s = node.gossiper.state(id);
      return {
        id,
        address: s ? (field(s, 'addr') ?? '') : '',
        zone: ring.member(id)?.zone ?? '',
        up: isUp(id),
        hintFor,
      };
    };
    cb(null, {
      token: tokenHex(tokenOf(key)),
      replicas: bucket.n,
      preferenceList: ring.preferenceList(key, n).map((id) => endpoint(id)),
      targets: ring.targets(key, n, isUp).map((t) => endpoint(t.id, t.for)),
    });
  };
}

/** The operator's commands, handed to the node: topology changes, staged plans, repairs and the clock offset. */
function commandCalls(
  node: AdminDeps,
): Pick<
  AdminHandlers,
  'Decommission' | 'RemoveNode' | 'Cleanup' | 'Plan' | 'Commit' | 'Clear' | 'Admit' | 'Repair' | 'SetClockOffset'
> {
  return {
    Decommission: operator((r) => node.decommission(r.cancel)),
    RemoveNode: operator(async (r) => {
      if (r.id.length === 0) throw new AdminRefusal('OP_BAD_ARGUMENT', 'name the node to remove: ringkv removenode ID');
      return node.removeNode(r.id);
    }),
    Cleanup: operator(() => node.cleanup()),
    Plan: operator(async (r) => node.staged.plan(r.changes)),
    Commit: operator(async () => node.staged.commit()),
    Clear: operator(async () => node.staged.clear()),
    Admit: operator(() => node.admit()),
    Repair: operator(async (r) => {
      if (r.start === '' && r.end === '') return node.repairs.start();
      const tok = (v: string): bigint | undefined => (/^[0-9a-f]{16}$/.test(v) ? BigInt(`0x${v}`) : undefined);
      const start = tok(r.start),
        end = tok(r.end);
      if (start === undefined || end === undefined)
        throw new AdminRefusal(
          'OP_BAD_ARGUMENT',
          `a range is two tokens of 16 hex digits, START-END (as ringkv ring shows them), got "${r.start}-${r.end}"`,
        );
      return node.repairs.start({ start, end });
    }),
    SetClockOffset: operator(async (r) => {
      if (node.config.faultInjection !== 'on')
        throw new AdminRefusal(
          'OP_FAULT_INJECTION_OFF',
          'this node refuses clock skew: it is for fault-injection tests, which start nodes with --fault-injection on',
        );
      const max = node.clock.maxOffsetMs;
      if (!Number.isSafeInteger(r.offsetMs) || Math.abs(r.offsetMs) > max)
        throw new AdminRefusal(
          'OP_BAD_ARGUMENT',
          `a clock offset is at most a day (${max} ms) either way, got ${r.offsetMs}`,
        );
      node.clock.offsetMs = r.offsetMs;
      return { offsetMs: node.clock.offsetMs, nowMs: node.clock.now() };
    }),
  };
}

/** The bucket table's calls, handed to the node's bucket sync: create, change, read, list and delete. */
function bucketCalls(
  node: AdminDeps,
): Pick<
  AdminHandlers,
  'CreateBucket' | 'SetBucket' | 'GetBucket' | 'ListBuckets' | 'DeleteBucket' | 'GetBucketDeletion'
> {
  return {
    CreateBucket: operator(async (r) => {
      const p = r.props ?? NO_PROPS;
      if (p.n !== 0) node.bucketSync.checkN(p.n);
      const props = {
        n: p.n === 0 ? node.config.replicas : p.n,
        r: p.r,
        w: p.w,
        ttlMs: p.ttlMs,
        siblings: (p.siblings === '' ? 'siblings' : p.siblings) as SiblingPolicy,
        type: (p.type === '' ? 'kv' : p.type) as BucketType,
      };
      const { bucket, lagging } = await node.bucketSync.create(r.name, props);
      return { bucket: bucketOut(bucket), lagging };
    }),
    SetBucket: operator(async (r) => {
      const { bucket, lagging } = await node.bucketSync.set(r.name, propertyChanges(r.props, r.set));
      return { bucket: bucketOut(bucket), lagging };
    }),
    GetBucket: operator(async (r) => {
      const name = bucketName(r.name);
      const info = node.bucketSync.table.info(name);
      if (info === undefined) throw new BucketError('BK_UNKNOWN', `there is no bucket ${name}`);
      return { bucket: bucketOut(info), lagging: [] };
    }),
    ListBuckets: operator(async () => bucketsReply(node.bucketSync.table)),
    DeleteBucket: operator(async (r) => deletionReply(await node.bucketSync.delete(r.name, r.purge))),
    GetBucketDeletion: operator(async (r) => {
      const name = bucketName(r.name);
      const status = node.bucketSync.deletionStatus(name);
      if (status === undefined)
        throw new BucketError(
          'BK_UNKNOWN',
          node.bucketSync.table.props(name) === undefined
            ? `there is no bucket ${name}, deleted or not`
            : `bucket ${name} is not deleted`,
        );
      return deletionReply(status);
    }),
  };
}
