// Original file: proto/ringkv/v1/kv.proto

import type { SetElement as _ringkv_v1_SetElement, SetElement__Output as _ringkv_v1_SetElement__Output } from '../../ringkv/v1/SetElement.js';

export interface SetReadResponse {
  /**
   * In byte order of the elements.
   */
  'elements'?: (_ringkv_v1_SetElement)[];
  /**
   * The `after` of the next page; empty when this page is the last.
   */
  'next'?: (Buffer | Uint8Array | string);
}

export interface SetReadResponse__Output {
  /**
   * In byte order of the elements.
   */
  'elements': (_ringkv_v1_SetElement__Output)[];
  /**
   * The `after` of the next page; empty when this page is the last.
   */
  'next': (Buffer);
}
