// Original file: proto/ringkv/internal/v1/repair.proto

import type { KeyHash as _ringkv_internal_v1_KeyHash, KeyHash__Output as _ringkv_internal_v1_KeyHash__Output } from '../../../ringkv/internal/v1/KeyHash.js';

export interface PushResponse {
  'changed'?: (_ringkv_internal_v1_KeyHash)[];
}

export interface PushResponse__Output {
  'changed': (_ringkv_internal_v1_KeyHash__Output)[];
}
