/**
 * What the store needs to know of a kind of record whose replicas converge by joining
 * their states (a compare-and-set register's acceptors): how to read and write its record,
 * join two states, and tell whether a join changed anything. With that, the store merges
 * what another replica sends, delivers hints, and runs the kind's steps under the key's
 * lock, without knowing the kind's layout or rules.
 *
 * A kind's steps are what a coordinator asks of a key's replicas. Each names itself and
 * brings the codecs of its argument and reply, so that one replica call (`step`, kind and
 * step by name, argument and reply as bytes) carries every step of every kind: a new step
 * is written in its kind's folder alone.
 *
 * Owns: the contract between a kind's folder and the store and the replica call. Must
 * not: do I/O.
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
  /** Its steps, by name (a name is unique across kinds: it labels calls and metrics). */
  readonly steps: Readonly<Record<string, AnyStep<S>>>;
}

/** A step of any argument and reply: the replica call carries them as bytes, through the step's own codecs. */
export type AnyStep<S> = KindStep<S, any, any>;

/** A value as bytes and back: a step's argument or reply between nodes. */
export interface StepCodec<T> {
  encode(value: T): Buffer;
  /** Throws DecodeError (record-bytes.ts) saying what is wrong. */
  decode(bytes: Uint8Array): T;
}

/** What a step's checks need of the replica it runs on. */
export interface StepLimits {
  /** The largest value a record may hold, bytes. */
  readonly maxValueBytes: number;
}

/** One operation on a key's state, applied by the store under the key's lock and written before it answers. */
export interface KindStep<S, A, R> {
  /** Its name in the replica call (`paxosPrepare`). */
  readonly name: string;
  /** What it is, for messages (`a Paxos prepare`). */
  readonly what: string;
  /** True when it writes a value: refused on the keys of a deleted bucket. */
  readonly writesValue: boolean;
  readonly arg: StepCodec<A>;
  readonly reply: StepCodec<R>;
  /** Refuses a malformed argument (a KvError: KV_BAD_OPTION, KV_VALUE_TOO_LARGE, ...) before the key is locked. */
  check(arg: A, limits: StepLimits): void;
  /** The state after the step, and its reply. */
  run(state: S, arg: A): { state: S; reply: R };
}
