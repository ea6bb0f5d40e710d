// Original file: proto/ringkv/internal/v1/replica.proto


/**
 * Why the call was not done. code names the error as ringkv's code does (KV_BAD_CONTEXT,
 * RK_OVERLOADED, RK_NOT_READY, ...); message says what was wrong and what to do.
 */
export interface ReplicaError {
  'code'?: (string);
  'message'?: (string);
}

/**
 * Why the call was not done. code names the error as ringkv's code does (KV_BAD_CONTEXT,
 * RK_OVERLOADED, RK_NOT_READY, ...); message says what was wrong and what to do.
 */
export interface ReplicaError__Output {
  'code': (string);
  'message': (string);
}
