// Original file: proto/ringkv/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface RepairedRange {
  'start'?: (string);
  'end'?: (string);
  'atMs'?: (number | string | Long);
}

export interface RepairedRange__Output {
  'start': (string);
  'end': (string);
  'atMs': (number);
}
