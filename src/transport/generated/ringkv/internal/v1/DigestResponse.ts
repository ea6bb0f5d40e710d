// Original file: proto/ringkv/internal/v1/replica.proto


export interface DigestResponse {
  /**
   * Empty when this node holds no versions of the key.
   */
  'digest'?: (Buffer | Uint8Array | string);
}

export interface DigestResponse__Output {
  /**
   * Empty when this node holds no versions of the key.
   */
  'digest': (Buffer);
}
