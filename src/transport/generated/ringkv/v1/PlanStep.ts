// Original file: proto/ringkv/v1/admin.proto

import type { StagedChange as _ringkv_v1_StagedChange, StagedChange__Output as _ringkv_v1_StagedChange__Output } from '../../ringkv/v1/StagedChange.js';
import type { PlannedMove as _ringkv_v1_PlannedMove, PlannedMove__Output as _ringkv_v1_PlannedMove__Output } from '../../ringkv/v1/PlannedMove.js';

export interface PlanStep {
  'change'?: (_ringkv_v1_StagedChange | null);
  'moves'?: (_ringkv_v1_PlannedMove)[];
  /**
   * staged | running | done | failed
   */
  'state'?: (string);
  'error'?: (string);
}

export interface PlanStep__Output {
  'change': (_ringkv_v1_StagedChange__Output | null);
  'moves': (_ringkv_v1_PlannedMove__Output)[];
  /**
   * staged | running | done | failed
   */
  'state': (string);
  'error': (string);
}
