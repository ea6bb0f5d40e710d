// Original file: proto/ringkv/internal/v1/control.proto


export interface RepairRangeRequest {
  /**
   * As ControlRequest's.
   */
  'cluster'?: (string);
  'from'?: (string);
  /**
   * The range (start, end], 16 hex digits each.
   */
  'start'?: (string);
  'end'?: (string);
  /**
   * The N class repaired: 0 for every key (one class in use).
   */
  'n'?: (number);
  /**
   * The caller's N classes (the bucket table's distinct n), so that both sides mean the same keys.
   */
  'classes'?: (number)[];
  /**
   * The unit's replicas as the caller's ring has them (the answering node among them).
   */
  'replicas'?: (string)[];
}

export interface RepairRangeRequest__Output {
  /**
   * As ControlRequest's.
   */
  'cluster': (string);
  'from': (string);
  /**
   * The range (start, end], 16 hex digits each.
   */
  'start': (string);
  'end': (string);
  /**
   * The N class repaired: 0 for every key (one class in use).
   */
  'n': (number);
  /**
   * The caller's N classes (the bucket table's distinct n), so that both sides mean the same keys.
   */
  'classes': (number)[];
  /**
   * The unit's replicas as the caller's ring has them (the answering node among them).
   */
  'replicas': (string)[];
}
