// Original file: proto/ringkv/internal/v1/replica.proto

import type { ApplyResponse as _ringkv_internal_v1_ApplyResponse, ApplyResponse__Output as _ringkv_internal_v1_ApplyResponse__Output } from '../../../ringkv/internal/v1/ApplyResponse.js';
import type { MergeResponse as _ringkv_internal_v1_MergeResponse, MergeResponse__Output as _ringkv_internal_v1_MergeResponse__Output } from '../../../ringkv/internal/v1/MergeResponse.js';
import type { ReadResponse as _ringkv_internal_v1_ReadResponse, ReadResponse__Output as _ringkv_internal_v1_ReadResponse__Output } from '../../../ringkv/internal/v1/ReadResponse.js';
import type { DigestResponse as _ringkv_internal_v1_DigestResponse, DigestResponse__Output as _ringkv_internal_v1_DigestResponse__Output } from '../../../ringkv/internal/v1/DigestResponse.js';
import type { ReplicaError as _ringkv_internal_v1_ReplicaError, ReplicaError__Output as _ringkv_internal_v1_ReplicaError__Output } from '../../../ringkv/internal/v1/ReplicaError.js';
import type { CounterUpdateResponse as _ringkv_internal_v1_CounterUpdateResponse, CounterUpdateResponse__Output as _ringkv_internal_v1_CounterUpdateResponse__Output } from '../../../ringkv/internal/v1/CounterUpdateResponse.js';
import type { WriteManyResponse as _ringkv_internal_v1_WriteManyResponse, WriteManyResponse__Output as _ringkv_internal_v1_WriteManyResponse__Output } from '../../../ringkv/internal/v1/WriteManyResponse.js';
import type { ReadRangeResponse as _ringkv_internal_v1_ReadRangeResponse, ReadRangeResponse__Output as _ringkv_internal_v1_ReadRangeResponse__Output } from '../../../ringkv/internal/v1/ReadRangeResponse.js';
import type { PaxosResponse as _ringkv_internal_v1_PaxosResponse, PaxosResponse__Output as _ringkv_internal_v1_PaxosResponse__Output } from '../../../ringkv/internal/v1/PaxosResponse.js';
import type { StepResponse as _ringkv_internal_v1_StepResponse, StepResponse__Output as _ringkv_internal_v1_StepResponse__Output } from '../../../ringkv/internal/v1/StepResponse.js';

export interface ReplicaReply {
  'id'?: (number);
  'apply'?: (_ringkv_internal_v1_ApplyResponse | null);
  'merge'?: (_ringkv_internal_v1_MergeResponse | null);
  'read'?: (_ringkv_internal_v1_ReadResponse | null);
  'digest'?: (_ringkv_internal_v1_DigestResponse | null);
  'error'?: (_ringkv_internal_v1_ReplicaError | null);
  'counterUpdate'?: (_ringkv_internal_v1_CounterUpdateResponse | null);
  'writeMany'?: (_ringkv_internal_v1_WriteManyResponse | null);
  'readRange'?: (_ringkv_internal_v1_ReadRangeResponse | null);
  'paxos'?: (_ringkv_internal_v1_PaxosResponse | null);
  'step'?: (_ringkv_internal_v1_StepResponse | null);
  'result'?: "apply"|"merge"|"read"|"digest"|"error"|"counterUpdate"|"writeMany"|"readRange"|"paxos"|"step";
}

export interface ReplicaReply__Output {
  'id': (number);
  'apply'?: (_ringkv_internal_v1_ApplyResponse__Output | null);
  'merge'?: (_ringkv_internal_v1_MergeResponse__Output | null);
  'read'?: (_ringkv_internal_v1_ReadResponse__Output | null);
  'digest'?: (_ringkv_internal_v1_DigestResponse__Output | null);
  'error'?: (_ringkv_internal_v1_ReplicaError__Output | null);
  'counterUpdate'?: (_ringkv_internal_v1_CounterUpdateResponse__Output | null);
  'writeMany'?: (_ringkv_internal_v1_WriteManyResponse__Output | null);
  'readRange'?: (_ringkv_internal_v1_ReadRangeResponse__Output | null);
  'paxos'?: (_ringkv_internal_v1_PaxosResponse__Output | null);
  'step'?: (_ringkv_internal_v1_StepResponse__Output | null);
}
