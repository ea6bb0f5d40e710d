// Original file: proto/ringkv/v1/admin.proto


export interface RingRequest {
  /**
   * Replicas per key (N); 0 means the cluster's N.
   */
  'replicas'?: (number);
}

export interface RingRequest__Output {
  /**
   * Replicas per key (N); 0 means the cluster's N.
   */
  'replicas': (number);
}
