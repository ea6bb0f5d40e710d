// Original file: proto/ringkv/internal/v1/control.proto

import type { PropertyWrite as _ringkv_internal_v1_PropertyWrite, PropertyWrite__Output as _ringkv_internal_v1_PropertyWrite__Output } from '../../../ringkv/internal/v1/PropertyWrite.js';

/**
 * One bucket with each property's last write: (at_ms, by) orders writes of a property.
 */
export interface BucketEntry {
  'name'?: (string);
  'props'?: (_ringkv_internal_v1_PropertyWrite)[];
}

/**
 * One bucket with each property's last write: (at_ms, by) orders writes of a property.
 */
export interface BucketEntry__Output {
  'name': (string);
  'props': (_ringkv_internal_v1_PropertyWrite__Output)[];
}
