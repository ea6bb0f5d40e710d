// Original file: proto/ringkv/internal/v1/control.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { BucketKeysReply as _ringkv_internal_v1_BucketKeysReply, BucketKeysReply__Output as _ringkv_internal_v1_BucketKeysReply__Output } from '../../../ringkv/internal/v1/BucketKeysReply.js';
import type { BucketKeysRequest as _ringkv_internal_v1_BucketKeysRequest, BucketKeysRequest__Output as _ringkv_internal_v1_BucketKeysRequest__Output } from '../../../ringkv/internal/v1/BucketKeysRequest.js';
import type { BucketTable as _ringkv_internal_v1_BucketTable, BucketTable__Output as _ringkv_internal_v1_BucketTable__Output } from '../../../ringkv/internal/v1/BucketTable.js';
import type { ControlRequest as _ringkv_internal_v1_ControlRequest, ControlRequest__Output as _ringkv_internal_v1_ControlRequest__Output } from '../../../ringkv/internal/v1/ControlRequest.js';
import type { MovementReply as _ringkv_v1_MovementReply, MovementReply__Output as _ringkv_v1_MovementReply__Output } from '../../../ringkv/v1/MovementReply.js';
import type { RepairRangeReply as _ringkv_internal_v1_RepairRangeReply, RepairRangeReply__Output as _ringkv_internal_v1_RepairRangeReply__Output } from '../../../ringkv/internal/v1/RepairRangeReply.js';
import type { RepairRangeRequest as _ringkv_internal_v1_RepairRangeRequest, RepairRangeRequest__Output as _ringkv_internal_v1_RepairRangeRequest__Output } from '../../../ringkv/internal/v1/RepairRangeRequest.js';
import type { TransfersResponse as _ringkv_v1_TransfersResponse, TransfersResponse__Output as _ringkv_v1_TransfersResponse__Output } from '../../../ringkv/v1/TransfersResponse.js';

export interface ControlClient extends grpc.Client {
  /**
   * Admit the answering node, a standby started with --join manual: it joins now.
   * FAILED_PRECONDITION when it is not a standby, or when `cluster` is not its cluster.
   */
  Admit(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  Admit(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  Admit(argument: _ringkv_internal_v1_ControlRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  Admit(argument: _ringkv_internal_v1_ControlRequest, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  /**
   * Admit the answering node, a standby started with --join manual: it joins now.
   * FAILED_PRECONDITION when it is not a standby, or when `cluster` is not its cluster.
   */
  admit(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  admit(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  admit(argument: _ringkv_internal_v1_ControlRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  admit(argument: _ringkv_internal_v1_ControlRequest, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * How many records and hints of bucket `name` the answering node holds, counted up to
   * `limit` (0: 1): what a node serving Admin DeleteBucket without purge asks every member.
   */
  BucketKeys(argument: _ringkv_internal_v1_BucketKeysRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_BucketKeysReply__Output>): grpc.ClientUnaryCall;
  BucketKeys(argument: _ringkv_internal_v1_BucketKeysRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_BucketKeysReply__Output>): grpc.ClientUnaryCall;
  BucketKeys(argument: _ringkv_internal_v1_BucketKeysRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_BucketKeysReply__Output>): grpc.ClientUnaryCall;
  BucketKeys(argument: _ringkv_internal_v1_BucketKeysRequest, callback: grpc.requestCallback<_ringkv_internal_v1_BucketKeysReply__Output>): grpc.ClientUnaryCall;
  /**
   * How many records and hints of bucket `name` the answering node holds, counted up to
   * `limit` (0: 1): what a node serving Admin DeleteBucket without purge asks every member.
   */
  bucketKeys(argument: _ringkv_internal_v1_BucketKeysRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_BucketKeysReply__Output>): grpc.ClientUnaryCall;
  bucketKeys(argument: _ringkv_internal_v1_BucketKeysRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_BucketKeysReply__Output>): grpc.ClientUnaryCall;
  bucketKeys(argument: _ringkv_internal_v1_BucketKeysRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_BucketKeysReply__Output>): grpc.ClientUnaryCall;
  bucketKeys(argument: _ringkv_internal_v1_BucketKeysRequest, callback: grpc.requestCallback<_ringkv_internal_v1_BucketKeysReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * The answering node's bucket table, every property with its version, for a node whose
   * gossiped table digest differs (src/buckets: the tables merge, property by property).
   */
  Buckets(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_BucketTable__Output>): grpc.ClientUnaryCall;
  Buckets(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_BucketTable__Output>): grpc.ClientUnaryCall;
  Buckets(argument: _ringkv_internal_v1_ControlRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_BucketTable__Output>): grpc.ClientUnaryCall;
  Buckets(argument: _ringkv_internal_v1_ControlRequest, callback: grpc.requestCallback<_ringkv_internal_v1_BucketTable__Output>): grpc.ClientUnaryCall;
  /**
   * The answering node's bucket table, every property with its version, for a node whose
   * gossiped table digest differs (src/buckets: the tables merge, property by property).
   */
  buckets(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_BucketTable__Output>): grpc.ClientUnaryCall;
  buckets(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_BucketTable__Output>): grpc.ClientUnaryCall;
  buckets(argument: _ringkv_internal_v1_ControlRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_BucketTable__Output>): grpc.ClientUnaryCall;
  buckets(argument: _ringkv_internal_v1_ControlRequest, callback: grpc.requestCallback<_ringkv_internal_v1_BucketTable__Output>): grpc.ClientUnaryCall;
  
  /**
   * Decommission the answering node (as Admin Decommission without cancel).
   * FAILED_PRECONDITION when another topology change is in progress or it is not normal.
   */
  Decommission(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  Decommission(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  Decommission(argument: _ringkv_internal_v1_ControlRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  Decommission(argument: _ringkv_internal_v1_ControlRequest, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  /**
   * Decommission the answering node (as Admin Decommission without cancel).
   * FAILED_PRECONDITION when another topology change is in progress or it is not normal.
   */
  decommission(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  decommission(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  decommission(argument: _ringkv_internal_v1_ControlRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  decommission(argument: _ringkv_internal_v1_ControlRequest, callback: grpc.requestCallback<_ringkv_v1_MovementReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Repair one (range, N class) unit with its other replicas, the answering node being one
   * of them: what a node driving a removal asks of a replica of a unit it does not hold
   * itself (docs/operations.md, "A removal's repair"). INVALID_ARGUMENT for a malformed
   * range; FAILED_PRECONDITION when the range is not one of the answering node's ring, it is
   * not among its replicas, `replicas` differ from its own (the rings differ: retry), a
   * replica is down, or the bucket tables differ. A node of a release without it answers
   * UNIMPLEMENTED: the caller leaves the unit to background repair.
   */
  RepairRange(argument: _ringkv_internal_v1_RepairRangeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_RepairRangeReply__Output>): grpc.ClientUnaryCall;
  RepairRange(argument: _ringkv_internal_v1_RepairRangeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_RepairRangeReply__Output>): grpc.ClientUnaryCall;
  RepairRange(argument: _ringkv_internal_v1_RepairRangeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_RepairRangeReply__Output>): grpc.ClientUnaryCall;
  RepairRange(argument: _ringkv_internal_v1_RepairRangeRequest, callback: grpc.requestCallback<_ringkv_internal_v1_RepairRangeReply__Output>): grpc.ClientUnaryCall;
  /**
   * Repair one (range, N class) unit with its other replicas, the answering node being one
   * of them: what a node driving a removal asks of a replica of a unit it does not hold
   * itself (docs/operations.md, "A removal's repair"). INVALID_ARGUMENT for a malformed
   * range; FAILED_PRECONDITION when the range is not one of the answering node's ring, it is
   * not among its replicas, `replicas` differ from its own (the rings differ: retry), a
   * replica is down, or the bucket tables differ. A node of a release without it answers
   * UNIMPLEMENTED: the caller leaves the unit to background repair.
   */
  repairRange(argument: _ringkv_internal_v1_RepairRangeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_RepairRangeReply__Output>): grpc.ClientUnaryCall;
  repairRange(argument: _ringkv_internal_v1_RepairRangeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_internal_v1_RepairRangeReply__Output>): grpc.ClientUnaryCall;
  repairRange(argument: _ringkv_internal_v1_RepairRangeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_internal_v1_RepairRangeReply__Output>): grpc.ClientUnaryCall;
  repairRange(argument: _ringkv_internal_v1_RepairRangeRequest, callback: grpc.requestCallback<_ringkv_internal_v1_RepairRangeReply__Output>): grpc.ClientUnaryCall;
  
  /**
   * Ranges the answering node is pulling or sending, and the topology change it drives.
   */
  Transfers(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  Transfers(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  Transfers(argument: _ringkv_internal_v1_ControlRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  Transfers(argument: _ringkv_internal_v1_ControlRequest, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Ranges the answering node is pulling or sending, and the topology change it drives.
   */
  transfers(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  transfers(argument: _ringkv_internal_v1_ControlRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  transfers(argument: _ringkv_internal_v1_ControlRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  transfers(argument: _ringkv_internal_v1_ControlRequest, callback: grpc.requestCallback<_ringkv_v1_TransfersResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface ControlHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Admit the answering node, a standby started with --join manual: it joins now.
   * FAILED_PRECONDITION when it is not a standby, or when `cluster` is not its cluster.
   */
  Admit: grpc.handleUnaryCall<_ringkv_internal_v1_ControlRequest__Output, _ringkv_v1_MovementReply>;
  
  /**
   * How many records and hints of bucket `name` the answering node holds, counted up to
   * `limit` (0: 1): what a node serving Admin DeleteBucket without purge asks every member.
   */
  BucketKeys: grpc.handleUnaryCall<_ringkv_internal_v1_BucketKeysRequest__Output, _ringkv_internal_v1_BucketKeysReply>;
  
  /**
   * The answering node's bucket table, every property with its version, for a node whose
   * gossiped table digest differs (src/buckets: the tables merge, property by property).
   */
  Buckets: grpc.handleUnaryCall<_ringkv_internal_v1_ControlRequest__Output, _ringkv_internal_v1_BucketTable>;
  
  /**
   * Decommission the answering node (as Admin Decommission without cancel).
   * FAILED_PRECONDITION when another topology change is in progress or it is not normal.
   */
  Decommission: grpc.handleUnaryCall<_ringkv_internal_v1_ControlRequest__Output, _ringkv_v1_MovementReply>;
  
  /**
   * Repair one (range, N class) unit with its other replicas, the answering node being one
   * of them: what a node driving a removal asks of a replica of a unit it does not hold
   * itself (docs/operations.md, "A removal's repair"). INVALID_ARGUMENT for a malformed
   * range; FAILED_PRECONDITION when the range is not one of the answering node's ring, it is
   * not among its replicas, `replicas` differ from its own (the rings differ: retry), a
   * replica is down, or the bucket tables differ. A node of a release without it answers
   * UNIMPLEMENTED: the caller leaves the unit to background repair.
   */
  RepairRange: grpc.handleUnaryCall<_ringkv_internal_v1_RepairRangeRequest__Output, _ringkv_internal_v1_RepairRangeReply>;
  
  /**
   * Ranges the answering node is pulling or sending, and the topology change it drives.
   */
  Transfers: grpc.handleUnaryCall<_ringkv_internal_v1_ControlRequest__Output, _ringkv_v1_TransfersResponse>;
  
}

export interface ControlDefinition extends grpc.ServiceDefinition {
  Admit: MethodDefinition<_ringkv_internal_v1_ControlRequest, _ringkv_v1_MovementReply, _ringkv_internal_v1_ControlRequest__Output, _ringkv_v1_MovementReply__Output>
  BucketKeys: MethodDefinition<_ringkv_internal_v1_BucketKeysRequest, _ringkv_internal_v1_BucketKeysReply, _ringkv_internal_v1_BucketKeysRequest__Output, _ringkv_internal_v1_BucketKeysReply__Output>
  Buckets: MethodDefinition<_ringkv_internal_v1_ControlRequest, _ringkv_internal_v1_BucketTable, _ringkv_internal_v1_ControlRequest__Output, _ringkv_internal_v1_BucketTable__Output>
  Decommission: MethodDefinition<_ringkv_internal_v1_ControlRequest, _ringkv_v1_MovementReply, _ringkv_internal_v1_ControlRequest__Output, _ringkv_v1_MovementReply__Output>
  RepairRange: MethodDefinition<_ringkv_internal_v1_RepairRangeRequest, _ringkv_internal_v1_RepairRangeReply, _ringkv_internal_v1_RepairRangeRequest__Output, _ringkv_internal_v1_RepairRangeReply__Output>
  Transfers: MethodDefinition<_ringkv_internal_v1_ControlRequest, _ringkv_v1_TransfersResponse, _ringkv_internal_v1_ControlRequest__Output, _ringkv_v1_TransfersResponse__Output>
}
