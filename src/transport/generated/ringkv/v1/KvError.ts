// Original file: proto/ringkv/v1/kv.proto


export interface KvError {
  /**
   * A gRPC status code (UNAVAILABLE = 14, ...).
   */
  'code'?: (number);
  'details'?: (string);
}

export interface KvError__Output {
  /**
   * A gRPC status code (UNAVAILABLE = 14, ...).
   */
  'code': (number);
  'details': (string);
}
