// Original file: proto/ringkv/internal/v1/replica.proto

import type { SubKeyRecord as _ringkv_internal_v1_SubKeyRecord, SubKeyRecord__Output as _ringkv_internal_v1_SubKeyRecord__Output } from '../../../ringkv/internal/v1/SubKeyRecord.js';

export interface WriteManyResponse {
  /**
   * The records written (or found written), one per op, in the request's order.
   */
  'records'?: (_ringkv_internal_v1_SubKeyRecord)[];
}

export interface WriteManyResponse__Output {
  /**
   * The records written (or found written), one per op, in the request's order.
   */
  'records': (_ringkv_internal_v1_SubKeyRecord__Output)[];
}
