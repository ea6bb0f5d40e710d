/**
 * The narrow interface between a coordinator and a key's replicas (docs/architecture.md: the
 * transport knows nothing of what the messages mean). Over the network it is batched
 * calls on one long-lived stream per peer (transport/replica-wire.ts); in tests, the
 * in-memory fake (transport/memory-replicas.ts); for the node itself, its LocalReplica.
 *
 * One call, of one typed operation: each implementation handles the union once. Nodes are
 * named by id; the implementation finds their address. Every call carries an absolute
 * deadline (ms since the epoch, as Date.now()). Every failure is a ReplicaFailure,
 * whatever the transport: the coordinator decides by its kind, never by a wire's codes.
 */
import { DecodeError, STEP_NAMES, type JoinedKind, type KindStep } from '../kinds/index.js';
import type { SubOp } from '../storage/index.js';

export interface ApplyResult {
  /** The key's record after the write, to send to the other replicas. */
  readonly record: Buffer;
  /** Context covering the new version (what the client gets back). */
  readonly context: Buffer;
}

/** What a replica's counter increment answers (storage's CounterUpdateResult, less its bookkeeping). */
export interface CounterApplied {
  /** The counter's whole record after the increment: what a replica that cannot take the delta, or a hint, is sent. */
  readonly record: Buffer;
  /** The increment's delta: what the other replicas merge (a replica that missed an earlier one refuses it: KV_COUNTER_GAP). */
  readonly delta: Buffer;
  /** The counter's value on that replica after the increment. */
  readonly value: bigint;
}

/** One sub-key a replica wrote (or found written): its record, what the other replicas merge. */
export interface SubKeyRecord {
  readonly key: Buffer;
  readonly record: Buffer;
  /** A counter field increment's delta (WriteMany), what the other replicas merge; `record` is the full state. */
  readonly delta?: Buffer;
}

/** A page of a parent's sub-keys as one replica holds them (storage's RangeRead, less the corrupt keys it reports itself). */
export interface SubKeyPage {
  /** Records in key order. */
  readonly records: readonly SubKeyRecord[];
  /** The last key read when more follow (the next page starts after it); undefined once the span is read. */
  readonly next: Buffer | undefined;
}

/**
 * One operation on one replica, named field by field from the coordinator to the replica's
 * store (the union replica.proto's Stream carries). A client's `requestId` makes a write
 * sent twice (to two replicas, or again after a timeout) issue one version: a replica
 * that has seen it answers with the key's record as it is.
 */
export type ReplicaCall =
  /** Issue a new version: a value, or a tombstone for null; with `expiresAt` (ms since the epoch, the coordinator's clock) the value expires then. */
  | {
      readonly op: 'apply';
      readonly key: Buffer;
      readonly value: Buffer | null;
      readonly context: Buffer;
      readonly requestId?: Buffer;
      readonly expiresAt?: number;
    }
  /** Merge `record` into the replica's versions of the key; kept as a hint for `hintFor` when set. */
  | { readonly op: 'merge'; readonly key: Buffer; readonly record: Buffer; readonly hintFor?: string }
  /** The replica's record of the key (its hint for `hintFor` when set), or undefined. */
  | { readonly op: 'read'; readonly key: Buffer; readonly hintFor?: string }
  /** A digest of the replica's versions of the key (storage's recordDigest; empty when it holds none): Cassandra's digest reads. */
  | { readonly op: 'digest'; readonly key: Buffer }
  /** Increment (negative: decrement) the counter at `key`, as its issuer; an increment its log holds already is not counted again. */
  | { readonly op: 'counterUpdate'; readonly key: Buffer; readonly amount: number; readonly requestId?: Buffer }
  /** One request's writes on sub-keys of `parent` (a set's adds and removes, a map's field ops), as their issuer, in one write batch. */
  | { readonly op: 'writeMany'; readonly parent: Buffer; readonly ops: readonly SubOp[]; readonly requestId?: Buffer }
  /** A page of `parent`'s sub-keys: up to `limit`, after the sub-key `after`. */
  | { readonly op: 'readRange'; readonly parent: Buffer; readonly after?: Buffer; readonly limit: number }
  /**
   * Step `step` of the joined kind of record format `kind` on the key (kinds/record-kind.ts;
   * compare-and-set's Paxos steps), its argument and reply in the step's own bytes; written
   * before it answers. `callStep` makes one and reads its reply.
   */
  | { readonly op: 'step'; readonly key: Buffer; readonly kind: number; readonly step: string; readonly arg: Buffer };

export type ReplicaOp = ReplicaCall['op'];

/** What each operation answers. */
export interface ReplicaReplies {
  /** The key's record after the write (for the other replicas) and the context covering it. */
  apply: ApplyResult;
  /** Whether the merge changed the replica's versions. */
  merge: boolean;
  read: Buffer | undefined;
  digest: Buffer;
  counterUpdate: CounterApplied;
  /** The records written, one per op in order (an increment's with its delta). */
  writeMany: SubKeyRecord[];
  readRange: SubKeyPage;
  /** The step's reply, in its own bytes. */
  step: Buffer;
}

export type ReplyTo<C extends ReplicaCall> = ReplicaReplies[C['op']];

export interface ReplicaApi {
  /** Run `call` on replica `node` (by id) before `deadline` (ms since the epoch, as Date.now()). */
  call<C extends ReplicaCall>(node: string, call: C, deadline: number): Promise<ReplyTo<C>>;
}

/**
 * What a call is counted and timed as (metrics, the in-memory network's counts): its
 * operation, a step of a kind this release knows by its name, any other step as `step`
 * (so that the labels stay few).
 */
export const callName = (c: { readonly op: string; readonly step?: unknown }): string =>
  c.op === 'step' && typeof c.step === 'string' && STEP_NAMES.includes(c.step) ? c.step : c.op;

/** Step `step` of `kind` on `key` at replica `node`: the argument encoded, the reply decoded (one that does not decode is the peer's bug: RK_INTERNAL). */
export async function callStep<S, A, R>(
  replicas: ReplicaApi,
  node: string,
  kind: JoinedKind<S>,
  step: KindStep<S, A, R>,
  key: Buffer,
  arg: A,
  deadline: number,
): Promise<R> {
  const reply = await replicas.call(
    node,
    { op: 'step', key, kind: kind.format, step: step.name, arg: step.arg.encode(arg) },
    deadline,
  );
  try {
    return step.reply.decode(reply);
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    throw new ReplicaFailure(
      'refused',
      'RK_INTERNAL',
      `${node} answered ${step.what} with bytes that do not decode: ${e.message}`,
    );
  }
}

/**
 * How a replica call failed:
 * - `unreachable`: it never ran there (no connection, the peer is stopping or its store
 *   is closed); another replica may take it.
 * - `timeout`: no answer before the deadline; it may or may not have run.
 * - `refused`: the replica answered no (a bad context, too many siblings, too busy, ...);
 *   `code` says why, as storage and replication name their errors.
 */
export type ReplicaFailureKind = 'unreachable' | 'timeout' | 'refused';

export class ReplicaFailure extends Error {
  constructor(
    readonly kind: ReplicaFailureKind,
    /** A domain error code (KV_*, RK_*): transport/status.ts maps it to a status. */
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ReplicaFailure';
  }
}

/** Codes a replica refuses with that say "not now" rather than "never": worth retrying later. */
const BUSY = new Set(['RK_OVERLOADED', 'KV_HINTS_FULL', 'KV_DISK_FULL']);

/** The call got no answer (unreachable, or timed out): the peer may be down, as opposed to having refused. */
export function noAnswer(e: unknown): boolean {
  return e instanceof ReplicaFailure && e.kind !== 'refused';
}

/** Worth trying again later: no answer, or a replica too busy now. Anything else that is not a ReplicaFailure is a fault here, retried too. */
export function transient(e: unknown): boolean {
  return !(e instanceof ReplicaFailure) || e.kind !== 'refused' || BUSY.has(e.code);
}

/** A replica's own error (storage's KvError, replication's errors) as the failure a transport reports. */
export function asReplicaFailure(e: unknown): ReplicaFailure {
  if (e instanceof ReplicaFailure) return e;
  const x = e as { code?: unknown; message?: unknown };
  const code = typeof x?.code === 'string' ? x.code : 'RK_INTERNAL';
  const message = typeof x?.message === 'string' ? x.message : String(e);
  // A store that is closing, or a node that is stopping, never ran the call.
  const kind =
    code === 'KV_CLOSED' || code === 'RK_NOT_READY' ? 'unreachable' : code === 'RK_TIMEOUT' ? 'timeout' : 'refused';
  return new ReplicaFailure(kind, code, message);
}
