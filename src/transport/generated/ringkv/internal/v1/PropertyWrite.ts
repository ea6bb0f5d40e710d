// Original file: proto/ringkv/internal/v1/control.proto

import type { Long } from '@grpc/proto-loader';

export interface PropertyWrite {
  /**
   * "n", "r", "w", "ttl_ms", "siblings" or "created".
   */
  'name'?: (string);
  /**
   * The property's value, as text.
   */
  'value'?: (string);
  'atMs'?: (number | string | Long);
  'by'?: (string);
}

export interface PropertyWrite__Output {
  /**
   * "n", "r", "w", "ttl_ms", "siblings" or "created".
   */
  'name': (string);
  /**
   * The property's value, as text.
   */
  'value': (string);
  'atMs': (number);
  'by': (string);
}
