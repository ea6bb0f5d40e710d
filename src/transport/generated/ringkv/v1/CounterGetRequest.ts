// Original file: proto/ringkv/v1/kv.proto


export interface CounterGetRequest {
  'bucket'?: (string);
  'key'?: (Buffer | Uint8Array | string);
  /**
   * As GetRequest's.
   */
  'r'?: (number);
}

export interface CounterGetRequest__Output {
  'bucket': (string);
  'key': (Buffer);
  /**
   * As GetRequest's.
   */
  'r': (number);
}
