// Original file: proto/ringkv/v1/admin.proto


export interface EndpointsRequest {
  'key'?: (Buffer | Uint8Array | string);
  /**
   * The key's bucket; empty: the default bucket.
   */
  'bucket'?: (string);
}

export interface EndpointsRequest__Output {
  'key': (Buffer);
  /**
   * The key's bucket; empty: the default bucket.
   */
  'bucket': (string);
}
