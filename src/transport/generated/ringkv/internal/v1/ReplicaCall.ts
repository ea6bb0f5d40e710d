// Original file: proto/ringkv/internal/v1/replica.proto

import type { ApplyRequest as _ringkv_internal_v1_ApplyRequest, ApplyRequest__Output as _ringkv_internal_v1_ApplyRequest__Output } from '../../../ringkv/internal/v1/ApplyRequest.js';
import type { MergeRequest as _ringkv_internal_v1_MergeRequest, MergeRequest__Output as _ringkv_internal_v1_MergeRequest__Output } from '../../../ringkv/internal/v1/MergeRequest.js';
import type { ReadRequest as _ringkv_internal_v1_ReadRequest, ReadRequest__Output as _ringkv_internal_v1_ReadRequest__Output } from '../../../ringkv/internal/v1/ReadRequest.js';
import type { DigestRequest as _ringkv_internal_v1_DigestRequest, DigestRequest__Output as _ringkv_internal_v1_DigestRequest__Output } from '../../../ringkv/internal/v1/DigestRequest.js';
import type { CounterUpdateRequest as _ringkv_internal_v1_CounterUpdateRequest, CounterUpdateRequest__Output as _ringkv_internal_v1_CounterUpdateRequest__Output } from '../../../ringkv/internal/v1/CounterUpdateRequest.js';
import type { WriteManyRequest as _ringkv_internal_v1_WriteManyRequest, WriteManyRequest__Output as _ringkv_internal_v1_WriteManyRequest__Output } from '../../../ringkv/internal/v1/WriteManyRequest.js';
import type { ReadRangeRequest as _ringkv_internal_v1_ReadRangeRequest, ReadRangeRequest__Output as _ringkv_internal_v1_ReadRangeRequest__Output } from '../../../ringkv/internal/v1/ReadRangeRequest.js';
import type { PaxosRequest as _ringkv_internal_v1_PaxosRequest, PaxosRequest__Output as _ringkv_internal_v1_PaxosRequest__Output } from '../../../ringkv/internal/v1/PaxosRequest.js';
import type { StepRequest as _ringkv_internal_v1_StepRequest, StepRequest__Output as _ringkv_internal_v1_StepRequest__Output } from '../../../ringkv/internal/v1/StepRequest.js';

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
  /**
   * The data types' calls (issue 30). A node of an older release does not know them:
   * replica-wire.ts sends them on a stream of their own, so that the older node's
   * refusal (it breaks that stream) fails only them, each as RK_UNSUPPORTED.
   */
  'counterUpdate'?: (_ringkv_internal_v1_CounterUpdateRequest | null);
  'writeMany'?: (_ringkv_internal_v1_WriteManyRequest | null);
  'readRange'?: (_ringkv_internal_v1_ReadRangeRequest | null);
  /**
   * Compare-and-set's Paxos steps (issue 31), on the data types' stream too. Sent by
   * releases before kinds' steps; still served.
   */
  'paxos'?: (_ringkv_internal_v1_PaxosRequest | null);
  /**
   * A step of a kind of record (compare-and-set's Paxos steps among them), on
   * the data types' stream.
   */
  'step'?: (_ringkv_internal_v1_StepRequest | null);
  'op'?: "apply"|"merge"|"read"|"digest"|"counterUpdate"|"writeMany"|"readRange"|"paxos"|"step";
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
  /**
   * The data types' calls (issue 30). A node of an older release does not know them:
   * replica-wire.ts sends them on a stream of their own, so that the older node's
   * refusal (it breaks that stream) fails only them, each as RK_UNSUPPORTED.
   */
  'counterUpdate'?: (_ringkv_internal_v1_CounterUpdateRequest__Output | null);
  'writeMany'?: (_ringkv_internal_v1_WriteManyRequest__Output | null);
  'readRange'?: (_ringkv_internal_v1_ReadRangeRequest__Output | null);
  /**
   * Compare-and-set's Paxos steps (issue 31), on the data types' stream too. Sent by
   * releases before kinds' steps; still served.
   */
  'paxos'?: (_ringkv_internal_v1_PaxosRequest__Output | null);
  /**
   * A step of a kind of record (compare-and-set's Paxos steps among them), on
   * the data types' stream.
   */
  'step'?: (_ringkv_internal_v1_StepRequest__Output | null);
}
