// Original file: proto/ringkv/v1/kv.proto


export interface SetUpdateResponse {
}

export interface SetUpdateResponse__Output {
}
