import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { ApplyRequest as _ringkv_internal_v1_ApplyRequest, ApplyRequest__Output as _ringkv_internal_v1_ApplyRequest__Output } from './ringkv/internal/v1/ApplyRequest.js';
import type { ApplyResponse as _ringkv_internal_v1_ApplyResponse, ApplyResponse__Output as _ringkv_internal_v1_ApplyResponse__Output } from './ringkv/internal/v1/ApplyResponse.js';
import type { DigestRequest as _ringkv_internal_v1_DigestRequest, DigestRequest__Output as _ringkv_internal_v1_DigestRequest__Output } from './ringkv/internal/v1/DigestRequest.js';
import type { DigestResponse as _ringkv_internal_v1_DigestResponse, DigestResponse__Output as _ringkv_internal_v1_DigestResponse__Output } from './ringkv/internal/v1/DigestResponse.js';
import type { MergeRequest as _ringkv_internal_v1_MergeRequest, MergeRequest__Output as _ringkv_internal_v1_MergeRequest__Output } from './ringkv/internal/v1/MergeRequest.js';
import type { MergeResponse as _ringkv_internal_v1_MergeResponse, MergeResponse__Output as _ringkv_internal_v1_MergeResponse__Output } from './ringkv/internal/v1/MergeResponse.js';
import type { ReadRequest as _ringkv_internal_v1_ReadRequest, ReadRequest__Output as _ringkv_internal_v1_ReadRequest__Output } from './ringkv/internal/v1/ReadRequest.js';
import type { ReadResponse as _ringkv_internal_v1_ReadResponse, ReadResponse__Output as _ringkv_internal_v1_ReadResponse__Output } from './ringkv/internal/v1/ReadResponse.js';
import type { ReplicaClient as _ringkv_internal_v1_ReplicaClient, ReplicaDefinition as _ringkv_internal_v1_ReplicaDefinition } from './ringkv/internal/v1/Replica.js';
import type { ReplicaCall as _ringkv_internal_v1_ReplicaCall, ReplicaCall__Output as _ringkv_internal_v1_ReplicaCall__Output } from './ringkv/internal/v1/ReplicaCall.js';
import type { ReplicaCalls as _ringkv_internal_v1_ReplicaCalls, ReplicaCalls__Output as _ringkv_internal_v1_ReplicaCalls__Output } from './ringkv/internal/v1/ReplicaCalls.js';
import type { ReplicaError as _ringkv_internal_v1_ReplicaError, ReplicaError__Output as _ringkv_internal_v1_ReplicaError__Output } from './ringkv/internal/v1/ReplicaError.js';
import type { ReplicaReplies as _ringkv_internal_v1_ReplicaReplies, ReplicaReplies__Output as _ringkv_internal_v1_ReplicaReplies__Output } from './ringkv/internal/v1/ReplicaReplies.js';
import type { ReplicaReply as _ringkv_internal_v1_ReplicaReply, ReplicaReply__Output as _ringkv_internal_v1_ReplicaReply__Output } from './ringkv/internal/v1/ReplicaReply.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  ringkv: {
    internal: {
      v1: {
        ApplyRequest: MessageTypeDefinition<_ringkv_internal_v1_ApplyRequest, _ringkv_internal_v1_ApplyRequest__Output>
        ApplyResponse: MessageTypeDefinition<_ringkv_internal_v1_ApplyResponse, _ringkv_internal_v1_ApplyResponse__Output>
        DigestRequest: MessageTypeDefinition<_ringkv_internal_v1_DigestRequest, _ringkv_internal_v1_DigestRequest__Output>
        DigestResponse: MessageTypeDefinition<_ringkv_internal_v1_DigestResponse, _ringkv_internal_v1_DigestResponse__Output>
        MergeRequest: MessageTypeDefinition<_ringkv_internal_v1_MergeRequest, _ringkv_internal_v1_MergeRequest__Output>
        MergeResponse: MessageTypeDefinition<_ringkv_internal_v1_MergeResponse, _ringkv_internal_v1_MergeResponse__Output>
        ReadRequest: MessageTypeDefinition<_ringkv_internal_v1_ReadRequest, _ringkv_internal_v1_ReadRequest__Output>
        ReadResponse: MessageTypeDefinition<_ringkv_internal_v1_ReadResponse, _ringkv_internal_v1_ReadResponse__Output>
        Replica: SubtypeConstructor<typeof grpc.Client, _ringkv_internal_v1_ReplicaClient> & { service: _ringkv_internal_v1_ReplicaDefinition }
        ReplicaCall: MessageTypeDefinition<_ringkv_internal_v1_ReplicaCall, _ringkv_internal_v1_ReplicaCall__Output>
        ReplicaCalls: MessageTypeDefinition<_ringkv_internal_v1_ReplicaCalls, _ringkv_internal_v1_ReplicaCalls__Output>
        ReplicaError: MessageTypeDefinition<_ringkv_internal_v1_ReplicaError, _ringkv_internal_v1_ReplicaError__Output>
        ReplicaReplies: MessageTypeDefinition<_ringkv_internal_v1_ReplicaReplies, _ringkv_internal_v1_ReplicaReplies__Output>
        ReplicaReply: MessageTypeDefinition<_ringkv_internal_v1_ReplicaReply, _ringkv_internal_v1_ReplicaReply__Output>
      }
    }
  }
}

