// Original file: proto/ringkv/internal/v1/repair.proto


export interface TreeDigestsResponse {
  /**
   * 16 hex digits each, in the order of the indices asked for.
   */
  'digests'?: (string)[];
}

export interface TreeDigestsResponse__Output {
  /**
   * 16 hex digits each, in the order of the indices asked for.
   */
  'digests': (string)[];
}
