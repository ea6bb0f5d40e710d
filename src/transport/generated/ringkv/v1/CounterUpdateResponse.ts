// Original file: proto/ringkv/v1/kv.proto


export interface CounterUpdateResponse {
  /**
   * The counter's value on the replica that applied the update, right after it, in
   * decimal (a whole number, which may be past 2^53 in magnitude).
   */
  'value'?: (string);
}

export interface CounterUpdateResponse__Output {
  /**
   * The counter's value on the replica that applied the update, right after it, in
   * decimal (a whole number, which may be past 2^53 in magnitude).
   */
  'value': (string);
}
