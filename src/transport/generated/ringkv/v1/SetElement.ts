// Original file: proto/ringkv/v1/kv.proto


export interface SetElement {
  'element'?: (Buffer | Uint8Array | string);
  /**
   * What a remove of this element needs.
   */
  'context'?: (Buffer | Uint8Array | string);
}

export interface SetElement__Output {
  'element': (Buffer);
  /**
   * What a remove of this element needs.
   */
  'context': (Buffer);
}
