// Original file: proto/ringkv/v1/kv.proto

import type { MapField as _ringkv_v1_MapField, MapField__Output as _ringkv_v1_MapField__Output } from '../../ringkv/v1/MapField.js';
import type { MapRemove as _ringkv_v1_MapRemove, MapRemove__Output as _ringkv_v1_MapRemove__Output } from '../../ringkv/v1/MapRemove.js';
import type { Long } from '@grpc/proto-loader';

export interface MapOp {
  /**
   * The field, from the map's top: every field but the last a map (at most 4 deep). Its
   * last field's type says which ops apply.
   */
  'path'?: (_ringkv_v1_MapField)[];
  /**
   * A register: its new value (at most the node's value limit).
   */
  'assign'?: (Buffer | Uint8Array | string);
  /**
   * A flag: enable it (true; false is refused: disable is a remove).
   */
  'enable'?: (boolean);
  /**
   * A counter: add this amount (negative subtracts; not 0, within +-(2^53 - 1)).
   */
  'increment'?: (number | string | Long);
  /**
   * A set: add this element (1 to 1,024 bytes).
   */
  'add'?: (Buffer | Uint8Array | string);
  /**
   * A register (clear), a flag (disable), a counter (reset) or a set's element (remove),
   * as a read saw it.
   */
  'remove'?: (_ringkv_v1_MapRemove | null);
  'op'?: "assign"|"enable"|"increment"|"add"|"remove";
}

export interface MapOp__Output {
  /**
   * The field, from the map's top: every field but the last a map (at most 4 deep). Its
   * last field's type says which ops apply.
   */
  'path': (_ringkv_v1_MapField__Output)[];
  /**
   * A register: its new value (at most the node's value limit).
   */
  'assign'?: (Buffer);
  /**
   * A flag: enable it (true; false is refused: disable is a remove).
   */
  'enable'?: (boolean);
  /**
   * A counter: add this amount (negative subtracts; not 0, within +-(2^53 - 1)).
   */
  'increment'?: (number);
  /**
   * A set: add this element (1 to 1,024 bytes).
   */
  'add'?: (Buffer);
  /**
   * A register (clear), a flag (disable), a counter (reset) or a set's element (remove),
   * as a read saw it.
   */
  'remove'?: (_ringkv_v1_MapRemove__Output | null);
}
