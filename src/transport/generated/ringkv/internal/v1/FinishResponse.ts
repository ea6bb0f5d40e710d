// Original file: proto/ringkv/internal/v1/repair.proto


export interface FinishResponse {
}

export interface FinishResponse__Output {
}
