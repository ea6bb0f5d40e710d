// Original file: proto/ringkv/v1/kv.proto


export interface GetRequest {
  'key'?: (Buffer | Uint8Array | string);
  /**
   * Replicas whose replies are merged before answering, 1..N; 0 = default (quorum).
   */
  'r'?: (number);
  /**
   * As PutRequest's.
   */
  'bucket'?: (string);
}

export interface GetRequest__Output {
  'key': (Buffer);
  /**
   * Replicas whose replies are merged before answering, 1..N; 0 = default (quorum).
   */
  'r': (number);
  /**
   * As PutRequest's.
   */
  'bucket': (string);
}
