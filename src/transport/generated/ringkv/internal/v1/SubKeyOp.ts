// Original file: proto/ringkv/internal/v1/replica.proto

import type { PathField as _ringkv_internal_v1_PathField, PathField__Output as _ringkv_internal_v1_PathField__Output } from '../../../ringkv/internal/v1/PathField.js';

// Original file: proto/ringkv/internal/v1/replica.proto

export const _ringkv_internal_v1_SubKeyOp_Kind = {
  KIND_UNSPECIFIED: 'KIND_UNSPECIFIED',
  ADD: 'ADD',
  REMOVE: 'REMOVE',
} as const;

export type _ringkv_internal_v1_SubKeyOp_Kind =
  | 'KIND_UNSPECIFIED'
  | 0
  | 'ADD'
  | 1
  | 'REMOVE'
  | 2

export type _ringkv_internal_v1_SubKeyOp_Kind__Output = typeof _ringkv_internal_v1_SubKeyOp_Kind[keyof typeof _ringkv_internal_v1_SubKeyOp_Kind]

/**
 * One presence write on a sub-key of the parent: a set element's add or remove, or a flag
 * field's enable (add) or disable (remove).
 */
export interface SubKeyOp {
  'op'?: (_ringkv_internal_v1_SubKeyOp_Kind);
  'fields'?: (_ringkv_internal_v1_PathField)[];
  /**
   * The set element; unset: the path names a flag field (an empty one is refused, not read as unset).
   */
  'element'?: (Buffer | Uint8Array | string);
  /**
   * A remove's context: what a read of that element or field returned.
   */
  'context'?: (Buffer | Uint8Array | string);
  '_element'?: "element";
}

/**
 * One presence write on a sub-key of the parent: a set element's add or remove, or a flag
 * field's enable (add) or disable (remove).
 */
export interface SubKeyOp__Output {
  'op': (_ringkv_internal_v1_SubKeyOp_Kind__Output);
  'fields': (_ringkv_internal_v1_PathField__Output)[];
  /**
   * The set element; unset: the path names a flag field (an empty one is refused, not read as unset).
   */
  'element'?: (Buffer);
  /**
   * A remove's context: what a read of that element or field returned.
   */
  'context': (Buffer);
}
