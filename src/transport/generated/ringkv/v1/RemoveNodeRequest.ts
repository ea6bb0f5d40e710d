// Original file: proto/ringkv/v1/admin.proto


export interface RemoveNodeRequest {
  'id'?: (string);
}

export interface RemoveNodeRequest__Output {
  'id': (string);
}
