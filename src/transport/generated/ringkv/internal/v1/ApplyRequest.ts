// Original file: proto/ringkv/internal/v1/replica.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Issue a new version of the key on this replica (it holds the key's versions, so its
 * dot is new) and return the key's record, for the coordinator to send on.
 */
export interface ApplyRequest {
  'key'?: (Buffer | Uint8Array | string);
  'value'?: (Buffer | Uint8Array | string);
  /**
   * A delete: value is ignored.
   */
  'tombstone'?: (boolean);
  'context'?: (Buffer | Uint8Array | string);
  /**
   * The client's request id, if it sent one: a write this replica has seen before is not
   * issued a second version.
   */
  'requestId'?: (Buffer | Uint8Array | string);
  /**
   * A put's expiry, ms since the epoch by the coordinator's clock (its TTL, or its bucket's
   * default, added to that clock); 0: the value does not expire. Stored with the sibling.
   */
  'expiresAt'?: (number | string | Long);
}

/**
 * Issue a new version of the key on this replica (it holds the key's versions, so its
 * dot is new) and return the key's record, for the coordinator to send on.
 */
export interface ApplyRequest__Output {
  'key': (Buffer);
  'value': (Buffer);
  /**
   * A delete: value is ignored.
   */
  'tombstone': (boolean);
  'context': (Buffer);
  /**
   * The client's request id, if it sent one: a write this replica has seen before is not
   * issued a second version.
   */
  'requestId': (Buffer);
  /**
   * A put's expiry, ms since the epoch by the coordinator's clock (its TTL, or its bucket's
   * default, added to that clock); 0: the value does not expire. Stored with the sibling.
   */
  'expiresAt': (number);
}
