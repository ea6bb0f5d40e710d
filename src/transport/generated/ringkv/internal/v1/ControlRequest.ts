// Original file: proto/ringkv/internal/v1/control.proto


export interface ControlRequest {
  /**
   * The caller's cluster name: a node of another cluster is refused (FAILED_PRECONDITION).
   */
  'cluster'?: (string);
  /**
   * The calling node's id, for the answering node's log.
   */
  'from'?: (string);
}

export interface ControlRequest__Output {
  /**
   * The caller's cluster name: a node of another cluster is refused (FAILED_PRECONDITION).
   */
  'cluster': (string);
  /**
   * The calling node's id, for the answering node's log.
   */
  'from': (string);
}
