// Original file: proto/ringkv/internal/v1/control.proto


export interface BucketKeysRequest {
  /**
   * As ControlRequest's.
   */
  'cluster'?: (string);
  'from'?: (string);
  'name'?: (string);
  'limit'?: (number);
}

export interface BucketKeysRequest__Output {
  /**
   * As ControlRequest's.
   */
  'cluster': (string);
  'from': (string);
  'name': (string);
  'limit': (number);
}
