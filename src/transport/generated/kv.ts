import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { CounterGetRequest as _ringkv_v1_CounterGetRequest, CounterGetRequest__Output as _ringkv_v1_CounterGetRequest__Output } from './ringkv/v1/CounterGetRequest.js';
import type { CounterGetResponse as _ringkv_v1_CounterGetResponse, CounterGetResponse__Output as _ringkv_v1_CounterGetResponse__Output } from './ringkv/v1/CounterGetResponse.js';
import type { CounterResetRequest as _ringkv_v1_CounterResetRequest, CounterResetRequest__Output as _ringkv_v1_CounterResetRequest__Output } from './ringkv/v1/CounterResetRequest.js';
import type { CounterResetResponse as _ringkv_v1_CounterResetResponse, CounterResetResponse__Output as _ringkv_v1_CounterResetResponse__Output } from './ringkv/v1/CounterResetResponse.js';
import type { CounterUpdateRequest as _ringkv_v1_CounterUpdateRequest, CounterUpdateRequest__Output as _ringkv_v1_CounterUpdateRequest__Output } from './ringkv/v1/CounterUpdateRequest.js';
import type { CounterUpdateResponse as _ringkv_v1_CounterUpdateResponse, CounterUpdateResponse__Output as _ringkv_v1_CounterUpdateResponse__Output } from './ringkv/v1/CounterUpdateResponse.js';
import type { DeleteIfRequest as _ringkv_v1_DeleteIfRequest, DeleteIfRequest__Output as _ringkv_v1_DeleteIfRequest__Output } from './ringkv/v1/DeleteIfRequest.js';
import type { DeleteRequest as _ringkv_v1_DeleteRequest, DeleteRequest__Output as _ringkv_v1_DeleteRequest__Output } from './ringkv/v1/DeleteRequest.js';
import type { DeleteResponse as _ringkv_v1_DeleteResponse, DeleteResponse__Output as _ringkv_v1_DeleteResponse__Output } from './ringkv/v1/DeleteResponse.js';
import type { GetManyRequest as _ringkv_v1_GetManyRequest, GetManyRequest__Output as _ringkv_v1_GetManyRequest__Output } from './ringkv/v1/GetManyRequest.js';
import type { GetManyResponse as _ringkv_v1_GetManyResponse, GetManyResponse__Output as _ringkv_v1_GetManyResponse__Output } from './ringkv/v1/GetManyResponse.js';
import type { GetRequest as _ringkv_v1_GetRequest, GetRequest__Output as _ringkv_v1_GetRequest__Output } from './ringkv/v1/GetRequest.js';
import type { GetResponse as _ringkv_v1_GetResponse, GetResponse__Output as _ringkv_v1_GetResponse__Output } from './ringkv/v1/GetResponse.js';
import type { KeyGet as _ringkv_v1_KeyGet, KeyGet__Output as _ringkv_v1_KeyGet__Output } from './ringkv/v1/KeyGet.js';
import type { KeyPut as _ringkv_v1_KeyPut, KeyPut__Output as _ringkv_v1_KeyPut__Output } from './ringkv/v1/KeyPut.js';
import type { KeyValueClient as _ringkv_v1_KeyValueClient, KeyValueDefinition as _ringkv_v1_KeyValueDefinition } from './ringkv/v1/KeyValue.js';
import type { KvCall as _ringkv_v1_KvCall, KvCall__Output as _ringkv_v1_KvCall__Output } from './ringkv/v1/KvCall.js';
import type { KvCalls as _ringkv_v1_KvCalls, KvCalls__Output as _ringkv_v1_KvCalls__Output } from './ringkv/v1/KvCalls.js';
import type { KvError as _ringkv_v1_KvError, KvError__Output as _ringkv_v1_KvError__Output } from './ringkv/v1/KvError.js';
import type { KvReplies as _ringkv_v1_KvReplies, KvReplies__Output as _ringkv_v1_KvReplies__Output } from './ringkv/v1/KvReplies.js';
import type { KvReply as _ringkv_v1_KvReply, KvReply__Output as _ringkv_v1_KvReply__Output } from './ringkv/v1/KvReply.js';
import type { MapEntry as _ringkv_v1_MapEntry, MapEntry__Output as _ringkv_v1_MapEntry__Output } from './ringkv/v1/MapEntry.js';
import type { MapField as _ringkv_v1_MapField, MapField__Output as _ringkv_v1_MapField__Output } from './ringkv/v1/MapField.js';
import type { MapOp as _ringkv_v1_MapOp, MapOp__Output as _ringkv_v1_MapOp__Output } from './ringkv/v1/MapOp.js';
import type { MapReadRequest as _ringkv_v1_MapReadRequest, MapReadRequest__Output as _ringkv_v1_MapReadRequest__Output } from './ringkv/v1/MapReadRequest.js';
import type { MapReadResponse as _ringkv_v1_MapReadResponse, MapReadResponse__Output as _ringkv_v1_MapReadResponse__Output } from './ringkv/v1/MapReadResponse.js';
import type { MapRemove as _ringkv_v1_MapRemove, MapRemove__Output as _ringkv_v1_MapRemove__Output } from './ringkv/v1/MapRemove.js';
import type { MapUpdateRequest as _ringkv_v1_MapUpdateRequest, MapUpdateRequest__Output as _ringkv_v1_MapUpdateRequest__Output } from './ringkv/v1/MapUpdateRequest.js';
import type { MapUpdateResponse as _ringkv_v1_MapUpdateResponse, MapUpdateResponse__Output as _ringkv_v1_MapUpdateResponse__Output } from './ringkv/v1/MapUpdateResponse.js';
import type { PutIfRequest as _ringkv_v1_PutIfRequest, PutIfRequest__Output as _ringkv_v1_PutIfRequest__Output } from './ringkv/v1/PutIfRequest.js';
import type { PutIfResponse as _ringkv_v1_PutIfResponse, PutIfResponse__Output as _ringkv_v1_PutIfResponse__Output } from './ringkv/v1/PutIfResponse.js';
import type { PutItem as _ringkv_v1_PutItem, PutItem__Output as _ringkv_v1_PutItem__Output } from './ringkv/v1/PutItem.js';
import type { PutManyRequest as _ringkv_v1_PutManyRequest, PutManyRequest__Output as _ringkv_v1_PutManyRequest__Output } from './ringkv/v1/PutManyRequest.js';
import type { PutManyResponse as _ringkv_v1_PutManyResponse, PutManyResponse__Output as _ringkv_v1_PutManyResponse__Output } from './ringkv/v1/PutManyResponse.js';
import type { PutRequest as _ringkv_v1_PutRequest, PutRequest__Output as _ringkv_v1_PutRequest__Output } from './ringkv/v1/PutRequest.js';
import type { PutResponse as _ringkv_v1_PutResponse, PutResponse__Output as _ringkv_v1_PutResponse__Output } from './ringkv/v1/PutResponse.js';
import type { SetContainsRequest as _ringkv_v1_SetContainsRequest, SetContainsRequest__Output as _ringkv_v1_SetContainsRequest__Output } from './ringkv/v1/SetContainsRequest.js';
import type { SetContainsResponse as _ringkv_v1_SetContainsResponse, SetContainsResponse__Output as _ringkv_v1_SetContainsResponse__Output } from './ringkv/v1/SetContainsResponse.js';
import type { SetElement as _ringkv_v1_SetElement, SetElement__Output as _ringkv_v1_SetElement__Output } from './ringkv/v1/SetElement.js';
import type { SetOp as _ringkv_v1_SetOp, SetOp__Output as _ringkv_v1_SetOp__Output } from './ringkv/v1/SetOp.js';
import type { SetReadRequest as _ringkv_v1_SetReadRequest, SetReadRequest__Output as _ringkv_v1_SetReadRequest__Output } from './ringkv/v1/SetReadRequest.js';
import type { SetReadResponse as _ringkv_v1_SetReadResponse, SetReadResponse__Output as _ringkv_v1_SetReadResponse__Output } from './ringkv/v1/SetReadResponse.js';
import type { SetRemove as _ringkv_v1_SetRemove, SetRemove__Output as _ringkv_v1_SetRemove__Output } from './ringkv/v1/SetRemove.js';
import type { SetUpdateRequest as _ringkv_v1_SetUpdateRequest, SetUpdateRequest__Output as _ringkv_v1_SetUpdateRequest__Output } from './ringkv/v1/SetUpdateRequest.js';
import type { SetUpdateResponse as _ringkv_v1_SetUpdateResponse, SetUpdateResponse__Output as _ringkv_v1_SetUpdateResponse__Output } from './ringkv/v1/SetUpdateResponse.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  ringkv: {
    v1: {
      CounterGetRequest: MessageTypeDefinition<_ringkv_v1_CounterGetRequest, _ringkv_v1_CounterGetRequest__Output>
      CounterGetResponse: MessageTypeDefinition<_ringkv_v1_CounterGetResponse, _ringkv_v1_CounterGetResponse__Output>
      CounterResetRequest: MessageTypeDefinition<_ringkv_v1_CounterResetRequest, _ringkv_v1_CounterResetRequest__Output>
      CounterResetResponse: MessageTypeDefinition<_ringkv_v1_CounterResetResponse, _ringkv_v1_CounterResetResponse__Output>
      CounterUpdateRequest: MessageTypeDefinition<_ringkv_v1_CounterUpdateRequest, _ringkv_v1_CounterUpdateRequest__Output>
      CounterUpdateResponse: MessageTypeDefinition<_ringkv_v1_CounterUpdateResponse, _ringkv_v1_CounterUpdateResponse__Output>
      DeleteIfRequest: MessageTypeDefinition<_ringkv_v1_DeleteIfRequest, _ringkv_v1_DeleteIfRequest__Output>
      DeleteRequest: MessageTypeDefinition<_ringkv_v1_DeleteRequest, _ringkv_v1_DeleteRequest__Output>
      DeleteResponse: MessageTypeDefinition<_ringkv_v1_DeleteResponse, _ringkv_v1_DeleteResponse__Output>
      GetManyRequest: MessageTypeDefinition<_ringkv_v1_GetManyRequest, _ringkv_v1_GetManyRequest__Output>
      GetManyResponse: MessageTypeDefinition<_ringkv_v1_GetManyResponse, _ringkv_v1_GetManyResponse__Output>
      GetRequest: MessageTypeDefinition<_ringkv_v1_GetRequest, _ringkv_v1_GetRequest__Output>
      GetResponse: MessageTypeDefinition<_ringkv_v1_GetResponse, _ringkv_v1_GetResponse__Output>
      KeyGet: MessageTypeDefinition<_ringkv_v1_KeyGet, _ringkv_v1_KeyGet__Output>
      KeyPut: MessageTypeDefinition<_ringkv_v1_KeyPut, _ringkv_v1_KeyPut__Output>
      KeyValue: SubtypeConstructor<typeof grpc.Client, _ringkv_v1_KeyValueClient> & { service: _ringkv_v1_KeyValueDefinition }
      KvCall: MessageTypeDefinition<_ringkv_v1_KvCall, _ringkv_v1_KvCall__Output>
      KvCalls: MessageTypeDefinition<_ringkv_v1_KvCalls, _ringkv_v1_KvCalls__Output>
      KvError: MessageTypeDefinition<_ringkv_v1_KvError, _ringkv_v1_KvError__Output>
      KvReplies: MessageTypeDefinition<_ringkv_v1_KvReplies, _ringkv_v1_KvReplies__Output>
      KvReply: MessageTypeDefinition<_ringkv_v1_KvReply, _ringkv_v1_KvReply__Output>
      MapEntry: MessageTypeDefinition<_ringkv_v1_MapEntry, _ringkv_v1_MapEntry__Output>
      MapField: MessageTypeDefinition<_ringkv_v1_MapField, _ringkv_v1_MapField__Output>
      MapFieldType: EnumTypeDefinition
      MapOp: MessageTypeDefinition<_ringkv_v1_MapOp, _ringkv_v1_MapOp__Output>
      MapReadRequest: MessageTypeDefinition<_ringkv_v1_MapReadRequest, _ringkv_v1_MapReadRequest__Output>
      MapReadResponse: MessageTypeDefinition<_ringkv_v1_MapReadResponse, _ringkv_v1_MapReadResponse__Output>
      MapRemove: MessageTypeDefinition<_ringkv_v1_MapRemove, _ringkv_v1_MapRemove__Output>
      MapUpdateRequest: MessageTypeDefinition<_ringkv_v1_MapUpdateRequest, _ringkv_v1_MapUpdateRequest__Output>
      MapUpdateResponse: MessageTypeDefinition<_ringkv_v1_MapUpdateResponse, _ringkv_v1_MapUpdateResponse__Output>
      PutIfRequest: MessageTypeDefinition<_ringkv_v1_PutIfRequest, _ringkv_v1_PutIfRequest__Output>
      PutIfResponse: MessageTypeDefinition<_ringkv_v1_PutIfResponse, _ringkv_v1_PutIfResponse__Output>
      PutItem: MessageTypeDefinition<_ringkv_v1_PutItem, _ringkv_v1_PutItem__Output>
      PutManyRequest: MessageTypeDefinition<_ringkv_v1_PutManyRequest, _ringkv_v1_PutManyRequest__Output>
      PutManyResponse: MessageTypeDefinition<_ringkv_v1_PutManyResponse, _ringkv_v1_PutManyResponse__Output>
      PutRequest: MessageTypeDefinition<_ringkv_v1_PutRequest, _ringkv_v1_PutRequest__Output>
      PutResponse: MessageTypeDefinition<_ringkv_v1_PutResponse, _ringkv_v1_PutResponse__Output>
      SetContainsRequest: MessageTypeDefinition<_ringkv_v1_SetContainsRequest, _ringkv_v1_SetContainsRequest__Output>
      SetContainsResponse: MessageTypeDefinition<_ringkv_v1_SetContainsResponse, _ringkv_v1_SetContainsResponse__Output>
      SetElement: MessageTypeDefinition<_ringkv_v1_SetElement, _ringkv_v1_SetElement__Output>
      SetOp: MessageTypeDefinition<_ringkv_v1_SetOp, _ringkv_v1_SetOp__Output>
      SetReadRequest: MessageTypeDefinition<_ringkv_v1_SetReadRequest, _ringkv_v1_SetReadRequest__Output>
      SetReadResponse: MessageTypeDefinition<_ringkv_v1_SetReadResponse, _ringkv_v1_SetReadResponse__Output>
      SetRemove: MessageTypeDefinition<_ringkv_v1_SetRemove, _ringkv_v1_SetRemove__Output>
      SetUpdateRequest: MessageTypeDefinition<_ringkv_v1_SetUpdateRequest, _ringkv_v1_SetUpdateRequest__Output>
      SetUpdateResponse: MessageTypeDefinition<_ringkv_v1_SetUpdateResponse, _ringkv_v1_SetUpdateResponse__Output>
    }
  }
}

