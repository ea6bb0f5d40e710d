// Original file: proto/ringkv/v1/kv.proto


export interface CounterResetRequest {
  'bucket'?: (string);
  'key'?: (Buffer | Uint8Array | string);
  /**
   * The replicas that must acknowledge the reset, and, without a context, whose states
   * its read merges (1..N; 0: a majority of N).
   */
  'w'?: (number);
  /**
   * A CounterGet's context (with_context) for this key: reset what that read saw. The
   * same reset however often it is sent (a retry, a hedge). Empty: the node reads first,
   * and a reset sent again is one of its own.
   */
  'context'?: (Buffer | Uint8Array | string);
}

export interface CounterResetRequest__Output {
  'bucket': (string);
  'key': (Buffer);
  /**
   * The replicas that must acknowledge the reset, and, without a context, whose states
   * its read merges (1..N; 0: a majority of N).
   */
  'w': (number);
  /**
   * A CounterGet's context (with_context) for this key: reset what that read saw. The
   * same reset however often it is sent (a retry, a hedge). Empty: the node reads first,
   * and a reset sent again is one of its own.
   */
  'context': (Buffer);
}
