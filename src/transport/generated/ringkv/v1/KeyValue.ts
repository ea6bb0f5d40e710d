// Original file: proto/ringkv/v1/kv.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { DeleteRequest as _ringkv_v1_DeleteRequest, DeleteRequest__Output as _ringkv_v1_DeleteRequest__Output } from '../../ringkv/v1/DeleteRequest.js';
import type { DeleteResponse as _ringkv_v1_DeleteResponse, DeleteResponse__Output as _ringkv_v1_DeleteResponse__Output } from '../../ringkv/v1/DeleteResponse.js';
import type { GetManyRequest as _ringkv_v1_GetManyRequest, GetManyRequest__Output as _ringkv_v1_GetManyRequest__Output } from '../../ringkv/v1/GetManyRequest.js';
import type { GetManyResponse as _ringkv_v1_GetManyResponse, GetManyResponse__Output as _ringkv_v1_GetManyResponse__Output } from '../../ringkv/v1/GetManyResponse.js';
import type { GetRequest as _ringkv_v1_GetRequest, GetRequest__Output as _ringkv_v1_GetRequest__Output } from '../../ringkv/v1/GetRequest.js';
import type { GetResponse as _ringkv_v1_GetResponse, GetResponse__Output as _ringkv_v1_GetResponse__Output } from '../../ringkv/v1/GetResponse.js';
import type { KvCalls as _ringkv_v1_KvCalls, KvCalls__Output as _ringkv_v1_KvCalls__Output } from '../../ringkv/v1/KvCalls.js';
import type { KvReplies as _ringkv_v1_KvReplies, KvReplies__Output as _ringkv_v1_KvReplies__Output } from '../../ringkv/v1/KvReplies.js';
import type { PutManyRequest as _ringkv_v1_PutManyRequest, PutManyRequest__Output as _ringkv_v1_PutManyRequest__Output } from '../../ringkv/v1/PutManyRequest.js';
import type { PutManyResponse as _ringkv_v1_PutManyResponse, PutManyResponse__Output as _ringkv_v1_PutManyResponse__Output } from '../../ringkv/v1/PutManyResponse.js';
import type { PutRequest as _ringkv_v1_PutRequest, PutRequest__Output as _ringkv_v1_PutRequest__Output } from '../../ringkv/v1/PutRequest.js';
import type { PutResponse as _ringkv_v1_PutResponse, PutResponse__Output as _ringkv_v1_PutResponse__Output } from '../../ringkv/v1/PutResponse.js';

export interface KeyValueClient extends grpc.Client {
  /**
   * A tombstone that supersedes what the context saw; a concurrent put survives it.
   */
  Delete(argument: _ringkv_v1_DeleteRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_DeleteResponse__Output>): grpc.ClientUnaryCall;
  Delete(argument: _ringkv_v1_DeleteRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_DeleteResponse__Output>): grpc.ClientUnaryCall;
  Delete(argument: _ringkv_v1_DeleteRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_DeleteResponse__Output>): grpc.ClientUnaryCall;
  Delete(argument: _ringkv_v1_DeleteRequest, callback: grpc.requestCallback<_ringkv_v1_DeleteResponse__Output>): grpc.ClientUnaryCall;
  /**
   * A tombstone that supersedes what the context saw; a concurrent put survives it.
   */
  delete(argument: _ringkv_v1_DeleteRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_DeleteResponse__Output>): grpc.ClientUnaryCall;
  delete(argument: _ringkv_v1_DeleteRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_DeleteResponse__Output>): grpc.ClientUnaryCall;
  delete(argument: _ringkv_v1_DeleteRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_DeleteResponse__Output>): grpc.ClientUnaryCall;
  delete(argument: _ringkv_v1_DeleteRequest, callback: grpc.requestCallback<_ringkv_v1_DeleteResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Every sibling value of a key and one context covering them, after R replies.
   */
  Get(argument: _ringkv_v1_GetRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  Get(argument: _ringkv_v1_GetRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  Get(argument: _ringkv_v1_GetRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  Get(argument: _ringkv_v1_GetRequest, callback: grpc.requestCallback<_ringkv_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Every sibling value of a key and one context covering them, after R replies.
   */
  get(argument: _ringkv_v1_GetRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  get(argument: _ringkv_v1_GetRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  get(argument: _ringkv_v1_GetRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  get(argument: _ringkv_v1_GetRequest, callback: grpc.requestCallback<_ringkv_v1_GetResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Get many keys of one bucket in one call (up to 100 keys; docs/limits.md). Not atomic:
   * each key has its own result or error, in the order of the request. INVALID_ARGUMENT
   * for the whole call when it is malformed (too many keys, an unknown bucket, a bad R);
   * a key that is itself bad (empty, too large, repeated) gets its own error. A key
   * repeated in the call runs once, at its first place; each later place is refused
   * (INVALID_ARGUMENT). The answer is at most 8 MiB: a key whose values would go over it
   * gets RESOURCE_EXHAUSTED of its own (get it alone).
   */
  GetMany(argument: _ringkv_v1_GetManyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  GetMany(argument: _ringkv_v1_GetManyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  GetMany(argument: _ringkv_v1_GetManyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  GetMany(argument: _ringkv_v1_GetManyRequest, callback: grpc.requestCallback<_ringkv_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Get many keys of one bucket in one call (up to 100 keys; docs/limits.md). Not atomic:
   * each key has its own result or error, in the order of the request. INVALID_ARGUMENT
   * for the whole call when it is malformed (too many keys, an unknown bucket, a bad R);
   * a key that is itself bad (empty, too large, repeated) gets its own error. A key
   * repeated in the call runs once, at its first place; each later place is refused
   * (INVALID_ARGUMENT). The answer is at most 8 MiB: a key whose values would go over it
   * gets RESOURCE_EXHAUSTED of its own (get it alone).
   */
  getMany(argument: _ringkv_v1_GetManyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  getMany(argument: _ringkv_v1_GetManyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  getMany(argument: _ringkv_v1_GetManyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  getMany(argument: _ringkv_v1_GetManyRequest, callback: grpc.requestCallback<_ringkv_v1_GetManyResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Write a value. With the context of a get it replaces exactly the versions that get
   * saw; without one (a blind write) it is kept beside any value already there.
   * Acknowledged once W replicas hold it durably.
   */
  Put(argument: _ringkv_v1_PutRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutResponse__Output>): grpc.ClientUnaryCall;
  Put(argument: _ringkv_v1_PutRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PutResponse__Output>): grpc.ClientUnaryCall;
  Put(argument: _ringkv_v1_PutRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutResponse__Output>): grpc.ClientUnaryCall;
  Put(argument: _ringkv_v1_PutRequest, callback: grpc.requestCallback<_ringkv_v1_PutResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Write a value. With the context of a get it replaces exactly the versions that get
   * saw; without one (a blind write) it is kept beside any value already there.
   * Acknowledged once W replicas hold it durably.
   */
  put(argument: _ringkv_v1_PutRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutResponse__Output>): grpc.ClientUnaryCall;
  put(argument: _ringkv_v1_PutRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PutResponse__Output>): grpc.ClientUnaryCall;
  put(argument: _ringkv_v1_PutRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutResponse__Output>): grpc.ClientUnaryCall;
  put(argument: _ringkv_v1_PutRequest, callback: grpc.requestCallback<_ringkv_v1_PutResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Put many keys of one bucket in one call (up to 100 items and 4 MiB of values). Not
   * atomic: each item is a put of its own with its own result or error (a replica down
   * fails only the items it is needed for); a repeated key as in GetMany.
   */
  PutMany(argument: _ringkv_v1_PutManyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutManyResponse__Output>): grpc.ClientUnaryCall;
  PutMany(argument: _ringkv_v1_PutManyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PutManyResponse__Output>): grpc.ClientUnaryCall;
  PutMany(argument: _ringkv_v1_PutManyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutManyResponse__Output>): grpc.ClientUnaryCall;
  PutMany(argument: _ringkv_v1_PutManyRequest, callback: grpc.requestCallback<_ringkv_v1_PutManyResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Put many keys of one bucket in one call (up to 100 items and 4 MiB of values). Not
   * atomic: each item is a put of its own with its own result or error (a replica down
   * fails only the items it is needed for); a repeated key as in GetMany.
   */
  putMany(argument: _ringkv_v1_PutManyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutManyResponse__Output>): grpc.ClientUnaryCall;
  putMany(argument: _ringkv_v1_PutManyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PutManyResponse__Output>): grpc.ClientUnaryCall;
  putMany(argument: _ringkv_v1_PutManyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutManyResponse__Output>): grpc.ClientUnaryCall;
  putMany(argument: _ringkv_v1_PutManyRequest, callback: grpc.requestCallback<_ringkv_v1_PutManyResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Many puts, gets and deletes over one long-lived stream: what ringkv/client uses. Each
   * KvCalls message carries a batch of calls, each KvReplies a batch of replies, matched by
   * id; each call has its own deadline and its own outcome, as if it were a unary call.
   */
  Stream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_ringkv_v1_KvCalls, _ringkv_v1_KvReplies__Output>;
  Stream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_ringkv_v1_KvCalls, _ringkv_v1_KvReplies__Output>;
  /**
   * Many puts, gets and deletes over one long-lived stream: what ringkv/client uses. Each
   * KvCalls message carries a batch of calls, each KvReplies a batch of replies, matched by
   * id; each call has its own deadline and its own outcome, as if it were a unary call.
   */
  stream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_ringkv_v1_KvCalls, _ringkv_v1_KvReplies__Output>;
  stream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_ringkv_v1_KvCalls, _ringkv_v1_KvReplies__Output>;
  
}

export interface KeyValueHandlers extends grpc.UntypedServiceImplementation {
  /**
   * A tombstone that supersedes what the context saw; a concurrent put survives it.
   */
  Delete: grpc.handleUnaryCall<_ringkv_v1_DeleteRequest__Output, _ringkv_v1_DeleteResponse>;
  
  /**
   * Every sibling value of a key and one context covering them, after R replies.
   */
  Get: grpc.handleUnaryCall<_ringkv_v1_GetRequest__Output, _ringkv_v1_GetResponse>;
  
  /**
   * Get many keys of one bucket in one call (up to 100 keys; docs/limits.md). Not atomic:
   * each key has its own result or error, in the order of the request. INVALID_ARGUMENT
   * for the whole call when it is malformed (too many keys, an unknown bucket, a bad R);
   * a key that is itself bad (empty, too large, repeated) gets its own error. A key
   * repeated in the call runs once, at its first place; each later place is refused
   * (INVALID_ARGUMENT). The answer is at most 8 MiB: a key whose values would go over it
   * gets RESOURCE_EXHAUSTED of its own (get it alone).
   */
  GetMany: grpc.handleUnaryCall<_ringkv_v1_GetManyRequest__Output, _ringkv_v1_GetManyResponse>;
  
  /**
   * Write a value. With the context of a get it replaces exactly the versions that get
   * saw; without one (a blind write) it is kept beside any value already there.
   * Acknowledged once W replicas hold it durably.
   */
  Put: grpc.handleUnaryCall<_ringkv_v1_PutRequest__Output, _ringkv_v1_PutResponse>;
  
  /**
   * Put many keys of one bucket in one call (up to 100 items and 4 MiB of values). Not
   * atomic: each item is a put of its own with its own result or error (a replica down
   * fails only the items it is needed for); a repeated key as in GetMany.
   */
  PutMany: grpc.handleUnaryCall<_ringkv_v1_PutManyRequest__Output, _ringkv_v1_PutManyResponse>;
  
  /**
   * Many puts, gets and deletes over one long-lived stream: what ringkv/client uses. Each
   * KvCalls message carries a batch of calls, each KvReplies a batch of replies, matched by
   * id; each call has its own deadline and its own outcome, as if it were a unary call.
   */
  Stream: grpc.handleBidiStreamingCall<_ringkv_v1_KvCalls__Output, _ringkv_v1_KvReplies>;
  
}

export interface KeyValueDefinition extends grpc.ServiceDefinition {
  Delete: MethodDefinition<_ringkv_v1_DeleteRequest, _ringkv_v1_DeleteResponse, _ringkv_v1_DeleteRequest__Output, _ringkv_v1_DeleteResponse__Output>
  Get: MethodDefinition<_ringkv_v1_GetRequest, _ringkv_v1_GetResponse, _ringkv_v1_GetRequest__Output, _ringkv_v1_GetResponse__Output>
  GetMany: MethodDefinition<_ringkv_v1_GetManyRequest, _ringkv_v1_GetManyResponse, _ringkv_v1_GetManyRequest__Output, _ringkv_v1_GetManyResponse__Output>
  Put: MethodDefinition<_ringkv_v1_PutRequest, _ringkv_v1_PutResponse, _ringkv_v1_PutRequest__Output, _ringkv_v1_PutResponse__Output>
  PutMany: MethodDefinition<_ringkv_v1_PutManyRequest, _ringkv_v1_PutManyResponse, _ringkv_v1_PutManyRequest__Output, _ringkv_v1_PutManyResponse__Output>
  Stream: MethodDefinition<_ringkv_v1_KvCalls, _ringkv_v1_KvReplies, _ringkv_v1_KvCalls__Output, _ringkv_v1_KvReplies__Output>
}
