// Original file: proto/ringkv/v1/kv.proto


export interface PutIfRequest {
  'key'?: (Buffer | Uint8Array | string);
  /**
   * 1 byte to the node's value limit.
   */
  'value'?: (Buffer | Uint8Array | string);
  /**
   * Empty: write only if the key is absent (never written, or deleted); else only if its
   * version is exactly this one (a Get's or PutIf's context).
   */
  'context'?: (Buffer | Uint8Array | string);
  /**
   * A bucket of type consistent.
   */
  'bucket'?: (string);
  /**
   * The same on every attempt of one request: a retry of one that applied answers applied
   * (while its write is the key's latest). Empty: the node makes one.
   */
  'requestId'?: (Buffer | Uint8Array | string);
}

export interface PutIfRequest__Output {
  'key': (Buffer);
  /**
   * 1 byte to the node's value limit.
   */
  'value': (Buffer);
  /**
   * Empty: write only if the key is absent (never written, or deleted); else only if its
   * version is exactly this one (a Get's or PutIf's context).
   */
  'context': (Buffer);
  /**
   * A bucket of type consistent.
   */
  'bucket': (string);
  /**
   * The same on every attempt of one request: a retry of one that applied answers applied
   * (while its write is the key's latest). Empty: the node makes one.
   */
  'requestId': (Buffer);
}
