// Original file: proto/ringkv/v1/kv.proto

import type { KeyPut as _ringkv_v1_KeyPut, KeyPut__Output as _ringkv_v1_KeyPut__Output } from '../../ringkv/v1/KeyPut.js';

export interface PutManyResponse {
  /**
   * One per item of the request, in its order.
   */
  'results'?: (_ringkv_v1_KeyPut)[];
}

export interface PutManyResponse__Output {
  /**
   * One per item of the request, in its order.
   */
  'results': (_ringkv_v1_KeyPut__Output)[];
}
