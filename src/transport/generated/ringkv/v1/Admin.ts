// Original file: proto/ringkv/v1/admin.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AdmitRequest as _ringkv_v1_AdmitRequest, AdmitRequest__Output as _ringkv_v1_AdmitRequest__Output } from '../../ringkv/v1/AdmitRequest.js';
import type { BucketDeletionReply as _ringkv_v1_BucketDeletionReply, BucketDeletionReply__Output as _ringkv_v1_BucketDeletionReply__Output } from '../../ringkv/v1/BucketDeletionReply.js';
import type { BucketReply as _ringkv_v1_BucketReply, BucketReply__Output as _ringkv_v1_BucketReply__Output } from '../../ringkv/v1/BucketReply.js';
import type { BucketRequest as _ringkv_v1_BucketRequest, BucketRequest__Output as _ringkv_v1_BucketRequest__Output } from '../../ringkv/v1/BucketRequest.js';
import type { CleanupRequest as _ringkv_v1_CleanupRequest, CleanupRequest__Output as _ringkv_v1_CleanupRequest__Output } from '../../ringkv/v1/CleanupRequest.js';
import type { CleanupResponse as _ringkv_v1_CleanupResponse, CleanupResponse__Output as _ringkv_v1_CleanupResponse__Output } from '../../ringkv/v1/CleanupResponse.js';
import type { ClearRequest as _ringkv_v1_ClearRequest, ClearRequest__Output as _ringkv_v1_ClearRequest__Output } from '../../ringkv/v1/ClearRequest.js';
import type { CommitRequest as _ringkv_v1_CommitRequest, CommitRequest__Output as _ringkv_v1_CommitRequest__Output } from '../../ringkv/v1/CommitRequest.js';
import type { DecommissionRequest as _ringkv_v1_DecommissionRequest, DecommissionRequest__Output as _ringkv_v1_DecommissionRequest__Output } from '../../ringkv/v1/DecommissionRequest.js';
import type { DeleteBucketRequest as _ringkv_v1_DeleteBucketRequest, DeleteBucketRequest__Output as _ringkv_v1_DeleteBucketRequest__Output } from '../../ringkv/v1/DeleteBucketRequest.js';
import type { EndpointsRequest as _ringkv_v1_EndpointsRequest, EndpointsRequest__Output as _ringkv_v1_EndpointsRequest__Output } from '../../ringkv/v1/EndpointsRequest.js';
import type { EndpointsResponse as _ringkv_v1_EndpointsResponse, EndpointsResponse__Output as _ringkv_v1_EndpointsResponse__Output } from '../../ringkv/v1/EndpointsResponse.js';
import type { ListBucketsRequest as _ringkv_v1_ListBucketsRequest, ListBucketsRequest__Output as _ringkv_v1_ListBucketsRequest__Output } from '../../ringkv/v1/ListBucketsRequest.js';
import type { ListBucketsResponse as _ringkv_v1_ListBucketsResponse, ListBucketsResponse__Output as _ringkv_v1_ListBucketsResponse__Output } from '../../ringkv/v1/ListBucketsResponse.js';
import type { MovementReply as _ringkv_v1_MovementReply, MovementReply__Output as _ringkv_v1_MovementReply__Output } from '../../ringkv/v1/MovementReply.js';
import type { PlanRequest as _ringkv_v1_PlanRequest, PlanRequest__Output as _ringkv_v1_PlanRequest__Output } from '../../ringkv/v1/PlanRequest.js';
import type { PlanResponse as _ringkv_v1_PlanResponse, PlanResponse__Output as _ringkv_v1_PlanResponse__Output } from '../../ringkv/v1/PlanResponse.js';
import type { RemoveNodeRequest as _ringkv_v1_RemoveNodeRequest, RemoveNodeRequest__Output as _ringkv_v1_RemoveNodeRequest__Output } from '../../ringkv/v1/RemoveNodeRequest.js';
import type { RepairRequest as _ringkv_v1_RepairRequest, RepairRequest__Output as _ringkv_v1_RepairRequest__Output } from '../../ringkv/v1/RepairRequest.js';
import type { RepairStatusRequest as _ringkv_v1_RepairStatusRequest, RepairStatusRequest__Output as _ringkv_v1_RepairStatusRequest__Output } from '../../ringkv/v1/RepairStatusRequest.js';
import type { RepairStatusResponse as _ringkv_v1_RepairStatusResponse, RepairStatusResponse__Output as _ringkv_v1_RepairStatusResponse__Output } from '../../ringkv/v1/RepairStatusResponse.js';
import type { RingRequest as _ringkv_v1_RingRequest, RingRequest__Output as _ringkv_v1_RingRequest__Output } from '../../ringkv/v1/RingRequest.js';
import type { RingResponse as _ringkv_v1_RingResponse, RingResponse__Output as _ringkv_v1_RingResponse__Output } from '../../ringkv/v1/RingResponse.js';
import type { SetClockOffsetRequest as _ringkv_v1_SetClockOffsetRequest, SetClockOffsetRequest__Output as _ringkv_v1_SetClockOffsetRequest__Output } from '../../ringkv/v1/SetClockOffsetRequest.js';
import type { SetClockOffsetResponse as _ringkv_v1_SetClockOffsetResponse, SetClockOffsetResponse__Output as _ringkv_v1_SetClockOffsetResponse__Output } from '../../ringkv/v1/SetClockOffsetResponse.js';
import type { StatusRequest as _ringkv_v1_StatusRequest, StatusRequest__Output as _ringkv_v1_StatusRequest__Output } from '../../ringkv/v1/StatusRequest.js';
import type { StatusResponse as _ringkv_v1_StatusResponse, StatusResponse__Output as _ringkv_v1_StatusResponse__Output } from '../../ringkv/v1/StatusResponse.js';
import type { TransfersRequest as _ringkv_v1_TransfersRequest, TransfersRequest__Output as _ringkv_v1_TransfersRequest__Output } from '../../ringkv/v1/TransfersRequest.js';
import type { TransfersResponse as _ringkv_v1_TransfersResponse, TransfersResponse__Output as _ringkv_v1_TransfersResponse__Output } from '../../ringkv/v1/TransfersResponse.js';

export interface AdminClient extends grpc.Client {
  /**
   * Admit the answering node, a standby started with --join manual: it joins now.
   */
  Admit(argument: _ringkv_v1_AdmitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  Admit(argument: _ringkv_v1_AdmitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  Admit(argument: _ringkv_v1_AdmitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  Admit(argument: _ringkv_v1_AdmitRequest, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  /**
   * Admit the answering node, a standby started with --join manual: it joins now.
   */
  admit(argument: _ringkv_v1_AdmitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  admit(argument: _ringkv_v1_AdmitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  admit(argument: _ringkv_v1_AdmitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  admit(argument: _ringkv_v1_AdmitRequest, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Delete the data the answering node holds for ranges it no longer replicates (after
   * nodes joined). FAILED_PRECONDITION while a topology change is in progress.
   */
  Cleanup(argument: _ringkv_v1_CleanupRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CleanupResponse__Output>): grpc.ClientUnaryCall;
  Cleanup(argument: _ringkv_v1_CleanupRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_CleanupResponse__Output>): grpc.ClientUnaryCall;
  Cleanup(argument: _ringkv_v1_CleanupRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CleanupResponse__Output>): grpc.ClientUnaryCall;
  Cleanup(argument: _ringkv_v1_CleanupRequest, callback: grpc.requestCallback<_ringkv_v1_CleanupResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Delete the data the answering node holds for ranges it no longer replicates (after
   * nodes joined). FAILED_PRECONDITION while a topology change is in progress.
   */
  cleanup(argument: _ringkv_v1_CleanupRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CleanupResponse__Output>): grpc.ClientUnaryCall;
  cleanup(argument: _ringkv_v1_CleanupRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_CleanupResponse__Output>): grpc.ClientUnaryCall;
  cleanup(argument: _ringkv_v1_CleanupRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_CleanupResponse__Output>): grpc.ClientUnaryCall;
  cleanup(argument: _ringkv_v1_CleanupRequest, callback: grpc.requestCallback<_ringkv_v1_CleanupResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Discard the staged changes.
   */
  Clear(argument: _ringkv_v1_ClearRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  Clear(argument: _ringkv_v1_ClearRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  Clear(argument: _ringkv_v1_ClearRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  Clear(argument: _ringkv_v1_ClearRequest, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Discard the staged changes.
   */
  clear(argument: _ringkv_v1_ClearRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  clear(argument: _ringkv_v1_ClearRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  clear(argument: _ringkv_v1_ClearRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  clear(argument: _ringkv_v1_ClearRequest, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Execute the staged changes, one after another. ABORTED when the ring changed since
   * they were planned; FAILED_PRECONDITION when nothing is staged or a change is running.
   */
  Commit(argument: _ringkv_v1_CommitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  Commit(argument: _ringkv_v1_CommitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  Commit(argument: _ringkv_v1_CommitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  Commit(argument: _ringkv_v1_CommitRequest, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Execute the staged changes, one after another. ABORTED when the ring changed since
   * they were planned; FAILED_PRECONDITION when nothing is staged or a change is running.
   */
  commit(argument: _ringkv_v1_CommitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  commit(argument: _ringkv_v1_CommitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  commit(argument: _ringkv_v1_CommitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  commit(argument: _ringkv_v1_CommitRequest, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Create a bucket with its properties (docs/reads-and-writes.md#buckets). ALREADY_EXISTS
   * when this node knows the bucket; INVALID_ARGUMENT for a bad name or property;
   * FAILED_PRECONDITION while a member runs a release without buckets. Returns once every
   * up member has the new table, or after a few seconds with the members that have not
   * (the change is durable on this node and reaches them by gossip).
   */
  CreateBucket(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  CreateBucket(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  CreateBucket(argument: _ringkv_v1_BucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  CreateBucket(argument: _ringkv_v1_BucketRequest, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  /**
   * Create a bucket with its properties (docs/reads-and-writes.md#buckets). ALREADY_EXISTS
   * when this node knows the bucket; INVALID_ARGUMENT for a bad name or property;
   * FAILED_PRECONDITION while a member runs a release without buckets. Returns once every
   * up member has the new table, or after a few seconds with the members that have not
   * (the change is durable on this node and reaches them by gossip).
   */
  createBucket(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  createBucket(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  createBucket(argument: _ringkv_v1_BucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  createBucket(argument: _ringkv_v1_BucketRequest, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Decommission the node that answers: it goes `leaving`, the nodes that gain its ranges
   * pull them, then it goes `left` and exits. Returns once started; watch Transfers.
   * With cancel, withdraw a decommission that has not finished. FAILED_PRECONDITION when
   * another topology change is in progress or the node is not normal.
   */
  Decommission(argument: _ringkv_v1_DecommissionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  Decommission(argument: _ringkv_v1_DecommissionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  Decommission(argument: _ringkv_v1_DecommissionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  Decommission(argument: _ringkv_v1_DecommissionRequest, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  /**
   * Decommission the node that answers: it goes `leaving`, the nodes that gain its ranges
   * pull them, then it goes `left` and exits. Returns once started; watch Transfers.
   * With cancel, withdraw a decommission that has not finished. FAILED_PRECONDITION when
   * another topology change is in progress or the node is not normal.
   */
  decommission(argument: _ringkv_v1_DecommissionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  decommission(argument: _ringkv_v1_DecommissionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  decommission(argument: _ringkv_v1_DecommissionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  decommission(argument: _ringkv_v1_DecommissionRequest, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Delete a bucket (docs/reads-and-writes.md#deleting-a-bucket): from then on its name is
   * unknown to every request, and every member deletes the bucket's keys and the hints it
   * holds of them. Without `purge`, FAILED_PRECONDITION (BK_NOT_EMPTY) while a member holds
   * a key of it, or cannot be asked. NOT_FOUND for an unknown bucket; INVALID_ARGUMENT for
   * the default bucket. Answers where the purge stands (GetBucketDeletion).
   */
  DeleteBucket(argument: _ringkv_v1_DeleteBucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  DeleteBucket(argument: _ringkv_v1_DeleteBucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  DeleteBucket(argument: _ringkv_v1_DeleteBucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  DeleteBucket(argument: _ringkv_v1_DeleteBucketRequest, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  /**
   * Delete a bucket (docs/reads-and-writes.md#deleting-a-bucket): from then on its name is
   * unknown to every request, and every member deletes the bucket's keys and the hints it
   * holds of them. Without `purge`, FAILED_PRECONDITION (BK_NOT_EMPTY) while a member holds
   * a key of it, or cannot be asked. NOT_FOUND for an unknown bucket; INVALID_ARGUMENT for
   * the default bucket. Answers where the purge stands (GetBucketDeletion).
   */
  deleteBucket(argument: _ringkv_v1_DeleteBucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  deleteBucket(argument: _ringkv_v1_DeleteBucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  deleteBucket(argument: _ringkv_v1_DeleteBucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  deleteBucket(argument: _ringkv_v1_DeleteBucketRequest, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Where a key lives: its token, its replicas and, for those this node thinks down, the
   * fallbacks a write would go to now (like nodetool getendpoints).
   * FAILED_PRECONDITION while no member owns tokens.
   */
  Endpoints(argument: _ringkv_v1_EndpointsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_EndpointsResponse__Output>): grpc.ClientUnaryCall;
  Endpoints(argument: _ringkv_v1_EndpointsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_EndpointsResponse__Output>): grpc.ClientUnaryCall;
  Endpoints(argument: _ringkv_v1_EndpointsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_EndpointsResponse__Output>): grpc.ClientUnaryCall;
  Endpoints(argument: _ringkv_v1_EndpointsRequest, callback: grpc.requestCallback<_ringkv_v1_EndpointsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Where a key lives: its token, its replicas and, for those this node thinks down, the
   * fallbacks a write would go to now (like nodetool getendpoints).
   * FAILED_PRECONDITION while no member owns tokens.
   */
  endpoints(argument: _ringkv_v1_EndpointsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_EndpointsResponse__Output>): grpc.ClientUnaryCall;
  endpoints(argument: _ringkv_v1_EndpointsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_EndpointsResponse__Output>): grpc.ClientUnaryCall;
  endpoints(argument: _ringkv_v1_EndpointsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_EndpointsResponse__Output>): grpc.ClientUnaryCall;
  endpoints(argument: _ringkv_v1_EndpointsRequest, callback: grpc.requestCallback<_ringkv_v1_EndpointsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * One bucket's properties as the answering node has them; NOT_FOUND for an unknown one.
   */
  GetBucket(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  GetBucket(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  GetBucket(argument: _ringkv_v1_BucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  GetBucket(argument: _ringkv_v1_BucketRequest, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  /**
   * One bucket's properties as the answering node has them; NOT_FOUND for an unknown one.
   */
  getBucket(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  getBucket(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  getBucket(argument: _ringkv_v1_BucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  getBucket(argument: _ringkv_v1_BucketRequest, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Where a deleted bucket's purge stands: the members that have deleted its keys and those
   * that have not yet. The name can be created again once none is pending. NOT_FOUND when
   * the bucket is not deleted.
   */
  GetBucketDeletion(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  GetBucketDeletion(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  GetBucketDeletion(argument: _ringkv_v1_BucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  GetBucketDeletion(argument: _ringkv_v1_BucketRequest, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  /**
   * Where a deleted bucket's purge stands: the members that have deleted its keys and those
   * that have not yet. The name can be created again once none is pending. NOT_FOUND when
   * the bucket is not deleted.
   */
  getBucketDeletion(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  getBucketDeletion(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  getBucketDeletion(argument: _ringkv_v1_BucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  getBucketDeletion(argument: _ringkv_v1_BucketRequest, callback: grpc.requestCallback<_ringkv_v1_BucketDeletionReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Every bucket the answering node knows, the default bucket first.
   */
  ListBuckets(argument: _ringkv_v1_ListBucketsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  ListBuckets(argument: _ringkv_v1_ListBucketsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  ListBuckets(argument: _ringkv_v1_ListBucketsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  ListBuckets(argument: _ringkv_v1_ListBucketsRequest, callback: grpc.requestCallback<_ringkv_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Every bucket the answering node knows, the default bucket first.
   */
  listBuckets(argument: _ringkv_v1_ListBucketsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  listBuckets(argument: _ringkv_v1_ListBucketsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  listBuckets(argument: _ringkv_v1_ListBucketsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  listBuckets(argument: _ringkv_v1_ListBucketsRequest, callback: grpc.requestCallback<_ringkv_v1_ListBucketsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Stage topology changes on the answering node (Riak's cluster plan) and return what the
   * staged changes would move; nothing changes. With no changes, show what is staged.
   * INVALID_ARGUMENT for a change that cannot be made (unknown node, not a standby, ...).
   */
  Plan(argument: _ringkv_v1_PlanRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  Plan(argument: _ringkv_v1_PlanRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  Plan(argument: _ringkv_v1_PlanRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  Plan(argument: _ringkv_v1_PlanRequest, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Stage topology changes on the answering node (Riak's cluster plan) and return what the
   * staged changes would move; nothing changes. With no changes, show what is staged.
   * INVALID_ARGUMENT for a change that cannot be made (unknown node, not a standby, ...).
   */
  plan(argument: _ringkv_v1_PlanRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  plan(argument: _ringkv_v1_PlanRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  plan(argument: _ringkv_v1_PlanRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  plan(argument: _ringkv_v1_PlanRequest, callback: grpc.requestCallback<_ringkv_v1_PlanResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Remove a member that is down for good: the nodes that gain its ranges pull them from
   * the surviving replicas, driven by the node that answers. FAILED_PRECONDITION when the
   * member is up, unknown, or another topology change is in progress.
   */
  RemoveNode(argument: _ringkv_v1_RemoveNodeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  RemoveNode(argument: _ringkv_v1_RemoveNodeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  RemoveNode(argument: _ringkv_v1_RemoveNodeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  RemoveNode(argument: _ringkv_v1_RemoveNodeRequest, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  /**
   * Remove a member that is down for good: the nodes that gain its ranges pull them from
   * the surviving replicas, driven by the node that answers. FAILED_PRECONDITION when the
   * member is up, unknown, or another topology change is in progress.
   */
  removeNode(argument: _ringkv_v1_RemoveNodeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  removeNode(argument: _ringkv_v1_RemoveNodeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  removeNode(argument: _ringkv_v1_RemoveNodeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  removeNode(argument: _ringkv_v1_RemoveNodeRequest, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Start an anti-entropy repair of the ranges the answering node replicates (those that
   * overlap `start`-`end` when given): each is compared with all its other replicas by
   * Merkle tree and only differing records are exchanged. Returns once started; watch
   * RepairStatus. FAILED_PRECONDITION while a repair runs or the node owns no range;
   * INVALID_ARGUMENT for a malformed range.
   */
  Repair(argument: _ringkv_v1_RepairRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  Repair(argument: _ringkv_v1_RepairRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  Repair(argument: _ringkv_v1_RepairRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  Repair(argument: _ringkv_v1_RepairRequest, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Start an anti-entropy repair of the ranges the answering node replicates (those that
   * overlap `start`-`end` when given): each is compared with all its other replicas by
   * Merkle tree and only differing records are exchanged. Returns once started; watch
   * RepairStatus. FAILED_PRECONDITION while a repair runs or the node owns no range;
   * INVALID_ARGUMENT for a malformed range.
   */
  repair(argument: _ringkv_v1_RepairRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  repair(argument: _ringkv_v1_RepairRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  repair(argument: _ringkv_v1_RepairRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  repair(argument: _ringkv_v1_RepairRequest, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The repair running on the answering node, or its last one.
   */
  RepairStatus(argument: _ringkv_v1_RepairStatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  RepairStatus(argument: _ringkv_v1_RepairStatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  RepairStatus(argument: _ringkv_v1_RepairStatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  RepairStatus(argument: _ringkv_v1_RepairStatusRequest, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The repair running on the answering node, or its last one.
   */
  repairStatus(argument: _ringkv_v1_RepairStatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  repairStatus(argument: _ringkv_v1_RepairStatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  repairStatus(argument: _ringkv_v1_RepairStatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  repairStatus(argument: _ringkv_v1_RepairStatusRequest, callback: grpc.requestCallback<_ringkv_v1_RepairStatusResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The token ranges of the ring this node derived from gossip, with their replicas.
   * FAILED_PRECONDITION while no member owns tokens.
   */
  Ring(argument: _ringkv_v1_RingRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_RingResponse__Output>): grpc.ClientUnaryCall;
  Ring(argument: _ringkv_v1_RingRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_RingResponse__Output>): grpc.ClientUnaryCall;
  Ring(argument: _ringkv_v1_RingRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_RingResponse__Output>): grpc.ClientUnaryCall;
  Ring(argument: _ringkv_v1_RingRequest, callback: grpc.requestCallback<_ringkv_v1_RingResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The token ranges of the ring this node derived from gossip, with their replicas.
   * FAILED_PRECONDITION while no member owns tokens.
   */
  ring(argument: _ringkv_v1_RingRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_RingResponse__Output>): grpc.ClientUnaryCall;
  ring(argument: _ringkv_v1_RingRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_RingResponse__Output>): grpc.ClientUnaryCall;
  ring(argument: _ringkv_v1_RingRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_RingResponse__Output>): grpc.ClientUnaryCall;
  ring(argument: _ringkv_v1_RingRequest, callback: grpc.requestCallback<_ringkv_v1_RingResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Change the properties named in `set` of an existing bucket; NOT_FOUND for an unknown
   * one; FAILED_PRECONDITION for a change of n (create a new bucket instead). Of two
   * operators changing one property at once, the later write wins (docs).
   */
  SetBucket(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  SetBucket(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  SetBucket(argument: _ringkv_v1_BucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  SetBucket(argument: _ringkv_v1_BucketRequest, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  /**
   * Change the properties named in `set` of an existing bucket; NOT_FOUND for an unknown
   * one; FAILED_PRECONDITION for a change of n (create a new bucket instead). Of two
   * operators changing one property at once, the later write wins (docs).
   */
  setBucket(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  setBucket(argument: _ringkv_v1_BucketRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  setBucket(argument: _ringkv_v1_BucketRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  setBucket(argument: _ringkv_v1_BucketRequest, callback: grpc.requestCallback<_ringkv_v1_BucketReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Fault injection only: set the offset added to the answering node's wall clock (what
   * generations, tombstone times and repair times read), as test/jepsen's clock nemesis
   * does. FAILED_PRECONDITION unless the node was started with --fault-injection on;
   * INVALID_ARGUMENT beyond a day either way.
   */
  SetClockOffset(argument: _ringkv_v1_SetClockOffsetRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetClockOffsetResponse__Output>): grpc.ClientUnaryCall;
  SetClockOffset(argument: _ringkv_v1_SetClockOffsetRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_SetClockOffsetResponse__Output>): grpc.ClientUnaryCall;
  SetClockOffset(argument: _ringkv_v1_SetClockOffsetRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetClockOffsetResponse__Output>): grpc.ClientUnaryCall;
  SetClockOffset(argument: _ringkv_v1_SetClockOffsetRequest, callback: grpc.requestCallback<_ringkv_v1_SetClockOffsetResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Fault injection only: set the offset added to the answering node's wall clock (what
   * generations, tombstone times and repair times read), as test/jepsen's clock nemesis
   * does. FAILED_PRECONDITION unless the node was started with --fault-injection on;
   * INVALID_ARGUMENT beyond a day either way.
   */
  setClockOffset(argument: _ringkv_v1_SetClockOffsetRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetClockOffsetResponse__Output>): grpc.ClientUnaryCall;
  setClockOffset(argument: _ringkv_v1_SetClockOffsetRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_SetClockOffsetResponse__Output>): grpc.ClientUnaryCall;
  setClockOffset(argument: _ringkv_v1_SetClockOffsetRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_SetClockOffsetResponse__Output>): grpc.ClientUnaryCall;
  setClockOffset(argument: _ringkv_v1_SetClockOffsetRequest, callback: grpc.requestCallback<_ringkv_v1_SetClockOffsetResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Every member this node knows, with its own up/down opinion of each.
   */
  Status(argument: _ringkv_v1_StatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  Status(argument: _ringkv_v1_StatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  Status(argument: _ringkv_v1_StatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  Status(argument: _ringkv_v1_StatusRequest, callback: grpc.requestCallback<_ringkv_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Every member this node knows, with its own up/down opinion of each.
   */
  status(argument: _ringkv_v1_StatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  status(argument: _ringkv_v1_StatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  status(argument: _ringkv_v1_StatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  status(argument: _ringkv_v1_StatusRequest, callback: grpc.requestCallback<_ringkv_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Ranges the answering node is pulling or sending, and the topology change it drives.
   */
  Transfers(argument: _ringkv_v1_TransfersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  Transfers(argument: _ringkv_v1_TransfersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  Transfers(argument: _ringkv_v1_TransfersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  Transfers(argument: _ringkv_v1_TransfersRequest, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Ranges the answering node is pulling or sending, and the topology change it drives.
   */
  transfers(argument: _ringkv_v1_TransfersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  transfers(argument: _ringkv_v1_TransfersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  transfers(argument: _ringkv_v1_TransfersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  transfers(argument: _ringkv_v1_TransfersRequest, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface AdminHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Admit the answering node, a standby started with --join manual: it joins now.
   */
  Admit: grpc.handleUnaryCall<_ringkv_v1_AdmitRequest__Output, _ringkv_v1_MovementReply>;
  
  /**
   * Delete the data the answering node holds for ranges it no longer replicates (after
   * nodes joined). FAILED_PRECONDITION while a topology change is in progress.
   */
  Cleanup: grpc.handleUnaryCall<_ringkv_v1_CleanupRequest__Output, _ringkv_v1_CleanupResponse>;
  
  /**
   * Discard the staged changes.
   */
  Clear: grpc.handleUnaryCall<_ringkv_v1_ClearRequest__Output, _ringkv_v1_PlanResponse>;
  
  /**
   * Execute the staged changes, one after another. ABORTED when the ring changed since
   * they were planned; FAILED_PRECONDITION when nothing is staged or a change is running.
   */
  Commit: grpc.handleUnaryCall<_ringkv_v1_CommitRequest__Output, _ringkv_v1_PlanResponse>;
  
  /**
   * Create a bucket with its properties (docs/reads-and-writes.md#buckets). ALREADY_EXISTS
   * when this node knows the bucket; INVALID_ARGUMENT for a bad name or property;
   * FAILED_PRECONDITION while a member runs a release without buckets. Returns once every
   * up member has the new table, or after a few seconds with the members that have not
   * (the change is durable on this node and reaches them by gossip).
   */
  CreateBucket: grpc.handleUnaryCall<_ringkv_v1_BucketRequest__Output, _ringkv_v1_BucketReply>;
  
  /**
   * Decommission the node that answers: it goes `leaving`, the nodes that gain its ranges
   * pull them, then it goes `left` and exits. Returns once started; watch Transfers.
   * With cancel, withdraw a decommission that has not finished. FAILED_PRECONDITION when
   * another topology change is in progress or the node is not normal.
   */
  Decommission: grpc.handleUnaryCall<_ringkv_v1_DecommissionRequest__Output, _ringkv_v1_MovementReply>;
  
  /**
   * Delete a bucket (docs/reads-and-writes.md#deleting-a-bucket): from then on its name is
   * unknown to every request, and every member deletes the bucket's keys and the hints it
   * holds of them. Without `purge`, FAILED_PRECONDITION (BK_NOT_EMPTY) while a member holds
   * a key of it, or cannot be asked. NOT_FOUND for an unknown bucket; INVALID_ARGUMENT for
   * the default bucket. Answers where the purge stands (GetBucketDeletion).
   */
  DeleteBucket: grpc.handleUnaryCall<_ringkv_v1_DeleteBucketRequest__Output, _ringkv_v1_BucketDeletionReply>;
  
  /**
   * Where a key lives: its token, its replicas and, for those this node thinks down, the
   * fallbacks a write would go to now (like nodetool getendpoints).
   * FAILED_PRECONDITION while no member owns tokens.
   */
  Endpoints: grpc.handleUnaryCall<_ringkv_v1_EndpointsRequest__Output, _ringkv_v1_EndpointsResponse>;
  
  /**
   * One bucket's properties as the answering node has them; NOT_FOUND for an unknown one.
   */
  GetBucket: grpc.handleUnaryCall<_ringkv_v1_BucketRequest__Output, _ringkv_v1_BucketReply>;
  
  /**
   * Where a deleted bucket's purge stands: the members that have deleted its keys and those
   * that have not yet. The name can be created again once none is pending. NOT_FOUND when
   * the bucket is not deleted.
   */
  GetBucketDeletion: grpc.handleUnaryCall<_ringkv_v1_BucketRequest__Output, _ringkv_v1_BucketDeletionReply>;
  
  /**
   * Every bucket the answering node knows, the default bucket first.
   */
  ListBuckets: grpc.handleUnaryCall<_ringkv_v1_ListBucketsRequest__Output, _ringkv_v1_ListBucketsResponse>;
  
  /**
   * Stage topology changes on the answering node (Riak's cluster plan) and return what the
   * staged changes would move; nothing changes. With no changes, show what is staged.
   * INVALID_ARGUMENT for a change that cannot be made (unknown node, not a standby, ...).
   */
  Plan: grpc.handleUnaryCall<_ringkv_v1_PlanRequest__Output, _ringkv_v1_PlanResponse>;
  
  /**
   * Remove a member that is down for good: the nodes that gain its ranges pull them from
   * the surviving replicas, driven by the node that answers. FAILED_PRECONDITION when the
   * member is up, unknown, or another topology change is in progress.
   */
  RemoveNode: grpc.handleUnaryCall<_ringkv_v1_RemoveNodeRequest__Output, _ringkv_v1_MovementReply>;
  
  /**
   * Start an anti-entropy repair of the ranges the answering node replicates (those that
   * overlap `start`-`end` when given): each is compared with all its other replicas by
   * Merkle tree and only differing records are exchanged. Returns once started; watch
   * RepairStatus. FAILED_PRECONDITION while a repair runs or the node owns no range;
   * INVALID_ARGUMENT for a malformed range.
   */
  Repair: grpc.handleUnaryCall<_ringkv_v1_RepairRequest__Output, _ringkv_v1_RepairStatusResponse>;
  
  /**
   * The repair running on the answering node, or its last one.
   */
  RepairStatus: grpc.handleUnaryCall<_ringkv_v1_RepairStatusRequest__Output, _ringkv_v1_RepairStatusResponse>;
  
  /**
   * The token ranges of the ring this node derived from gossip, with their replicas.
   * FAILED_PRECONDITION while no member owns tokens.
   */
  Ring: grpc.handleUnaryCall<_ringkv_v1_RingRequest__Output, _ringkv_v1_RingResponse>;
  
  /**
   * Change the properties named in `set` of an existing bucket; NOT_FOUND for an unknown
   * one; FAILED_PRECONDITION for a change of n (create a new bucket instead). Of two
   * operators changing one property at once, the later write wins (docs).
   */
  SetBucket: grpc.handleUnaryCall<_ringkv_v1_BucketRequest__Output, _ringkv_v1_BucketReply>;
  
  /**
   * Fault injection only: set the offset added to the answering node's wall clock (what
   * generations, tombstone times and repair times read), as test/jepsen's clock nemesis
   * does. FAILED_PRECONDITION unless the node was started with --fault-injection on;
   * INVALID_ARGUMENT beyond a day either way.
   */
  SetClockOffset: grpc.handleUnaryCall<_ringkv_v1_SetClockOffsetRequest__Output, _ringkv_v1_SetClockOffsetResponse>;
  
  /**
   * Every member this node knows, with its own up/down opinion of each.
   */
  Status: grpc.handleUnaryCall<_ringkv_v1_StatusRequest__Output, _ringkv_v1_StatusResponse>;
  
  /**
   * Ranges the answering node is pulling or sending, and the topology change it drives.
   */
  Transfers: grpc.handleUnaryCall<_ringkv_v1_TransfersRequest__Output, _ringkv_v1_TransfersResponse>;
  
}

export interface AdminDefinition extends grpc.ServiceDefinition {
  Admit: MethodDefinition<_ringkv_v1_AdmitRequest, _ringkv_v1_MovementReply, _ringkv_v1_AdmitRequest__Output, _ringkv_v1_MovementReply__Output>
  Cleanup: MethodDefinition<_ringkv_v1_CleanupRequest, _ringkv_v1_CleanupResponse, _ringkv_v1_CleanupRequest__Output, _ringkv_v1_CleanupResponse__Output>
  Clear: MethodDefinition<_ringkv_v1_ClearRequest, _ringkv_v1_PlanResponse, _ringkv_v1_ClearRequest__Output, _ringkv_v1_PlanResponse__Output>
  Commit: MethodDefinition<_ringkv_v1_CommitRequest, _ringkv_v1_PlanResponse, _ringkv_v1_CommitRequest__Output, _ringkv_v1_PlanResponse__Output>
  CreateBucket: MethodDefinition<_ringkv_v1_BucketRequest, _ringkv_v1_BucketReply, _ringkv_v1_BucketRequest__Output, _ringkv_v1_BucketReply__Output>
  Decommission: MethodDefinition<_ringkv_v1_DecommissionRequest, _ringkv_v1_MovementReply, _ringkv_v1_DecommissionRequest__Output, _ringkv_v1_MovementReply__Output>
  DeleteBucket: MethodDefinition<_ringkv_v1_DeleteBucketRequest, _ringkv_v1_BucketDeletionReply, _ringkv_v1_DeleteBucketRequest__Output, _ringkv_v1_BucketDeletionReply__Output>
  Endpoints: MethodDefinition<_ringkv_v1_EndpointsRequest, _ringkv_v1_EndpointsResponse, _ringkv_v1_EndpointsRequest__Output, _ringkv_v1_EndpointsResponse__Output>
  GetBucket: MethodDefinition<_ringkv_v1_BucketRequest, _ringkv_v1_BucketReply, _ringkv_v1_BucketRequest__Output, _ringkv_v1_BucketReply__Output>
  GetBucketDeletion: MethodDefinition<_ringkv_v1_BucketRequest, _ringkv_v1_BucketDeletionReply, _ringkv_v1_BucketRequest__Output, _ringkv_v1_BucketDeletionReply__Output>
  ListBuckets: MethodDefinition<_ringkv_v1_ListBucketsRequest, _ringkv_v1_ListBucketsResponse, _ringkv_v1_ListBucketsRequest__Output, _ringkv_v1_ListBucketsResponse__Output>
  Plan: MethodDefinition<_ringkv_v1_PlanRequest, _ringkv_v1_PlanResponse, _ringkv_v1_PlanRequest__Output, _ringkv_v1_PlanResponse__Output>
  RemoveNode: MethodDefinition<_ringkv_v1_RemoveNodeRequest, _ringkv_v1_MovementReply, _ringkv_v1_RemoveNodeRequest__Output, _ringkv_v1_MovementReply__Output>
  Repair: MethodDefinition<_ringkv_v1_RepairRequest, _ringkv_v1_RepairStatusResponse, _ringkv_v1_RepairRequest__Output, _ringkv_v1_RepairStatusResponse__Output>
  RepairStatus: MethodDefinition<_ringkv_v1_RepairStatusRequest, _ringkv_v1_RepairStatusResponse, _ringkv_v1_RepairStatusRequest__Output, _ringkv_v1_RepairStatusResponse__Output>
  Ring: MethodDefinition<_ringkv_v1_RingRequest, _ringkv_v1_RingResponse, _ringkv_v1_RingRequest__Output, _ringkv_v1_RingResponse__Output>
  SetBucket: MethodDefinition<_ringkv_v1_BucketRequest, _ringkv_v1_BucketReply, _ringkv_v1_BucketRequest__Output, _ringkv_v1_BucketReply__Output>
  SetClockOffset: MethodDefinition<_ringkv_v1_SetClockOffsetRequest, _ringkv_v1_SetClockOffsetResponse, _ringkv_v1_SetClockOffsetRequest__Output, _ringkv_v1_SetClockOffsetResponse__Output>
  Status: MethodDefinition<_ringkv_v1_StatusRequest, _ringkv_v1_StatusResponse, _ringkv_v1_StatusRequest__Output, _ringkv_v1_StatusResponse__Output>
  Transfers: MethodDefinition<_ringkv_v1_TransfersRequest, _ringkv_v1_TransfersResponse, _ringkv_v1_TransfersRequest__Output, _ringkv_v1_TransfersResponse__Output>
}
