// Original file: proto/ringkv/v1/admin.proto


export interface ClearRequest {
}

export interface ClearRequest__Output {
}
