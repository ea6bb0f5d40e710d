// Original file: proto/ringkv/internal/v1/replica.proto


export interface ReadResponse {
  'found'?: (boolean);
  'record'?: (Buffer | Uint8Array | string);
}

export interface ReadResponse__Output {
  'found': (boolean);
  'record': (Buffer);
}
