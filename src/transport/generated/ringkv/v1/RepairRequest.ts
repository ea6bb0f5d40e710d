// Original file: proto/ringkv/v1/admin.proto


export interface RepairRequest {
  /**
   * Tokens, 16 hex digits each, or both empty for every range the node replicates.
   */
  'start'?: (string);
  'end'?: (string);
}

export interface RepairRequest__Output {
  /**
   * Tokens, 16 hex digits each, or both empty for every range the node replicates.
   */
  'start': (string);
  'end': (string);
}
