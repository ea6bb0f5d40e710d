// Original file: proto/ringkv/internal/v1/handoff.proto

import type { FetchRange as _ringkv_internal_v1_FetchRange, FetchRange__Output as _ringkv_internal_v1_FetchRange__Output } from '../../../ringkv/internal/v1/FetchRange.js';

export interface FetchRequest {
  'cluster'?: (string);
  /**
   * The movement these ranges belong to: progress is kept under it, so a retry resumes.
   */
  'move'?: (string);
  'ranges'?: (_ringkv_internal_v1_FetchRange)[];
  /**
   * Node id of the requester, for logs.
   */
  'requester'?: (string);
}

export interface FetchRequest__Output {
  'cluster': (string);
  /**
   * The movement these ranges belong to: progress is kept under it, so a retry resumes.
   */
  'move': (string);
  'ranges': (_ringkv_internal_v1_FetchRange__Output)[];
  /**
   * Node id of the requester, for logs.
   */
  'requester': (string);
}
