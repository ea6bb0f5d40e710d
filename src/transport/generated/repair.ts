import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { FinishRequest as _ringkv_internal_v1_FinishRequest, FinishRequest__Output as _ringkv_internal_v1_FinishRequest__Output } from './ringkv/internal/v1/FinishRequest.js';
import type { FinishResponse as _ringkv_internal_v1_FinishResponse, FinishResponse__Output as _ringkv_internal_v1_FinishResponse__Output } from './ringkv/internal/v1/FinishResponse.js';
import type { KeyHash as _ringkv_internal_v1_KeyHash, KeyHash__Output as _ringkv_internal_v1_KeyHash__Output } from './ringkv/internal/v1/KeyHash.js';
import type { KeyRecord as _ringkv_internal_v1_KeyRecord, KeyRecord__Output as _ringkv_internal_v1_KeyRecord__Output } from './ringkv/internal/v1/KeyRecord.js';
import type { LeafEntriesRequest as _ringkv_internal_v1_LeafEntriesRequest, LeafEntriesRequest__Output as _ringkv_internal_v1_LeafEntriesRequest__Output } from './ringkv/internal/v1/LeafEntriesRequest.js';
import type { LeafEntriesResponse as _ringkv_internal_v1_LeafEntriesResponse, LeafEntriesResponse__Output as _ringkv_internal_v1_LeafEntriesResponse__Output } from './ringkv/internal/v1/LeafEntriesResponse.js';
import type { PushRequest as _ringkv_internal_v1_PushRequest, PushRequest__Output as _ringkv_internal_v1_PushRequest__Output } from './ringkv/internal/v1/PushRequest.js';
import type { PushResponse as _ringkv_internal_v1_PushResponse, PushResponse__Output as _ringkv_internal_v1_PushResponse__Output } from './ringkv/internal/v1/PushResponse.js';
import type { RecordsRequest as _ringkv_internal_v1_RecordsRequest, RecordsRequest__Output as _ringkv_internal_v1_RecordsRequest__Output } from './ringkv/internal/v1/RecordsRequest.js';
import type { RecordsResponse as _ringkv_internal_v1_RecordsResponse, RecordsResponse__Output as _ringkv_internal_v1_RecordsResponse__Output } from './ringkv/internal/v1/RecordsResponse.js';
import type { RepairClient as _ringkv_internal_v1_RepairClient, RepairDefinition as _ringkv_internal_v1_RepairDefinition } from './ringkv/internal/v1/Repair.js';
import type { TreeDigestsRequest as _ringkv_internal_v1_TreeDigestsRequest, TreeDigestsRequest__Output as _ringkv_internal_v1_TreeDigestsRequest__Output } from './ringkv/internal/v1/TreeDigestsRequest.js';
import type { TreeDigestsResponse as _ringkv_internal_v1_TreeDigestsResponse, TreeDigestsResponse__Output as _ringkv_internal_v1_TreeDigestsResponse__Output } from './ringkv/internal/v1/TreeDigestsResponse.js';
import type { TreeSession as _ringkv_internal_v1_TreeSession, TreeSession__Output as _ringkv_internal_v1_TreeSession__Output } from './ringkv/internal/v1/TreeSession.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  ringkv: {
    internal: {
      v1: {
        FinishRequest: MessageTypeDefinition<_ringkv_internal_v1_FinishRequest, _ringkv_internal_v1_FinishRequest__Output>
        FinishResponse: MessageTypeDefinition<_ringkv_internal_v1_FinishResponse, _ringkv_internal_v1_FinishResponse__Output>
        KeyHash: MessageTypeDefinition<_ringkv_internal_v1_KeyHash, _ringkv_internal_v1_KeyHash__Output>
        KeyRecord: MessageTypeDefinition<_ringkv_internal_v1_KeyRecord, _ringkv_internal_v1_KeyRecord__Output>
        LeafEntriesRequest: MessageTypeDefinition<_ringkv_internal_v1_LeafEntriesRequest, _ringkv_internal_v1_LeafEntriesRequest__Output>
        LeafEntriesResponse: MessageTypeDefinition<_ringkv_internal_v1_LeafEntriesResponse, _ringkv_internal_v1_LeafEntriesResponse__Output>
        PushRequest: MessageTypeDefinition<_ringkv_internal_v1_PushRequest, _ringkv_internal_v1_PushRequest__Output>
        PushResponse: MessageTypeDefinition<_ringkv_internal_v1_PushResponse, _ringkv_internal_v1_PushResponse__Output>
        RecordsRequest: MessageTypeDefinition<_ringkv_internal_v1_RecordsRequest, _ringkv_internal_v1_RecordsRequest__Output>
        RecordsResponse: MessageTypeDefinition<_ringkv_internal_v1_RecordsResponse, _ringkv_internal_v1_RecordsResponse__Output>
        Repair: SubtypeConstructor<typeof grpc.Client, _ringkv_internal_v1_RepairClient> & { service: _ringkv_internal_v1_RepairDefinition }
        TreeDigestsRequest: MessageTypeDefinition<_ringkv_internal_v1_TreeDigestsRequest, _ringkv_internal_v1_TreeDigestsRequest__Output>
        TreeDigestsResponse: MessageTypeDefinition<_ringkv_internal_v1_TreeDigestsResponse, _ringkv_internal_v1_TreeDigestsResponse__Output>
        TreeSession: MessageTypeDefinition<_ringkv_internal_v1_TreeSession, _ringkv_internal_v1_TreeSession__Output>
      }
    }
  }
}

