/**
 * Errors of the coordinator, each with a stable code that the server maps to a gRPC
 * status in exactly one place (transport/status.ts; docs/architecture.md). Messages say
 * what was wrong and what to do.
 */

export type ReplicationErrorCode =
  | 'RK_BAD_ARGUMENT' // r or w outside 1..N, an empty value, ...
  | 'RK_UNAVAILABLE' // too few replicas up or answering to meet R or W
  | 'RK_NOT_READY' // the node is not serving: still joining, or shutting down
  | 'RK_TIMEOUT' // the deadline passed before R or W replicas answered
  | 'RK_OVERLOADED' // too many requests in flight on this node
  | 'RK_CAS_UNKNOWN' // a compare-and-set that may or may not have applied (read the key to learn)
  | 'RK_UNSUPPORTED'; // a replica's release does not know the call (a data type's, on a node not yet upgraded)

export class ReplicationError extends Error {
  readonly code: ReplicationErrorCode;

  constructor(code: ReplicationErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ReplicationError';
    this.code = code;
  }
}
