// Original file: proto/ringkv/v1/kv.proto


export interface MapUpdateResponse {
}

export interface MapUpdateResponse__Output {
}
