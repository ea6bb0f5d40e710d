// Original file: proto/ringkv/v1/admin.proto

import type { BucketProps as _ringkv_v1_BucketProps, BucketProps__Output as _ringkv_v1_BucketProps__Output } from '../../ringkv/v1/BucketProps.js';
import type { Long } from '@grpc/proto-loader';

export interface Bucket {
  'name'?: (string);
  'props'?: (_ringkv_v1_BucketProps | null);
  /**
   * The bucket's latest change: when (ms since the epoch, the changing node's clock) and
   * on which node.
   */
  'changedAtMs'?: (number | string | Long);
  'changedBy'?: (string);
}

export interface Bucket__Output {
  'name': (string);
  'props': (_ringkv_v1_BucketProps__Output | null);
  /**
   * The bucket's latest change: when (ms since the epoch, the changing node's clock) and
   * on which node.
   */
  'changedAtMs': (number);
  'changedBy': (string);
}
