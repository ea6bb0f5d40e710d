// Original file: proto/ringkv/internal/v1/gossip.proto

import type { NodeDelta as _ringkv_internal_v1_NodeDelta, NodeDelta__Output as _ringkv_internal_v1_NodeDelta__Output } from '../../../ringkv/internal/v1/NodeDelta.js';
import type { Long } from '@grpc/proto-loader';

/**
 * Delta gossip, sent only to peers that gossip the field gossip=delta. A light SYN
 * (table_hash set, no digests): heartbeats as a vector, field changes as broadcasts;
 * answered by an ACK2 with the receiver's vector and broadcasts (table_hash empty) when
 * its table hash is the same, else by a full SYN. A full SYN (table_hash empty, every
 * digest as described at Digest): answered by an ACK as always.
 */
export interface DeltaSyn {
  /**
   * the sender's
   */
  'generation'?: (number | string | Long);
  /**
   * 16 hex digits: hash of (id, generation) of every member
   */
  'roster'?: (string);
  /**
   * 16 hex digits: hash of (id, generation, field version); empty: full SYN
   */
  'tableHash'?: (string);
  /**
   * one little-endian u32 per member, members sorted by id (light SYN)
   */
  'heartbeats'?: (Buffer | Uint8Array | string);
  'broadcasts'?: (_ringkv_internal_v1_NodeDelta)[];
}

/**
 * Delta gossip, sent only to peers that gossip the field gossip=delta. A light SYN
 * (table_hash set, no digests): heartbeats as a vector, field changes as broadcasts;
 * answered by an ACK2 with the receiver's vector and broadcasts (table_hash empty) when
 * its table hash is the same, else by a full SYN. A full SYN (table_hash empty, every
 * digest as described at Digest): answered by an ACK as always.
 */
export interface DeltaSyn__Output {
  /**
   * the sender's
   */
  'generation': (number);
  /**
   * 16 hex digits: hash of (id, generation) of every member
   */
  'roster': (string);
  /**
   * 16 hex digits: hash of (id, generation, field version); empty: full SYN
   */
  'tableHash': (string);
  /**
   * one little-endian u32 per member, members sorted by id (light SYN)
   */
  'heartbeats': (Buffer);
  'broadcasts': (_ringkv_internal_v1_NodeDelta__Output)[];
}
