// Original file: proto/ringkv/v1/admin.proto


export interface DecommissionRequest {
  'cancel'?: (boolean);
}

export interface DecommissionRequest__Output {
  'cancel': (boolean);
}
