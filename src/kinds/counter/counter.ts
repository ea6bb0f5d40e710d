/**
 * The counter data type: a PN counter whose increments are safe to send
 * twice. Pure, as versions.ts is; docs/architecture.md (src/kinds) places it.
 *
 * Owns: the counter's state and its algebra — the increment mutator (`increment`, which
 * returns the new state and the delta to send to the other replicas), the join (`join`),
 * the reset of what a read saw (`reset`, `resetAboveEntry`), the value (`value`), the issuer's duplicate check (`isDuplicate`), the bounded op log
 * (`trim`, LOG_MAX) and the voids a join infers (`implied`). Its bytes (record format 4,
 * deltas, a field's context) are counter-record.ts's. Must not:
 * do I/O, read a clock, draw randomness or pick actors (the store decides which actor
 * issues a dot, as for versions). Used by the store (store.ts: counterUpdate, and the
 * format dispatch of its merges), the hint store (hints.ts joins hinted deltas) and read
 * resolution (replies.ts resolveCounterReplies); codec.ts's frame checks, range hashes and
 * kept trees take format 4 as they take the others; the replica wire
 * (transport/replica-codec.ts) carries its updates and the coordinator issues them.
 *
 * State, per key:
 *  - entries, one per actor that ever incremented the key, sorted by actor: `floor`, the
 *    actor's highest dot (counter), and `p`/`n`, the sums of its positive amounts and of
 *    its negative ones (as magnitudes) over its dots 1..floor. A prefix sum is a function
 *    of the actor's dots, so the entry with the larger floor includes the other's.
 *  - log: the increments that carried a write id, each with its dot, amount and `seq`, a
 *    key-wide Lamport number (one past the greatest in the state when issued; no wall
 *    clock). Sorted by dot; at most LOG_MAX, the greatest by (seq, actor, counter).
 *  - voids: dots counted in the entries whose increment is also counted under a lesser
 *    dot — one increment issued twice, by two issuers or one that no longer logs it.
 *    Sorted by dot.
 *  - resets: per actor, the entry a reset saw (`reset`): its floor and sums, which the
 *    value leaves out from then on, with the voids on dots up to that floor. Sorted by
 *    actor; a reset's entry is never above the state's entry of its actor.
 *  value = Σ (p − n) − Σ resets' (p − n) − Σ amounts of voids above their actor's reset.
 *
 * Join: entries and resets by the larger floor; logs united and trimmed; voids united, plus
 * `implied` of the united log: every dot whose (write id, amount) also sits on a lesser
 * dot (by actor bytes, then counter). A void subtracts a dot only where a lesser dot of
 * the same increment is counted, and the least dot of an increment is never voided, so
 * an increment is never lost. Within the log window the join is commutative, associative
 * and idempotent to the byte (test/property/counter.property.test.ts). Past it, the two
 * copies of an increment issued twice may never share a log (one was trimmed before the
 * other arrived): then it counts twice, and two join orders may differ by that void —
 * at worst twice, never lost (docs/limits.md#data-types).
 *
 * Deltas apply in order (`applyDelta`, CounterDelta): an increment's delta is its actor's
 * entry (a prefix sum over all its dots) with only the new op logged, so a replica that
 * missed an earlier delta of that actor would count the earlier dots without their ops,
 * and a copy of one of those requests it holds from another issuer twice. Such a replica
 * takes the issuer's full state instead; a duplicate is answered with the full state. So
 * every dot with a write id a replica covers has its op in its log (or was trimmed), and
 * within the window no replica, hint or read counts a request twice at any step.
 *
 * Record format 4 (integers unsigned LEB128 varints, minimal; counts first):
 *   u8 format = 4 | u8 flags (1: owner epoch; 2: held since; 4: a delta's base) | [owner epoch] | [held since ms]
 *   entries: n, each actor (16 bytes, ascending) + floor (≥ 1) + p + n (p + n ≥ floor)
 *   [base: actor index + floor (below its entry's): a delta's bytes only, never a record]
 *   log:     n (≤ LOG_MAX), each actor index + counter (1..floor) + write id (8 bytes)
 *            + u8 sign (0: +, 1: −) + magnitude (≥ 1) + seq (≥ 1), ascending by dot
 *   voids:   n, each actor index + counter (1..floor) + u8 sign + magnitude, ascending
 *   [resets: n ≥ 1, each actor index + floor (1..its entry's) + p + n (each at most its
 *            entry's), ascending; absent when none, so a record without is unchanged]
 *   u32 big-endian CRC-32 of everything before it
 * Canonical: equal states encode to equal bytes, and a decode accepts only what the
 * encoder writes (minimal varints, order, every logged duplicate voided), and no void that
 * could only lose increments (checkVoids). The header is
 * the other formats' (codec.ts), flags and all: this node's bookkeeping, which a receiver
 * ignores and range hashes skip. A counter is never deleted, so flag 2 is only ever a
 * hint's time (hints.ts keeps a hint's age where a record keeps its deleted-at).
 */
import { createHash } from 'node:crypto';
import { ACTOR_BYTES, WRITE_ID_BYTES, type Actor, type WriteId } from '../dots.js';
import { KvError } from '../kv-errors.js';

/** The logged increments a counter keeps at most. */
export const LOG_MAX = 512;

/** One actor's contribution: its dots 1..floor, summed. */
export interface CounterEntry {
  readonly actor: Actor;
  readonly floor: number;
  /** Σ of the positive amounts of dots 1..floor. */
  readonly p: number;
  /** Σ of the magnitudes of the negative amounts of dots 1..floor. */
  readonly n: number;
}

/** An increment that carried a write id, at its dot. */
export interface LoggedOp {
  readonly actor: Actor;
  readonly counter: number;
  readonly id: WriteId;
  /** Nonzero; negative for a decrement. */
  readonly amount: number;
  /** Key-wide Lamport number: what `trim` keeps the greatest of. */
  readonly seq: number;
}

/** A dot whose increment is counted under a lesser dot too: its amount is taken off. */
export interface Void {
  readonly actor: Actor;
  readonly counter: number;
  readonly amount: number;
}

export interface CounterState {
  /** Sorted by actor. */
  readonly entries: readonly CounterEntry[];
  /** Sorted by (actor, counter); at most LOG_MAX. */
  readonly log: readonly LoggedOp[];
  /** Sorted by (actor, counter). */
  readonly voids: readonly Void[];
  /**
   * Sorted by actor: per actor, the entry a reset saw, left out of the value (absent:
   * none). Each is at most the state's entry of its actor (floor and sums).
   */
  readonly resets?: readonly CounterEntry[];
}

export const EMPTY_COUNTER: CounterState = Object.freeze({
  entries: Object.freeze([]),
  log: Object.freeze([]),
  voids: Object.freeze([]),
});

export interface Dot {
  readonly actor: Actor;
  readonly counter: number;
}

export function byDot(a: Dot, b: Dot): number {
  return a.actor < b.actor ? -1 : a.actor > b.actor ? 1 : a.counter - b.counter;
}

function byActor(a: CounterEntry, b: CounterEntry): number {
  return a.actor < b.actor ? -1 : a.actor > b.actor ? 1 : 0;
}

/** The order `trim` keeps the greatest of: seq, then dot (so distinct dots never tie). */
function byRecency(a: LoggedOp, b: LoggedOp): number {
  return a.seq - b.seq || byDot(a, b);
}

/**
 * The union of two lists sorted by `order`, one element per key: where both hold one,
 * `pick` chooses (deterministically, so the union is a join).
 */
function unite<T>(
  x: readonly T[],
  y: readonly T[],
  order: (a: T, b: T) => number,
  pick: (a: T, b: T) => T,
): readonly T[] {
  if (y.length === 0) return x;
  if (x.length === 0) return y;
  const out: T[] = [];
  let i = 0,
    j = 0;
  while (i < x.length || j < y.length) {
    const a = x[i],
      b = y[j];
    const c = a === undefined ? 1 : b === undefined ? -1 : order(a, b);
    if (c === 0) (out.push(pick(a!, b!)), i++, j++);
    else if (c < 0) (out.push(a!), i++);
    else (out.push(b!), j++);
  }
  return out;
}

/*
 * The picks for one key held on both sides. Honest replicas hold equal elements (a dot
 * names one increment; a floor fixes its prefix sums); unequal ones are corruption, and
 * the greater under a total order wins so the join still commutes and associates.
 */
function laterEntry(a: CounterEntry, b: CounterEntry): CounterEntry {
  return a.floor !== b.floor ? (a.floor > b.floor ? a : b) : a.p !== b.p ? (a.p > b.p ? a : b) : a.n >= b.n ? a : b;
}

function greaterOp(a: LoggedOp, b: LoggedOp): LoggedOp {
  return a.seq !== b.seq
    ? a.seq > b.seq
      ? a
      : b
    : a.id !== b.id
      ? a.id > b.id
        ? a
        : b
      : a.amount >= b.amount
        ? a
        : b;
}

/** Of two voids on one dot (corruption: honest ones are equal), the smaller: rather count twice than lose. */
function keptVoid(a: Void, b: Void): Void {
  const ma = Math.abs(a.amount),
    mb = Math.abs(b.amount);
  return ma !== mb ? (ma < mb ? a : b) : a.amount >= b.amount ? a : b;
}

/** Actors whose entries in `a` and `b` share a floor but not sums: corruption, for the caller to log (the join picks one deterministically). */
export function entryConflicts(a: CounterState, b: CounterState): Actor[] {
  const out: Actor[] = [];
  for (const e of a.entries) {
    const f = b.entries.find((x) => x.actor === e.actor);
    if (f !== undefined && f.floor === e.floor && (f.p !== e.p || f.n !== e.n)) out.push(e.actor);
  }
  return out;
}

/** The greatest seq the state holds (0 for none): the log keeps the greatest, so this is the greatest ever seen here. */
function maxSeq(log: readonly LoggedOp[]): number {
  let max = 0;
  for (const op of log) if (op.seq > max) max = op.seq;
  return max;
}

/**
 * The LOG_MAX (or `max`) greatest ops by (seq, actor, counter), still sorted by dot. A
 * function of the set alone, and top-K: trim(trim(X) ∪ Y) = trim(X ∪ Y), so replicas that
 * hold the same union keep the same log.
 */
export function trim(log: readonly LoggedOp[], max = LOG_MAX): readonly LoggedOp[] {
  if (log.length <= max) return log;
  if (max <= 0) return [];
  if (log.length === max + 1) {
    // The usual case on a hot key (one op past the bound): drop the least, no sort.
    let least = log[0]!;
    for (const op of log) if (byRecency(op, least) < 0) least = op;
    return log.filter((op) => op !== least);
  }
  const cutoff = [...log].sort((a, b) => byRecency(b, a))[max - 1]!;
  return log.filter((op) => byRecency(op, cutoff) >= 0);
}

/**
 * The voids a log implies: every op whose write id and amount also sit on a lesser dot
 * (the log is sorted by dot, so the first seen of each is the least), sorted by dot.
 */
export function implied(log: readonly LoggedOp[]): Void[] {
  const out: Void[] = [];
  if (log.length < 2) return out;
  // Ops by their id's first 4 bytes (ids are MD5: a small integer key, far cheaper than the string's), each
  // bucket the first op of every (id, amount) seen under that key.
  const firsts = new Map<number, LoggedOp | LoggedOp[]>();
  for (const op of log) {
    const key =
      (op.id.charCodeAt(0) << 24) | (op.id.charCodeAt(1) << 16) | (op.id.charCodeAt(2) << 8) | op.id.charCodeAt(3);
    const held = firsts.get(key);
    if (held === undefined) firsts.set(key, op);
    else if (Array.isArray(held) ? held.some((h) => sameOp(h, op)) : sameOp(held, op))
      out.push({ actor: op.actor, counter: op.counter, amount: op.amount });
    else firsts.set(key, Array.isArray(held) ? [...held, op] : [held, op]);
  }
  return out;
}

/** One increment: the same write id and amount (an id on two amounts is a hash collision: two increments). */
function sameOp(a: LoggedOp, b: LoggedOp): boolean {
  return a.id === b.id && a.amount === b.amount;
}

/**
 * The join of two replicas' counters: commutative, idempotent and, within the log
 * window, associative (the file's header says what happens past it).
 */
export function join(a: CounterState, b: CounterState): CounterState {
  if (a.entries.length === 0) return b;
  if (b.entries.length === 0) return a;
  const entries = unite(a.entries, b.entries, byActor, laterEntry);
  const log = unite(a.log, b.log, byDot, greaterOp);
  const voids = unite(unite(a.voids, b.voids, byDot, keptVoid), implied(log), byDot, keptVoid);
  const resets = unite(a.resets ?? [], b.resets ?? [], byActor, laterEntry);
  return resets.length === 0 ? { entries, log: trim(log), voids } : { entries, log: trim(log), voids, resets };
}

/**
 * The counter with a reset of what a read saw (`seen`: that read's state) joined in: each
 * seen entry's increments leave the value, those it did not see (a later dot of its actor,
 * an actor it did not see) stay. The seen state comes whole (its log too), so a replica
 * that takes the reset holds the ops of the dots it now covers, and a retry of a request
 * the reset saw is a duplicate there as anywhere. Its join with any state is that state's
 * reset, so a reset merges everywhere as an increment does, in any order.
 */
export function reset(state: CounterState, seen: CounterState): CounterState {
  return join(state, { entries: seen.entries, log: seen.log, voids: seen.voids, resets: seen.entries });
}

/**
 * The first of its resets that claims more than its actor's entry counts (a floor or a sum
 * above it), or undefined: what no honest join makes, and a context made up or taken from
 * another counter does. Such a state encodes to nothing a node can decode.
 */
export function resetAboveEntry(state: CounterState): CounterEntry | undefined {
  let e = 0;
  for (const r of state.resets ?? []) {
    while (e < state.entries.length && state.entries[e]!.actor < r.actor) e++;
    const x = state.entries[e];
    if (
      x === undefined ||
      x.actor !== r.actor ||
      r.floor > x.floor ||
      r.p > x.p ||
      r.n > x.n ||
      (r.floor === x.floor && (r.p !== x.p || r.n !== x.n))
    )
      return r;
  }
  return undefined;
}

/** True when a reset saw every increment the state counts (none came since): a map lists no such counter field. */
export function isReset(state: CounterState): boolean {
  const resets = state.resets ?? [];
  return resets.length === state.entries.length && resets.every((r, i) => r.floor === state.entries[i]!.floor);
}

/** True when two states are equal (so encode to the same bytes): what tells a merge it brought nothing new. */
export function sameCounter(a: CounterState, b: CounterState): boolean {
  if (a === b) return true;
  const ar = a.resets ?? [],
    br = b.resets ?? [];
  if (
    a.entries.length !== b.entries.length ||
    a.log.length !== b.log.length ||
    a.voids.length !== b.voids.length ||
    ar.length !== br.length
  )
    return false;
  if (!sameEntries(a.entries, b.entries) || !sameEntries(ar, br)) return false;
  for (let i = 0; i < a.log.length; i++) {
    const x = a.log[i]!,
      y = b.log[i]!;
    if (x.actor !== y.actor || x.counter !== y.counter || x.id !== y.id || x.amount !== y.amount || x.seq !== y.seq)
      return false;
  }
  for (let i = 0; i < a.voids.length; i++) {
    const x = a.voids[i]!,
      y = b.voids[i]!;
    if (x.actor !== y.actor || x.counter !== y.counter || x.amount !== y.amount) return false;
  }
  return true;
}

function sameEntries(a: readonly CounterEntry[], b: readonly CounterEntry[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!,
      y = b[i]!;
    if (x.actor !== y.actor || x.floor !== y.floor || x.p !== y.p || x.n !== y.n) return false;
  }
  return true;
}

/**
 * The counter's value: every counted dot's amount, less the voided ones' and those a reset
 * saw. Exact (a bigint: many actors' sums may pass 2^53).
 */
export function value(state: CounterState): bigint {
  let v = 0n;
  for (const e of state.entries) v += BigInt(e.p) - BigInt(e.n);
  const resets = state.resets ?? [];
  for (const r of resets) v -= BigInt(r.p) - BigInt(r.n);
  let at = 0;
  for (const d of state.voids) {
    while (at < resets.length && resets[at]!.actor < d.actor) at++;
    const r = resets[at];
    if (r !== undefined && r.actor === d.actor && d.counter <= r.floor) continue; // the reset took this dot out already
    v -= BigInt(d.amount);
  }
  return v;
}

/**
 * True when an increment with this write id (and this amount, when given) is logged
 * here: the issuer issues no new dot for it. The id hashes the amount already
 * (`counterWriteId`); `increment` passes the amount too, so that an id on another amount
 * (a hash collision) is another increment, as for `implied`, never one dropped.
 */
export function isDuplicate(state: CounterState, id: WriteId, amount?: number): boolean {
  for (const op of state.log) if (op.id === id && (amount === undefined || op.amount === amount)) return true;
  return false;
}

/**
 * What an issuer sends the other replicas for an increment: a state to join and, for a new
 * increment, its actor and the floor of that actor's entry before it (`base`). The state's
 * entry is a prefix sum over all the actor's dots, but it logs only the new one: a replica
 * whose entry of the actor is below `base` missed an earlier increment, whose op (and
 * write id) the delta does not bring, and joining would count a copy of that op it holds
 * from another issuer twice. So a delta applies only in order (`applyDelta`); a replica
 * with a gap needs the issuer's full state, whose log carries every op of the window. A
 * full state is a delta with no `base`, and applies anywhere.
 */
export interface CounterDelta {
  readonly state: CounterState;
  readonly base?: { readonly actor: Actor; readonly floor: number };
}

/**
 * `local` joined with `delta`, or undefined when it has a gap: its entry of the delta's
 * actor is below the delta's base (it missed an earlier increment: it must be sent the
 * issuer's full state instead). With deltas applied so, every dot a replica covers that
 * carried a write id has its op in the replica's log (or was trimmed past the window), so
 * `implied` sees every pair within the window at every step, and no read counts one
 * request twice.
 */
export function applyDelta(local: CounterState, delta: CounterDelta): CounterState | undefined {
  if (delta.base !== undefined && floorOf(local, delta.base.actor) < delta.base.floor) return undefined;
  return join(local, delta.state);
}

/** The floor of `actor`'s entry (0: none). */
function floorOf(state: CounterState, actor: Actor): number {
  for (const e of state.entries) if (e.actor === actor) return e.floor;
  return 0;
}

export interface Increment {
  /** The state after the increment (the state given, when it was a duplicate). */
  readonly state: CounterState;
  /**
   * What the other replicas need (applyDelta): for a new increment its entry and op after
   * `base`, with join(old, delta.state) = state; for a duplicate the whole state, since a
   * replica that missed the first copy's delta may miss others of the issuer's too.
   */
  readonly delta: CounterDelta;
  /** True when the write id was logged already: no dot was issued. */
  readonly duplicate: boolean;
}

const MAX = Number.MAX_SAFE_INTEGER;

/** Refuse an amount that is no increment: zero, or not a safe integer (KV_BAD_AMOUNT). */
export function checkAmount(amount: number): void {
  if (!Number.isSafeInteger(amount) || amount === 0) {
    throw new KvError(
      'KV_BAD_AMOUNT',
      `a counter increment must be a nonzero integer from -${MAX} to ${MAX}; got ${String(amount)}. Send a whole, nonzero amount (negative to decrement)`,
    );
  }
}

/**
 * Increment (or, for a negative amount, decrement) at `actor`, the replica's actor for
 * the key: its next dot, its entry's new sums, and with a write id a logged op. An id the
 * log holds issues nothing (`duplicate`), and the delta is the whole state, which holds it.
 */
export function increment(state: CounterState, actor: Actor, amount: number, id?: WriteId): Increment {
  checkAmount(amount);
  if (actor.length !== ACTOR_BYTES)
    throw new RangeError(`a counter's actor is ${ACTOR_BYTES} bytes, not ${actor.length}`);
  if (id !== undefined && id.length !== WRITE_ID_BYTES)
    throw new RangeError(`a write id is ${WRITE_ID_BYTES} bytes, not ${id.length}`);
  if (id !== undefined && isDuplicate(state, id, amount)) return { state, delta: { state }, duplicate: true };
  const entries = [...state.entries];
  let at = 0;
  while (at < entries.length && entries[at]!.actor < actor) at++;
  const old = entries[at]?.actor === actor ? entries[at] : undefined;
  const p = (old?.p ?? 0) + Math.max(amount, 0),
    n = (old?.n ?? 0) + Math.max(-amount, 0);
  if (p > MAX || n > MAX) {
    throw new KvError(
      'KV_COUNTER_OVERFLOW',
      `this replica's ${amount > 0 ? 'increments' : 'decrements'} of the counter would pass ${MAX} in total, the most a counter holds per replica; the counter was not changed. Use another key for larger sums`,
    );
  }
  const entry: CounterEntry = { actor, floor: (old?.floor ?? 0) + 1, p, n };
  entries.splice(at, old === undefined ? 0 : 1, entry);
  const base = { actor, floor: old?.floor ?? 0 };
  const resets = state.resets === undefined ? {} : { resets: state.resets };
  if (id === undefined)
    return {
      state: { entries, log: state.log, voids: state.voids, ...resets },
      delta: { state: { entries: [entry], log: [], voids: [] }, base },
      duplicate: false,
    };
  const seq = maxSeq(state.log) + 1;
  if (seq > MAX)
    throw new KvError('KV_COUNTER_OVERFLOW', `the counter's op sequence would pass ${MAX}; use another key`);
  const op: LoggedOp = { actor, counter: entry.floor, id, amount, seq };
  const log = unite(state.log, [op], byDot, greaterOp);
  return {
    state: { entries, log: trim(log), voids: state.voids, ...resets },
    delta: { state: { entries: [entry], log: [op], voids: [] }, base },
    duplicate: false,
  };
}

/**
 * A counter increment's write id: 8 bytes of MD5 over a mark of its own (so it never
 * hashes the bytes a put's does, store.ts writeIdOf), the request id and the amount. The same request
 * repeated has the same id; a request id reused with another amount is another increment.
 */
export function counterWriteId(requestId: Uint8Array, amount: number): WriteId {
  const head = Buffer.allocUnsafe(8);
  head.write('ctr\0', 0, 'latin1');
  head.writeUInt32BE(requestId.length, 4);
  const tail = Buffer.allocUnsafe(8);
  tail.writeBigInt64BE(BigInt(amount));
  return createHash('md5').update(head).update(requestId).update(tail).digest().toString('latin1', 0, WRITE_ID_BYTES);
}
