// Original file: proto/ringkv/internal/v1/replica.proto


export interface StepResponse {
  /**
   * The step's reply, in the step's own bytes.
   */
  'reply'?: (Buffer | Uint8Array | string);
}

export interface StepResponse__Output {
  /**
   * The step's reply, in the step's own bytes.
   */
  'reply': (Buffer);
}
