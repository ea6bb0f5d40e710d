// Original file: proto/ringkv/v1/kv.proto

import type { MapFieldType as _ringkv_v1_MapFieldType, MapFieldType__Output as _ringkv_v1_MapFieldType__Output } from '../../ringkv/v1/MapFieldType.js';

/**
 * One step of a field's path.
 */
export interface MapField {
  /**
   * 1 to 255 bytes.
   */
  'name'?: (Buffer | Uint8Array | string);
  'type'?: (_ringkv_v1_MapFieldType);
}

/**
 * One step of a field's path.
 */
export interface MapField__Output {
  /**
   * 1 to 255 bytes.
   */
  'name': (Buffer);
  'type': (_ringkv_v1_MapFieldType__Output);
}
