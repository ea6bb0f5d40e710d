// Original file: proto/ringkv/v1/kv.proto


export interface GetManyRequest {
  /**
   * As GetRequest's: one bucket for every key of the call.
   */
  'bucket'?: (string);
  /**
   * 1 to 100 keys, each at most once.
   */
  'keys'?: (Buffer | Uint8Array | string)[];
  /**
   * As GetRequest's, for every key.
   */
  'r'?: (number);
}

export interface GetManyRequest__Output {
  /**
   * As GetRequest's: one bucket for every key of the call.
   */
  'bucket': (string);
  /**
   * 1 to 100 keys, each at most once.
   */
  'keys': (Buffer)[];
  /**
   * As GetRequest's, for every key.
   */
  'r': (number);
}
