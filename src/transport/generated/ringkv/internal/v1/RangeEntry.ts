// Original file: proto/ringkv/internal/v1/handoff.proto


export interface RangeEntry {
  'key'?: (Buffer | Uint8Array | string);
  /**
   * The key's record as the source stores it: the receiver merges it.
   */
  'record'?: (Buffer | Uint8Array | string);
}

export interface RangeEntry__Output {
  'key': (Buffer);
  /**
   * The key's record as the source stores it: the receiver merges it.
   */
  'record': (Buffer);
}
