// Original file: proto/ringkv/v1/kv.proto

import type { SetOp as _ringkv_v1_SetOp, SetOp__Output as _ringkv_v1_SetOp__Output } from '../../ringkv/v1/SetOp.js';

export interface SetUpdateRequest {
  /**
   * As PutRequest's: a bucket of type set.
   */
  'bucket'?: (string);
  'key'?: (Buffer | Uint8Array | string);
  /**
   * 1 to 1,000 operations, each element at most once.
   */
  'ops'?: (_ringkv_v1_SetOp)[];
  /**
   * As PutRequest's.
   */
  'requestId'?: (Buffer | Uint8Array | string);
  'w'?: (number);
  'nodeConfirms'?: (number);
  'zoneConfirms'?: (number);
  'pw'?: (number);
}

export interface SetUpdateRequest__Output {
  /**
   * As PutRequest's: a bucket of type set.
   */
  'bucket': (string);
  'key': (Buffer);
  /**
   * 1 to 1,000 operations, each element at most once.
   */
  'ops': (_ringkv_v1_SetOp__Output)[];
  /**
   * As PutRequest's.
   */
  'requestId': (Buffer);
  'w': (number);
  'nodeConfirms': (number);
  'zoneConfirms': (number);
  'pw': (number);
}
