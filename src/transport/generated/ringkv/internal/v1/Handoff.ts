// Original file: proto/ringkv/internal/v1/handoff.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { FetchRequest as _ringkv_internal_v1_FetchRequest, FetchRequest__Output as _ringkv_internal_v1_FetchRequest__Output } from '../../../ringkv/internal/v1/FetchRequest.js';
import type { FetchResponse as _ringkv_internal_v1_FetchResponse, FetchResponse__Output as _ringkv_internal_v1_FetchResponse__Output } from '../../../ringkv/internal/v1/FetchResponse.js';
import type { RangeBatch as _ringkv_internal_v1_RangeBatch, RangeBatch__Output as _ringkv_internal_v1_RangeBatch__Output } from '../../../ringkv/internal/v1/RangeBatch.js';
import type { StreamRangeRequest as _ringkv_internal_v1_StreamRangeRequest, StreamRangeRequest__Output as _ringkv_internal_v1_StreamRangeRequest__Output } from '../../../ringkv/internal/v1/StreamRangeRequest.js';

export interface HandoffClient extends grpc.Client {
  /**
   * Ask this node to pull token ranges it gains in a movement from their sources, and
   * answer once every range is in (or one failed). What a leaver or a remover asks of
   * each heir. Ranges already pulled for the same movement are not pulled again.
   */
  Fetch(argument: _ringkv_internal_v1_FetchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_FetchResponse__Output>): grpc.ClientUnaryCall;
  Fetch(argument: _ringkv_internal_v1_FetchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_FetchResponse__Output>): grpc.ClientUnaryCall;
  Fetch(argument: _ringkv_internal_v1_FetchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_FetchResponse__Output>): grpc.ClientUnaryCall;
  Fetch(argument: _ringkv_internal_v1_FetchRequest, callback: grpc.requestCallback<_ringkv_internal_v1_FetchResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Ask this node to pull token ranges it gains in a movement from their sources, and
   * answer once every range is in (or one failed). What a leaver or a remover asks of
   * each heir. Ranges already pulled for the same movement are not pulled again.
   */
  fetch(argument: _ringkv_internal_v1_FetchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_FetchResponse__Output>): grpc.ClientUnaryCall;
  fetch(argument: _ringkv_internal_v1_FetchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_FetchResponse__Output>): grpc.ClientUnaryCall;
  fetch(argument: _ringkv_internal_v1_FetchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_FetchResponse__Output>): grpc.ClientUnaryCall;
  fetch(argument: _ringkv_internal_v1_FetchRequest, callback: grpc.requestCallback<_ringkv_internal_v1_FetchResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The records of one token range (start, end], in token order, as a stream of batches
   * (bounded by count and bytes; gRPC flow control holds the sender back when the
   * receiver is slow). Resumes after `after_key` when it is set. FAILED_PRECONDITION
   * when the request is from another cluster; INVALID_ARGUMENT for a malformed range.
   */
  StreamRange(argument: _ringkv_internal_v1_StreamRangeRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_ringkv_internal_v1_RangeBatch__Output>;
  StreamRange(argument: _ringkv_internal_v1_StreamRangeRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_ringkv_internal_v1_RangeBatch__Output>;
  /**
   * The records of one token range (start, end], in token order, as a stream of batches
   * (bounded by count and bytes; gRPC flow control holds the sender back when the
   * receiver is slow). Resumes after `after_key` when it is set. FAILED_PRECONDITION
   * when the request is from another cluster; INVALID_ARGUMENT for a malformed range.
   */
  streamRange(argument: _ringkv_internal_v1_StreamRangeRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_ringkv_internal_v1_RangeBatch__Output>;
  streamRange(argument: _ringkv_internal_v1_StreamRangeRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_ringkv_internal_v1_RangeBatch__Output>;
  
}

export interface HandoffHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Ask this node to pull token ranges it gains in a movement from their sources, and
   * answer once every range is in (or one failed). What a leaver or a remover asks of
   * each heir. Ranges already pulled for the same movement are not pulled again.
   */
  Fetch: grpc.handleUnaryCall<_ringkv_internal_v1_FetchRequest__Output, _ringkv_internal_v1_FetchResponse>;
  
  /**
   * The records of one token range (start, end], in token order, as a stream of batches
   * (bounded by count and bytes; gRPC flow control holds the sender back when the
   * receiver is slow). Resumes after `after_key` when it is set. FAILED_PRECONDITION
   * when the request is from another cluster; INVALID_ARGUMENT for a malformed range.
   */
  StreamRange: grpc.handleServerStreamingCall<_ringkv_internal_v1_StreamRangeRequest__Output, _ringkv_internal_v1_RangeBatch>;
  
}

export interface HandoffDefinition extends grpc.ServiceDefinition {
  Fetch: MethodDefinition<_ringkv_internal_v1_FetchRequest, _ringkv_internal_v1_FetchResponse, _ringkv_internal_v1_FetchRequest__Output, _ringkv_internal_v1_FetchResponse__Output>
  StreamRange: MethodDefinition<_ringkv_internal_v1_StreamRangeRequest, _ringkv_internal_v1_RangeBatch, _ringkv_internal_v1_StreamRangeRequest__Output, _ringkv_internal_v1_RangeBatch__Output>
}
