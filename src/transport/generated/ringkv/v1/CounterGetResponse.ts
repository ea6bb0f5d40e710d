// Original file: proto/ringkv/v1/kv.proto


export interface CounterGetResponse {
  /**
   * The merged value of the replicas that replied, in decimal; "0" when not found.
   */
  'value'?: (string);
  /**
   * False when no replica that replied holds the counter.
   */
  'found'?: (boolean);
  /**
   * With with_context: what CounterReset takes to reset what this read saw (the state it
   * merged, up to some KiB); empty when not found.
   */
  'context'?: (Buffer | Uint8Array | string);
}

export interface CounterGetResponse__Output {
  /**
   * The merged value of the replicas that replied, in decimal; "0" when not found.
   */
  'value': (string);
  /**
   * False when no replica that replied holds the counter.
   */
  'found': (boolean);
  /**
   * With with_context: what CounterReset takes to reset what this read saw (the state it
   * merged, up to some KiB); empty when not found.
   */
  'context': (Buffer);
}
