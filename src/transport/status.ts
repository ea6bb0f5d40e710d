/**
 * The one place where domain errors become gRPC statuses (docs/architecture.md).
 * Storage's KV_*, replication's RK_* and the ring's RING_* codes each map to one status; an error that
 * already carries a gRPC status (a replica's reply, passed through) keeps it.
 *
 * Owns: the table. Must not: word messages (the error's owner did).
 */
import * as grpc from '@grpc/grpc-js';
import type { KvErrorCode } from '../storage/index.js';
import type { ReplicationErrorCode } from '../replication/errors.js';
import type { RingErrorCode } from '../ring/errors.js';

const S = grpc.status;

const BY_CODE: Record<KvErrorCode | ReplicationErrorCode | RingErrorCode, grpc.status> = {
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
  // The key's versions are at their cap: a read and a write with its context resolves them.
  KV_TOO_MANY_SIBLINGS: S.FAILED_PRECONDITION,
  KV_RECORD_TOO_LARGE: S.FAILED_PRECONDITION,
  KV_HINTS_FULL: S.RESOURCE_EXHAUSTED,
  KV_CORRUPT_RECORD: S.DATA_LOSS,
  KV_CLOSED: S.UNAVAILABLE,
  KV_IO: S.INTERNAL,
  RK_BAD_ARGUMENT: S.INVALID_ARGUMENT,
  RK_UNAVAILABLE: S.UNAVAILABLE,
  RK_NOT_READY: S.UNAVAILABLE,
  RK_TIMEOUT: S.DEADLINE_EXCEEDED,
  RK_OVERLOADED: S.RESOURCE_EXHAUSTED,
  // What a request asked of the ring is malformed; an empty ring means the cluster is still forming.
  RING_BAD_MEMBER: S.INVALID_ARGUMENT,
  RING_DUPLICATE_MEMBER: S.INVALID_ARGUMENT,
  RING_BAD_TOKEN: S.INVALID_ARGUMENT,
  RING_BAD_REPLICAS: S.INVALID_ARGUMENT,
  RING_BAD_OPTION: S.INVALID_ARGUMENT,
  RING_UNKNOWN_MEMBER: S.NOT_FOUND,
  RING_EMPTY: S.FAILED_PRECONDITION,
};

/** A status code's name as gRPC spells it (UNAVAILABLE, DEADLINE_EXCEEDED, ...): for metric labels and messages. */
export function codeName(code: number | undefined): string {
  return S[code ?? S.UNKNOWN] ?? String(code);
}

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
  if (typeof x?.code === 'string' && Object.hasOwn(BY_CODE, x.code)) {
    const code = BY_CODE[x.code as keyof typeof BY_CODE];
    return { code, details: String(x.message), ...(code === S.RESOURCE_EXHAUSTED ? { metadata: retryAdvice() } : {}) };
  }
  if (typeof x?.code === 'number' && x.code in S && typeof x.details === 'string') {
    return { code: x.code, details: x.details.replace(/\. Resolution note: .*$/, '') };
  }
  return { code: S.INTERNAL, details: `internal error: ${String(x?.message ?? e)}` };
}
