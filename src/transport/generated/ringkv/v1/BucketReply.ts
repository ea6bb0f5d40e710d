// Original file: proto/ringkv/v1/admin.proto

import type { Bucket as _ringkv_v1_Bucket, Bucket__Output as _ringkv_v1_Bucket__Output } from '../../ringkv/v1/Bucket.js';

export interface BucketReply {
  'bucket'?: (_ringkv_v1_Bucket | null);
  /**
   * Up members that did not have the change when this call returned.
   */
  'lagging'?: (string)[];
}

export interface BucketReply__Output {
  'bucket': (_ringkv_v1_Bucket__Output | null);
  /**
   * Up members that did not have the change when this call returned.
   */
  'lagging': (string)[];
}
