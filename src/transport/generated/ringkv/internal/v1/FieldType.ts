// Original file: proto/ringkv/internal/v1/replica.proto

/**
 * A data type's field's type, as a path names it (buckets/subkeys.ts).
 */
export const FieldType = {
  FIELD_TYPE_UNSPECIFIED: 'FIELD_TYPE_UNSPECIFIED',
  FIELD_TYPE_REGISTER: 'FIELD_TYPE_REGISTER',
  FIELD_TYPE_FLAG: 'FIELD_TYPE_FLAG',
  FIELD_TYPE_COUNTER: 'FIELD_TYPE_COUNTER',
  FIELD_TYPE_SET: 'FIELD_TYPE_SET',
  FIELD_TYPE_MAP: 'FIELD_TYPE_MAP',
} as const;

/**
 * A data type's field's type, as a path names it (buckets/subkeys.ts).
 */
export type FieldType =
  | 'FIELD_TYPE_UNSPECIFIED'
  | 0
  | 'FIELD_TYPE_REGISTER'
  | 1
  | 'FIELD_TYPE_FLAG'
  | 2
  | 'FIELD_TYPE_COUNTER'
  | 3
  | 'FIELD_TYPE_SET'
  | 4
  | 'FIELD_TYPE_MAP'
  | 5

/**
 * A data type's field's type, as a path names it (buckets/subkeys.ts).
 */
export type FieldType__Output = typeof FieldType[keyof typeof FieldType]
