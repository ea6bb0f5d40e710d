// Original file: proto/ringkv/v1/admin.proto

import type { Long } from '@grpc/proto-loader';

export interface BucketProps {
  /**
   * Replicas per key, 1..9; 0 in a create: the cluster's N.
   */
  'n'?: (number);
  /**
   * Default R and W of requests that set none, 1..n; 0: a majority of n.
   */
  'r'?: (number);
  'w'?: (number);
  /**
   * Default time to live of a put that sets none, ms; 0: values do not expire.
   */
  'ttlMs'?: (number | string | Long);
  /**
   * "siblings" (concurrent writes are all kept; the default) or "lww" (the one with the
   * latest timestamp wins; concurrent writes are lost: docs/reads-and-writes.md#buckets).
   */
  'siblings'?: (string);
  /**
   * The data type of the bucket's keys (docs/data-types.md): "kv" (put/get/delete; the
   * default, and what a bucket created before types is), "counter", "set" or "map". Set at
   * creation and fixed after (FAILED_PRECONDITION for a change).
   */
  'type'?: (string);
}

export interface BucketProps__Output {
  /**
   * Replicas per key, 1..9; 0 in a create: the cluster's N.
   */
  'n': (number);
  /**
   * Default R and W of requests that set none, 1..n; 0: a majority of n.
   */
  'r': (number);
  'w': (number);
  /**
   * Default time to live of a put that sets none, ms; 0: values do not expire.
   */
  'ttlMs': (number);
  /**
   * "siblings" (concurrent writes are all kept; the default) or "lww" (the one with the
   * latest timestamp wins; concurrent writes are lost: docs/reads-and-writes.md#buckets).
   */
  'siblings': (string);
  /**
   * The data type of the bucket's keys (docs/data-types.md): "kv" (put/get/delete; the
   * default, and what a bucket created before types is), "counter", "set" or "map". Set at
   * creation and fixed after (FAILED_PRECONDITION for a change).
   */
  'type': (string);
}
