// Original file: proto/ringkv/internal/v1/replica.proto


export interface MergeResponse {
  /**
   * False when the record held nothing new here.
   */
  'changed'?: (boolean);
}

export interface MergeResponse__Output {
  /**
   * False when the record held nothing new here.
   */
  'changed': (boolean);
}
