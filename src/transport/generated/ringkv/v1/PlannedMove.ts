// Original file: proto/ringkv/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface PlannedMove {
  'from'?: (string);
  'to'?: (string);
  'ranges'?: (number);
  'share'?: (number | string);
  /**
   * Estimates from what the source gossips (load, keys), by the share of its ranges.
   */
  'keys'?: (number | string | Long);
  'bytes'?: (number | string | Long);
}

export interface PlannedMove__Output {
  'from': (string);
  'to': (string);
  'ranges': (number);
  'share': (number);
  /**
   * Estimates from what the source gossips (load, keys), by the share of its ranges.
   */
  'keys': (number);
  'bytes': (number);
}
