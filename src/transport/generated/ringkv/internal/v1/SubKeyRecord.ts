// Original file: proto/ringkv/internal/v1/replica.proto


/**
 * A sub-key and its record.
 */
export interface SubKeyRecord {
  'key'?: (Buffer | Uint8Array | string);
  'record'?: (Buffer | Uint8Array | string);
  /**
   * A counter field's increment (WriteMany): the delta the other replicas merge, as
   * CounterUpdateResponse's; record is the full state. Empty otherwise.
   */
  'delta'?: (Buffer | Uint8Array | string);
}

/**
 * A sub-key and its record.
 */
export interface SubKeyRecord__Output {
  'key': (Buffer);
  'record': (Buffer);
  /**
   * A counter field's increment (WriteMany): the delta the other replicas merge, as
   * CounterUpdateResponse's; record is the full state. Empty otherwise.
   */
  'delta': (Buffer);
}
