/**
 * The one place where domain errors become gRPC statuses (docs/architecture.md).
 * Storage's KV_*, replication's RK_*, the ring's RING_*, buckets' BK_* (and data types' DT_*) and operator commands' OP_* codes
 * each map to one status; an error that already carries a gRPC status (a replica's reply,
 * passed through) keeps it; anything else is INTERNAL.
 *
 * Owns: the table, and the OP_* codes (their throwers sit above it). Must not: word
 * messages (the error's owner did).
 */
import * as grpc from '@grpc/grpc-js';
import type { BucketErrorCode, DataTypeErrorCode } from '../buckets/index.js';
import type { KvErrorCode } from '../storage/index.js';
import type { ReplicationErrorCode } from '../replication/replication-errors.js';
import type { RingErrorCode } from '../ring/ring-errors.js';

/**
 * Why an operator command (an Admin call that changes the cluster) was refused. Thrown by
 * the node (MovementRefused, RepairRefused, BadChange, PlanOutdated in src/node) and by
 * the Admin service itself (admin-service.ts); declared here, below both, so that the
 * table can name them.
 */
export type OperatorErrorCode =
  | 'OP_BAD_ARGUMENT' // the request is malformed: no node named, a range that is not two tokens, a change that cannot be staged
  | 'OP_MOVEMENT_REFUSED' // the topology change cannot run now: another one in progress, a member in the wrong state
  | 'OP_REPAIR_REFUSED' // a repair is running already, or this node owns nothing to repair
  | 'OP_FAULT_INJECTION_OFF' // a fault was asked of a node started without --fault-injection on
  | 'OP_PLAN_OUTDATED'; // the ring changed since the plan: read the new one and commit again

export type ErrorCode =
  KvErrorCode | ReplicationErrorCode | RingErrorCode | OperatorErrorCode | BucketErrorCode | DataTypeErrorCode;

const S = grpc.status;

/** Every code's status. */
export const STATUS_BY_CODE: Readonly<Record<ErrorCode, grpc.status>> = {
  KV_BAD_KEY: S.INVALID_ARGUMENT,
  KV_BAD_VALUE: S.INVALID_ARGUMENT,
  KV_KEY_EMPTY: S.INVALID_ARGUMENT,
  KV_KEY_TOO_LARGE: S.INVALID_ARGUMENT,
  KV_VALUE_TOO_LARGE: S.INVALID_ARGUMENT,
  KV_BAD_CONTEXT: S.INVALID_ARGUMENT,
  KV_BAD_REQUEST_ID: S.INVALID_ARGUMENT,
  KV_BAD_RECORD: S.INVALID_ARGUMENT,
  KV_BAD_RANGE: S.INVALID_ARGUMENT,
  KV_BAD_OPTION: S.INVALID_ARGUMENT,
  KV_BAD_AMOUNT: S.INVALID_ARGUMENT,
  KV_COUNTER_OVERFLOW: S.OUT_OF_RANGE,
  KV_WRONG_TYPE: S.FAILED_PRECONDITION,
  // A replica missed an earlier delta of the counter's issuer: the coordinator sends the full state.
  KV_COUNTER_GAP: S.FAILED_PRECONDITION,
  // The key's versions are at their cap: a read and a write with its context resolves them.
  KV_TOO_MANY_SIBLINGS: S.FAILED_PRECONDITION,
  KV_RECORD_TOO_LARGE: S.FAILED_PRECONDITION,
  KV_HINTS_FULL: S.RESOURCE_EXHAUSTED,
  // Free disk below the floor (or a write failed for want of it): nothing was written; another node may take it.
  KV_DISK_FULL: S.RESOURCE_EXHAUSTED,
  KV_CORRUPT_RECORD: S.DATA_LOSS,
  KV_CLOSED: S.UNAVAILABLE,
  KV_IO: S.INTERNAL,
  RK_BAD_ARGUMENT: S.INVALID_ARGUMENT,
  RK_UNAVAILABLE: S.UNAVAILABLE,
  RK_NOT_READY: S.UNAVAILABLE,
  RK_TIMEOUT: S.DEADLINE_EXCEEDED,
  RK_CAS_UNKNOWN: S.DEADLINE_EXCEEDED,
  RK_OVERLOADED: S.RESOURCE_EXHAUSTED,
  RK_UNSUPPORTED: S.UNIMPLEMENTED,
  // What a request asked of the ring is malformed; an empty ring means the cluster is still forming.
  RING_BAD_MEMBER: S.INVALID_ARGUMENT,
  RING_DUPLICATE_MEMBER: S.INVALID_ARGUMENT,
  RING_BAD_TOKEN: S.INVALID_ARGUMENT,
  RING_BAD_REPLICAS: S.INVALID_ARGUMENT,
  RING_BAD_OPTION: S.INVALID_ARGUMENT,
  RING_UNKNOWN_MEMBER: S.NOT_FOUND,
  RING_EMPTY: S.FAILED_PRECONDITION,
  // A bucket named or changed wrongly; the limits (names, count, N) are bad arguments too.
  BK_BAD_NAME: S.INVALID_ARGUMENT,
  BK_BAD_PROPERTY: S.INVALID_ARGUMENT,
  BK_TOO_MANY: S.INVALID_ARGUMENT,
  BK_RESERVED_KEY: S.INVALID_ARGUMENT,
  BK_EMPTY_KEY: S.INVALID_ARGUMENT,
  BK_UNKNOWN: S.NOT_FOUND,
  BK_EXISTS: S.ALREADY_EXISTS,
  BK_N_FIXED: S.FAILED_PRECONDITION,
  BK_N_ABOVE_MEMBERS: S.FAILED_PRECONDITION,
  BK_NOT_EMPTY: S.FAILED_PRECONDITION,
  BK_DELETING: S.FAILED_PRECONDITION,
  BK_TYPE_FIXED: S.FAILED_PRECONDITION,
  // The bucket is there, of another data type: the operation that suits it would succeed.
  BK_WRONG_TYPE: S.FAILED_PRECONDITION,
  BK_UNKNOWN_TYPE: S.FAILED_PRECONDITION,
  BK_NOT_READY: S.FAILED_PRECONDITION,
  // A data type's element or field named wrongly (a sub-key: buckets/subkeys.ts), or past a limit.
  DT_BAD_SUBKEY: S.INVALID_ARGUMENT,
  DT_BAD_PARENT: S.INVALID_ARGUMENT,
  DT_BAD_PATH: S.INVALID_ARGUMENT,
  DT_PATH_TOO_DEEP: S.INVALID_ARGUMENT,
  DT_ELEMENT_EMPTY: S.INVALID_ARGUMENT,
  DT_ELEMENT_TOO_LARGE: S.INVALID_ARGUMENT,
  DT_FIELD_NAME_EMPTY: S.INVALID_ARGUMENT,
  DT_FIELD_NAME_TOO_LARGE: S.INVALID_ARGUMENT,
  DT_NO_CONTEXT: S.INVALID_ARGUMENT,
  DT_BAD_OP: S.INVALID_ARGUMENT,
  OP_BAD_ARGUMENT: S.INVALID_ARGUMENT,
  OP_MOVEMENT_REFUSED: S.FAILED_PRECONDITION,
  OP_REPAIR_REFUSED: S.FAILED_PRECONDITION,
  OP_FAULT_INJECTION_OFF: S.FAILED_PRECONDITION,
  OP_PLAN_OUTDATED: S.ABORTED,
};

/** A status code's name as gRPC spells it (UNAVAILABLE, DEADLINE_EXCEEDED, ...): for metric labels and messages. */
export function codeName(code: number | undefined): string {
  return S[code ?? S.UNKNOWN] ?? String(code);
}

/** The trailer a compare-and-set's error carries, as `not-applied`, when it proves the write did not apply (kv-service.ts casUnary). */
export const CAS_OUTCOME = 'ringkv-cas-outcome';

/** Retry advice sent with every RESOURCE_EXHAUSTED, ms: how long a client should wait before trying again. */
export const RETRY_PUSHBACK_MS = 200;

/** Trailers carrying gRPC's retry advice (grpc-retry-pushback-ms), for a RESOURCE_EXHAUSTED status. */
export function retryAdvice(): grpc.Metadata {
  const m = new grpc.Metadata();
  m.set('grpc-retry-pushback-ms', String(RETRY_PUSHBACK_MS));
  return m;
}

/** The status to answer with for `e`; a RESOURCE_EXHAUSTED one carries retry advice. */
export function toStatus(e: unknown): Partial<grpc.StatusObject> {
  const x = e as { code?: unknown; details?: unknown; message?: unknown };
  if (typeof x?.code === 'string' && Object.hasOwn(STATUS_BY_CODE, x.code)) {
    const code = STATUS_BY_CODE[x.code as ErrorCode];
    return { code, details: String(x.message), ...(code === S.RESOURCE_EXHAUSTED ? { metadata: retryAdvice() } : {}) };
  }
  if (typeof x?.code === 'number' && x.code in S && typeof x.details === 'string') {
    return { code: x.code, details: x.details.replace(/\. Resolution note: .*$/, '') };
  }
  return { code: S.INTERNAL, details: `internal error: ${String(x?.message ?? e)}` };
}
