// Original file: proto/ringkv/v1/kv.proto


export interface SetContainsRequest {
  'bucket'?: (string);
  'key'?: (Buffer | Uint8Array | string);
  'element'?: (Buffer | Uint8Array | string);
  /**
   * As GetRequest's.
   */
  'r'?: (number);
}

export interface SetContainsRequest__Output {
  'bucket': (string);
  'key': (Buffer);
  'element': (Buffer);
  /**
   * As GetRequest's.
   */
  'r': (number);
}
