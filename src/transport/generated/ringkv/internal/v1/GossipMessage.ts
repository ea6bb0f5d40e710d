// Original file: proto/ringkv/internal/v1/gossip.proto

import type { Digest as _ringkv_internal_v1_Digest, Digest__Output as _ringkv_internal_v1_Digest__Output } from '../../../ringkv/internal/v1/Digest.js';
import type { NodeDelta as _ringkv_internal_v1_NodeDelta, NodeDelta__Output as _ringkv_internal_v1_NodeDelta__Output } from '../../../ringkv/internal/v1/NodeDelta.js';
import type { DeltaSyn as _ringkv_internal_v1_DeltaSyn, DeltaSyn__Output as _ringkv_internal_v1_DeltaSyn__Output } from '../../../ringkv/internal/v1/DeltaSyn.js';

// Original file: proto/ringkv/internal/v1/gossip.proto

export const _ringkv_internal_v1_GossipMessage_Kind = {
  KIND_UNSPECIFIED: 'KIND_UNSPECIFIED',
  SYN: 'SYN',
  ACK: 'ACK',
  ACK2: 'ACK2',
} as const;

export type _ringkv_internal_v1_GossipMessage_Kind =
  | 'KIND_UNSPECIFIED'
  | 0
  | 'SYN'
  | 1
  | 'ACK'
  | 2
  | 'ACK2'
  | 3

export type _ringkv_internal_v1_GossipMessage_Kind__Output = typeof _ringkv_internal_v1_GossipMessage_Kind[keyof typeof _ringkv_internal_v1_GossipMessage_Kind]

export interface GossipMessage {
  'cluster'?: (string);
  'from'?: (string);
  'fromAddr'?: (string);
  'kind'?: (_ringkv_internal_v1_GossipMessage_Kind);
  /**
   * SYN
   */
  'digests'?: (_ringkv_internal_v1_Digest)[];
  /**
   * ACK, ACK2; SYN: the sender's own state when it announces itself
   */
  'deltas'?: (_ringkv_internal_v1_NodeDelta)[];
  /**
   * ACK
   */
  'requests'?: (_ringkv_internal_v1_Digest)[];
  /**
   * SYN in delta gossip (absent: full Scuttlebutt); ACK2 answering a light SYN
   */
  'delta'?: (_ringkv_internal_v1_DeltaSyn | null);
}

export interface GossipMessage__Output {
  'cluster': (string);
  'from': (string);
  'fromAddr': (string);
  'kind': (_ringkv_internal_v1_GossipMessage_Kind__Output);
  /**
   * SYN
   */
  'digests': (_ringkv_internal_v1_Digest__Output)[];
  /**
   * ACK, ACK2; SYN: the sender's own state when it announces itself
   */
  'deltas': (_ringkv_internal_v1_NodeDelta__Output)[];
  /**
   * ACK
   */
  'requests': (_ringkv_internal_v1_Digest__Output)[];
  /**
   * SYN in delta gossip (absent: full Scuttlebutt); ACK2 answering a light SYN
   */
  'delta': (_ringkv_internal_v1_DeltaSyn__Output | null);
}
