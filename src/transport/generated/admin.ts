import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { AdminClient as _ringkv_v1_AdminClient, AdminDefinition as _ringkv_v1_AdminDefinition } from './ringkv/v1/Admin.js';
import type { AdmitRequest as _ringkv_v1_AdmitRequest, AdmitRequest__Output as _ringkv_v1_AdmitRequest__Output } from './ringkv/v1/AdmitRequest.js';
import type { BackgroundRepair as _ringkv_v1_BackgroundRepair, BackgroundRepair__Output as _ringkv_v1_BackgroundRepair__Output } from './ringkv/v1/BackgroundRepair.js';
import type { Bucket as _ringkv_v1_Bucket, Bucket__Output as _ringkv_v1_Bucket__Output } from './ringkv/v1/Bucket.js';
import type { BucketDeletionReply as _ringkv_v1_BucketDeletionReply, BucketDeletionReply__Output as _ringkv_v1_BucketDeletionReply__Output } from './ringkv/v1/BucketDeletionReply.js';
import type { BucketProps as _ringkv_v1_BucketProps, BucketProps__Output as _ringkv_v1_BucketProps__Output } from './ringkv/v1/BucketProps.js';
import type { BucketReply as _ringkv_v1_BucketReply, BucketReply__Output as _ringkv_v1_BucketReply__Output } from './ringkv/v1/BucketReply.js';
import type { BucketRequest as _ringkv_v1_BucketRequest, BucketRequest__Output as _ringkv_v1_BucketRequest__Output } from './ringkv/v1/BucketRequest.js';
import type { CleanupRequest as _ringkv_v1_CleanupRequest, CleanupRequest__Output as _ringkv_v1_CleanupRequest__Output } from './ringkv/v1/CleanupRequest.js';
import type { CleanupResponse as _ringkv_v1_CleanupResponse, CleanupResponse__Output as _ringkv_v1_CleanupResponse__Output } from './ringkv/v1/CleanupResponse.js';
import type { ClearRequest as _ringkv_v1_ClearRequest, ClearRequest__Output as _ringkv_v1_ClearRequest__Output } from './ringkv/v1/ClearRequest.js';
import type { CommitRequest as _ringkv_v1_CommitRequest, CommitRequest__Output as _ringkv_v1_CommitRequest__Output } from './ringkv/v1/CommitRequest.js';
import type { DecommissionRequest as _ringkv_v1_DecommissionRequest, DecommissionRequest__Output as _ringkv_v1_DecommissionRequest__Output } from './ringkv/v1/DecommissionRequest.js';
import type { DeleteBucketRequest as _ringkv_v1_DeleteBucketRequest, DeleteBucketRequest__Output as _ringkv_v1_DeleteBucketRequest__Output } from './ringkv/v1/DeleteBucketRequest.js';
import type { Drive as _ringkv_v1_Drive, Drive__Output as _ringkv_v1_Drive__Output } from './ringkv/v1/Drive.js';
import type { Endpoint as _ringkv_v1_Endpoint, Endpoint__Output as _ringkv_v1_Endpoint__Output } from './ringkv/v1/Endpoint.js';
import type { EndpointsRequest as _ringkv_v1_EndpointsRequest, EndpointsRequest__Output as _ringkv_v1_EndpointsRequest__Output } from './ringkv/v1/EndpointsRequest.js';
import type { EndpointsResponse as _ringkv_v1_EndpointsResponse, EndpointsResponse__Output as _ringkv_v1_EndpointsResponse__Output } from './ringkv/v1/EndpointsResponse.js';
import type { GainerProgress as _ringkv_v1_GainerProgress, GainerProgress__Output as _ringkv_v1_GainerProgress__Output } from './ringkv/v1/GainerProgress.js';
import type { ListBucketsRequest as _ringkv_v1_ListBucketsRequest, ListBucketsRequest__Output as _ringkv_v1_ListBucketsRequest__Output } from './ringkv/v1/ListBucketsRequest.js';
import type { ListBucketsResponse as _ringkv_v1_ListBucketsResponse, ListBucketsResponse__Output as _ringkv_v1_ListBucketsResponse__Output } from './ringkv/v1/ListBucketsResponse.js';
import type { MemberStatus as _ringkv_v1_MemberStatus, MemberStatus__Output as _ringkv_v1_MemberStatus__Output } from './ringkv/v1/MemberStatus.js';
import type { MovementReply as _ringkv_v1_MovementReply, MovementReply__Output as _ringkv_v1_MovementReply__Output } from './ringkv/v1/MovementReply.js';
import type { OwnershipChange as _ringkv_v1_OwnershipChange, OwnershipChange__Output as _ringkv_v1_OwnershipChange__Output } from './ringkv/v1/OwnershipChange.js';
import type { PlanRequest as _ringkv_v1_PlanRequest, PlanRequest__Output as _ringkv_v1_PlanRequest__Output } from './ringkv/v1/PlanRequest.js';
import type { PlanResponse as _ringkv_v1_PlanResponse, PlanResponse__Output as _ringkv_v1_PlanResponse__Output } from './ringkv/v1/PlanResponse.js';
import type { PlanStep as _ringkv_v1_PlanStep, PlanStep__Output as _ringkv_v1_PlanStep__Output } from './ringkv/v1/PlanStep.js';
import type { PlannedMove as _ringkv_v1_PlannedMove, PlannedMove__Output as _ringkv_v1_PlannedMove__Output } from './ringkv/v1/PlannedMove.js';
import type { Pull as _ringkv_v1_Pull, Pull__Output as _ringkv_v1_Pull__Output } from './ringkv/v1/Pull.js';
import type { RangeTransfer as _ringkv_v1_RangeTransfer, RangeTransfer__Output as _ringkv_v1_RangeTransfer__Output } from './ringkv/v1/RangeTransfer.js';
import type { RemoveNodeRequest as _ringkv_v1_RemoveNodeRequest, RemoveNodeRequest__Output as _ringkv_v1_RemoveNodeRequest__Output } from './ringkv/v1/RemoveNodeRequest.js';
import type { RepairRequest as _ringkv_v1_RepairRequest, RepairRequest__Output as _ringkv_v1_RepairRequest__Output } from './ringkv/v1/RepairRequest.js';
import type { RepairStatusRequest as _ringkv_v1_RepairStatusRequest, RepairStatusRequest__Output as _ringkv_v1_RepairStatusRequest__Output } from './ringkv/v1/RepairStatusRequest.js';
import type { RepairStatusResponse as _ringkv_v1_RepairStatusResponse, RepairStatusResponse__Output as _ringkv_v1_RepairStatusResponse__Output } from './ringkv/v1/RepairStatusResponse.js';
import type { RepairedRange as _ringkv_v1_RepairedRange, RepairedRange__Output as _ringkv_v1_RepairedRange__Output } from './ringkv/v1/RepairedRange.js';
import type { RingRequest as _ringkv_v1_RingRequest, RingRequest__Output as _ringkv_v1_RingRequest__Output } from './ringkv/v1/RingRequest.js';
import type { RingResponse as _ringkv_v1_RingResponse, RingResponse__Output as _ringkv_v1_RingResponse__Output } from './ringkv/v1/RingResponse.js';
import type { SetClockOffsetRequest as _ringkv_v1_SetClockOffsetRequest, SetClockOffsetRequest__Output as _ringkv_v1_SetClockOffsetRequest__Output } from './ringkv/v1/SetClockOffsetRequest.js';
import type { SetClockOffsetResponse as _ringkv_v1_SetClockOffsetResponse, SetClockOffsetResponse__Output as _ringkv_v1_SetClockOffsetResponse__Output } from './ringkv/v1/SetClockOffsetResponse.js';
import type { StagedChange as _ringkv_v1_StagedChange, StagedChange__Output as _ringkv_v1_StagedChange__Output } from './ringkv/v1/StagedChange.js';
import type { StatusRequest as _ringkv_v1_StatusRequest, StatusRequest__Output as _ringkv_v1_StatusRequest__Output } from './ringkv/v1/StatusRequest.js';
import type { StatusResponse as _ringkv_v1_StatusResponse, StatusResponse__Output as _ringkv_v1_StatusResponse__Output } from './ringkv/v1/StatusResponse.js';
import type { TokenRange as _ringkv_v1_TokenRange, TokenRange__Output as _ringkv_v1_TokenRange__Output } from './ringkv/v1/TokenRange.js';
import type { TransfersRequest as _ringkv_v1_TransfersRequest, TransfersRequest__Output as _ringkv_v1_TransfersRequest__Output } from './ringkv/v1/TransfersRequest.js';
import type { TransfersResponse as _ringkv_v1_TransfersResponse, TransfersResponse__Output as _ringkv_v1_TransfersResponse__Output } from './ringkv/v1/TransfersResponse.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  ringkv: {
    v1: {
      Admin: SubtypeConstructor<typeof grpc.Client, _ringkv_v1_AdminClient> & { service: _ringkv_v1_AdminDefinition }
      AdmitRequest: MessageTypeDefinition<_ringkv_v1_AdmitRequest, _ringkv_v1_AdmitRequest__Output>
      BackgroundRepair: MessageTypeDefinition<_ringkv_v1_BackgroundRepair, _ringkv_v1_BackgroundRepair__Output>
      Bucket: MessageTypeDefinition<_ringkv_v1_Bucket, _ringkv_v1_Bucket__Output>
      BucketDeletionReply: MessageTypeDefinition<_ringkv_v1_BucketDeletionReply, _ringkv_v1_BucketDeletionReply__Output>
      BucketProps: MessageTypeDefinition<_ringkv_v1_BucketProps, _ringkv_v1_BucketProps__Output>
      BucketReply: MessageTypeDefinition<_ringkv_v1_BucketReply, _ringkv_v1_BucketReply__Output>
      BucketRequest: MessageTypeDefinition<_ringkv_v1_BucketRequest, _ringkv_v1_BucketRequest__Output>
      CleanupRequest: MessageTypeDefinition<_ringkv_v1_CleanupRequest, _ringkv_v1_CleanupRequest__Output>
      CleanupResponse: MessageTypeDefinition<_ringkv_v1_CleanupResponse, _ringkv_v1_CleanupResponse__Output>
      ClearRequest: MessageTypeDefinition<_ringkv_v1_ClearRequest, _ringkv_v1_ClearRequest__Output>
      CommitRequest: MessageTypeDefinition<_ringkv_v1_CommitRequest, _ringkv_v1_CommitRequest__Output>
      DecommissionRequest: MessageTypeDefinition<_ringkv_v1_DecommissionRequest, _ringkv_v1_DecommissionRequest__Output>
      DeleteBucketRequest: MessageTypeDefinition<_ringkv_v1_DeleteBucketRequest, _ringkv_v1_DeleteBucketRequest__Output>
      Drive: MessageTypeDefinition<_ringkv_v1_Drive, _ringkv_v1_Drive__Output>
      Endpoint: MessageTypeDefinition<_ringkv_v1_Endpoint, _ringkv_v1_Endpoint__Output>
      EndpointsRequest: MessageTypeDefinition<_ringkv_v1_EndpointsRequest, _ringkv_v1_EndpointsRequest__Output>
      EndpointsResponse: MessageTypeDefinition<_ringkv_v1_EndpointsResponse, _ringkv_v1_EndpointsResponse__Output>
      GainerProgress: MessageTypeDefinition<_ringkv_v1_GainerProgress, _ringkv_v1_GainerProgress__Output>
      ListBucketsRequest: MessageTypeDefinition<_ringkv_v1_ListBucketsRequest, _ringkv_v1_ListBucketsRequest__Output>
      ListBucketsResponse: MessageTypeDefinition<_ringkv_v1_ListBucketsResponse, _ringkv_v1_ListBucketsResponse__Output>
      MemberStatus: MessageTypeDefinition<_ringkv_v1_MemberStatus, _ringkv_v1_MemberStatus__Output>
      MovementReply: MessageTypeDefinition<_ringkv_v1_MovementReply, _ringkv_v1_MovementReply__Output>
      OwnershipChange: MessageTypeDefinition<_ringkv_v1_OwnershipChange, _ringkv_v1_OwnershipChange__Output>
      PlanRequest: MessageTypeDefinition<_ringkv_v1_PlanRequest, _ringkv_v1_PlanRequest__Output>
      PlanResponse: MessageTypeDefinition<_ringkv_v1_PlanResponse, _ringkv_v1_PlanResponse__Output>
      PlanStep: MessageTypeDefinition<_ringkv_v1_PlanStep, _ringkv_v1_PlanStep__Output>
      PlannedMove: MessageTypeDefinition<_ringkv_v1_PlannedMove, _ringkv_v1_PlannedMove__Output>
      Pull: MessageTypeDefinition<_ringkv_v1_Pull, _ringkv_v1_Pull__Output>
      RangeTransfer: MessageTypeDefinition<_ringkv_v1_RangeTransfer, _ringkv_v1_RangeTransfer__Output>
      RemoveNodeRequest: MessageTypeDefinition<_ringkv_v1_RemoveNodeRequest, _ringkv_v1_RemoveNodeRequest__Output>
      RepairRequest: MessageTypeDefinition<_ringkv_v1_RepairRequest, _ringkv_v1_RepairRequest__Output>
      RepairStatusRequest: MessageTypeDefinition<_ringkv_v1_RepairStatusRequest, _ringkv_v1_RepairStatusRequest__Output>
      RepairStatusResponse: MessageTypeDefinition<_ringkv_v1_RepairStatusResponse, _ringkv_v1_RepairStatusResponse__Output>
      RepairedRange: MessageTypeDefinition<_ringkv_v1_RepairedRange, _ringkv_v1_RepairedRange__Output>
      RingRequest: MessageTypeDefinition<_ringkv_v1_RingRequest, _ringkv_v1_RingRequest__Output>
      RingResponse: MessageTypeDefinition<_ringkv_v1_RingResponse, _ringkv_v1_RingResponse__Output>
      SetClockOffsetRequest: MessageTypeDefinition<_ringkv_v1_SetClockOffsetRequest, _ringkv_v1_SetClockOffsetRequest__Output>
      SetClockOffsetResponse: MessageTypeDefinition<_ringkv_v1_SetClockOffsetResponse, _ringkv_v1_SetClockOffsetResponse__Output>
      StagedChange: MessageTypeDefinition<_ringkv_v1_StagedChange, _ringkv_v1_StagedChange__Output>
      StatusRequest: MessageTypeDefinition<_ringkv_v1_StatusRequest, _ringkv_v1_StatusRequest__Output>
      StatusResponse: MessageTypeDefinition<_ringkv_v1_StatusResponse, _ringkv_v1_StatusResponse__Output>
      TokenRange: MessageTypeDefinition<_ringkv_v1_TokenRange, _ringkv_v1_TokenRange__Output>
      TransfersRequest: MessageTypeDefinition<_ringkv_v1_TransfersRequest, _ringkv_v1_TransfersRequest__Output>
      TransfersResponse: MessageTypeDefinition<_ringkv_v1_TransfersResponse, _ringkv_v1_TransfersResponse__Output>
    }
  }
}

