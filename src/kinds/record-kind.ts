/**
 * What the store needs to know of a kind of record whose replicas converge by joining
 * their states (a compare-and-set register's acceptors): how to read and write its record,
 * join two states, and tell whether a join changed anything. With that, the store merges
 * what another replica sends, delivers hints, and runs the kind's steps under the key's
 * lock, without knowing the kind's layout or rules.
 *
 * Owns: the contract between a kind's folder and the store. Must not: do I/O.
 */

/** A decoded record of a joined kind, and (a hint's) the time it has been held since. */
export interface DecodedState<S> {
  readonly state: S;
  readonly heldSince?: number | undefined;
}

export interface JoinedKind<S> {
  /** What its records hold, for messages ('a compare-and-set register'). */
  readonly name: string;
  /** Its records' first byte (formats.ts). */
  readonly format: number;
  /** A record's state; throws DecodeError (record-bytes.ts) saying what is wrong. */
  decode(bytes: Uint8Array): DecodedState<S>;
  /** The record of a state: canonical (equal states, equal bytes), `heldSince` for a hint's. */
  encode(state: S, heldSince?: number): Buffer;
  /** The join of two replicas' states: commutative, associative, idempotent. */
  join(a: S, b: S): S;
  /** True when the two states are equal (a join that changed nothing writes nothing). */
  same(a: S, b: S): boolean;
  /** The state of a key that has no record yet. */
  readonly empty: S;
}
