// Original file: proto/ringkv/internal/v1/repair.proto

import type { TreeSession as _ringkv_internal_v1_TreeSession, TreeSession__Output as _ringkv_internal_v1_TreeSession__Output } from '../../../ringkv/internal/v1/TreeSession.js';

export interface TreeDigestsRequest {
  'session'?: (_ringkv_internal_v1_TreeSession | null);
  /**
   * Level 0 is the root; `depth` the leaves.
   */
  'level'?: (number);
  'indices'?: (number)[];
}

export interface TreeDigestsRequest__Output {
  'session': (_ringkv_internal_v1_TreeSession__Output | null);
  /**
   * Level 0 is the root; `depth` the leaves.
   */
  'level': (number);
  'indices': (number)[];
}
