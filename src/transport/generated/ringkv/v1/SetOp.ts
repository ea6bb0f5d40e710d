// Original file: proto/ringkv/v1/kv.proto

import type { SetRemove as _ringkv_v1_SetRemove, SetRemove__Output as _ringkv_v1_SetRemove__Output } from '../../ringkv/v1/SetRemove.js';

export interface SetOp {
  /**
   * Add this element (1 to 1,024 bytes).
   */
  'add'?: (Buffer | Uint8Array | string);
  'remove'?: (_ringkv_v1_SetRemove | null);
  'op'?: "add"|"remove";
}

export interface SetOp__Output {
  /**
   * Add this element (1 to 1,024 bytes).
   */
  'add'?: (Buffer);
  'remove'?: (_ringkv_v1_SetRemove__Output | null);
}
