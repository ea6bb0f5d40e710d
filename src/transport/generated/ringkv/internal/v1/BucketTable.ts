// Original file: proto/ringkv/internal/v1/control.proto

import type { BucketEntry as _ringkv_internal_v1_BucketEntry, BucketEntry__Output as _ringkv_internal_v1_BucketEntry__Output } from '../../../ringkv/internal/v1/BucketEntry.js';

export interface BucketTable {
  'buckets'?: (_ringkv_internal_v1_BucketEntry)[];
}

export interface BucketTable__Output {
  'buckets': (_ringkv_internal_v1_BucketEntry__Output)[];
}
