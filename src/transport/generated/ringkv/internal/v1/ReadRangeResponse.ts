// Original file: proto/ringkv/internal/v1/replica.proto

import type { SubKeyRecord as _ringkv_internal_v1_SubKeyRecord, SubKeyRecord__Output as _ringkv_internal_v1_SubKeyRecord__Output } from '../../../ringkv/internal/v1/SubKeyRecord.js';

export interface ReadRangeResponse {
  'records'?: (_ringkv_internal_v1_SubKeyRecord)[];
  /**
   * Where the next page starts (the last key read); unset once the span is read.
   */
  'next'?: (Buffer | Uint8Array | string);
  '_next'?: "next";
}

export interface ReadRangeResponse__Output {
  'records': (_ringkv_internal_v1_SubKeyRecord__Output)[];
  /**
   * Where the next page starts (the last key read); unset once the span is read.
   */
  'next'?: (Buffer);
}
