// Original file: proto/ringkv/internal/v1/repair.proto

import type { KeyRecord as _ringkv_internal_v1_KeyRecord, KeyRecord__Output as _ringkv_internal_v1_KeyRecord__Output } from '../../../ringkv/internal/v1/KeyRecord.js';

export interface PushRequest {
  'cluster'?: (string);
  'records'?: (_ringkv_internal_v1_KeyRecord)[];
  /**
   * Node id of the repairer, for logs.
   */
  'requester'?: (string);
}

export interface PushRequest__Output {
  'cluster': (string);
  'records': (_ringkv_internal_v1_KeyRecord__Output)[];
  /**
   * Node id of the repairer, for logs.
   */
  'requester': (string);
}
