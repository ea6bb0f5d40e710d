// Original file: proto/ringkv/internal/v1/repair.proto


export interface TreeSession {
  'cluster'?: (string);
  /**
   * Chosen by the repairer; one tree per session.
   */
  'session'?: (string);
  /**
   * Tokens, 16 hex digits each; the range wraps when end < start, and start == end is the whole ring.
   */
  'start'?: (string);
  'end'?: (string);
  'depth'?: (number);
  /**
   * Node id of the repairer, for logs.
   */
  'requester'?: (string);
  /**
   * The N class compared: the tree covers only keys whose bucket's n is `n`; 0: every key
   * (a release without buckets, or a cluster with one n in use).
   */
  'n'?: (number);
  /**
   * The repairer's N classes, ascending; refused (FAILED_PRECONDITION) when this node's differ.
   */
  'classes'?: (number)[];
  /**
   * Answer from this node's tree kept on write (storage/kept-trees.ts) of the unit (n, range)
   * at `depth`, a copy taken at the session's first call, instead of a scan. A node that has
   * none ready at that depth answers TreeDigests with `kept` false and no digests; the
   * repairer then starts a scan session (never mixing kept and scan trees: they hash
   * expired records differently).
   */
  'kept'?: (boolean);
}

export interface TreeSession__Output {
  'cluster': (string);
  /**
   * Chosen by the repairer; one tree per session.
   */
  'session': (string);
  /**
   * Tokens, 16 hex digits each; the range wraps when end < start, and start == end is the whole ring.
   */
  'start': (string);
  'end': (string);
  'depth': (number);
  /**
   * Node id of the repairer, for logs.
   */
  'requester': (string);
  /**
   * The N class compared: the tree covers only keys whose bucket's n is `n`; 0: every key
   * (a release without buckets, or a cluster with one n in use).
   */
  'n': (number);
  /**
   * The repairer's N classes, ascending; refused (FAILED_PRECONDITION) when this node's differ.
   */
  'classes': (number)[];
  /**
   * Answer from this node's tree kept on write (storage/kept-trees.ts) of the unit (n, range)
   * at `depth`, a copy taken at the session's first call, instead of a scan. A node that has
   * none ready at that depth answers TreeDigests with `kept` false and no digests; the
   * repairer then starts a scan session (never mixing kept and scan trees: they hash
   * expired records differently).
   */
  'kept': (boolean);
}
