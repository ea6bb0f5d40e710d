// Original file: proto/ringkv/v1/kv.proto

import type { MapOp as _ringkv_v1_MapOp, MapOp__Output as _ringkv_v1_MapOp__Output } from '../../ringkv/v1/MapOp.js';

export interface MapUpdateRequest {
  /**
   * As PutRequest's: a bucket of type map.
   */
  'bucket'?: (string);
  'key'?: (Buffer | Uint8Array | string);
  /**
   * 1 to 1,000 ops, each field (or element of a set field) at most once.
   */
  'ops'?: (_ringkv_v1_MapOp)[];
  /**
   * As PutRequest's: the same on every attempt of one update, which then applies once.
   */
  'requestId'?: (Buffer | Uint8Array | string);
  'w'?: (number);
  'nodeConfirms'?: (number);
  'zoneConfirms'?: (number);
  'pw'?: (number);
}

export interface MapUpdateRequest__Output {
  /**
   * As PutRequest's: a bucket of type map.
   */
  'bucket': (string);
  'key': (Buffer);
  /**
   * 1 to 1,000 ops, each field (or element of a set field) at most once.
   */
  'ops': (_ringkv_v1_MapOp__Output)[];
  /**
   * As PutRequest's: the same on every attempt of one update, which then applies once.
   */
  'requestId': (Buffer);
  'w': (number);
  'nodeConfirms': (number);
  'zoneConfirms': (number);
  'pw': (number);
}
