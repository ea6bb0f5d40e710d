// Original file: proto/ringkv/internal/v1/control.proto

import type { Long } from '@grpc/proto-loader';

export interface BucketKeysReply {
  'keys'?: (number | string | Long);
}

export interface BucketKeysReply__Output {
  'keys': (number);
}
