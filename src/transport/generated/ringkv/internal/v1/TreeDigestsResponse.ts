// Original file: proto/ringkv/internal/v1/repair.proto


export interface TreeDigestsResponse {
  /**
   * 16 hex digits each, in the order of the indices asked for.
   */
  'digests'?: (string)[];
  /**
   * The digests are of a kept tree (the session asked for one, and this node has it). A
   * release without kept trees never sets it: its digests are of a scan.
   */
  'kept'?: (boolean);
}

export interface TreeDigestsResponse__Output {
  /**
   * 16 hex digits each, in the order of the indices asked for.
   */
  'digests': (string)[];
  /**
   * The digests are of a kept tree (the session asked for one, and this node has it). A
   * release without kept trees never sets it: its digests are of a scan.
   */
  'kept': (boolean);
}
