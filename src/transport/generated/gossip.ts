import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { DeltaSyn as _ringkv_internal_v1_DeltaSyn, DeltaSyn__Output as _ringkv_internal_v1_DeltaSyn__Output } from './ringkv/internal/v1/DeltaSyn.js';
import type { Digest as _ringkv_internal_v1_Digest, Digest__Output as _ringkv_internal_v1_Digest__Output } from './ringkv/internal/v1/Digest.js';
import type { Field as _ringkv_internal_v1_Field, Field__Output as _ringkv_internal_v1_Field__Output } from './ringkv/internal/v1/Field.js';
import type { GossipClient as _ringkv_internal_v1_GossipClient, GossipDefinition as _ringkv_internal_v1_GossipDefinition } from './ringkv/internal/v1/Gossip.js';
import type { GossipMessage as _ringkv_internal_v1_GossipMessage, GossipMessage__Output as _ringkv_internal_v1_GossipMessage__Output } from './ringkv/internal/v1/GossipMessage.js';
import type { GossipReceipt as _ringkv_internal_v1_GossipReceipt, GossipReceipt__Output as _ringkv_internal_v1_GossipReceipt__Output } from './ringkv/internal/v1/GossipReceipt.js';
import type { NodeDelta as _ringkv_internal_v1_NodeDelta, NodeDelta__Output as _ringkv_internal_v1_NodeDelta__Output } from './ringkv/internal/v1/NodeDelta.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  ringkv: {
    internal: {
      v1: {
        DeltaSyn: MessageTypeDefinition<_ringkv_internal_v1_DeltaSyn, _ringkv_internal_v1_DeltaSyn__Output>
        Digest: MessageTypeDefinition<_ringkv_internal_v1_Digest, _ringkv_internal_v1_Digest__Output>
        Field: MessageTypeDefinition<_ringkv_internal_v1_Field, _ringkv_internal_v1_Field__Output>
        Gossip: SubtypeConstructor<typeof grpc.Client, _ringkv_internal_v1_GossipClient> & { service: _ringkv_internal_v1_GossipDefinition }
        GossipMessage: MessageTypeDefinition<_ringkv_internal_v1_GossipMessage, _ringkv_internal_v1_GossipMessage__Output>
        GossipReceipt: MessageTypeDefinition<_ringkv_internal_v1_GossipReceipt, _ringkv_internal_v1_GossipReceipt__Output>
        NodeDelta: MessageTypeDefinition<_ringkv_internal_v1_NodeDelta, _ringkv_internal_v1_NodeDelta__Output>
      }
    }
  }
}

