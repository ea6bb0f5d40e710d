import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { FetchRange as _ringkv_internal_v1_FetchRange, FetchRange__Output as _ringkv_internal_v1_FetchRange__Output } from './ringkv/internal/v1/FetchRange.js';
import type { FetchRequest as _ringkv_internal_v1_FetchRequest, FetchRequest__Output as _ringkv_internal_v1_FetchRequest__Output } from './ringkv/internal/v1/FetchRequest.js';
import type { FetchResponse as _ringkv_internal_v1_FetchResponse, FetchResponse__Output as _ringkv_internal_v1_FetchResponse__Output } from './ringkv/internal/v1/FetchResponse.js';
import type { HandoffClient as _ringkv_internal_v1_HandoffClient, HandoffDefinition as _ringkv_internal_v1_HandoffDefinition } from './ringkv/internal/v1/Handoff.js';
import type { RangeBatch as _ringkv_internal_v1_RangeBatch, RangeBatch__Output as _ringkv_internal_v1_RangeBatch__Output } from './ringkv/internal/v1/RangeBatch.js';
import type { RangeEntry as _ringkv_internal_v1_RangeEntry, RangeEntry__Output as _ringkv_internal_v1_RangeEntry__Output } from './ringkv/internal/v1/RangeEntry.js';
import type { StreamRangeRequest as _ringkv_internal_v1_StreamRangeRequest, StreamRangeRequest__Output as _ringkv_internal_v1_StreamRangeRequest__Output } from './ringkv/internal/v1/StreamRangeRequest.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  ringkv: {
    internal: {
      v1: {
        FetchRange: MessageTypeDefinition<_ringkv_internal_v1_FetchRange, _ringkv_internal_v1_FetchRange__Output>
        FetchRequest: MessageTypeDefinition<_ringkv_internal_v1_FetchRequest, _ringkv_internal_v1_FetchRequest__Output>
        FetchResponse: MessageTypeDefinition<_ringkv_internal_v1_FetchResponse, _ringkv_internal_v1_FetchResponse__Output>
        Handoff: SubtypeConstructor<typeof grpc.Client, _ringkv_internal_v1_HandoffClient> & { service: _ringkv_internal_v1_HandoffDefinition }
        RangeBatch: MessageTypeDefinition<_ringkv_internal_v1_RangeBatch, _ringkv_internal_v1_RangeBatch__Output>
        RangeEntry: MessageTypeDefinition<_ringkv_internal_v1_RangeEntry, _ringkv_internal_v1_RangeEntry__Output>
        StreamRangeRequest: MessageTypeDefinition<_ringkv_internal_v1_StreamRangeRequest, _ringkv_internal_v1_StreamRangeRequest__Output>
      }
    }
  }
}

