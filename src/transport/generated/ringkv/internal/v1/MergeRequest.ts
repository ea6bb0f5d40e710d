// Original file: proto/ringkv/internal/v1/replica.proto


/**
 * Merge a key's record into this node's versions of it (replication, read repair, hint
 * delivery). With hint_for set, keep it as a hint for that node instead.
 */
export interface MergeRequest {
  'key'?: (Buffer | Uint8Array | string);
  'record'?: (Buffer | Uint8Array | string);
  /**
   * Node id of the down replica this node stands in for; empty: this node is a replica.
   */
  'hintFor'?: (string);
}

/**
 * Merge a key's record into this node's versions of it (replication, read repair, hint
 * delivery). With hint_for set, keep it as a hint for that node instead.
 */
export interface MergeRequest__Output {
  'key': (Buffer);
  'record': (Buffer);
  /**
   * Node id of the down replica this node stands in for; empty: this node is a replica.
   */
  'hintFor': (string);
}
