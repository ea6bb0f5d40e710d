// Original file: proto/ringkv/v1/kv.proto


export interface DeleteIfRequest {
  'key'?: (Buffer | Uint8Array | string);
  /**
   * The version to delete (a Get's or PutIf's context); required.
   */
  'context'?: (Buffer | Uint8Array | string);
  'bucket'?: (string);
  'requestId'?: (Buffer | Uint8Array | string);
}

export interface DeleteIfRequest__Output {
  'key': (Buffer);
  /**
   * The version to delete (a Get's or PutIf's context); required.
   */
  'context': (Buffer);
  'bucket': (string);
  'requestId': (Buffer);
}
