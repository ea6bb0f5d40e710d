// Original file: proto/ringkv/internal/v1/replica.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ReplicaCalls as _ringkv_internal_v1_ReplicaCalls, ReplicaCalls__Output as _ringkv_internal_v1_ReplicaCalls__Output } from '../../../ringkv/internal/v1/ReplicaCalls.js';
import type { ReplicaReplies as _ringkv_internal_v1_ReplicaReplies, ReplicaReplies__Output as _ringkv_internal_v1_ReplicaReplies__Output } from '../../../ringkv/internal/v1/ReplicaReplies.js';

export interface ReplicaClient extends grpc.Client {
  Stream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_ringkv_internal_v1_ReplicaCalls, _ringkv_internal_v1_ReplicaReplies__Output>;
  Stream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_ringkv_internal_v1_ReplicaCalls, _ringkv_internal_v1_ReplicaReplies__Output>;
  stream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_ringkv_internal_v1_ReplicaCalls, _ringkv_internal_v1_ReplicaReplies__Output>;
  stream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_ringkv_internal_v1_ReplicaCalls, _ringkv_internal_v1_ReplicaReplies__Output>;
  
}

export interface ReplicaHandlers extends grpc.UntypedServiceImplementation {
  Stream: grpc.handleBidiStreamingCall<_ringkv_internal_v1_ReplicaCalls__Output, _ringkv_internal_v1_ReplicaReplies>;
  
}

export interface ReplicaDefinition extends grpc.ServiceDefinition {
  Stream: MethodDefinition<_ringkv_internal_v1_ReplicaCalls, _ringkv_internal_v1_ReplicaReplies, _ringkv_internal_v1_ReplicaCalls__Output, _ringkv_internal_v1_ReplicaReplies__Output>
}
