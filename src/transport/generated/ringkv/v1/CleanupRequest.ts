// Original file: proto/ringkv/v1/admin.proto


export interface CleanupRequest {
}

export interface CleanupRequest__Output {
}
