// Original file: proto/ringkv/v1/admin.proto


export interface AdmitRequest {
}

export interface AdmitRequest__Output {
}
