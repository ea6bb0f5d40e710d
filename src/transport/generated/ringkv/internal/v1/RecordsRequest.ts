// Original file: proto/ringkv/internal/v1/repair.proto


export interface RecordsRequest {
  'cluster'?: (string);
  'keys'?: (Buffer | Uint8Array | string)[];
}

export interface RecordsRequest__Output {
  'cluster': (string);
  'keys': (Buffer)[];
}
