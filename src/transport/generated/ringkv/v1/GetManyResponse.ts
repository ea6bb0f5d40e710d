// Original file: proto/ringkv/v1/kv.proto

import type { KeyGet as _ringkv_v1_KeyGet, KeyGet__Output as _ringkv_v1_KeyGet__Output } from '../../ringkv/v1/KeyGet.js';

export interface GetManyResponse {
  /**
   * One per key of the request, in its order.
   */
  'results'?: (_ringkv_v1_KeyGet)[];
}

export interface GetManyResponse__Output {
  /**
   * One per key of the request, in its order.
   */
  'results': (_ringkv_v1_KeyGet__Output)[];
}
