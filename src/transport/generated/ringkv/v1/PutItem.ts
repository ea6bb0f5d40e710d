// Original file: proto/ringkv/v1/kv.proto

import type { Long } from '@grpc/proto-loader';

export interface PutItem {
  /**
   * As PutRequest's key, value, context, request_id and ttl_ms.
   */
  'key'?: (Buffer | Uint8Array | string);
  'value'?: (Buffer | Uint8Array | string);
  'context'?: (Buffer | Uint8Array | string);
  'requestId'?: (Buffer | Uint8Array | string);
  'ttlMs'?: (number | string | Long);
}

export interface PutItem__Output {
  /**
   * As PutRequest's key, value, context, request_id and ttl_ms.
   */
  'key': (Buffer);
  'value': (Buffer);
  'context': (Buffer);
  'requestId': (Buffer);
  'ttlMs': (number);
}
