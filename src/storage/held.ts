/**
 * A key's record decoded, whatever its kind: versions (codec.ts), a counter (counter.ts),
 * or the state of a joined kind (kinds/: a compare-and-set register). The store and the
 * hint store both read records through it.
 *
 * Owns: telling the kinds of decoded records apart, and naming them in messages. Must
 * not: know a joined kind's layout (its folder in kinds/ does).
 */
import { COUNTER_FORMAT, joinedKindOf, kindName, type JoinedKind } from '../kinds/index.js';
import { decodeRecord, isCounterRecord, type StoredRecord } from '../kinds/versions/codec.js';
import { decodeCounter, type StoredCounter } from '../kinds/counter/counter-record.js';

/** A joined kind's record, decoded: its kind, its state, and (a hint's) the time it has been held since. */
export interface HeldJoined {
  readonly joined: JoinedKind<unknown>;
  readonly value: unknown;
  readonly heldSince?: number | undefined;
}

export type Held = StoredRecord | StoredCounter | HeldJoined;

export const isCounter = (r: Held): r is StoredCounter => 'state' in r;
export const isJoined = (r: Held): r is HeldJoined => 'joined' in r;
export const isVersions = (r: Held): r is StoredRecord => 'versions' in r;

/** What a decoded record holds, for messages. */
export const kindOf = (r: Held): string =>
  isCounter(r)
    ? kindName(COUNTER_FORMAT)!
    : isJoined(r)
      ? r.joined.name
      : 'versions (a plain key, a set element or a map register)';

/** Decode a record of any kind, by its format; throws DecodeError when it does not decode. */
export function decodeHeld(bytes: Uint8Array): Held {
  if (isCounterRecord(bytes)) return decodeCounter(bytes);
  const joined = joinedKindOf(bytes);
  if (joined === undefined) return decodeRecord(bytes);
  const { state, heldSince } = joined.decode(bytes);
  return { joined, value: state, heldSince };
}

/** The join of two joined kinds' records (the caller checked the kinds are the same). */
export const joinHeld = (a: HeldJoined, b: HeldJoined): HeldJoined => ({
  joined: a.joined,
  value: a.joined.join(a.value, b.value),
});
