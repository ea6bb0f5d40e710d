// Original file: proto/ringkv/internal/v1/replica.proto

import type { FieldType as _ringkv_internal_v1_FieldType, FieldType__Output as _ringkv_internal_v1_FieldType__Output } from '../../../ringkv/internal/v1/FieldType.js';

/**
 * One field of a sub-key's path: every one but the last is a map.
 */
export interface PathField {
  'name'?: (Buffer | Uint8Array | string);
  'type'?: (_ringkv_internal_v1_FieldType);
}

/**
 * One field of a sub-key's path: every one but the last is a map.
 */
export interface PathField__Output {
  'name': (Buffer);
  'type': (_ringkv_internal_v1_FieldType__Output);
}
