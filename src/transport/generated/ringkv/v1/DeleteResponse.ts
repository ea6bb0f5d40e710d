// Original file: proto/ringkv/v1/kv.proto


export interface DeleteResponse {
}

export interface DeleteResponse__Output {
}
