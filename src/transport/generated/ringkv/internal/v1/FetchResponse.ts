// Original file: proto/ringkv/internal/v1/handoff.proto

import type { Long } from '@grpc/proto-loader';

export interface FetchResponse {
  'keys'?: (number | string | Long);
  'bytes'?: (number | string | Long);
}

export interface FetchResponse__Output {
  'keys': (number);
  'bytes': (number);
}
