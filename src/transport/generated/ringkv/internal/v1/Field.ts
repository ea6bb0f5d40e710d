// Original file: proto/ringkv/internal/v1/gossip.proto

import type { Long } from '@grpc/proto-loader';

export interface Field {
  'name'?: (string);
  'value'?: (string);
  'version'?: (number | string | Long);
}

export interface Field__Output {
  'name': (string);
  'value': (string);
  'version': (number);
}
