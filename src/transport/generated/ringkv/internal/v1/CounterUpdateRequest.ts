// Original file: proto/ringkv/internal/v1/replica.proto

import type { Long } from '@grpc/proto-loader';

/**
 * Increment (a negative amount: decrement) the counter at key on this replica, as its
 * issuer, and return what the coordinator sends on.
 */
export interface CounterUpdateRequest {
  'key'?: (Buffer | Uint8Array | string);
  /**
   * Nonzero, within +-(2^53 - 1) (the store's bound); anything else is refused KV_BAD_AMOUNT.
   */
  'amount'?: (number | string | Long);
  /**
   * The client's request id, if it sent one: an increment this key's log holds already is
   * not counted again (the reply's delta is then the full state).
   */
  'requestId'?: (Buffer | Uint8Array | string);
}

/**
 * Increment (a negative amount: decrement) the counter at key on this replica, as its
 * issuer, and return what the coordinator sends on.
 */
export interface CounterUpdateRequest__Output {
  'key': (Buffer);
  /**
   * Nonzero, within +-(2^53 - 1) (the store's bound); anything else is refused KV_BAD_AMOUNT.
   */
  'amount': (number);
  /**
   * The client's request id, if it sent one: an increment this key's log holds already is
   * not counted again (the reply's delta is then the full state).
   */
  'requestId': (Buffer);
}
