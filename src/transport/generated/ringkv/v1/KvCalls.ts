// Original file: proto/ringkv/v1/kv.proto

import type { KvCall as _ringkv_v1_KvCall, KvCall__Output as _ringkv_v1_KvCall__Output } from '../../ringkv/v1/KvCall.js';

export interface KvCalls {
  'calls'?: (_ringkv_v1_KvCall)[];
}

export interface KvCalls__Output {
  'calls': (_ringkv_v1_KvCall__Output)[];
}
