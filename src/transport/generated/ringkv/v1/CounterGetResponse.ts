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
}
