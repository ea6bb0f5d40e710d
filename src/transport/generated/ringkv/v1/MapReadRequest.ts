// Original file: proto/ringkv/v1/kv.proto


export interface MapReadRequest {
  'bucket'?: (string);
  'key'?: (Buffer | Uint8Array | string);
  /**
   * Entries after this token (the `next` of the previous page); empty: from the first.
   */
  'after'?: (Buffer | Uint8Array | string);
  /**
   * Entries per page, 1 to 1,000; 0: 1,000.
   */
  'limit'?: (number);
  /**
   * As GetRequest's.
   */
  'r'?: (number);
}

export interface MapReadRequest__Output {
  'bucket': (string);
  'key': (Buffer);
  /**
   * Entries after this token (the `next` of the previous page); empty: from the first.
   */
  'after': (Buffer);
  /**
   * Entries per page, 1 to 1,000; 0: 1,000.
   */
  'limit': (number);
  /**
   * As GetRequest's.
   */
  'r': (number);
}
