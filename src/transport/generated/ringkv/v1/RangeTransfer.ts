// Original file: proto/ringkv/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface RangeTransfer {
  /**
   * Tokens (start, end], 16 hex digits.
   */
  'start'?: (string);
  'end'?: (string);
  /**
   * waiting | active | done | failed
   */
  'state'?: (string);
  /**
   * Node ids it is pulled from (or sent to, for outgoing ranges).
   */
  'peer'?: (string);
  'keys'?: (number | string | Long);
  'bytes'?: (number | string | Long);
  /**
   * Fraction of the token space.
   */
  'share'?: (number | string);
  /**
   * True when pulled from replicas that keep the range because the one leaving it is down.
   */
  'fallbackSource'?: (boolean);
  'error'?: (string);
}

export interface RangeTransfer__Output {
  /**
   * Tokens (start, end], 16 hex digits.
   */
  'start': (string);
  'end': (string);
  /**
   * waiting | active | done | failed
   */
  'state': (string);
  /**
   * Node ids it is pulled from (or sent to, for outgoing ranges).
   */
  'peer': (string);
  'keys': (number);
  'bytes': (number);
  /**
   * Fraction of the token space.
   */
  'share': (number);
  /**
   * True when pulled from replicas that keep the range because the one leaving it is down.
   */
  'fallbackSource': (boolean);
  'error': (string);
}
