import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { ApplyRequest as _ringkv_internal_v1_ApplyRequest, ApplyRequest__Output as _ringkv_internal_v1_ApplyRequest__Output } from './ringkv/internal/v1/ApplyRequest.js';
import type { ApplyResponse as _ringkv_internal_v1_ApplyResponse, ApplyResponse__Output as _ringkv_internal_v1_ApplyResponse__Output } from './ringkv/internal/v1/ApplyResponse.js';
import type { CounterUpdateRequest as _ringkv_internal_v1_CounterUpdateRequest, CounterUpdateRequest__Output as _ringkv_internal_v1_CounterUpdateRequest__Output } from './ringkv/internal/v1/CounterUpdateRequest.js';
import type { CounterUpdateResponse as _ringkv_internal_v1_CounterUpdateResponse, CounterUpdateResponse__Output as _ringkv_internal_v1_CounterUpdateResponse__Output } from './ringkv/internal/v1/CounterUpdateResponse.js';
import type { DigestRequest as _ringkv_internal_v1_DigestRequest, DigestRequest__Output as _ringkv_internal_v1_DigestRequest__Output } from './ringkv/internal/v1/DigestRequest.js';
import type { DigestResponse as _ringkv_internal_v1_DigestResponse, DigestResponse__Output as _ringkv_internal_v1_DigestResponse__Output } from './ringkv/internal/v1/DigestResponse.js';
import type { MergeRequest as _ringkv_internal_v1_MergeRequest, MergeRequest__Output as _ringkv_internal_v1_MergeRequest__Output } from './ringkv/internal/v1/MergeRequest.js';
import type { MergeResponse as _ringkv_internal_v1_MergeResponse, MergeResponse__Output as _ringkv_internal_v1_MergeResponse__Output } from './ringkv/internal/v1/MergeResponse.js';
import type { PathField as _ringkv_internal_v1_PathField, PathField__Output as _ringkv_internal_v1_PathField__Output } from './ringkv/internal/v1/PathField.js';
import type { PaxosRequest as _ringkv_internal_v1_PaxosRequest, PaxosRequest__Output as _ringkv_internal_v1_PaxosRequest__Output } from './ringkv/internal/v1/PaxosRequest.js';
import type { PaxosResponse as _ringkv_internal_v1_PaxosResponse, PaxosResponse__Output as _ringkv_internal_v1_PaxosResponse__Output } from './ringkv/internal/v1/PaxosResponse.js';
import type { ReadRangeRequest as _ringkv_internal_v1_ReadRangeRequest, ReadRangeRequest__Output as _ringkv_internal_v1_ReadRangeRequest__Output } from './ringkv/internal/v1/ReadRangeRequest.js';
import type { ReadRangeResponse as _ringkv_internal_v1_ReadRangeResponse, ReadRangeResponse__Output as _ringkv_internal_v1_ReadRangeResponse__Output } from './ringkv/internal/v1/ReadRangeResponse.js';
import type { ReadRequest as _ringkv_internal_v1_ReadRequest, ReadRequest__Output as _ringkv_internal_v1_ReadRequest__Output } from './ringkv/internal/v1/ReadRequest.js';
import type { ReadResponse as _ringkv_internal_v1_ReadResponse, ReadResponse__Output as _ringkv_internal_v1_ReadResponse__Output } from './ringkv/internal/v1/ReadResponse.js';
import type { ReplicaClient as _ringkv_internal_v1_ReplicaClient, ReplicaDefinition as _ringkv_internal_v1_ReplicaDefinition } from './ringkv/internal/v1/Replica.js';
import type { ReplicaCall as _ringkv_internal_v1_ReplicaCall, ReplicaCall__Output as _ringkv_internal_v1_ReplicaCall__Output } from './ringkv/internal/v1/ReplicaCall.js';
import type { ReplicaCalls as _ringkv_internal_v1_ReplicaCalls, ReplicaCalls__Output as _ringkv_internal_v1_ReplicaCalls__Output } from './ringkv/internal/v1/ReplicaCalls.js';
import type { ReplicaError as _ringkv_internal_v1_ReplicaError, ReplicaError__Output as _ringkv_internal_v1_ReplicaError__Output } from './ringkv/internal/v1/ReplicaError.js';
import type { ReplicaReplies as _ringkv_internal_v1_ReplicaReplies, ReplicaReplies__Output as _ringkv_internal_v1_ReplicaReplies__Output } from './ringkv/internal/v1/ReplicaReplies.js';
import type { ReplicaReply as _ringkv_internal_v1_ReplicaReply, ReplicaReply__Output as _ringkv_internal_v1_ReplicaReply__Output } from './ringkv/internal/v1/ReplicaReply.js';
import type { StepRequest as _ringkv_internal_v1_StepRequest, StepRequest__Output as _ringkv_internal_v1_StepRequest__Output } from './ringkv/internal/v1/StepRequest.js';
import type { StepResponse as _ringkv_internal_v1_StepResponse, StepResponse__Output as _ringkv_internal_v1_StepResponse__Output } from './ringkv/internal/v1/StepResponse.js';
import type { SubKeyOp as _ringkv_internal_v1_SubKeyOp, SubKeyOp__Output as _ringkv_internal_v1_SubKeyOp__Output } from './ringkv/internal/v1/SubKeyOp.js';
import type { SubKeyRecord as _ringkv_internal_v1_SubKeyRecord, SubKeyRecord__Output as _ringkv_internal_v1_SubKeyRecord__Output } from './ringkv/internal/v1/SubKeyRecord.js';
import type { WriteManyRequest as _ringkv_internal_v1_WriteManyRequest, WriteManyRequest__Output as _ringkv_internal_v1_WriteManyRequest__Output } from './ringkv/internal/v1/WriteManyRequest.js';
import type { WriteManyResponse as _ringkv_internal_v1_WriteManyResponse, WriteManyResponse__Output as _ringkv_internal_v1_WriteManyResponse__Output } from './ringkv/internal/v1/WriteManyResponse.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  ringkv: {
    internal: {
      v1: {
        ApplyRequest: MessageTypeDefinition<_ringkv_internal_v1_ApplyRequest, _ringkv_internal_v1_ApplyRequest__Output>
        ApplyResponse: MessageTypeDefinition<_ringkv_internal_v1_ApplyResponse, _ringkv_internal_v1_ApplyResponse__Output>
        CounterUpdateRequest: MessageTypeDefinition<_ringkv_internal_v1_CounterUpdateRequest, _ringkv_internal_v1_CounterUpdateRequest__Output>
        CounterUpdateResponse: MessageTypeDefinition<_ringkv_internal_v1_CounterUpdateResponse, _ringkv_internal_v1_CounterUpdateResponse__Output>
        DigestRequest: MessageTypeDefinition<_ringkv_internal_v1_DigestRequest, _ringkv_internal_v1_DigestRequest__Output>
        DigestResponse: MessageTypeDefinition<_ringkv_internal_v1_DigestResponse, _ringkv_internal_v1_DigestResponse__Output>
        FieldType: EnumTypeDefinition
        MergeRequest: MessageTypeDefinition<_ringkv_internal_v1_MergeRequest, _ringkv_internal_v1_MergeRequest__Output>
        MergeResponse: MessageTypeDefinition<_ringkv_internal_v1_MergeResponse, _ringkv_internal_v1_MergeResponse__Output>
        PathField: MessageTypeDefinition<_ringkv_internal_v1_PathField, _ringkv_internal_v1_PathField__Output>
        PaxosRequest: MessageTypeDefinition<_ringkv_internal_v1_PaxosRequest, _ringkv_internal_v1_PaxosRequest__Output>
        PaxosResponse: MessageTypeDefinition<_ringkv_internal_v1_PaxosResponse, _ringkv_internal_v1_PaxosResponse__Output>
        ReadRangeRequest: MessageTypeDefinition<_ringkv_internal_v1_ReadRangeRequest, _ringkv_internal_v1_ReadRangeRequest__Output>
        ReadRangeResponse: MessageTypeDefinition<_ringkv_internal_v1_ReadRangeResponse, _ringkv_internal_v1_ReadRangeResponse__Output>
        ReadRequest: MessageTypeDefinition<_ringkv_internal_v1_ReadRequest, _ringkv_internal_v1_ReadRequest__Output>
        ReadResponse: MessageTypeDefinition<_ringkv_internal_v1_ReadResponse, _ringkv_internal_v1_ReadResponse__Output>
        Replica: SubtypeConstructor<typeof grpc.Client, _ringkv_internal_v1_ReplicaClient> & { service: _ringkv_internal_v1_ReplicaDefinition }
        ReplicaCall: MessageTypeDefinition<_ringkv_internal_v1_ReplicaCall, _ringkv_internal_v1_ReplicaCall__Output>
        ReplicaCalls: MessageTypeDefinition<_ringkv_internal_v1_ReplicaCalls, _ringkv_internal_v1_ReplicaCalls__Output>
        ReplicaError: MessageTypeDefinition<_ringkv_internal_v1_ReplicaError, _ringkv_internal_v1_ReplicaError__Output>
        ReplicaReplies: MessageTypeDefinition<_ringkv_internal_v1_ReplicaReplies, _ringkv_internal_v1_ReplicaReplies__Output>
        ReplicaReply: MessageTypeDefinition<_ringkv_internal_v1_ReplicaReply, _ringkv_internal_v1_ReplicaReply__Output>
        StepRequest: MessageTypeDefinition<_ringkv_internal_v1_StepRequest, _ringkv_internal_v1_StepRequest__Output>
        StepResponse: MessageTypeDefinition<_ringkv_internal_v1_StepResponse, _ringkv_internal_v1_StepResponse__Output>
        SubKeyOp: MessageTypeDefinition<_ringkv_internal_v1_SubKeyOp, _ringkv_internal_v1_SubKeyOp__Output>
        SubKeyRecord: MessageTypeDefinition<_ringkv_internal_v1_SubKeyRecord, _ringkv_internal_v1_SubKeyRecord__Output>
        WriteManyRequest: MessageTypeDefinition<_ringkv_internal_v1_WriteManyRequest, _ringkv_internal_v1_WriteManyRequest__Output>
        WriteManyResponse: MessageTypeDefinition<_ringkv_internal_v1_WriteManyResponse, _ringkv_internal_v1_WriteManyResponse__Output>
      }
    }
  }
}

