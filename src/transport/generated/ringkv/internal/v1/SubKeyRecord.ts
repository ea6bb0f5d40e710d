// Original file: proto/ringkv/internal/v1/replica.proto


/**
 * A sub-key and its record.
 */
export interface SubKeyRecord {
  'key'?: (Buffer | Uint8Array | string);
  'record'?: (Buffer | Uint8Array | string);
}

/**
 * A sub-key and its record.
 */
export interface SubKeyRecord__Output {
  'key': (Buffer);
  'record': (Buffer);
}
