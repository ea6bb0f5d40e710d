// Original file: proto/ringkv/v1/kv.proto

import type { MapField as _ringkv_v1_MapField, MapField__Output as _ringkv_v1_MapField__Output } from '../../ringkv/v1/MapField.js';

/**
 * One live entry: a register's value, an enabled flag, a counter's value, or an element of
 * a set field.
 */
export interface MapEntry {
  /**
   * The field, from the map's top; its last field's type says which of the rest is set.
   */
  'path'?: (_ringkv_v1_MapField)[];
  /**
   * A register's value.
   */
  'value'?: (Buffer | Uint8Array | string);
  /**
   * A counter's value in decimal.
   */
  'counter'?: (string);
  /**
   * A set field's element.
   */
  'element'?: (Buffer | Uint8Array | string);
  /**
   * What a remove of this entry needs (a counter's: its reset, of the increments this read
   * saw; the counter's state, up to some KiB).
   */
  'context'?: (Buffer | Uint8Array | string);
}

/**
 * One live entry: a register's value, an enabled flag, a counter's value, or an element of
 * a set field.
 */
export interface MapEntry__Output {
  /**
   * The field, from the map's top; its last field's type says which of the rest is set.
   */
  'path': (_ringkv_v1_MapField__Output)[];
  /**
   * A register's value.
   */
  'value': (Buffer);
  /**
   * A counter's value in decimal.
   */
  'counter': (string);
  /**
   * A set field's element.
   */
  'element': (Buffer);
  /**
   * What a remove of this entry needs (a counter's: its reset, of the increments this read
   * saw; the counter's state, up to some KiB).
   */
  'context': (Buffer);
}
