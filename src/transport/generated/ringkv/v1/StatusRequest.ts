// Original file: proto/ringkv/v1/admin.proto


export interface StatusRequest {
  /**
   * Replicas per key (N) for effective ownership; 0 means the cluster's N.
   */
  'replicas'?: (number);
}

export interface StatusRequest__Output {
  /**
   * Replicas per key (N) for effective ownership; 0 means the cluster's N.
   */
  'replicas': (number);
}
