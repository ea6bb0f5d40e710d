// Original file: proto/ringkv/v1/kv.proto

import type { PutResponse as _ringkv_v1_PutResponse, PutResponse__Output as _ringkv_v1_PutResponse__Output } from '../../ringkv/v1/PutResponse.js';
import type { KvError as _ringkv_v1_KvError, KvError__Output as _ringkv_v1_KvError__Output } from '../../ringkv/v1/KvError.js';

export interface KeyPut {
  'key'?: (Buffer | Uint8Array | string);
  'put'?: (_ringkv_v1_PutResponse | null);
  'error'?: (_ringkv_v1_KvError | null);
  'result'?: "put"|"error";
}

export interface KeyPut__Output {
  'key': (Buffer);
  'put'?: (_ringkv_v1_PutResponse__Output | null);
  'error'?: (_ringkv_v1_KvError__Output | null);
}
