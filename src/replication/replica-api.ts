/**
 * The narrow interface between a coordinator and a key's replicas (docs/architecture.md: the
 * transport knows nothing of what the messages mean). Over the network it is batched
 * calls on one long-lived stream per peer (transport/replica-wire.ts); in tests, the
 * in-memory fake (transport/memory-replicas.ts); for the node itself, its LocalReplica.
 *
 * Nodes are named by id; the implementation finds their address. Every call carries an
 * absolute deadline (ms since the epoch, as Date.now()). Every failure is a ReplicaFailure,
 * whatever the transport: the coordinator decides by its kind, never by a wire's codes.
 */
import type { Ballot, PrepareReply, ProposeReply, Proposal, SubOp } from '../storage/index.js';

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

export interface ReplicaApi {
  /**
   * Issue a new version on replica `node`: a value, or a tombstone for null. With the
   * client's `requestId`, a replica that has seen the write before issues none (it
   * answers with the key's record as it is): the same write may be sent to two replicas.
   * With `expiresAt` (ms since the epoch, the coordinator's clock), the value expires then.
   */
  apply(
    node: string,
    key: Buffer,
    value: Buffer | null,
    context: Buffer,
    deadline: number,
    requestId?: Buffer,
    expiresAt?: number,
  ): Promise<ApplyResult>;
  /** Merge `record` into `node`'s versions of the key; as a hint for `hintFor` when set. */
  merge(node: string, key: Buffer, record: Buffer, hintFor: string | undefined, deadline: number): Promise<boolean>;
  /** `node`'s record of the key (its hint for `hintFor` when set), or undefined. */
  read(node: string, key: Buffer, hintFor: string | undefined, deadline: number): Promise<Buffer | undefined>;
  /**
   * A digest of `node`'s versions of the key (storage's recordDigest; empty when it holds
   * none): what a read asks of the replicas it needs no data from (Cassandra's digest reads).
   */
  digest(node: string, key: Buffer, deadline: number): Promise<Buffer>;
  /**
   * Increment (a negative amount: decrement) the counter at `key` on replica `node`, as
   * its issuer (storage's counterUpdate). With `requestId`, an increment the key's log
   * holds already is not counted again: the answer carries the full state as its delta.
   */
  counterUpdate(
    node: string,
    key: Buffer,
    amount: number,
    deadline: number,
    requestId?: Buffer,
  ): Promise<CounterApplied>;
  /**
   * One request's writes on sub-keys of `parent` (a set's adds and removes, a map's field
   * ops), on replica `node` as their issuer, all in one write batch (storage's writeMany):
   * the records written, one per op in order (an increment's with its delta). With
   * `requestId`, an op seen before writes nothing.
   */
  writeMany(
    node: string,
    parent: Buffer,
    ops: readonly SubOp[],
    deadline: number,
    requestId?: Buffer,
  ): Promise<SubKeyRecord[]>;
  /** A page of `parent`'s sub-keys on replica `node`: up to `limit`, after the sub-key `after` (storage's readRange). */
  readRange(
    node: string,
    parent: Buffer,
    after: Buffer | undefined,
    limit: number,
    deadline: number,
  ): Promise<SubKeyPage>;
  /**
   * Compare-and-set's Paxos steps on replica `node`'s acceptor of `key` (storage's
   * paxosPrepare, paxosPropose, paxosCommit; replication/paxos.ts says what a proposer
   * does with the replies). Each is written there before it answers.
   */
  paxosPrepare(node: string, key: Buffer, ballot: Ballot, deadline: number): Promise<PrepareReply<Buffer>>;
  paxosPropose(node: string, key: Buffer, proposal: Proposal<Buffer>, deadline: number): Promise<ProposeReply>;
  paxosCommit(node: string, key: Buffer, proposal: Proposal<Buffer>, deadline: number): Promise<void>;
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
