/**
 * Errors raised by the ring: each carries a stable `code` so that the server can map it
 * to a gRPC status in one place (docs/architecture.md). Messages say what was wrong
 * and what to do about it.
 *
 * Must not: be thrown for conditions a caller should handle as values.
 */

export type RingErrorCode =
  | 'RING_EMPTY' // a ring needs at least one member
  | 'RING_BAD_MEMBER' // a member's id, zone, rack or weight is malformed
  | 'RING_DUPLICATE_MEMBER' // two members share an id
  | 'RING_UNKNOWN_MEMBER' // the id is not a member of this ring
  | 'RING_BAD_TOKEN' // a token is not an integer in [0, 2^64), is claimed twice, or a member has none (the ring holds tokens, claims choose them)
  | 'RING_BAD_REPLICAS' // n is not an integer in 1..distinct nodes
  | 'RING_BAD_OPTION'; // a build option is out of range

export class RingError extends Error {
  readonly code: RingErrorCode;

  constructor(code: RingErrorCode, message: string) {
    super(message);
    this.name = 'RingError';
    this.code = code;
  }
}
