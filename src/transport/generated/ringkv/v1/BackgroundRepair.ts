// Original file: proto/ringkv/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface BackgroundRepair {
  'ranges'?: (number | string | Long);
  'keysExchanged'?: (number | string | Long);
  'bytes'?: (number | string | Long);
  'failed'?: (number | string | Long);
}

export interface BackgroundRepair__Output {
  'ranges': (number);
  'keysExchanged': (number);
  'bytes': (number);
  'failed': (number);
}
