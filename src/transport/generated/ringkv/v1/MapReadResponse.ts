// Original file: proto/ringkv/v1/kv.proto

import type { MapEntry as _ringkv_v1_MapEntry, MapEntry__Output as _ringkv_v1_MapEntry__Output } from '../../ringkv/v1/MapEntry.js';

export interface MapReadResponse {
  /**
   * In the order of their paths (a field's entries together).
   */
  'entries'?: (_ringkv_v1_MapEntry)[];
  /**
   * The `after` of the next page; empty when this page is the last.
   */
  'next'?: (Buffer | Uint8Array | string);
}

export interface MapReadResponse__Output {
  /**
   * In the order of their paths (a field's entries together).
   */
  'entries': (_ringkv_v1_MapEntry__Output)[];
  /**
   * The `after` of the next page; empty when this page is the last.
   */
  'next': (Buffer);
}
