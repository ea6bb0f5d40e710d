// Original file: proto/ringkv/v1/admin.proto

import type { Bucket as _ringkv_v1_Bucket, Bucket__Output as _ringkv_v1_Bucket__Output } from '../../ringkv/v1/Bucket.js';

export interface ListBucketsResponse {
  'buckets'?: (_ringkv_v1_Bucket)[];
}

export interface ListBucketsResponse__Output {
  'buckets': (_ringkv_v1_Bucket__Output)[];
}
