// Original file: proto/ringkv/internal/v1/gossip.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { GossipMessage as _ringkv_internal_v1_GossipMessage, GossipMessage__Output as _ringkv_internal_v1_GossipMessage__Output } from '../../../ringkv/internal/v1/GossipMessage.js';
import type { GossipReceipt as _ringkv_internal_v1_GossipReceipt, GossipReceipt__Output as _ringkv_internal_v1_GossipReceipt__Output } from '../../../ringkv/internal/v1/GossipReceipt.js';

export interface GossipClient extends grpc.Client {
  /**
   * One message of the three-way exchange (SYN, ACK, ACK2). Fire and forget: the
   * answer comes back as its own Exchange call to the sender's from_addr.
   * FAILED_PRECONDITION when the message is from another cluster (nothing taken);
   * INVALID_ARGUMENT when its envelope is malformed (nothing taken) or some entries are
   * (those are skipped, the rest taken).
   */
  Exchange(argument: _ringkv_internal_v1_GossipMessage, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_GossipReceipt__Output>): grpc.ClientUnaryCall;
  Exchange(argument: _ringkv_internal_v1_GossipMessage, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_GossipReceipt__Output>): grpc.ClientUnaryCall;
  Exchange(argument: _ringkv_internal_v1_GossipMessage, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_GossipReceipt__Output>): grpc.ClientUnaryCall;
  Exchange(argument: _ringkv_internal_v1_GossipMessage, callback: grpc.requestCallback<_ringkv_internal_v1_GossipReceipt__Output>): grpc.ClientUnaryCall;
  /**
   * One message of the three-way exchange (SYN, ACK, ACK2). Fire and forget: the
   * answer comes back as its own Exchange call to the sender's from_addr.
   * FAILED_PRECONDITION when the message is from another cluster (nothing taken);
   * INVALID_ARGUMENT when its envelope is malformed (nothing taken) or some entries are
   * (those are skipped, the rest taken).
   */
  exchange(argument: _ringkv_internal_v1_GossipMessage, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_GossipReceipt__Output>): grpc.ClientUnaryCall;
  exchange(argument: _ringkv_internal_v1_GossipMessage, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_GossipReceipt__Output>): grpc.ClientUnaryCall;
  exchange(argument: _ringkv_internal_v1_GossipMessage, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_GossipReceipt__Output>): grpc.ClientUnaryCall;
  exchange(argument: _ringkv_internal_v1_GossipMessage, callback: grpc.requestCallback<_ringkv_internal_v1_GossipReceipt__Output>): grpc.ClientUnaryCall;
  
}

export interface GossipHandlers extends grpc.UntypedServiceImplementation {
  /**
   * One message of the three-way exchange (SYN, ACK, ACK2). Fire and forget: the
   * answer comes back as its own Exchange call to the sender's from_addr.
   * FAILED_PRECONDITION when the message is from another cluster (nothing taken);
   * INVALID_ARGUMENT when its envelope is malformed (nothing taken) or some entries are
   * (those are skipped, the rest taken).
   */
  Exchange: grpc.handleUnaryCall<_ringkv_internal_v1_GossipMessage__Output, _ringkv_internal_v1_GossipReceipt>;
  
}

export interface GossipDefinition extends grpc.ServiceDefinition {
  Exchange: MethodDefinition<_ringkv_internal_v1_GossipMessage, _ringkv_internal_v1_GossipReceipt, _ringkv_internal_v1_GossipMessage__Output, _ringkv_internal_v1_GossipReceipt__Output>
}
