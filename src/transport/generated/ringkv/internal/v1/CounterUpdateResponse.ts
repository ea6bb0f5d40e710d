// Original file: proto/ringkv/internal/v1/replica.proto


export interface CounterUpdateResponse {
  /**
   * The counter's whole record after the increment: for a replica that refuses the delta
   * (KV_COUNTER_GAP), and for hints.
   */
  'record'?: (Buffer | Uint8Array | string);
  /**
   * The increment's delta: what the other replicas merge.
   */
  'delta'?: (Buffer | Uint8Array | string);
  /**
   * The counter's value on this replica after the increment, in decimal: exact past 2^53.
   */
  'value'?: (string);
}

export interface CounterUpdateResponse__Output {
  /**
   * The counter's whole record after the increment: for a replica that refuses the delta
   * (KV_COUNTER_GAP), and for hints.
   */
  'record': (Buffer);
  /**
   * The increment's delta: what the other replicas merge.
   */
  'delta': (Buffer);
  /**
   * The counter's value on this replica after the increment, in decimal: exact past 2^53.
   */
  'value': (string);
}
