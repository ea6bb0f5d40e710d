// Original file: proto/ringkv/v1/admin.proto


export interface EndpointsRequest {
  'key'?: (Buffer | Uint8Array | string);
}

export interface EndpointsRequest__Output {
  'key': (Buffer);
}
