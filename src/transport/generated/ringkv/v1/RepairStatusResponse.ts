// Original file: proto/ringkv/v1/admin.proto

import type { RepairedRange as _ringkv_v1_RepairedRange, RepairedRange__Output as _ringkv_v1_RepairedRange__Output } from '../../ringkv/v1/RepairedRange.js';
import type { BackgroundRepair as _ringkv_v1_BackgroundRepair, BackgroundRepair__Output as _ringkv_v1_BackgroundRepair__Output } from '../../ringkv/v1/BackgroundRepair.js';
import type { Long } from '@grpc/proto-loader';

export interface RepairStatusResponse {
  /**
   * Empty when this node has run no repair since it started.
   */
  'id'?: (string);
  'startedAtMs'?: (number | string | Long);
  /**
   * 0 while it runs.
   */
  'finishedAtMs'?: (number | string | Long);
  'ranges'?: (number);
  'done'?: (number);
  /**
   * Ranges with a replica down (a repair needs every replica), and ranges that failed.
   */
  'skipped'?: (number);
  'failed'?: (number);
  /**
   * Ranges whose trees matched every other replica's.
   */
  'identical'?: (number);
  'leavesDiffering'?: (number | string | Long);
  'keysExchanged'?: (number | string | Long);
  /**
   * Bytes on the wire (tree digests, keys of differing leaves, records), and of the records alone.
   */
  'bytes'?: (number | string | Long);
  'recordBytes'?: (number | string | Long);
  /**
   * The range being repaired now, "start-end".
   */
  'current'?: (string);
  'lastProblem'?: (string);
  /**
   * Every range of the current ring this node replicates, with when it was last repaired
   * with all its replicas (0: not since this node started), by any node's repair.
   */
  'repaired'?: (_ringkv_v1_RepairedRange)[];
  /**
   * What background repair (--repair-interval-ms) has done since this node started.
   */
  'background'?: (_ringkv_v1_BackgroundRepair | null);
  /**
   * Records this node read from storage during the run (tree scans and leaf listings).
   */
  'recordsRead'?: (number | string | Long);
  /**
   * Ranges compared on trees kept on write (no scan); the rest were scanned.
   */
  'kept'?: (number);
}

export interface RepairStatusResponse__Output {
  /**
   * Empty when this node has run no repair since it started.
   */
  'id': (string);
  'startedAtMs': (number);
  /**
   * 0 while it runs.
   */
  'finishedAtMs': (number);
  'ranges': (number);
  'done': (number);
  /**
   * Ranges with a replica down (a repair needs every replica), and ranges that failed.
   */
  'skipped': (number);
  'failed': (number);
  /**
   * Ranges whose trees matched every other replica's.
   */
  'identical': (number);
  'leavesDiffering': (number);
  'keysExchanged': (number);
  /**
   * Bytes on the wire (tree digests, keys of differing leaves, records), and of the records alone.
   */
  'bytes': (number);
  'recordBytes': (number);
  /**
   * The range being repaired now, "start-end".
   */
  'current': (string);
  'lastProblem': (string);
  /**
   * Every range of the current ring this node replicates, with when it was last repaired
   * with all its replicas (0: not since this node started), by any node's repair.
   */
  'repaired': (_ringkv_v1_RepairedRange__Output)[];
  /**
   * What background repair (--repair-interval-ms) has done since this node started.
   */
  'background': (_ringkv_v1_BackgroundRepair__Output | null);
  /**
   * Records this node read from storage during the run (tree scans and leaf listings).
   */
  'recordsRead': (number);
  /**
   * Ranges compared on trees kept on write (no scan); the rest were scanned.
   */
  'kept': (number);
}
