// Original file: proto/ringkv/v1/kv.proto


export interface CounterResetResponse {
  /**
   * The value the reset took out (what its read saw), in decimal; "0" when not found.
   */
  'value'?: (string);
  /**
   * False when no replica that replied holds the counter: nothing was written.
   */
  'found'?: (boolean);
}

export interface CounterResetResponse__Output {
  /**
   * The value the reset took out (what its read saw), in decimal; "0" when not found.
   */
  'value': (string);
  /**
   * False when no replica that replied holds the counter: nothing was written.
   */
  'found': (boolean);
}
