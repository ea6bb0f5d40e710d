// Original file: proto/ringkv/v1/admin.proto

import type { PlanStep as _ringkv_v1_PlanStep, PlanStep__Output as _ringkv_v1_PlanStep__Output } from '../../ringkv/v1/PlanStep.js';
import type { OwnershipChange as _ringkv_v1_OwnershipChange, OwnershipChange__Output as _ringkv_v1_OwnershipChange__Output } from '../../ringkv/v1/OwnershipChange.js';

export interface PlanResponse {
  'steps'?: (_ringkv_v1_PlanStep)[];
  'ownership'?: (_ringkv_v1_OwnershipChange)[];
  /**
   * The view the plan was made on: a commit after it changed is refused.
   */
  'topo'?: (string);
  /**
   * True while a commit executes the steps.
   */
  'committing'?: (boolean);
  'replicas'?: (number);
}

export interface PlanResponse__Output {
  'steps': (_ringkv_v1_PlanStep__Output)[];
  'ownership': (_ringkv_v1_OwnershipChange__Output)[];
  /**
   * The view the plan was made on: a commit after it changed is refused.
   */
  'topo': (string);
  /**
   * True while a commit executes the steps.
   */
  'committing': (boolean);
  'replicas': (number);
}
