// Original file: proto/ringkv/v1/kv.proto


export interface PutIfResponse {
  /**
   * True when the write (or delete) applied.
   */
  'applied'?: (boolean);
  /**
   * Applied: the new version's context. Not applied: the current version's (empty when the
   * key was never written).
   */
  'context'?: (Buffer | Uint8Array | string);
  /**
   * Not applied: whether the key holds a value now, and that value.
   */
  'found'?: (boolean);
  'value'?: (Buffer | Uint8Array | string);
}

export interface PutIfResponse__Output {
  /**
   * True when the write (or delete) applied.
   */
  'applied': (boolean);
  /**
   * Applied: the new version's context. Not applied: the current version's (empty when the
   * key was never written).
   */
  'context': (Buffer);
  /**
   * Not applied: whether the key holds a value now, and that value.
   */
  'found': (boolean);
  'value': (Buffer);
}
