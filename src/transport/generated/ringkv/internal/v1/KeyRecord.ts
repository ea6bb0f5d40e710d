// Original file: proto/ringkv/internal/v1/repair.proto


export interface KeyRecord {
  'key'?: (Buffer | Uint8Array | string);
  'record'?: (Buffer | Uint8Array | string);
}

export interface KeyRecord__Output {
  'key': (Buffer);
  'record': (Buffer);
}
