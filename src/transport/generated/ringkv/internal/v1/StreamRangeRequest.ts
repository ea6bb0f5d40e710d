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
}
