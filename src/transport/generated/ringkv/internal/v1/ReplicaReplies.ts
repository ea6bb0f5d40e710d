// Original file: proto/ringkv/internal/v1/replica.proto

import type { ReplicaReply as _ringkv_internal_v1_ReplicaReply, ReplicaReply__Output as _ringkv_internal_v1_ReplicaReply__Output } from '../../../ringkv/internal/v1/ReplicaReply.js';

export interface ReplicaReplies {
  'replies'?: (_ringkv_internal_v1_ReplicaReply)[];
}

export interface ReplicaReplies__Output {
  'replies': (_ringkv_internal_v1_ReplicaReply__Output)[];
}
