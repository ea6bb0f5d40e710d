// Original file: proto/ringkv/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface BucketDeletionReply {
  'name'?: (string);
  /**
   * When it was deleted (ms since the epoch, the deleting node's clock).
   */
  'deletedAtMs'?: (number | string | Long);
  /**
   * Members that have deleted its keys and hints, and members that have not yet (a member
   * that is down purges when it is back).
   */
  'purged'?: (string)[];
  'pending'?: (string)[];
}

export interface BucketDeletionReply__Output {
  'name': (string);
  /**
   * When it was deleted (ms since the epoch, the deleting node's clock).
   */
  'deletedAtMs': (number);
  /**
   * Members that have deleted its keys and hints, and members that have not yet (a member
   * that is down purges when it is back).
   */
  'purged': (string)[];
  'pending': (string)[];
}
