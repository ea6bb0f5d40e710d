// Original file: proto/ringkv/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface CleanupResponse {
  'deleted'?: (number | string | Long);
  /**
   * Keys written while the cleanup ran: kept.
   */
  'kept'?: (number | string | Long);
  'ranges'?: (number);
}

export interface CleanupResponse__Output {
  'deleted': (number);
  /**
   * Keys written while the cleanup ran: kept.
   */
  'kept': (number);
  'ranges': (number);
}
