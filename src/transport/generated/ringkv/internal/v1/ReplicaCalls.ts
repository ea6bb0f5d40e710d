// Original file: proto/ringkv/internal/v1/replica.proto

import type { ReplicaCall as _ringkv_internal_v1_ReplicaCall, ReplicaCall__Output as _ringkv_internal_v1_ReplicaCall__Output } from '../../../ringkv/internal/v1/ReplicaCall.js';

export interface ReplicaCalls {
  'calls'?: (_ringkv_internal_v1_ReplicaCall)[];
}

export interface ReplicaCalls__Output {
  'calls': (_ringkv_internal_v1_ReplicaCall__Output)[];
}
