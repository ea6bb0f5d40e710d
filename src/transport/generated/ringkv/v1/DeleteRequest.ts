// Original file: proto/ringkv/v1/kv.proto


export interface DeleteRequest {
  'key'?: (Buffer | Uint8Array | string);
  /**
   * From a Get of this key; empty deletes nothing that any write made (a tombstone beside them).
   */
  'context'?: (Buffer | Uint8Array | string);
  'w'?: (number);
  /**
   * As PutRequest's.
   */
  'requestId'?: (Buffer | Uint8Array | string);
  /**
   * As PutRequest's.
   */
  'bucket'?: (string);
  'nodeConfirms'?: (number);
  'zoneConfirms'?: (number);
  'pw'?: (number);
}

export interface DeleteRequest__Output {
  'key': (Buffer);
  /**
   * From a Get of this key; empty deletes nothing that any write made (a tombstone beside them).
   */
  'context': (Buffer);
  'w': (number);
  /**
   * As PutRequest's.
   */
  'requestId': (Buffer);
  /**
   * As PutRequest's.
   */
  'bucket': (string);
  'nodeConfirms': (number);
  'zoneConfirms': (number);
  'pw': (number);
}
