// Original file: proto/ringkv/internal/v1/replica.proto


export interface PaxosResponse {
  /**
   * A prepare: promised; a proposal: accepted; a commit: always.
   */
  'ok'?: (boolean);
  /**
   * A prepare or a refused proposal: a register record (format 5) whose promise is the
   * ballot promised (refused: the higher one held), with (a promise's) the acceptor's
   * accepted and committed proposals. Empty for a commit and an accepted proposal.
   */
  'state'?: (Buffer | Uint8Array | string);
}

export interface PaxosResponse__Output {
  /**
   * A prepare: promised; a proposal: accepted; a commit: always.
   */
  'ok': (boolean);
  /**
   * A prepare or a refused proposal: a register record (format 5) whose promise is the
   * ballot promised (refused: the higher one held), with (a promise's) the acceptor's
   * accepted and committed proposals. Empty for a commit and an accepted proposal.
   */
  'state': (Buffer);
}
