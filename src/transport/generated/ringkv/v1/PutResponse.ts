// Original file: proto/ringkv/v1/kv.proto


export interface PutResponse {
  /**
   * Causal context of the new version: pass it to the next put of this key to replace it.
   */
  'context'?: (Buffer | Uint8Array | string);
}

export interface PutResponse__Output {
  /**
   * Causal context of the new version: pass it to the next put of this key to replace it.
   */
  'context': (Buffer);
}
