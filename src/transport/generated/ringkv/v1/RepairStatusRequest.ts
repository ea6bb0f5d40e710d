// Original file: proto/ringkv/v1/admin.proto


export interface RepairStatusRequest {
}

export interface RepairStatusRequest__Output {
}
