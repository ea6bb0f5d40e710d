// Original file: node_modules/grpc-health-check/proto/health/v1/health.proto


export interface HealthListRequest {
}

export interface HealthListRequest__Output {
}
