// Original file: proto/ringkv/v1/admin.proto

import type { StagedChange as _ringkv_v1_StagedChange, StagedChange__Output as _ringkv_v1_StagedChange__Output } from '../../ringkv/v1/StagedChange.js';

export interface PlanRequest {
  'changes'?: (_ringkv_v1_StagedChange)[];
}

export interface PlanRequest__Output {
  'changes': (_ringkv_v1_StagedChange__Output)[];
}
