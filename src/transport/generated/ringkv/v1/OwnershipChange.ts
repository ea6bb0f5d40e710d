// Original file: proto/ringkv/v1/admin.proto


export interface OwnershipChange {
  'node'?: (string);
  'before'?: (number | string);
  'after'?: (number | string);
}

export interface OwnershipChange__Output {
  'node': (string);
  'before': (number);
  'after': (number);
}
