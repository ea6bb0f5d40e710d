// Original file: proto/ringkv/v1/admin.proto

import type { RangeTransfer as _ringkv_v1_RangeTransfer, RangeTransfer__Output as _ringkv_v1_RangeTransfer__Output } from '../../ringkv/v1/RangeTransfer.js';
import type { Long } from '@grpc/proto-loader';

export interface Pull {
  'move'?: (string);
  /**
   * The node that asked for it (the movement's driver).
   */
  'requestedBy'?: (string);
  'startedAtMs'?: (number | string | Long);
  'finishedAtMs'?: (number | string | Long);
  'ranges'?: (_ringkv_v1_RangeTransfer)[];
}

export interface Pull__Output {
  'move': (string);
  /**
   * The node that asked for it (the movement's driver).
   */
  'requestedBy': (string);
  'startedAtMs': (number);
  'finishedAtMs': (number);
  'ranges': (_ringkv_v1_RangeTransfer__Output)[];
}
