// Original file: proto/ringkv/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface SetClockOffsetResponse {
  'offsetMs'?: (number | string | Long);
  /**
   * The node's wall clock after the change, ms since the epoch.
   */
  'nowMs'?: (number | string | Long);
}

export interface SetClockOffsetResponse__Output {
  'offsetMs': (number);
  /**
   * The node's wall clock after the change, ms since the epoch.
   */
  'nowMs': (number);
}
