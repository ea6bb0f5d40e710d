// Original file: proto/ringkv/v1/kv.proto

import type { PutRequest as _ringkv_v1_PutRequest, PutRequest__Output as _ringkv_v1_PutRequest__Output } from '../../ringkv/v1/PutRequest.js';
import type { GetRequest as _ringkv_v1_GetRequest, GetRequest__Output as _ringkv_v1_GetRequest__Output } from '../../ringkv/v1/GetRequest.js';
import type { DeleteRequest as _ringkv_v1_DeleteRequest, DeleteRequest__Output as _ringkv_v1_DeleteRequest__Output } from '../../ringkv/v1/DeleteRequest.js';
import type { CounterUpdateRequest as _ringkv_v1_CounterUpdateRequest, CounterUpdateRequest__Output as _ringkv_v1_CounterUpdateRequest__Output } from '../../ringkv/v1/CounterUpdateRequest.js';
import type { PutIfRequest as _ringkv_v1_PutIfRequest, PutIfRequest__Output as _ringkv_v1_PutIfRequest__Output } from '../../ringkv/v1/PutIfRequest.js';
import type { DeleteIfRequest as _ringkv_v1_DeleteIfRequest, DeleteIfRequest__Output as _ringkv_v1_DeleteIfRequest__Output } from '../../ringkv/v1/DeleteIfRequest.js';

export interface KvCall {
  /**
   * Chosen by the client, unique among its calls in flight on this stream.
   */
  'id'?: (number);
  /**
   * Time left before the call's deadline when it was sent, ms (as gRPC's grpc-timeout).
   */
  'timeoutMs'?: (number);
  'put'?: (_ringkv_v1_PutRequest | null);
  'get'?: (_ringkv_v1_GetRequest | null);
  'delete'?: (_ringkv_v1_DeleteRequest | null);
  'counterUpdate'?: (_ringkv_v1_CounterUpdateRequest | null);
  'putIf'?: (_ringkv_v1_PutIfRequest | null);
  'deleteIf'?: (_ringkv_v1_DeleteIfRequest | null);
  'op'?: "put"|"get"|"delete"|"counterUpdate"|"putIf"|"deleteIf";
}

export interface KvCall__Output {
  /**
   * Chosen by the client, unique among its calls in flight on this stream.
   */
  'id': (number);
  /**
   * Time left before the call's deadline when it was sent, ms (as gRPC's grpc-timeout).
   */
  'timeoutMs': (number);
  'put'?: (_ringkv_v1_PutRequest__Output | null);
  'get'?: (_ringkv_v1_GetRequest__Output | null);
  'delete'?: (_ringkv_v1_DeleteRequest__Output | null);
  'counterUpdate'?: (_ringkv_v1_CounterUpdateRequest__Output | null);
  'putIf'?: (_ringkv_v1_PutIfRequest__Output | null);
  'deleteIf'?: (_ringkv_v1_DeleteIfRequest__Output | null);
}
