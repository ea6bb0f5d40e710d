// Original file: proto/ringkv/internal/v1/repair.proto

import type { KeyRecord as _ringkv_internal_v1_KeyRecord, KeyRecord__Output as _ringkv_internal_v1_KeyRecord__Output } from '../../../ringkv/internal/v1/KeyRecord.js';

export interface RecordsResponse {
  'records'?: (_ringkv_internal_v1_KeyRecord)[];
}

export interface RecordsResponse__Output {
  'records': (_ringkv_internal_v1_KeyRecord__Output)[];
}
