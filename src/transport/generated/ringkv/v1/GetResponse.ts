// Original file: proto/ringkv/v1/kv.proto


export interface GetResponse {
  /**
   * All siblings: more than one when writes were concurrent. Empty when not found.
   */
  'values'?: (Buffer | Uint8Array | string)[];
  /**
   * Pass it to the next put or delete of this key (also when not found).
   */
  'context'?: (Buffer | Uint8Array | string);
  /**
   * False when the key is absent or deleted.
   */
  'found'?: (boolean);
}

export interface GetResponse__Output {
  /**
   * All siblings: more than one when writes were concurrent. Empty when not found.
   */
  'values': (Buffer)[];
  /**
   * Pass it to the next put or delete of this key (also when not found).
   */
  'context': (Buffer);
  /**
   * False when the key is absent or deleted.
   */
  'found': (boolean);
}
