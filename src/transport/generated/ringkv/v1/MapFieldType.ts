// Original file: proto/ringkv/v1/kv.proto

/**
 * A map field's type.
 */
export const MapFieldType = {
  MAP_FIELD_TYPE_UNSPECIFIED: 'MAP_FIELD_TYPE_UNSPECIFIED',
  /**
   * One value of bytes; concurrent assigns: the last writer wins.
   */
  MAP_FIELD_TYPE_REGISTER: 'MAP_FIELD_TYPE_REGISTER',
  /**
   * Enabled or not; a concurrent enable wins over a disable that did not see it.
   */
  MAP_FIELD_TYPE_FLAG: 'MAP_FIELD_TYPE_FLAG',
  /**
   * A PN counter, as a counter bucket's keys.
   */
  MAP_FIELD_TYPE_COUNTER: 'MAP_FIELD_TYPE_COUNTER',
  /**
   * An observed-remove set of byte strings, as a set bucket's keys.
   */
  MAP_FIELD_TYPE_SET: 'MAP_FIELD_TYPE_SET',
  /**
   * A map nested in the map: only in a path, before the field it holds.
   */
  MAP_FIELD_TYPE_MAP: 'MAP_FIELD_TYPE_MAP',
} as const;

/**
 * A map field's type.
 */
export type MapFieldType =
  | 'MAP_FIELD_TYPE_UNSPECIFIED'
  | 0
  /**
   * One value of bytes; concurrent assigns: the last writer wins.
   */
  | 'MAP_FIELD_TYPE_REGISTER'
  | 1
  /**
   * Enabled or not; a concurrent enable wins over a disable that did not see it.
   */
  | 'MAP_FIELD_TYPE_FLAG'
  | 2
  /**
   * A PN counter, as a counter bucket's keys.
   */
  | 'MAP_FIELD_TYPE_COUNTER'
  | 3
  /**
   * An observed-remove set of byte strings, as a set bucket's keys.
   */
  | 'MAP_FIELD_TYPE_SET'
  | 4
  /**
   * A map nested in the map: only in a path, before the field it holds.
   */
  | 'MAP_FIELD_TYPE_MAP'
  | 5

/**
 * A map field's type.
 */
export type MapFieldType__Output = typeof MapFieldType[keyof typeof MapFieldType]
