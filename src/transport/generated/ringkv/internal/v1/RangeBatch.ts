// Original file: proto/ringkv/internal/v1/handoff.proto

import type { RangeEntry as _ringkv_internal_v1_RangeEntry, RangeEntry__Output as _ringkv_internal_v1_RangeEntry__Output } from '../../../ringkv/internal/v1/RangeEntry.js';

export interface RangeBatch {
  'entries'?: (_ringkv_internal_v1_RangeEntry)[];
  /**
   * Records in this stretch that failed their checksum at the source: skipped, never sent.
   */
  'corrupt'?: (number);
}

export interface RangeBatch__Output {
  'entries': (_ringkv_internal_v1_RangeEntry__Output)[];
  /**
   * Records in this stretch that failed their checksum at the source: skipped, never sent.
   */
  'corrupt': (number);
}
