// Original file: proto/ringkv/v1/admin.proto


export interface Endpoint {
  'id'?: (string);
  'address'?: (string);
  'zone'?: (string);
  /**
   * This node's opinion.
   */
  'up'?: (boolean);
  /**
   * Set on a fallback: the down replica it stands in for (it keeps a hint for it).
   */
  'hintFor'?: (string);
}

export interface Endpoint__Output {
  'id': (string);
  'address': (string);
  'zone': (string);
  /**
   * This node's opinion.
   */
  'up': (boolean);
  /**
   * Set on a fallback: the down replica it stands in for (it keeps a hint for it).
   */
  'hintFor': (string);
}
