// Original file: proto/ringkv/v1/admin.proto


export interface ListBucketsRequest {
}

export interface ListBucketsRequest__Output {
}
