// Original file: proto/ringkv/v1/admin.proto


export interface StagedChange {
  /**
   * join | leave | remove
   */
  'kind'?: (string);
  'node'?: (string);
}

export interface StagedChange__Output {
  /**
   * join | leave | remove
   */
  'kind': (string);
  'node': (string);
}
