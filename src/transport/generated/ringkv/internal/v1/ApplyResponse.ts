// Original file: proto/ringkv/internal/v1/replica.proto


export interface ApplyResponse {
  'record'?: (Buffer | Uint8Array | string);
  'context'?: (Buffer | Uint8Array | string);
}

export interface ApplyResponse__Output {
  'record': (Buffer);
  'context': (Buffer);
}
