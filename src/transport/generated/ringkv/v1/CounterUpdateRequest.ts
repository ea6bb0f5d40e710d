// Original file: proto/ringkv/v1/kv.proto

import type { Long } from '@grpc/proto-loader';

export interface CounterUpdateRequest {
  /**
   * As PutRequest's: a bucket of type counter.
   */
  'bucket'?: (string);
  'key'?: (Buffer | Uint8Array | string);
  /**
   * Added to the counter; negative subtracts. Not 0, and at most 2^53 - 1 either way
   * (INVALID_ARGUMENT otherwise). OUT_OF_RANGE when a replica's sum of increments (or of
   * decrements) on the key would pass 2^53 - 1.
   */
  'amount'?: (number | string | Long);
  /**
   * As PutRequest's: the same on every attempt of one increment, which then counts once.
   * ringkv/client sends 16 random bytes unless told otherwise.
   */
  'requestId'?: (Buffer | Uint8Array | string);
  /**
   * As PutRequest's.
   */
  'w'?: (number);
  'nodeConfirms'?: (number);
  'zoneConfirms'?: (number);
  'pw'?: (number);
}

export interface CounterUpdateRequest__Output {
  /**
   * As PutRequest's: a bucket of type counter.
   */
  'bucket': (string);
  'key': (Buffer);
  /**
   * Added to the counter; negative subtracts. Not 0, and at most 2^53 - 1 either way
   * (INVALID_ARGUMENT otherwise). OUT_OF_RANGE when a replica's sum of increments (or of
   * decrements) on the key would pass 2^53 - 1.
   */
  'amount': (number);
  /**
   * As PutRequest's: the same on every attempt of one increment, which then counts once.
   * ringkv/client sends 16 random bytes unless told otherwise.
   */
  'requestId': (Buffer);
  /**
   * As PutRequest's.
   */
  'w': (number);
  'nodeConfirms': (number);
  'zoneConfirms': (number);
  'pw': (number);
}
