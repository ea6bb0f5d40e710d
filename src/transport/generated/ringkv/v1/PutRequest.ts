// Original file: proto/ringkv/v1/kv.proto


export interface PutRequest {
  /**
   * 1 to 4,096 bytes.
   */
  'key'?: (Buffer | Uint8Array | string);
  /**
   * 1 byte to 1 MiB.
   */
  'value'?: (Buffer | Uint8Array | string);
  /**
   * From a Get of this key; empty for a blind write.
   */
  'context'?: (Buffer | Uint8Array | string);
  /**
   * Replicas that must hold the write before it is acknowledged, 1..N; 0 = default (quorum).
   */
  'w'?: (number);
  /**
   * Optional, 1 to 64 bytes: the same on every attempt of one request (a retry, a hedge
   * sent to another node). A write repeated with its request id is applied once, through
   * any nodes (docs/causality.md#safe-to-send-twice). 16 random bytes will do.
   */
  'requestId'?: (Buffer | Uint8Array | string);
}

export interface PutRequest__Output {
  /**
   * 1 to 4,096 bytes.
   */
  'key': (Buffer);
  /**
   * 1 byte to 1 MiB.
   */
  'value': (Buffer);
  /**
   * From a Get of this key; empty for a blind write.
   */
  'context': (Buffer);
  /**
   * Replicas that must hold the write before it is acknowledged, 1..N; 0 = default (quorum).
   */
  'w': (number);
  /**
   * Optional, 1 to 64 bytes: the same on every attempt of one request (a retry, a hedge
   * sent to another node). A write repeated with its request id is applied once, through
   * any nodes (docs/causality.md#safe-to-send-twice). 16 random bytes will do.
   */
  'requestId': (Buffer);
}
