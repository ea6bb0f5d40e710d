// Original file: proto/ringkv/internal/v1/handoff.proto


export interface FetchRange {
  'start'?: (string);
  'end'?: (string);
  /**
   * Node ids to pull from, best first.
   */
  'sources'?: (string)[];
  /**
   * The first source is gone for good (removed or replaced): pull from the others at once.
   */
  'leaverGone'?: (boolean);
  /**
   * The N class of the range and the planner's classes, as in StreamRangeRequest.
   */
  'n'?: (number);
  'classes'?: (number)[];
}

export interface FetchRange__Output {
  'start': (string);
  'end': (string);
  /**
   * Node ids to pull from, best first.
   */
  'sources': (string)[];
  /**
   * The first source is gone for good (removed or replaced): pull from the others at once.
   */
  'leaverGone': (boolean);
  /**
   * The N class of the range and the planner's classes, as in StreamRangeRequest.
   */
  'n': (number);
  'classes': (number)[];
}
