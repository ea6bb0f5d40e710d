// Original file: proto/ringkv/internal/v1/repair.proto


export interface KeyHash {
  'key'?: (Buffer | Uint8Array | string);
  'hash'?: (string);
}

export interface KeyHash__Output {
  'key': (Buffer);
  'hash': (string);
}
