// Original file: proto/ringkv/internal/v1/repair.proto


export interface TreeSession {
  'cluster'?: (string);
  /**
   * Chosen by the repairer; one tree per session.
   */
  'session'?: (string);
  /**
   * Tokens, 16 hex digits each; the range wraps when end < start, and start == end is the whole ring.
   */
  'start'?: (string);
  'end'?: (string);
  'depth'?: (number);
  /**
   * Node id of the repairer, for logs.
   */
  'requester'?: (string);
}

export interface TreeSession__Output {
  'cluster': (string);
  /**
   * Chosen by the repairer; one tree per session.
   */
  'session': (string);
  /**
   * Tokens, 16 hex digits each; the range wraps when end < start, and start == end is the whole ring.
   */
  'start': (string);
  'end': (string);
  'depth': (number);
  /**
   * Node id of the repairer, for logs.
   */
  'requester': (string);
}
