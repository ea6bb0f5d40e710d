// Original file: proto/ringkv/v1/admin.proto


export interface TransfersRequest {
}

export interface TransfersRequest__Output {
}
