// Original file: proto/ringkv/internal/v1/repair.proto

import type { TreeSession as _ringkv_internal_v1_TreeSession, TreeSession__Output as _ringkv_internal_v1_TreeSession__Output } from '../../../ringkv/internal/v1/TreeSession.js';

export interface FinishRequest {
  'session'?: (_ringkv_internal_v1_TreeSession | null);
  'complete'?: (boolean);
}

export interface FinishRequest__Output {
  'session': (_ringkv_internal_v1_TreeSession__Output | null);
  'complete': (boolean);
}
