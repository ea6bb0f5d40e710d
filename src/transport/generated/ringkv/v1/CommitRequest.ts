// Original file: proto/ringkv/v1/admin.proto


export interface CommitRequest {
}

export interface CommitRequest__Output {
}
