// Original file: proto/ringkv/internal/v1/gossip.proto

import type { Long } from '@grpc/proto-loader';

/**
 * What a node has seen of another's state. In a delta SYN (GossipMessage.delta set),
 * version is the field version (the largest version of a field; heartbeats don't
 * advance it) and heartbeat the heartbeat; otherwise version counts heartbeats too.
 */
export interface Digest {
  'id'?: (string);
  'generation'?: (number | string | Long);
  'version'?: (number | string | Long);
  'heartbeat'?: (number | string | Long);
}

/**
 * What a node has seen of another's state. In a delta SYN (GossipMessage.delta set),
 * version is the field version (the largest version of a field; heartbeats don't
 * advance it) and heartbeat the heartbeat; otherwise version counts heartbeats too.
 */
export interface Digest__Output {
  'id': (string);
  'generation': (number);
  'version': (number);
  'heartbeat': (number);
}
