// Original file: proto/ringkv/v1/kv.proto


export interface SetRemove {
  'element'?: (Buffer | Uint8Array | string);
  /**
   * The element's context from SetRead or SetContains: required (INVALID_ARGUMENT
   * without it). The adds it saw are removed; adds it did not see stay.
   */
  'context'?: (Buffer | Uint8Array | string);
}

export interface SetRemove__Output {
  'element': (Buffer);
  /**
   * The element's context from SetRead or SetContains: required (INVALID_ARGUMENT
   * without it). The adds it saw are removed; adds it did not see stay.
   */
  'context': (Buffer);
}
