// Original file: proto/ringkv/v1/kv.proto

import type { PutItem as _ringkv_v1_PutItem, PutItem__Output as _ringkv_v1_PutItem__Output } from '../../ringkv/v1/PutItem.js';

export interface PutManyRequest {
  'bucket'?: (string);
  /**
   * 1 to 100 items, each key at most once, 4 MiB of values in all.
   */
  'items'?: (_ringkv_v1_PutItem)[];
  /**
   * As PutRequest's, for every item.
   */
  'w'?: (number);
  'nodeConfirms'?: (number);
  'zoneConfirms'?: (number);
  'pw'?: (number);
}

export interface PutManyRequest__Output {
  'bucket': (string);
  /**
   * 1 to 100 items, each key at most once, 4 MiB of values in all.
   */
  'items': (_ringkv_v1_PutItem__Output)[];
  /**
   * As PutRequest's, for every item.
   */
  'w': (number);
  'nodeConfirms': (number);
  'zoneConfirms': (number);
  'pw': (number);
}
