// Original file: proto/ringkv/v1/admin.proto


export interface MovementReply {
  /**
   * The movement's id (empty when nothing needed to move).
   */
  'move'?: (string);
  'message'?: (string);
}

export interface MovementReply__Output {
  /**
   * The movement's id (empty when nothing needed to move).
   */
  'move': (string);
  'message': (string);
}
