// Original file: proto/ringkv/internal/v1/replica.proto

import type { SubKeyOp as _ringkv_internal_v1_SubKeyOp, SubKeyOp__Output as _ringkv_internal_v1_SubKeyOp__Output } from '../../../ringkv/internal/v1/SubKeyOp.js';

/**
 * One request's writes on sub-keys of parent (a named bucket's stored key), on
 * this replica as their issuer, in one write batch: applied whole or not at all.
 */
export interface WriteManyRequest {
  'parent'?: (Buffer | Uint8Array | string);
  'ops'?: (_ringkv_internal_v1_SubKeyOp)[];
  /**
   * The client's request id, if it sent one: an op this replica has seen before writes nothing.
   */
  'requestId'?: (Buffer | Uint8Array | string);
}

/**
 * One request's writes on sub-keys of parent (a named bucket's stored key), on
 * this replica as their issuer, in one write batch: applied whole or not at all.
 */
export interface WriteManyRequest__Output {
  'parent': (Buffer);
  'ops': (_ringkv_internal_v1_SubKeyOp__Output)[];
  /**
   * The client's request id, if it sent one: an op this replica has seen before writes nothing.
   */
  'requestId': (Buffer);
}
