// Original file: proto/ringkv/internal/v1/gossip.proto

import type { Field as _ringkv_internal_v1_Field, Field__Output as _ringkv_internal_v1_Field__Output } from '../../../ringkv/internal/v1/Field.js';
import type { Long } from '@grpc/proto-loader';

/**
 * Part of a node's state: its heartbeat and the fields newer than the receiver has.
 */
export interface NodeDelta {
  'id'?: (string);
  'generation'?: (number | string | Long);
  'heartbeat'?: (number | string | Long);
  'fields'?: (_ringkv_internal_v1_Field)[];
  /**
   * The fields are every field newer than this version (0: the whole state). A receiver
   * takes a delta with since > 0 only for a member it holds at this generation and has
   * seen up to since. Releases before it leave it 0.
   */
  'since'?: (number | string | Long);
}

/**
 * Part of a node's state: its heartbeat and the fields newer than the receiver has.
 */
export interface NodeDelta__Output {
  'id': (string);
  'generation': (number);
  'heartbeat': (number);
  'fields': (_ringkv_internal_v1_Field__Output)[];
  /**
   * The fields are every field newer than this version (0: the whole state). A receiver
   * takes a delta with since > 0 only for a member it holds at this generation and has
   * seen up to since. Releases before it leave it 0.
   */
  'since': (number);
}
