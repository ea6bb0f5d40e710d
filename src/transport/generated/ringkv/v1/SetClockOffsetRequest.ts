// Original file: proto/ringkv/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface SetClockOffsetRequest {
  'offsetMs'?: (number | string | Long);
}

export interface SetClockOffsetRequest__Output {
  'offsetMs': (number);
}
