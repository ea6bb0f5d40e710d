// Original file: proto/ringkv/v1/admin.proto


export interface TokenRange {
  /**
   * Tokens in (start, end], 16 hex digits each; the range wraps when end < start.
   */
  'start'?: (string);
  'end'?: (string);
  'replicas'?: (string)[];
}

export interface TokenRange__Output {
  /**
   * Tokens in (start, end], 16 hex digits each; the range wraps when end < start.
   */
  'start': (string);
  'end': (string);
  'replicas': (string)[];
}
