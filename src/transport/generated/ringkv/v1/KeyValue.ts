// Original file: proto/ringkv/v1/kv.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CounterGetRequest as _ringkv_v1_CounterGetRequest, CounterGetRequest__Output as _ringkv_v1_CounterGetRequest__Output } from '../../ringkv/v1/CounterGetRequest.js';
import type { CounterGetResponse as _ringkv_v1_CounterGetResponse, CounterGetResponse__Output as _ringkv_v1_CounterGetResponse__Output } from '../../ringkv/v1/CounterGetResponse.js';
import type { CounterResetRequest as _ringkv_v1_CounterResetRequest, CounterResetRequest__Output as _ringkv_v1_CounterResetRequest__Output } from '../../ringkv/v1/CounterResetRequest.js';
import type { CounterResetResponse as _ringkv_v1_CounterResetResponse, CounterResetResponse__Output as _ringkv_v1_CounterResetResponse__Output } from '../../ringkv/v1/CounterResetResponse.js';
import type { CounterUpdateRequest as _ringkv_v1_CounterUpdateRequest, CounterUpdateRequest__Output as _ringkv_v1_CounterUpdateRequest__Output } from '../../ringkv/v1/CounterUpdateRequest.js';
import type { CounterUpdateResponse as _ringkv_v1_CounterUpdateResponse, CounterUpdateResponse__Output as _ringkv_v1_CounterUpdateResponse__Output } from '../../ringkv/v1/CounterUpdateResponse.js';
import type { DeleteIfRequest as _ringkv_v1_DeleteIfRequest, DeleteIfRequest__Output as _ringkv_v1_DeleteIfRequest__Output } from '../../ringkv/v1/DeleteIfRequest.js';
import type { DeleteRequest as _ringkv_v1_DeleteRequest, DeleteRequest__Output as _ringkv_v1_DeleteRequest__Output } from '../../ringkv/v1/DeleteRequest.js';
import type { DeleteResponse as _ringkv_v1_DeleteResponse, DeleteResponse__Output as _ringkv_v1_DeleteResponse__Output } from '../../ringkv/v1/DeleteResponse.js';
import type { GetManyRequest as _ringkv_v1_GetManyRequest, GetManyRequest__Output as _ringkv_v1_GetManyRequest__Output } from '../../ringkv/v1/GetManyRequest.js';
import type { GetManyResponse as _ringkv_v1_GetManyResponse, GetManyResponse__Output as _ringkv_v1_GetManyResponse__Output } from '../../ringkv/v1/GetManyResponse.js';
import type { GetRequest as _ringkv_v1_GetRequest, GetRequest__Output as _ringkv_v1_GetRequest__Output } from '../../ringkv/v1/GetRequest.js';
import type { GetResponse as _ringkv_v1_GetResponse, GetResponse__Output as _ringkv_v1_GetResponse__Output } from '../../ringkv/v1/GetResponse.js';
import type { KvCalls as _ringkv_v1_KvCalls, KvCalls__Output as _ringkv_v1_KvCalls__Output } from '../../ringkv/v1/KvCalls.js';
import type { KvReplies as _ringkv_v1_KvReplies, KvReplies__Output as _ringkv_v1_KvReplies__Output } from '../../ringkv/v1/KvReplies.js';
import type { MapReadRequest as _ringkv_v1_MapReadRequest, MapReadRequest__Output as _ringkv_v1_MapReadRequest__Output } from '../../ringkv/v1/MapReadRequest.js';
import type { MapReadResponse as _ringkv_v1_MapReadResponse, MapReadResponse__Output as _ringkv_v1_MapReadResponse__Output } from '../../ringkv/v1/MapReadResponse.js';
import type { MapUpdateRequest as _ringkv_v1_MapUpdateRequest, MapUpdateRequest__Output as _ringkv_v1_MapUpdateRequest__Output } from '../../ringkv/v1/MapUpdateRequest.js';
import type { MapUpdateResponse as _ringkv_v1_MapUpdateResponse, MapUpdateResponse__Output as _ringkv_v1_MapUpdateResponse__Output } from '../../ringkv/v1/MapUpdateResponse.js';
import type { PutIfRequest as _ringkv_v1_PutIfRequest, PutIfRequest__Output as _ringkv_v1_PutIfRequest__Output } from '../../ringkv/v1/PutIfRequest.js';
import type { PutIfResponse as _ringkv_v1_PutIfResponse, PutIfResponse__Output as _ringkv_v1_PutIfResponse__Output } from '../../ringkv/v1/PutIfResponse.js';
import type { PutManyRequest as _ringkv_v1_PutManyRequest, PutManyRequest__Output as _ringkv_v1_PutManyRequest__Output } from '../../ringkv/v1/PutManyRequest.js';
import type { PutManyResponse as _ringkv_v1_PutManyResponse, PutManyResponse__Output as _ringkv_v1_PutManyResponse__Output } from '../../ringkv/v1/PutManyResponse.js';
import type { PutRequest as _ringkv_v1_PutRequest, PutRequest__Output as _ringkv_v1_PutRequest__Output } from '../../ringkv/v1/PutRequest.js';
import type { PutResponse as _ringkv_v1_PutResponse, PutResponse__Output as _ringkv_v1_PutResponse__Output } from '../../ringkv/v1/PutResponse.js';
import type { SetContainsRequest as _ringkv_v1_SetContainsRequest, SetContainsRequest__Output as _ringkv_v1_SetContainsRequest__Output } from '../../ringkv/v1/SetContainsRequest.js';
import type { SetContainsResponse as _ringkv_v1_SetContainsResponse, SetContainsResponse__Output as _ringkv_v1_SetContainsResponse__Output } from '../../ringkv/v1/SetContainsResponse.js';
import type { SetReadRequest as _ringkv_v1_SetReadRequest, SetReadRequest__Output as _ringkv_v1_SetReadRequest__Output } from '../../ringkv/v1/SetReadRequest.js';
import type { SetReadResponse as _ringkv_v1_SetReadResponse, SetReadResponse__Output as _ringkv_v1_SetReadResponse__Output } from '../../ringkv/v1/SetReadResponse.js';
import type { SetUpdateRequest as _ringkv_v1_SetUpdateRequest, SetUpdateRequest__Output as _ringkv_v1_SetUpdateRequest__Output } from '../../ringkv/v1/SetUpdateRequest.js';
import type { SetUpdateResponse as _ringkv_v1_SetUpdateResponse, SetUpdateResponse__Output as _ringkv_v1_SetUpdateResponse__Output } from '../../ringkv/v1/SetUpdateResponse.js';

export interface KeyValueClient extends grpc.Client {
  /**
   * A counter's value after R replies (0 and found = false when never updated).
   */
  CounterGet(argument: _ringkv_v1_CounterGetRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CounterGetResponse__Output>): grpc.ClientUnaryCall;
  CounterGet(argument: _ringkv_v1_CounterGetRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_CounterGetResponse__Output>): grpc.ClientUnaryCall;
  CounterGet(argument: _ringkv_v1_CounterGetRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CounterGetResponse__Output>): grpc.ClientUnaryCall;
  CounterGet(argument: _ringkv_v1_CounterGetRequest, callback: grpc.requestCallback<_ringkv_v1_CounterGetResponse__Output>): grpc.ClientUnaryCall;
  /**
   * A counter's value after R replies (0 and found = false when never updated).
   */
  counterGet(argument: _ringkv_v1_CounterGetRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CounterGetResponse__Output>): grpc.ClientUnaryCall;
  counterGet(argument: _ringkv_v1_CounterGetRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_CounterGetResponse__Output>): grpc.ClientUnaryCall;
  counterGet(argument: _ringkv_v1_CounterGetRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CounterGetResponse__Output>): grpc.ClientUnaryCall;
  counterGet(argument: _ringkv_v1_CounterGetRequest, callback: grpc.requestCallback<_ringkv_v1_CounterGetResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Reset a counter: take out every increment a read of it saw, so that it counts from 0
   * again; an increment the read did not see (a concurrent one) still counts. The read is
   * a CounterGet's with with_context (its context), or, without a context, one the node
   * makes at W first. Acknowledged once W replicas hold the reset; answers the value it
   * took out.
   */
  CounterReset(argument: _ringkv_v1_CounterResetRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CounterResetResponse__Output>): grpc.ClientUnaryCall;
  CounterReset(argument: _ringkv_v1_CounterResetRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_CounterResetResponse__Output>): grpc.ClientUnaryCall;
  CounterReset(argument: _ringkv_v1_CounterResetRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CounterResetResponse__Output>): grpc.ClientUnaryCall;
  CounterReset(argument: _ringkv_v1_CounterResetRequest, callback: grpc.requestCallback<_ringkv_v1_CounterResetResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Reset a counter: take out every increment a read of it saw, so that it counts from 0
   * again; an increment the read did not see (a concurrent one) still counts. The read is
   * a CounterGet's with with_context (its context), or, without a context, one the node
   * makes at W first. Acknowledged once W replicas hold the reset; answers the value it
   * took out.
   */
  counterReset(argument: _ringkv_v1_CounterResetRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CounterResetResponse__Output>): grpc.ClientUnaryCall;
  counterReset(argument: _ringkv_v1_CounterResetRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_CounterResetResponse__Output>): grpc.ClientUnaryCall;
  counterReset(argument: _ringkv_v1_CounterResetRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CounterResetResponse__Output>): grpc.ClientUnaryCall;
  counterReset(argument: _ringkv_v1_CounterResetRequest, callback: grpc.requestCallback<_ringkv_v1_CounterResetResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The data types (docs/data-types.md), each on a bucket of its type only: a call on a
   * bucket of another type, or on the default bucket, is FAILED_PRECONDITION (and Put, Get,
   * Delete, GetMany, PutMany and Stream on a counter, set or map bucket are too). Reads never
   * return siblings: the replicas' states are merged.
   * 
   * Add `amount` (negative: subtract) to a counter. With a request id, the same increment
   * sent again (a retry, a hedge, through any node) counts once. Acknowledged once W
   * replicas hold it; answers the counter's value on the node that applied it.
   */
  CounterUpdate(argument: _ringkv_v1_CounterUpdateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CounterUpdateResponse__Output>): grpc.ClientUnaryCall;
  CounterUpdate(argument: _ringkv_v1_CounterUpdateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_CounterUpdateResponse__Output>): grpc.ClientUnaryCall;
  CounterUpdate(argument: _ringkv_v1_CounterUpdateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CounterUpdateResponse__Output>): grpc.ClientUnaryCall;
  CounterUpdate(argument: _ringkv_v1_CounterUpdateRequest, callback: grpc.requestCallback<_ringkv_v1_CounterUpdateResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The data types (docs/data-types.md), each on a bucket of its type only: a call on a
   * bucket of another type, or on the default bucket, is FAILED_PRECONDITION (and Put, Get,
   * Delete, GetMany, PutMany and Stream on a counter, set or map bucket are too). Reads never
   * return siblings: the replicas' states are merged.
   * 
   * Add `amount` (negative: subtract) to a counter. With a request id, the same increment
   * sent again (a retry, a hedge, through any node) counts once. Acknowledged once W
   * replicas hold it; answers the counter's value on the node that applied it.
   */
  counterUpdate(argument: _ringkv_v1_CounterUpdateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CounterUpdateResponse__Output>): grpc.ClientUnaryCall;
  counterUpdate(argument: _ringkv_v1_CounterUpdateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_CounterUpdateResponse__Output>): grpc.ClientUnaryCall;
  counterUpdate(argument: _ringkv_v1_CounterUpdateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CounterUpdateResponse__Output>): grpc.ClientUnaryCall;
  counterUpdate(argument: _ringkv_v1_CounterUpdateRequest, callback: grpc.requestCallback<_ringkv_v1_CounterUpdateResponse__Output>): grpc.ClientUnaryCall;
  
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
   * Delete the key if its version is exactly `context`.
   */
  DeleteIf(argument: _ringkv_v1_DeleteIfRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  DeleteIf(argument: _ringkv_v1_DeleteIfRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  DeleteIf(argument: _ringkv_v1_DeleteIfRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  DeleteIf(argument: _ringkv_v1_DeleteIfRequest, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Delete the key if its version is exactly `context`.
   */
  deleteIf(argument: _ringkv_v1_DeleteIfRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  deleteIf(argument: _ringkv_v1_DeleteIfRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  deleteIf(argument: _ringkv_v1_DeleteIfRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  deleteIf(argument: _ringkv_v1_DeleteIfRequest, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  
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
   * One page of a map's live entries in the order of their paths, each with the context a
   * remove needs.
   */
  MapRead(argument: _ringkv_v1_MapReadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MapReadResponse__Output>): grpc.ClientUnaryCall;
  MapRead(argument: _ringkv_v1_MapReadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MapReadResponse__Output>): grpc.ClientUnaryCall;
  MapRead(argument: _ringkv_v1_MapReadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MapReadResponse__Output>): grpc.ClientUnaryCall;
  MapRead(argument: _ringkv_v1_MapReadRequest, callback: grpc.requestCallback<_ringkv_v1_MapReadResponse__Output>): grpc.ClientUnaryCall;
  /**
   * One page of a map's live entries in the order of their paths, each with the context a
   * remove needs.
   */
  mapRead(argument: _ringkv_v1_MapReadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MapReadResponse__Output>): grpc.ClientUnaryCall;
  mapRead(argument: _ringkv_v1_MapReadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MapReadResponse__Output>): grpc.ClientUnaryCall;
  mapRead(argument: _ringkv_v1_MapReadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MapReadResponse__Output>): grpc.ClientUnaryCall;
  mapRead(argument: _ringkv_v1_MapReadRequest, callback: grpc.requestCallback<_ringkv_v1_MapReadResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Apply field ops to a map: assign registers, enable and disable flags, increment
   * counters, add and remove elements of set fields, at any depth of nested maps. 1 to
   * 1,000 ops, each field (or set field element) at most once, applied together on one
   * replica; only the fields named travel to the replicas.
   */
  MapUpdate(argument: _ringkv_v1_MapUpdateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MapUpdateResponse__Output>): grpc.ClientUnaryCall;
  MapUpdate(argument: _ringkv_v1_MapUpdateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MapUpdateResponse__Output>): grpc.ClientUnaryCall;
  MapUpdate(argument: _ringkv_v1_MapUpdateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MapUpdateResponse__Output>): grpc.ClientUnaryCall;
  MapUpdate(argument: _ringkv_v1_MapUpdateRequest, callback: grpc.requestCallback<_ringkv_v1_MapUpdateResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Apply field ops to a map: assign registers, enable and disable flags, increment
   * counters, add and remove elements of set fields, at any depth of nested maps. 1 to
   * 1,000 ops, each field (or set field element) at most once, applied together on one
   * replica; only the fields named travel to the replicas.
   */
  mapUpdate(argument: _ringkv_v1_MapUpdateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MapUpdateResponse__Output>): grpc.ClientUnaryCall;
  mapUpdate(argument: _ringkv_v1_MapUpdateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MapUpdateResponse__Output>): grpc.ClientUnaryCall;
  mapUpdate(argument: _ringkv_v1_MapUpdateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MapUpdateResponse__Output>): grpc.ClientUnaryCall;
  mapUpdate(argument: _ringkv_v1_MapUpdateRequest, callback: grpc.requestCallback<_ringkv_v1_MapUpdateResponse__Output>): grpc.ClientUnaryCall;
  
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
   * Linearizable compare-and-set (docs/reads-and-writes.md#compare-and-set), on a bucket of
   * type consistent only, whose keys take no Put or Delete. Each runs Paxos among the key's
   * N replicas (a majority must answer). Applied: `context` is the new version's. Not
   * applied (the condition failed): the key's current value and context. DEADLINE_EXCEEDED
   * means the outcome is unknown: Get the key (or retry with the same request_id, which
   * answers applied if it was). UNAVAILABLE means nothing was written. Get on such a bucket
   * is a linearizable read.
   * 
   * Write `value` if the key is absent (no context), or if its version is exactly
   * `context` (from a Get or PutIf of this key).
   */
  PutIf(argument: _ringkv_v1_PutIfRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  PutIf(argument: _ringkv_v1_PutIfRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  PutIf(argument: _ringkv_v1_PutIfRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  PutIf(argument: _ringkv_v1_PutIfRequest, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Linearizable compare-and-set (docs/reads-and-writes.md#compare-and-set), on a bucket of
   * type consistent only, whose keys take no Put or Delete. Each runs Paxos among the key's
   * N replicas (a majority must answer). Applied: `context` is the new version's. Not
   * applied (the condition failed): the key's current value and context. DEADLINE_EXCEEDED
   * means the outcome is unknown: Get the key (or retry with the same request_id, which
   * answers applied if it was). UNAVAILABLE means nothing was written. Get on such a bucket
   * is a linearizable read.
   * 
   * Write `value` if the key is absent (no context), or if its version is exactly
   * `context` (from a Get or PutIf of this key).
   */
  putIf(argument: _ringkv_v1_PutIfRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  putIf(argument: _ringkv_v1_PutIfRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  putIf(argument: _ringkv_v1_PutIfRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  putIf(argument: _ringkv_v1_PutIfRequest, callback: grpc.requestCallback<_ringkv_v1_PutIfResponse__Output>): grpc.ClientUnaryCall;
  
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
   * Whether an element is in a set, and its context (what a remove of it needs).
   */
  SetContains(argument: _ringkv_v1_SetContainsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetContainsResponse__Output>): grpc.ClientUnaryCall;
  SetContains(argument: _ringkv_v1_SetContainsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_SetContainsResponse__Output>): grpc.ClientUnaryCall;
  SetContains(argument: _ringkv_v1_SetContainsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetContainsResponse__Output>): grpc.ClientUnaryCall;
  SetContains(argument: _ringkv_v1_SetContainsRequest, callback: grpc.requestCallback<_ringkv_v1_SetContainsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Whether an element is in a set, and its context (what a remove of it needs).
   */
  setContains(argument: _ringkv_v1_SetContainsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetContainsResponse__Output>): grpc.ClientUnaryCall;
  setContains(argument: _ringkv_v1_SetContainsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_SetContainsResponse__Output>): grpc.ClientUnaryCall;
  setContains(argument: _ringkv_v1_SetContainsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetContainsResponse__Output>): grpc.ClientUnaryCall;
  setContains(argument: _ringkv_v1_SetContainsRequest, callback: grpc.requestCallback<_ringkv_v1_SetContainsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * One page of a set's elements in byte order, each with the context a remove needs.
   */
  SetRead(argument: _ringkv_v1_SetReadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetReadResponse__Output>): grpc.ClientUnaryCall;
  SetRead(argument: _ringkv_v1_SetReadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_SetReadResponse__Output>): grpc.ClientUnaryCall;
  SetRead(argument: _ringkv_v1_SetReadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetReadResponse__Output>): grpc.ClientUnaryCall;
  SetRead(argument: _ringkv_v1_SetReadRequest, callback: grpc.requestCallback<_ringkv_v1_SetReadResponse__Output>): grpc.ClientUnaryCall;
  /**
   * One page of a set's elements in byte order, each with the context a remove needs.
   */
  setRead(argument: _ringkv_v1_SetReadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetReadResponse__Output>): grpc.ClientUnaryCall;
  setRead(argument: _ringkv_v1_SetReadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_SetReadResponse__Output>): grpc.ClientUnaryCall;
  setRead(argument: _ringkv_v1_SetReadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetReadResponse__Output>): grpc.ClientUnaryCall;
  setRead(argument: _ringkv_v1_SetReadRequest, callback: grpc.requestCallback<_ringkv_v1_SetReadResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Add and remove elements of a set (observed-remove: a remove takes out the adds its
   * context saw; a concurrent add survives it). 1 to 1,000 operations, each element at
   * most once, in one request; only the changed elements travel to the replicas.
   */
  SetUpdate(argument: _ringkv_v1_SetUpdateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetUpdateResponse__Output>): grpc.ClientUnaryCall;
  SetUpdate(argument: _ringkv_v1_SetUpdateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_SetUpdateResponse__Output>): grpc.ClientUnaryCall;
  SetUpdate(argument: _ringkv_v1_SetUpdateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetUpdateResponse__Output>): grpc.ClientUnaryCall;
  SetUpdate(argument: _ringkv_v1_SetUpdateRequest, callback: grpc.requestCallback<_ringkv_v1_SetUpdateResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Add and remove elements of a set (observed-remove: a remove takes out the adds its
   * context saw; a concurrent add survives it). 1 to 1,000 operations, each element at
   * most once, in one request; only the changed elements travel to the replicas.
   */
  setUpdate(argument: _ringkv_v1_SetUpdateRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetUpdateResponse__Output>): grpc.ClientUnaryCall;
  setUpdate(argument: _ringkv_v1_SetUpdateRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_SetUpdateResponse__Output>): grpc.ClientUnaryCall;
  setUpdate(argument: _ringkv_v1_SetUpdateRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetUpdateResponse__Output>): grpc.ClientUnaryCall;
  setUpdate(argument: _ringkv_v1_SetUpdateRequest, callback: grpc.requestCallback<_ringkv_v1_SetUpdateResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Many puts, gets, deletes and counter updates over one long-lived stream: what
   * ringkv/client uses. Each KvCalls message carries a batch of calls, each KvReplies a
   * batch of replies, matched by id; each call has its own deadline and its own outcome,
   * as if it were a unary call. A call naming an operation the node's release does not
   * know is refused alone (UNIMPLEMENTED); ringkv/client sends counter updates on a stream
   * of their own, so that a node of an earlier release, which breaks its stream on one,
   * fails only them.
   */
  Stream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_ringkv_v1_KvCalls, _ringkv_v1_KvReplies__Output>;
  Stream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_ringkv_v1_KvCalls, _ringkv_v1_KvReplies__Output>;
  /**
   * Many puts, gets, deletes and counter updates over one long-lived stream: what
   * ringkv/client uses. Each KvCalls message carries a batch of calls, each KvReplies a
   * batch of replies, matched by id; each call has its own deadline and its own outcome,
   * as if it were a unary call. A call naming an operation the node's release does not
   * know is refused alone (UNIMPLEMENTED); ringkv/client sends counter updates on a stream
   * of their own, so that a node of an earlier release, which breaks its stream on one,
   * fails only them.
   */
  stream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_ringkv_v1_KvCalls, _ringkv_v1_KvReplies__Output>;
  stream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_ringkv_v1_KvCalls, _ringkv_v1_KvReplies__Output>;
  
}

export interface KeyValueHandlers extends grpc.UntypedServiceImplementation {
  /**
   * A counter's value after R replies (0 and found = false when never updated).
   */
  CounterGet: grpc.handleUnaryCall<_ringkv_v1_CounterGetRequest__Output, _ringkv_v1_CounterGetResponse>;
  
  /**
   * Reset a counter: take out every increment a read of it saw, so that it counts from 0
   * again; an increment the read did not see (a concurrent one) still counts. The read is
   * a CounterGet's with with_context (its context), or, without a context, one the node
   * makes at W first. Acknowledged once W replicas hold the reset; answers the value it
   * took out.
   */
  CounterReset: grpc.handleUnaryCall<_ringkv_v1_CounterResetRequest__Output, _ringkv_v1_CounterResetResponse>;
  
  /**
   * The data types (docs/data-types.md), each on a bucket of its type only: a call on a
   * bucket of another type, or on the default bucket, is FAILED_PRECONDITION (and Put, Get,
   * Delete, GetMany, PutMany and Stream on a counter, set or map bucket are too). Reads never
   * return siblings: the replicas' states are merged.
   * 
   * Add `amount` (negative: subtract) to a counter. With a request id, the same increment
   * sent again (a retry, a hedge, through any node) counts once. Acknowledged once W
   * replicas hold it; answers the counter's value on the node that applied it.
   */
  CounterUpdate: grpc.handleUnaryCall<_ringkv_v1_CounterUpdateRequest__Output, _ringkv_v1_CounterUpdateResponse>;
  
  /**
   * A tombstone that supersedes what the context saw; a concurrent put survives it.
   */
  Delete: grpc.handleUnaryCall<_ringkv_v1_DeleteRequest__Output, _ringkv_v1_DeleteResponse>;
  
  /**
   * Delete the key if its version is exactly `context`.
   */
  DeleteIf: grpc.handleUnaryCall<_ringkv_v1_DeleteIfRequest__Output, _ringkv_v1_PutIfResponse>;
  
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
   * One page of a map's live entries in the order of their paths, each with the context a
   * remove needs.
   */
  MapRead: grpc.handleUnaryCall<_ringkv_v1_MapReadRequest__Output, _ringkv_v1_MapReadResponse>;
  
  /**
   * Apply field ops to a map: assign registers, enable and disable flags, increment
   * counters, add and remove elements of set fields, at any depth of nested maps. 1 to
   * 1,000 ops, each field (or set field element) at most once, applied together on one
   * replica; only the fields named travel to the replicas.
   */
  MapUpdate: grpc.handleUnaryCall<_ringkv_v1_MapUpdateRequest__Output, _ringkv_v1_MapUpdateResponse>;
  
  /**
   * Write a value. With the context of a get it replaces exactly the versions that get
   * saw; without one (a blind write) it is kept beside any value already there.
   * Acknowledged once W replicas hold it durably.
   */
  Put: grpc.handleUnaryCall<_ringkv_v1_PutRequest__Output, _ringkv_v1_PutResponse>;
  
  /**
   * Linearizable compare-and-set (docs/reads-and-writes.md#compare-and-set), on a bucket of
   * type consistent only, whose keys take no Put or Delete. Each runs Paxos among the key's
   * N replicas (a majority must answer). Applied: `context` is the new version's. Not
   * applied (the condition failed): the key's current value and context. DEADLINE_EXCEEDED
   * means the outcome is unknown: Get the key (or retry with the same request_id, which
   * answers applied if it was). UNAVAILABLE means nothing was written. Get on such a bucket
   * is a linearizable read.
   * 
   * Write `value` if the key is absent (no context), or if its version is exactly
   * `context` (from a Get or PutIf of this key).
   */
  PutIf: grpc.handleUnaryCall<_ringkv_v1_PutIfRequest__Output, _ringkv_v1_PutIfResponse>;
  
  /**
   * Put many keys of one bucket in one call (up to 100 items and 4 MiB of values). Not
   * atomic: each item is a put of its own with its own result or error (a replica down
   * fails only the items it is needed for); a repeated key as in GetMany.
   */
  PutMany: grpc.handleUnaryCall<_ringkv_v1_PutManyRequest__Output, _ringkv_v1_PutManyResponse>;
  
  /**
   * Whether an element is in a set, and its context (what a remove of it needs).
   */
  SetContains: grpc.handleUnaryCall<_ringkv_v1_SetContainsRequest__Output, _ringkv_v1_SetContainsResponse>;
  
  /**
   * One page of a set's elements in byte order, each with the context a remove needs.
   */
  SetRead: grpc.handleUnaryCall<_ringkv_v1_SetReadRequest__Output, _ringkv_v1_SetReadResponse>;
  
  /**
   * Add and remove elements of a set (observed-remove: a remove takes out the adds its
   * context saw; a concurrent add survives it). 1 to 1,000 operations, each element at
   * most once, in one request; only the changed elements travel to the replicas.
   */
  SetUpdate: grpc.handleUnaryCall<_ringkv_v1_SetUpdateRequest__Output, _ringkv_v1_SetUpdateResponse>;
  
  /**
   * Many puts, gets, deletes and counter updates over one long-lived stream: what
   * ringkv/client uses. Each KvCalls message carries a batch of calls, each KvReplies a
   * batch of replies, matched by id; each call has its own deadline and its own outcome,
   * as if it were a unary call. A call naming an operation the node's release does not
   * know is refused alone (UNIMPLEMENTED); ringkv/client sends counter updates on a stream
   * of their own, so that a node of an earlier release, which breaks its stream on one,
   * fails only them.
   */
  Stream: grpc.handleBidiStreamingCall<_ringkv_v1_KvCalls__Output, _ringkv_v1_KvReplies>;
  
}

export interface KeyValueDefinition extends grpc.ServiceDefinition {
  CounterGet: MethodDefinition<_ringkv_v1_CounterGetRequest, _ringkv_v1_CounterGetResponse, _ringkv_v1_CounterGetRequest__Output, _ringkv_v1_CounterGetResponse__Output>
  CounterReset: MethodDefinition<_ringkv_v1_CounterResetRequest, _ringkv_v1_CounterResetResponse, _ringkv_v1_CounterResetRequest__Output, _ringkv_v1_CounterResetResponse__Output>
  CounterUpdate: MethodDefinition<_ringkv_v1_CounterUpdateRequest, _ringkv_v1_CounterUpdateResponse, _ringkv_v1_CounterUpdateRequest__Output, _ringkv_v1_CounterUpdateResponse__Output>
  Delete: MethodDefinition<_ringkv_v1_DeleteRequest, _ringkv_v1_DeleteResponse, _ringkv_v1_DeleteRequest__Output, _ringkv_v1_DeleteResponse__Output>
  DeleteIf: MethodDefinition<_ringkv_v1_DeleteIfRequest, _ringkv_v1_PutIfResponse, _ringkv_v1_DeleteIfRequest__Output, _ringkv_v1_PutIfResponse__Output>
  Get: MethodDefinition<_ringkv_v1_GetRequest, _ringkv_v1_GetResponse, _ringkv_v1_GetRequest__Output, _ringkv_v1_GetResponse__Output>
  GetMany: MethodDefinition<_ringkv_v1_GetManyRequest, _ringkv_v1_GetManyResponse, _ringkv_v1_GetManyRequest__Output, _ringkv_v1_GetManyResponse__Output>
  MapRead: MethodDefinition<_ringkv_v1_MapReadRequest, _ringkv_v1_MapReadResponse, _ringkv_v1_MapReadRequest__Output, _ringkv_v1_MapReadResponse__Output>
  MapUpdate: MethodDefinition<_ringkv_v1_MapUpdateRequest, _ringkv_v1_MapUpdateResponse, _ringkv_v1_MapUpdateRequest__Output, _ringkv_v1_MapUpdateResponse__Output>
  Put: MethodDefinition<_ringkv_v1_PutRequest, _ringkv_v1_PutResponse, _ringkv_v1_PutRequest__Output, _ringkv_v1_PutResponse__Output>
  PutIf: MethodDefinition<_ringkv_v1_PutIfRequest, _ringkv_v1_PutIfResponse, _ringkv_v1_PutIfRequest__Output, _ringkv_v1_PutIfResponse__Output>
  PutMany: MethodDefinition<_ringkv_v1_PutManyRequest, _ringkv_v1_PutManyResponse, _ringkv_v1_PutManyRequest__Output, _ringkv_v1_PutManyResponse__Output>
  SetContains: MethodDefinition<_ringkv_v1_SetContainsRequest, _ringkv_v1_SetContainsResponse, _ringkv_v1_SetContainsRequest__Output, _ringkv_v1_SetContainsResponse__Output>
  SetRead: MethodDefinition<_ringkv_v1_SetReadRequest, _ringkv_v1_SetReadResponse, _ringkv_v1_SetReadRequest__Output, _ringkv_v1_SetReadResponse__Output>
  SetUpdate: MethodDefinition<_ringkv_v1_SetUpdateRequest, _ringkv_v1_SetUpdateResponse, _ringkv_v1_SetUpdateRequest__Output, _ringkv_v1_SetUpdateResponse__Output>
  Stream: MethodDefinition<_ringkv_v1_KvCalls, _ringkv_v1_KvReplies, _ringkv_v1_KvCalls__Output, _ringkv_v1_KvReplies__Output>
}
