// Original file: proto/ringkv/internal/v1/repair.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { FinishRequest as _ringkv_internal_v1_FinishRequest, FinishRequest__Output as _ringkv_internal_v1_FinishRequest__Output } from '../../../ringkv/internal/v1/FinishRequest.js';
import type { FinishResponse as _ringkv_internal_v1_FinishResponse, FinishResponse__Output as _ringkv_internal_v1_FinishResponse__Output } from '../../../ringkv/internal/v1/FinishResponse.js';
import type { LeafEntriesRequest as _ringkv_internal_v1_LeafEntriesRequest, LeafEntriesRequest__Output as _ringkv_internal_v1_LeafEntriesRequest__Output } from '../../../ringkv/internal/v1/LeafEntriesRequest.js';
import type { LeafEntriesResponse as _ringkv_internal_v1_LeafEntriesResponse, LeafEntriesResponse__Output as _ringkv_internal_v1_LeafEntriesResponse__Output } from '../../../ringkv/internal/v1/LeafEntriesResponse.js';
import type { PushRequest as _ringkv_internal_v1_PushRequest, PushRequest__Output as _ringkv_internal_v1_PushRequest__Output } from '../../../ringkv/internal/v1/PushRequest.js';
import type { PushResponse as _ringkv_internal_v1_PushResponse, PushResponse__Output as _ringkv_internal_v1_PushResponse__Output } from '../../../ringkv/internal/v1/PushResponse.js';
import type { RecordsRequest as _ringkv_internal_v1_RecordsRequest, RecordsRequest__Output as _ringkv_internal_v1_RecordsRequest__Output } from '../../../ringkv/internal/v1/RecordsRequest.js';
import type { RecordsResponse as _ringkv_internal_v1_RecordsResponse, RecordsResponse__Output as _ringkv_internal_v1_RecordsResponse__Output } from '../../../ringkv/internal/v1/RecordsResponse.js';
import type { TreeDigestsRequest as _ringkv_internal_v1_TreeDigestsRequest, TreeDigestsRequest__Output as _ringkv_internal_v1_TreeDigestsRequest__Output } from '../../../ringkv/internal/v1/TreeDigestsRequest.js';
import type { TreeDigestsResponse as _ringkv_internal_v1_TreeDigestsResponse, TreeDigestsResponse__Output as _ringkv_internal_v1_TreeDigestsResponse__Output } from '../../../ringkv/internal/v1/TreeDigestsResponse.js';

export interface RepairClient extends grpc.Client {
  /**
   * The session is over: drop its tree. With `complete`, the range was compared and
   * exchanged in full: this node counts it repaired as of when its tree was built.
   */
  Finish(argument: _ringkv_internal_v1_FinishRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_FinishResponse__Output>): grpc.ClientUnaryCall;
  Finish(argument: _ringkv_internal_v1_FinishRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_FinishResponse__Output>): grpc.ClientUnaryCall;
  Finish(argument: _ringkv_internal_v1_FinishRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_FinishResponse__Output>): grpc.ClientUnaryCall;
  Finish(argument: _ringkv_internal_v1_FinishRequest, callback: grpc.requestCallback<_ringkv_internal_v1_FinishResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The session is over: drop its tree. With `complete`, the range was compared and
   * exchanged in full: this node counts it repaired as of when its tree was built.
   */
  finish(argument: _ringkv_internal_v1_FinishRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_FinishResponse__Output>): grpc.ClientUnaryCall;
  finish(argument: _ringkv_internal_v1_FinishRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_FinishResponse__Output>): grpc.ClientUnaryCall;
  finish(argument: _ringkv_internal_v1_FinishRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_FinishResponse__Output>): grpc.ClientUnaryCall;
  finish(argument: _ringkv_internal_v1_FinishRequest, callback: grpc.requestCallback<_ringkv_internal_v1_FinishResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Every key this node holds in some leaves of the session's tree, with its entry hash.
   */
  LeafEntries(argument: _ringkv_internal_v1_LeafEntriesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_LeafEntriesResponse__Output>): grpc.ClientUnaryCall;
  LeafEntries(argument: _ringkv_internal_v1_LeafEntriesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_LeafEntriesResponse__Output>): grpc.ClientUnaryCall;
  LeafEntries(argument: _ringkv_internal_v1_LeafEntriesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_LeafEntriesResponse__Output>): grpc.ClientUnaryCall;
  LeafEntries(argument: _ringkv_internal_v1_LeafEntriesRequest, callback: grpc.requestCallback<_ringkv_internal_v1_LeafEntriesResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Every key this node holds in some leaves of the session's tree, with its entry hash.
   */
  leafEntries(argument: _ringkv_internal_v1_LeafEntriesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_LeafEntriesResponse__Output>): grpc.ClientUnaryCall;
  leafEntries(argument: _ringkv_internal_v1_LeafEntriesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_LeafEntriesResponse__Output>): grpc.ClientUnaryCall;
  leafEntries(argument: _ringkv_internal_v1_LeafEntriesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_LeafEntriesResponse__Output>): grpc.ClientUnaryCall;
  leafEntries(argument: _ringkv_internal_v1_LeafEntriesRequest, callback: grpc.requestCallback<_ringkv_internal_v1_LeafEntriesResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Merge these records (the causal merge); answers the keys whose versions changed.
   */
  Push(argument: _ringkv_internal_v1_PushRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_PushResponse__Output>): grpc.ClientUnaryCall;
  Push(argument: _ringkv_internal_v1_PushRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_PushResponse__Output>): grpc.ClientUnaryCall;
  Push(argument: _ringkv_internal_v1_PushRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_PushResponse__Output>): grpc.ClientUnaryCall;
  Push(argument: _ringkv_internal_v1_PushRequest, callback: grpc.requestCallback<_ringkv_internal_v1_PushResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Merge these records (the causal merge); answers the keys whose versions changed.
   */
  push(argument: _ringkv_internal_v1_PushRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_PushResponse__Output>): grpc.ClientUnaryCall;
  push(argument: _ringkv_internal_v1_PushRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_PushResponse__Output>): grpc.ClientUnaryCall;
  push(argument: _ringkv_internal_v1_PushRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_PushResponse__Output>): grpc.ClientUnaryCall;
  push(argument: _ringkv_internal_v1_PushRequest, callback: grpc.requestCallback<_ringkv_internal_v1_PushResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The records this node holds of these keys.
   */
  Records(argument: _ringkv_internal_v1_RecordsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_RecordsResponse__Output>): grpc.ClientUnaryCall;
  Records(argument: _ringkv_internal_v1_RecordsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_RecordsResponse__Output>): grpc.ClientUnaryCall;
  Records(argument: _ringkv_internal_v1_RecordsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_RecordsResponse__Output>): grpc.ClientUnaryCall;
  Records(argument: _ringkv_internal_v1_RecordsRequest, callback: grpc.requestCallback<_ringkv_internal_v1_RecordsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The records this node holds of these keys.
   */
  records(argument: _ringkv_internal_v1_RecordsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_RecordsResponse__Output>): grpc.ClientUnaryCall;
  records(argument: _ringkv_internal_v1_RecordsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_RecordsResponse__Output>): grpc.ClientUnaryCall;
  records(argument: _ringkv_internal_v1_RecordsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_RecordsResponse__Output>): grpc.ClientUnaryCall;
  records(argument: _ringkv_internal_v1_RecordsRequest, callback: grpc.requestCallback<_ringkv_internal_v1_RecordsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Digests of nodes of this node's tree of a range at a depth (built by a scan on the
   * first call of a session, kept for the session). FAILED_PRECONDITION when the request
   * is from another cluster; INVALID_ARGUMENT for a malformed range, depth or index.
   */
  TreeDigests(argument: _ringkv_internal_v1_TreeDigestsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_TreeDigestsResponse__Output>): grpc.ClientUnaryCall;
  TreeDigests(argument: _ringkv_internal_v1_TreeDigestsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_TreeDigestsResponse__Output>): grpc.ClientUnaryCall;
  TreeDigests(argument: _ringkv_internal_v1_TreeDigestsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_TreeDigestsResponse__Output>): grpc.ClientUnaryCall;
  TreeDigests(argument: _ringkv_internal_v1_TreeDigestsRequest, callback: grpc.requestCallback<_ringkv_internal_v1_TreeDigestsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Digests of nodes of this node's tree of a range at a depth (built by a scan on the
   * first call of a session, kept for the session). FAILED_PRECONDITION when the request
   * is from another cluster; INVALID_ARGUMENT for a malformed range, depth or index.
   */
  treeDigests(argument: _ringkv_internal_v1_TreeDigestsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_TreeDigestsResponse__Output>): grpc.ClientUnaryCall;
  treeDigests(argument: _ringkv_internal_v1_TreeDigestsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_TreeDigestsResponse__Output>): grpc.ClientUnaryCall;
  treeDigests(argument: _ringkv_internal_v1_TreeDigestsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_TreeDigestsResponse__Output>): grpc.ClientUnaryCall;
  treeDigests(argument: _ringkv_internal_v1_TreeDigestsRequest, callback: grpc.requestCallback<_ringkv_internal_v1_TreeDigestsResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface RepairHandlers extends grpc.UntypedServiceImplementation {
  /**
   * The session is over: drop its tree. With `complete`, the range was compared and
   * exchanged in full: this node counts it repaired as of when its tree was built.
   */
  Finish: grpc.handleUnaryCall<_ringkv_internal_v1_FinishRequest__Output, _ringkv_internal_v1_FinishResponse>;
  
  /**
   * Every key this node holds in some leaves of the session's tree, with its entry hash.
   */
  LeafEntries: grpc.handleUnaryCall<_ringkv_internal_v1_LeafEntriesRequest__Output, _ringkv_internal_v1_LeafEntriesResponse>;
  
  /**
   * Merge these records (the causal merge); answers the keys whose versions changed.
   */
  Push: grpc.handleUnaryCall<_ringkv_internal_v1_PushRequest__Output, _ringkv_internal_v1_PushResponse>;
  
  /**
   * The records this node holds of these keys.
   */
  Records: grpc.handleUnaryCall<_ringkv_internal_v1_RecordsRequest__Output, _ringkv_internal_v1_RecordsResponse>;
  
  /**
   * Digests of nodes of this node's tree of a range at a depth (built by a scan on the
   * first call of a session, kept for the session). FAILED_PRECONDITION when the request
   * is from another cluster; INVALID_ARGUMENT for a malformed range, depth or index.
   */
  TreeDigests: grpc.handleUnaryCall<_ringkv_internal_v1_TreeDigestsRequest__Output, _ringkv_internal_v1_TreeDigestsResponse>;
  
}

export interface RepairDefinition extends grpc.ServiceDefinition {
  Finish: MethodDefinition<_ringkv_internal_v1_FinishRequest, _ringkv_internal_v1_FinishResponse, _ringkv_internal_v1_FinishRequest__Output, _ringkv_internal_v1_FinishResponse__Output>
  LeafEntries: MethodDefinition<_ringkv_internal_v1_LeafEntriesRequest, _ringkv_internal_v1_LeafEntriesResponse, _ringkv_internal_v1_LeafEntriesRequest__Output, _ringkv_internal_v1_LeafEntriesResponse__Output>
  Push: MethodDefinition<_ringkv_internal_v1_PushRequest, _ringkv_internal_v1_PushResponse, _ringkv_internal_v1_PushRequest__Output, _ringkv_internal_v1_PushResponse__Output>
  Records: MethodDefinition<_ringkv_internal_v1_RecordsRequest, _ringkv_internal_v1_RecordsResponse, _ringkv_internal_v1_RecordsRequest__Output, _ringkv_internal_v1_RecordsResponse__Output>
  TreeDigests: MethodDefinition<_ringkv_internal_v1_TreeDigestsRequest, _ringkv_internal_v1_TreeDigestsResponse, _ringkv_internal_v1_TreeDigestsRequest__Output, _ringkv_internal_v1_TreeDigestsResponse__Output>
}
