// Original file: proto/ringkv/v1/kv.proto

import type { KvReply as _ringkv_v1_KvReply, KvReply__Output as _ringkv_v1_KvReply__Output } from '../../ringkv/v1/KvReply.js';

export interface KvReplies {
  'replies'?: (_ringkv_v1_KvReply)[];
}

export interface KvReplies__Output {
  'replies': (_ringkv_v1_KvReply__Output)[];
}
