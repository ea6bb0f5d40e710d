// Original file: proto/ringkv/v1/kv.proto


export interface CounterGetRequest {
  'bucket'?: (string);
  'key'?: (Buffer | Uint8Array | string);
  /**
   * As GetRequest's.
   */
  'r'?: (number);
  /**
   * Answer the context a CounterReset of what this read saw needs, too.
   */
  'withContext'?: (boolean);
}

export interface CounterGetRequest__Output {
  'bucket': (string);
  'key': (Buffer);
  /**
   * As GetRequest's.
   */
  'r': (number);
  /**
   * Answer the context a CounterReset of what this read saw needs, too.
   */
  'withContext': (boolean);
}
