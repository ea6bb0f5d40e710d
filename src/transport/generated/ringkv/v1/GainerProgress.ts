// Original file: proto/ringkv/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface GainerProgress {
  'node'?: (string);
  'ranges'?: (number);
  'state'?: (string);
  'keys'?: (number | string | Long);
  'bytes'?: (number | string | Long);
  'error'?: (string);
}

export interface GainerProgress__Output {
  'node': (string);
  'ranges': (number);
  'state': (string);
  'keys': (number);
  'bytes': (number);
  'error': (string);
}
