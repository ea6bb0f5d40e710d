// Original file: proto/ringkv/internal/v1/replica.proto

import type { ApplyRequest as _ringkv_internal_v1_ApplyRequest, ApplyRequest__Output as _ringkv_internal_v1_ApplyRequest__Output } from '../../../ringkv/internal/v1/ApplyRequest.js';
import type { MergeRequest as _ringkv_internal_v1_MergeRequest, MergeRequest__Output as _ringkv_internal_v1_MergeRequest__Output } from '../../../ringkv/internal/v1/MergeRequest.js';
import type { ReadRequest as _ringkv_internal_v1_ReadRequest, ReadRequest__Output as _ringkv_internal_v1_ReadRequest__Output } from '../../../ringkv/internal/v1/ReadRequest.js';
import type { DigestRequest as _ringkv_internal_v1_DigestRequest, DigestRequest__Output as _ringkv_internal_v1_DigestRequest__Output } from '../../../ringkv/internal/v1/DigestRequest.js';

export interface ReplicaCall {
  /**
   * Chosen by the caller, unique among its calls in flight on this stream; the reply carries it.
   */
  'id'?: (number);
  /**
   * Time left before the call's deadline when it was sent, ms (as gRPC's grpc-timeout: the
   * receiver adds it to its own clock, so nodes' clocks need not agree). A call that
   * waited longer than that before it could run is not run.
   */
  'timeoutMs'?: (number);
  'apply'?: (_ringkv_internal_v1_ApplyRequest | null);
  'merge'?: (_ringkv_internal_v1_MergeRequest | null);
  'read'?: (_ringkv_internal_v1_ReadRequest | null);
  'digest'?: (_ringkv_internal_v1_DigestRequest | null);
  'op'?: "apply"|"merge"|"read"|"digest";
}

export interface ReplicaCall__Output {
  /**
   * Chosen by the caller, unique among its calls in flight on this stream; the reply carries it.
   */
  'id': (number);
  /**
   * Time left before the call's deadline when it was sent, ms (as gRPC's grpc-timeout: the
   * receiver adds it to its own clock, so nodes' clocks need not agree). A call that
   * waited longer than that before it could run is not run.
   */
  'timeoutMs': (number);
  'apply'?: (_ringkv_internal_v1_ApplyRequest__Output | null);
  'merge'?: (_ringkv_internal_v1_MergeRequest__Output | null);
  'read'?: (_ringkv_internal_v1_ReadRequest__Output | null);
  'digest'?: (_ringkv_internal_v1_DigestRequest__Output | null);
}
