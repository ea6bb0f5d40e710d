// Original file: proto/ringkv/v1/kv.proto

import type { PutResponse as _ringkv_v1_PutResponse, PutResponse__Output as _ringkv_v1_PutResponse__Output } from '../../ringkv/v1/PutResponse.js';
import type { GetResponse as _ringkv_v1_GetResponse, GetResponse__Output as _ringkv_v1_GetResponse__Output } from '../../ringkv/v1/GetResponse.js';
import type { DeleteResponse as _ringkv_v1_DeleteResponse, DeleteResponse__Output as _ringkv_v1_DeleteResponse__Output } from '../../ringkv/v1/DeleteResponse.js';
import type { KvError as _ringkv_v1_KvError, KvError__Output as _ringkv_v1_KvError__Output } from '../../ringkv/v1/KvError.js';
import type { CounterUpdateResponse as _ringkv_v1_CounterUpdateResponse, CounterUpdateResponse__Output as _ringkv_v1_CounterUpdateResponse__Output } from '../../ringkv/v1/CounterUpdateResponse.js';
import type { PutIfResponse as _ringkv_v1_PutIfResponse, PutIfResponse__Output as _ringkv_v1_PutIfResponse__Output } from '../../ringkv/v1/PutIfResponse.js';

export interface KvReply {
  'id'?: (number);
  'put'?: (_ringkv_v1_PutResponse | null);
  'get'?: (_ringkv_v1_GetResponse | null);
  'delete'?: (_ringkv_v1_DeleteResponse | null);
  /**
   * The status the same unary call would have ended with.
   */
  'error'?: (_ringkv_v1_KvError | null);
  'counterUpdate'?: (_ringkv_v1_CounterUpdateResponse | null);
  /**
   * The answer to a put_if or a delete_if.
   */
  'putIf'?: (_ringkv_v1_PutIfResponse | null);
  'result'?: "put"|"get"|"delete"|"error"|"counterUpdate"|"putIf";
}

export interface KvReply__Output {
  'id': (number);
  'put'?: (_ringkv_v1_PutResponse__Output | null);
  'get'?: (_ringkv_v1_GetResponse__Output | null);
  'delete'?: (_ringkv_v1_DeleteResponse__Output | null);
  /**
   * The status the same unary call would have ended with.
   */
  'error'?: (_ringkv_v1_KvError__Output | null);
  'counterUpdate'?: (_ringkv_v1_CounterUpdateResponse__Output | null);
  /**
   * The answer to a put_if or a delete_if.
   */
  'putIf'?: (_ringkv_v1_PutIfResponse__Output | null);
}
