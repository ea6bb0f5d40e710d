// Original file: proto/ringkv/v1/kv.proto


export interface SetReadRequest {
  'bucket'?: (string);
  'key'?: (Buffer | Uint8Array | string);
  /**
   * Elements after this one (the `next` of the previous page); empty: from the first.
   */
  'after'?: (Buffer | Uint8Array | string);
  /**
   * Elements per page, 1 to 1,000; 0: 1,000.
   */
  'limit'?: (number);
  /**
   * As GetRequest's.
   */
  'r'?: (number);
}

export interface SetReadRequest__Output {
  'bucket': (string);
  'key': (Buffer);
  /**
   * Elements after this one (the `next` of the previous page); empty: from the first.
   */
  'after': (Buffer);
  /**
   * Elements per page, 1 to 1,000; 0: 1,000.
   */
  'limit': (number);
  /**
   * As GetRequest's.
   */
  'r': (number);
}
