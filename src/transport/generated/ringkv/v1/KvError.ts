// Original file: proto/ringkv/v1/kv.proto


export interface KvError {
  /**
   * A gRPC status code (UNAVAILABLE = 14, ...).
   */
  'code'?: (number);
  'details'?: (string);
  /**
   * A put_if's or delete_if's error that proves it did not apply: what the unary call's
   * trailer ringkv-cas-outcome: not-applied says. Unset, its outcome is unknown.
   */
  'casNotApplied'?: (boolean);
}

export interface KvError__Output {
  /**
   * A gRPC status code (UNAVAILABLE = 14, ...).
   */
  'code': (number);
  'details': (string);
  /**
   * A put_if's or delete_if's error that proves it did not apply: what the unary call's
   * trailer ringkv-cas-outcome: not-applied says. Unset, its outcome is unknown.
   */
  'casNotApplied': (boolean);
}
