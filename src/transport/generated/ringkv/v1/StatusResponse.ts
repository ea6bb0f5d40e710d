// Original file: proto/ringkv/v1/admin.proto

import type { MemberStatus as _ringkv_v1_MemberStatus, MemberStatus__Output as _ringkv_v1_MemberStatus__Output } from '../../ringkv/v1/MemberStatus.js';
import type { Long } from '@grpc/proto-loader';

export interface StatusResponse {
  'clusterName'?: (string);
  /**
   * The node that answered.
   */
  'nodeId'?: (string);
  'replicas'?: (number);
  'members'?: (_ringkv_v1_MemberStatus)[];
  /**
   * The answering node's counters since it started: requests coordinated, read repairs,
   * sloppy writes, hints kept and delivered, refusals (README lists them).
   */
  'counters'?: ({[key: string]: number | string | Long});
}

export interface StatusResponse__Output {
  'clusterName': (string);
  /**
   * The node that answered.
   */
  'nodeId': (string);
  'replicas': (number);
  'members': (_ringkv_v1_MemberStatus__Output)[];
  /**
   * The answering node's counters since it started: requests coordinated, read repairs,
   * sloppy writes, hints kept and delivered, refusals (README lists them).
   */
  'counters': ({[key: string]: number});
}
