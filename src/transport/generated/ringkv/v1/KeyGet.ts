// Original file: proto/ringkv/v1/kv.proto

import type { GetResponse as _ringkv_v1_GetResponse, GetResponse__Output as _ringkv_v1_GetResponse__Output } from '../../ringkv/v1/GetResponse.js';
import type { KvError as _ringkv_v1_KvError, KvError__Output as _ringkv_v1_KvError__Output } from '../../ringkv/v1/KvError.js';

export interface KeyGet {
  'key'?: (Buffer | Uint8Array | string);
  'get'?: (_ringkv_v1_GetResponse | null);
  /**
   * The status a Get of this key alone would have ended with.
   */
  'error'?: (_ringkv_v1_KvError | null);
  'result'?: "get"|"error";
}

export interface KeyGet__Output {
  'key': (Buffer);
  'get'?: (_ringkv_v1_GetResponse__Output | null);
  /**
   * The status a Get of this key alone would have ended with.
   */
  'error'?: (_ringkv_v1_KvError__Output | null);
}
