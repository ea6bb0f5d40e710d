// Original file: proto/ringkv/v1/admin.proto

import type { BucketProps as _ringkv_v1_BucketProps, BucketProps__Output as _ringkv_v1_BucketProps__Output } from '../../ringkv/v1/BucketProps.js';

export interface BucketRequest {
  /**
   * 1 to 64 characters of a-z, 0-9, '_', '-' and '.', starting with a letter or digit.
   */
  'name'?: (string);
  'props'?: (_ringkv_v1_BucketProps | null);
  /**
   * For SetBucket: the properties of `props` to change ("n", "r", "w", "ttl_ms",
   * "siblings", "type"); the others keep their values.
   */
  'set'?: (string)[];
}

export interface BucketRequest__Output {
  /**
   * 1 to 64 characters of a-z, 0-9, '_', '-' and '.', starting with a letter or digit.
   */
  'name': (string);
  'props': (_ringkv_v1_BucketProps__Output | null);
  /**
   * For SetBucket: the properties of `props` to change ("n", "r", "w", "ttl_ms",
   * "siblings", "type"); the others keep their values.
   */
  'set': (string)[];
}
