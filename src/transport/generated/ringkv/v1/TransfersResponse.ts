// Original file: proto/ringkv/v1/admin.proto

import type { Pull as _ringkv_v1_Pull, Pull__Output as _ringkv_v1_Pull__Output } from '../../ringkv/v1/Pull.js';
import type { RangeTransfer as _ringkv_v1_RangeTransfer, RangeTransfer__Output as _ringkv_v1_RangeTransfer__Output } from '../../ringkv/v1/RangeTransfer.js';
import type { Drive as _ringkv_v1_Drive, Drive__Output as _ringkv_v1_Drive__Output } from '../../ringkv/v1/Drive.js';

export interface TransfersResponse {
  'nodeId'?: (string);
  /**
   * Movements in progress as this node sees them, in words ("n4 is joining").
   */
  'movements'?: (string)[];
  /**
   * Ranges this node pulls (incoming), per movement.
   */
  'pulls'?: (_ringkv_v1_Pull)[];
  /**
   * Ranges this node streams to others now (outgoing).
   */
  'outgoing'?: (_ringkv_v1_RangeTransfer)[];
  /**
   * The movement this node drives, if any.
   */
  'drive'?: (_ringkv_v1_Drive | null);
  /**
   * The throttle on what it sends, bytes per second (0: unthrottled).
   */
  'streamBytesPerSecond'?: (number | string);
}

export interface TransfersResponse__Output {
  'nodeId': (string);
  /**
   * Movements in progress as this node sees them, in words ("n4 is joining").
   */
  'movements': (string)[];
  /**
   * Ranges this node pulls (incoming), per movement.
   */
  'pulls': (_ringkv_v1_Pull__Output)[];
  /**
   * Ranges this node streams to others now (outgoing).
   */
  'outgoing': (_ringkv_v1_RangeTransfer__Output)[];
  /**
   * The movement this node drives, if any.
   */
  'drive': (_ringkv_v1_Drive__Output | null);
  /**
   * The throttle on what it sends, bytes per second (0: unthrottled).
   */
  'streamBytesPerSecond': (number);
}
