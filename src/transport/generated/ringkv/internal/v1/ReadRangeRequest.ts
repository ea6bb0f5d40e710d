// Original file: proto/ringkv/internal/v1/replica.proto


/**
 * A page of parent's sub-keys in key order, as this replica holds them.
 */
export interface ReadRangeRequest {
  'parent'?: (Buffer | Uint8Array | string);
  /**
   * The previous page's next; unset: the first page.
   */
  'after'?: (Buffer | Uint8Array | string);
  /**
   * The most sub-keys to return: 1 to the store's MAX_RANGE_KEYS (1,000).
   */
  'limit'?: (number);
  '_after'?: "after";
}

/**
 * A page of parent's sub-keys in key order, as this replica holds them.
 */
export interface ReadRangeRequest__Output {
  'parent': (Buffer);
  /**
   * The previous page's next; unset: the first page.
   */
  'after'?: (Buffer);
  /**
   * The most sub-keys to return: 1 to the store's MAX_RANGE_KEYS (1,000).
   */
  'limit': (number);
}
