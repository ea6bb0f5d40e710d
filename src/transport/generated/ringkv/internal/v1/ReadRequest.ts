// Original file: proto/ringkv/internal/v1/replica.proto


/**
 * The key's record as this node holds it (or its hint for hint_for).
 */
export interface ReadRequest {
  'key'?: (Buffer | Uint8Array | string);
  'hintFor'?: (string);
}

/**
 * The key's record as this node holds it (or its hint for hint_for).
 */
export interface ReadRequest__Output {
  'key': (Buffer);
  'hintFor': (string);
}
