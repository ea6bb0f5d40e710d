// Original file: proto/ringkv/internal/v1/control.proto

import type { Long } from '@grpc/proto-loader';

export interface RepairRangeReply {
  /**
   * Leaves that differed, summed over the replicas compared with.
   */
  'leavesDiffering'?: (number);
  /**
   * Keys whose records were exchanged, and the bytes on the wire.
   */
  'keysExchanged'?: (number | string | Long);
  'bytes'?: (number | string | Long);
}

export interface RepairRangeReply__Output {
  /**
   * Leaves that differed, summed over the replicas compared with.
   */
  'leavesDiffering': (number);
  /**
   * Keys whose records were exchanged, and the bytes on the wire.
   */
  'keysExchanged': (number);
  'bytes': (number);
}
