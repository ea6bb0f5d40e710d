// Original file: proto/ringkv/v1/kv.proto


export interface MapRemove {
  /**
   * The set field's element; empty for a register, a flag or a counter.
   */
  'element'?: (Buffer | Uint8Array | string);
  /**
   * The entry's context from MapRead: required (INVALID_ARGUMENT without it).
   */
  'context'?: (Buffer | Uint8Array | string);
}

export interface MapRemove__Output {
  /**
   * The set field's element; empty for a register, a flag or a counter.
   */
  'element': (Buffer);
  /**
   * The entry's context from MapRead: required (INVALID_ARGUMENT without it).
   */
  'context': (Buffer);
}
