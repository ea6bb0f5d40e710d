// Original file: proto/ringkv/internal/v1/replica.proto


/**
 * One step of a kind of record on this replica's state of a key (src/kinds: each kind
 * names its steps and says how their argument and reply are written).
 */
export interface StepRequest {
  'key'?: (Buffer | Uint8Array | string);
  /**
   * The kind: its records' format byte (5: a compare-and-set register).
   */
  'kind'?: (number);
  /**
   * The step's name within its kind ("paxosPrepare", "paxosPropose", "paxosCommit").
   */
  'step'?: (string);
  /**
   * The step's argument, in the step's own bytes.
   */
  'arg'?: (Buffer | Uint8Array | string);
}

/**
 * One step of a kind of record on this replica's state of a key (src/kinds: each kind
 * names its steps and says how their argument and reply are written).
 */
export interface StepRequest__Output {
  'key': (Buffer);
  /**
   * The kind: its records' format byte (5: a compare-and-set register).
   */
  'kind': (number);
  /**
   * The step's name within its kind ("paxosPrepare", "paxosPropose", "paxosCommit").
   */
  'step': (string);
  /**
   * The step's argument, in the step's own bytes.
   */
  'arg': (Buffer);
}
