// Original file: proto/ringkv/internal/v1/gossip.proto

import type { Long } from '@grpc/proto-loader';

/**
 * What a node has seen of another's state.
 */
export interface Digest {
  'id'?: (string);
  'generation'?: (number | string | Long);
  'version'?: (number | string | Long);
}

/**
 * What a node has seen of another's state.
 */
export interface Digest__Output {
  'id': (string);
  'generation': (number);
  'version': (number);
}
