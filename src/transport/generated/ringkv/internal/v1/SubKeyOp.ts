// Original file: proto/ringkv/internal/v1/replica.proto

import type { PathField as _ringkv_internal_v1_PathField, PathField__Output as _ringkv_internal_v1_PathField__Output } from '../../../ringkv/internal/v1/PathField.js';
import type { Long } from '@grpc/proto-loader';

// Original file: proto/ringkv/internal/v1/replica.proto

export const _ringkv_internal_v1_SubKeyOp_Kind = {
  KIND_UNSPECIFIED: 'KIND_UNSPECIFIED',
  ADD: 'ADD',
  REMOVE: 'REMOVE',
  ASSIGN: 'ASSIGN',
  INCREMENT: 'INCREMENT',
} as const;

export type _ringkv_internal_v1_SubKeyOp_Kind =
  | 'KIND_UNSPECIFIED'
  | 0
  | 'ADD'
  | 1
  | 'REMOVE'
  | 2
  | 'ASSIGN'
  | 3
  | 'INCREMENT'
  | 4

export type _ringkv_internal_v1_SubKeyOp_Kind__Output = typeof _ringkv_internal_v1_SubKeyOp_Kind[keyof typeof _ringkv_internal_v1_SubKeyOp_Kind]

/**
 * One write on a sub-key of the parent: a set element's add or remove, a flag field's
 * enable (add) or disable (remove), a register field's assign or clear (remove), a counter
 * field's increment.
 */
export interface SubKeyOp {
  'op'?: (_ringkv_internal_v1_SubKeyOp_Kind);
  'fields'?: (_ringkv_internal_v1_PathField)[];
  /**
   * The set element; unset: the path names a field (an empty one is refused, not read as unset).
   */
  'element'?: (Buffer | Uint8Array | string);
  /**
   * A remove's context: what a read of that element or field returned.
   */
  'context'?: (Buffer | Uint8Array | string);
  /**
   * An assign's value.
   */
  'value'?: (Buffer | Uint8Array | string);
  /**
   * An increment's amount: nonzero, within +-(2^53 - 1) (KV_BAD_AMOUNT otherwise).
   */
  'amount'?: (number | string | Long);
  '_element'?: "element";
}

/**
 * One write on a sub-key of the parent: a set element's add or remove, a flag field's
 * enable (add) or disable (remove), a register field's assign or clear (remove), a counter
 * field's increment.
 */
export interface SubKeyOp__Output {
  'op': (_ringkv_internal_v1_SubKeyOp_Kind__Output);
  'fields': (_ringkv_internal_v1_PathField__Output)[];
  /**
   * The set element; unset: the path names a field (an empty one is refused, not read as unset).
   */
  'element'?: (Buffer);
  /**
   * A remove's context: what a read of that element or field returned.
   */
  'context': (Buffer);
  /**
   * An assign's value.
   */
  'value': (Buffer);
  /**
   * An increment's amount: nonzero, within +-(2^53 - 1) (KV_BAD_AMOUNT otherwise).
   */
  'amount': (number);
}
