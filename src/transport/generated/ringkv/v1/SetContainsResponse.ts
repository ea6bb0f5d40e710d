// Original file: proto/ringkv/v1/kv.proto


export interface SetContainsResponse {
  'present'?: (boolean);
  /**
   * The element's context: pass it to a remove (empty when absent and never added).
   */
  'context'?: (Buffer | Uint8Array | string);
}

export interface SetContainsResponse__Output {
  'present': (boolean);
  /**
   * The element's context: pass it to a remove (empty when absent and never added).
   */
  'context': (Buffer);
}
