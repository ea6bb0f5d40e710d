// Original file: proto/ringkv/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface MemberStatus {
  'id'?: (string);
  'address'?: (string);
  'zone'?: (string);
  'rack'?: (string);
  /**
   * joining | normal | leaving | left | removed
   */
  'status'?: (string);
  /**
   * This node's opinion (phi-accrual), not a fact shared by the cluster.
   */
  'up'?: (boolean);
  'generation'?: (number | string | Long);
  'heartbeat'?: (number | string | Long);
  'tokens'?: (number);
  /**
   * Fraction of keys this member holds a replica of, with N replicas (0..1).
   */
  'ownership'?: (number | string);
  /**
   * LevelDB's estimate of the member's data, bytes (as it last gossiped it).
   */
  'loadBytes'?: (number | string | Long);
  'weight'?: (number | string);
  'phi'?: (number | string);
  /**
   * Hints the member holds for other nodes, waiting for delivery (as it last gossiped it).
   */
  'hints'?: (number | string | Long);
  /**
   * For a member joining or driving a topology change: ranges streamed, "done/total" (as
   * it last gossiped it); empty otherwise.
   */
  'progress'?: (string);
  /**
   * The member told the cluster it is stopping (a drain, docs/operations.md): held down
   * by its peers until it starts again.
   */
  'stopping'?: (boolean);
  /**
   * The disk of its data directory (as it last gossiped it): free and total bytes, and
   * "ok"; "low" (free below its --min-free-disk: it refuses new writes, which other
   * replicas take); "failed" (a write failed for want of space: refusing until space is
   * back and its store reopens); "" when not known (a node of an earlier release).
   */
  'diskFreeBytes'?: (number | string | Long);
  'diskTotalBytes'?: (number | string | Long);
  'disk'?: (string);
}

export interface MemberStatus__Output {
  'id': (string);
  'address': (string);
  'zone': (string);
  'rack': (string);
  /**
   * joining | normal | leaving | left | removed
   */
  'status': (string);
  /**
   * This node's opinion (phi-accrual), not a fact shared by the cluster.
   */
  'up': (boolean);
  'generation': (number);
  'heartbeat': (number);
  'tokens': (number);
  /**
   * Fraction of keys this member holds a replica of, with N replicas (0..1).
   */
  'ownership': (number);
  /**
   * LevelDB's estimate of the member's data, bytes (as it last gossiped it).
   */
  'loadBytes': (number);
  'weight': (number);
  'phi': (number);
  /**
   * Hints the member holds for other nodes, waiting for delivery (as it last gossiped it).
   */
  'hints': (number);
  /**
   * For a member joining or driving a topology change: ranges streamed, "done/total" (as
   * it last gossiped it); empty otherwise.
   */
  'progress': (string);
  /**
   * The member told the cluster it is stopping (a drain, docs/operations.md): held down
   * by its peers until it starts again.
   */
  'stopping': (boolean);
  /**
   * The disk of its data directory (as it last gossiped it): free and total bytes, and
   * "ok"; "low" (free below its --min-free-disk: it refuses new writes, which other
   * replicas take); "failed" (a write failed for want of space: refusing until space is
   * back and its store reopens); "" when not known (a node of an earlier release).
   */
  'diskFreeBytes': (number);
  'diskTotalBytes': (number);
  'disk': (string);
}
