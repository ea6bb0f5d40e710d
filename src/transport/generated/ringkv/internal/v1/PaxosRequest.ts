// Original file: proto/ringkv/internal/v1/replica.proto

import type { Long } from '@grpc/proto-loader';

// Original file: proto/ringkv/internal/v1/replica.proto

export const _ringkv_internal_v1_PaxosRequest_Step = {
  STEP_UNSPECIFIED: 'STEP_UNSPECIFIED',
  PREPARE: 'PREPARE',
  PROPOSE: 'PROPOSE',
  COMMIT: 'COMMIT',
} as const;

export type _ringkv_internal_v1_PaxosRequest_Step =
  | 'STEP_UNSPECIFIED'
  | 0
  | 'PREPARE'
  | 1
  | 'PROPOSE'
  | 2
  | 'COMMIT'
  | 3

export type _ringkv_internal_v1_PaxosRequest_Step__Output = typeof _ringkv_internal_v1_PaxosRequest_Step[keyof typeof _ringkv_internal_v1_PaxosRequest_Step]

/**
 * One Paxos step on this replica's acceptor of a compare-and-set register's key
 * (storage/acceptor.ts): a prepare under a ballot, or a proposal's propose or commit.
 */
export interface PaxosRequest {
  'key'?: (Buffer | Uint8Array | string);
  'step'?: (_ringkv_internal_v1_PaxosRequest_Step);
  /**
   * The ballot (a prepare's, or the proposal's): its number, then its proposer's id (latin1).
   */
  'ballot'?: (number | string | Long);
  'proposer'?: (Buffer | Uint8Array | string);
  /**
   * A proposal's request id (latin1) and value; absent: the proposal deletes.
   */
  'proposalId'?: (Buffer | Uint8Array | string);
  'value'?: (Buffer | Uint8Array | string);
  'absent'?: (boolean);
  /**
   * A proposal's base: the request id (latin1) of the commit it was decided on; empty for
   * a register never written.
   */
  'base'?: (Buffer | Uint8Array | string);
}

/**
 * One Paxos step on this replica's acceptor of a compare-and-set register's key
 * (storage/acceptor.ts): a prepare under a ballot, or a proposal's propose or commit.
 */
export interface PaxosRequest__Output {
  'key': (Buffer);
  'step': (_ringkv_internal_v1_PaxosRequest_Step__Output);
  /**
   * The ballot (a prepare's, or the proposal's): its number, then its proposer's id (latin1).
   */
  'ballot': (number);
  'proposer': (Buffer);
  /**
   * A proposal's request id (latin1) and value; absent: the proposal deletes.
   */
  'proposalId': (Buffer);
  'value': (Buffer);
  'absent': (boolean);
  /**
   * A proposal's base: the request id (latin1) of the commit it was decided on; empty for
   * a register never written.
   */
  'base': (Buffer);
}
