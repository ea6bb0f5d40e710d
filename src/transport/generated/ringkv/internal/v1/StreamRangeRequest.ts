// Original file: proto/ringkv/internal/v1/handoff.proto


export interface StreamRangeRequest {
  /**
   * Tokens, 16 hex digits each; the range wraps when end < start, and start == end is the whole ring.
   */
  'start'?: (string);
  'end'?: (string);
  /**
   * Resume strictly after this user key (in token order); empty: from the start.
   */
  'afterKey'?: (Buffer | Uint8Array | string);
  /**
   * Node id of the requester, for logs.
   */
  'requester'?: (string);
  'cluster'?: (string);
  /**
   * The N class to stream: only keys whose bucket's n is `n`; 0: every key (what a release
   * without buckets sends, and what a cluster with one n in use sends).
   */
  'n'?: (number);
  /**
   * The distinct n of the requester's bucket table (its N classes), ascending; the sender
   * refuses (FAILED_PRECONDITION) when its own differ: the plan was made on another table.
   * Empty: a release without buckets.
   */
  'classes'?: (number)[];
}

export interface StreamRangeRequest__Output {
  /**
   * Tokens, 16 hex digits each; the range wraps when end < start, and start == end is the whole ring.
   */
  'start': (string);
  'end': (string);
  /**
   * Resume strictly after this user key (in token order); empty: from the start.
   */
  'afterKey': (Buffer);
  /**
   * Node id of the requester, for logs.
   */
  'requester': (string);
  'cluster': (string);
  /**
   * The N class to stream: only keys whose bucket's n is `n`; 0: every key (what a release
   * without buckets sends, and what a cluster with one n in use sends).
   */
  'n': (number);
  /**
   * The distinct n of the requester's bucket table (its N classes), ascending; the sender
   * refuses (FAILED_PRECONDITION) when its own differ: the plan was made on another table.
   * Empty: a release without buckets.
   */
  'classes': (number)[];
}
