// Original file: proto/ringkv/v1/admin.proto

import type { Endpoint as _ringkv_v1_Endpoint, Endpoint__Output as _ringkv_v1_Endpoint__Output } from '../../ringkv/v1/Endpoint.js';

export interface EndpointsResponse {
  /**
   * The key's token, 16 hex digits.
   */
  'token'?: (string);
  'replicas'?: (number);
  /**
   * The key's N replicas, primary first.
   */
  'preferenceList'?: (_ringkv_v1_Endpoint)[];
  /**
   * Where writes go now: the replicas that are up, and a fallback for each one down.
   */
  'targets'?: (_ringkv_v1_Endpoint)[];
}

export interface EndpointsResponse__Output {
  /**
   * The key's token, 16 hex digits.
   */
  'token': (string);
  'replicas': (number);
  /**
   * The key's N replicas, primary first.
   */
  'preferenceList': (_ringkv_v1_Endpoint__Output)[];
  /**
   * Where writes go now: the replicas that are up, and a fallback for each one down.
   */
  'targets': (_ringkv_v1_Endpoint__Output)[];
}
