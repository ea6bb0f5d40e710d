// Original file: proto/ringkv/v1/kv.proto


export interface CounterResetRequest {
  'bucket'?: (string);
  'key'?: (Buffer | Uint8Array | string);
  /**
   * The replicas whose states the reset's read merges, and that must acknowledge its
   * write (1..N; 0: a majority of N).
   */
  'w'?: (number);
}

export interface CounterResetRequest__Output {
  'bucket': (string);
  'key': (Buffer);
  /**
   * The replicas whose states the reset's read merges, and that must acknowledge its
   * write (1..N; 0: a majority of N).
   */
  'w': (number);
}
