// Original file: proto/ringkv/v1/admin.proto

import type { TokenRange as _ringkv_v1_TokenRange, TokenRange__Output as _ringkv_v1_TokenRange__Output } from '../../ringkv/v1/TokenRange.js';

export interface RingResponse {
  'replicas'?: (number);
  'ranges'?: (_ringkv_v1_TokenRange)[];
  /**
   * While a join, leave, removal or replacement is in progress: the ranges and replicas
   * of the ring once it is done (coordinators already write to them). Empty otherwise.
   */
  'pending'?: (_ringkv_v1_TokenRange)[];
}

export interface RingResponse__Output {
  'replicas': (number);
  'ranges': (_ringkv_v1_TokenRange__Output)[];
  /**
   * While a join, leave, removal or replacement is in progress: the ranges and replicas
   * of the ring once it is done (coordinators already write to them). Empty otherwise.
   */
  'pending': (_ringkv_v1_TokenRange__Output)[];
}
