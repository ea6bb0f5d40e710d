// Original file: proto/ringkv/v1/kv.proto

import type { Long } from '@grpc/proto-loader';

export interface PutRequest {
  /**
   * 1 to 4,096 bytes.
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * 1 byte to 1 MiB.
   */
  'value'?: (Buffer | Uint8Array | string);
  /**
   * From a Get of this key; empty for a blind write.
   */
  'context'?: (Buffer | Uint8Array | string);
  /**
   * Replicas that must hold the write before it is acknowledged, 1..N; 0 = default (quorum).
   */
  'w'?: (number);
  /**
   * Optional, 1 to 64 bytes: the same on every attempt of one request (a retry, a hedge
   * sent to another node). A write repeated with its request id is applied once, through
   * any nodes (docs/causality.md#safe-to-send-twice). 16 random bytes will do.
   */
  'requestId'?: (Buffer | Uint8Array | string);
  /**
   * The bucket (docs/reads-and-writes.md#buckets); empty: the default bucket.
   */
  'bucket'?: (string);
  /**
   * The value expires this long after the write, ms; 0: the bucket's default TTL (none
   * when the bucket has none). An expired value is never returned again.
   */
  'ttlMs'?: (number | string | Long);
  /**
   * Acknowledgements must come from at least this many distinct nodes (fallbacks
   * included), 0..N; 0: no such rule (docs/reads-and-writes.md#confirmations).
   */
  'nodeConfirms'?: (number);
  /**
   * Acknowledgements must come from at least this many distinct zones, 0..N.
   */
  'zoneConfirms'?: (number);
  /**
   * Acknowledgements from primary replicas (not fallbacks) that must be among the W, 0..W
   * (Riak's pw).
   */
  'pw'?: (number);
}

export interface PutRequest__Output {
  /**
   * 1 to 4,096 bytes.
   */
  'key': (Buffer);
  /**
   * 1 byte to 1 MiB.
   */
  'value': (Buffer);
  /**
   * From a Get of this key; empty for a blind write.
   */
  'context': (Buffer);
  /**
   * Replicas that must hold the write before it is acknowledged, 1..N; 0 = default (quorum).
   */
  'w': (number);
  /**
   * Optional, 1 to 64 bytes: the same on every attempt of one request (a retry, a hedge
   * sent to another node). A write repeated with its request id is applied once, through
   * any nodes (docs/causality.md#safe-to-send-twice). 16 random bytes will do.
   */
  'requestId': (Buffer);
  /**
   * The bucket (docs/reads-and-writes.md#buckets); empty: the default bucket.
   */
  'bucket': (string);
  /**
   * The value expires this long after the write, ms; 0: the bucket's default TTL (none
   * when the bucket has none). An expired value is never returned again.
   */
  'ttlMs': (number);
  /**
   * Acknowledgements must come from at least this many distinct nodes (fallbacks
   * included), 0..N; 0: no such rule (docs/reads-and-writes.md#confirmations).
   */
  'nodeConfirms': (number);
  /**
   * Acknowledgements must come from at least this many distinct zones, 0..N.
   */
  'zoneConfirms': (number);
  /**
   * Acknowledgements from primary replicas (not fallbacks) that must be among the W, 0..W
   * (Riak's pw).
   */
  'pw': (number);
}
