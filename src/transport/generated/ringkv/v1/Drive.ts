// Original file: proto/ringkv/v1/admin.proto

import type { GainerProgress as _ringkv_v1_GainerProgress, GainerProgress__Output as _ringkv_v1_GainerProgress__Output } from '../../ringkv/v1/GainerProgress.js';
import type { Long } from '@grpc/proto-loader';

export interface Drive {
  /**
   * join | replace | leave | remove
   */
  'kind'?: (string);
  'node'?: (string);
  'move'?: (string);
  'phase'?: (string);
  'startedAtMs'?: (number | string | Long);
  'gainers'?: (_ringkv_v1_GainerProgress)[];
}

export interface Drive__Output {
  /**
   * join | replace | leave | remove
   */
  'kind': (string);
  'node': (string);
  'move': (string);
  'phase': (string);
  'startedAtMs': (number);
  'gainers': (_ringkv_v1_GainerProgress__Output)[];
}
