/**
 * Causal versions of one key: a set of sibling values, each tagged with the dot (actor,
 * counter) that created it, and a version vector summarising every dot the key's
 * history has seen. This is the dotted-version-vector model that Riak 2.0 adopted
 * (DVVSet); docs/causality.md explains the choice and why the laws hold.
 *
 * Owns: the pure algebra — a local write (`update`), the join of two replicas'
 * versions (`merge`), reads (`liveValues`). Must not: do I/O, read clocks or pick
 * actors; the store decides which actor issues a dot.
 *
 * Invariant (checked by the codec): every sibling's dot is covered by the clock.
 * A dot names exactly one value: it is issued once, by the one replica that owns its
 * actor, so two siblings with the same dot are the same write.
 */

/** An actor id: 16 bytes held as a latin1 string (a cheap, comparable Map key). */
export type Actor = string;
/** A version vector: actor → highest counter seen. Absent actors are 0. */
export type Clock = ReadonlyMap<Actor, number>;

export interface Sibling {
  readonly actor: Actor;
  readonly counter: number;
  /** The value, or null for a tombstone (a delete that supersedes what it saw). */
  readonly value: Uint8Array | null;
}

export interface Versions {
  readonly clock: Clock;
  /** Sorted by (actor, counter): the canonical order, so equal states encode equally. */
  readonly siblings: readonly Sibling[];
}

export const EMPTY_VERSIONS: Versions = Object.freeze({ clock: new Map(), siblings: Object.freeze([]) });

function covers(clock: Clock, s: Sibling): boolean {
  return (clock.get(s.actor) ?? 0) >= s.counter;
}

function bySiblingOrder(a: Sibling, b: Sibling): number {
  return a.actor < b.actor ? -1 : a.actor > b.actor ? 1 : a.counter - b.counter;
}

/** Pointwise maximum of two version vectors. */
export function joinClocks(a: Clock, b: Clock): Map<Actor, number> {
  const out = new Map(a);
  for (const [actor, n] of b) if (n > (out.get(actor) ?? 0)) out.set(actor, n);
  return out;
}

/**
 * A write issued at this replica by `actor`: the new value (or tombstone, for null)
 * replaces exactly the siblings that `context` covers — what the writer's read saw —
 * and is concurrent with every other sibling, which stays. An empty context supersedes
 * nothing: a blind write to an existing key becomes a sibling, never an overwrite.
 *
 * The new dot's counter is one past anything either the replica or the context has
 * seen for `actor`, so it is new. The resulting clock also absorbs the context: a
 * version the reader saw on another replica and that has not reached this one yet is
 * superseded when it arrives.
 */
export function update(local: Versions, context: Clock, actor: Actor, value: Uint8Array | null): Versions {
  const counter = Math.max(local.clock.get(actor) ?? 0, context.get(actor) ?? 0) + 1;
  const clock = joinClocks(local.clock, context);
  clock.set(actor, counter);
  const siblings = local.siblings.filter((s) => !covers(context, s));
  // The survivors are in canonical order: insert the new dot in place, no sort.
  const dot: Sibling = { actor, counter, value };
  let at = siblings.length;
  while (at > 0 && bySiblingOrder(siblings[at - 1]!, dot) > 0) at--;
  if (at === siblings.length) siblings.push(dot);
  else siblings.splice(at, 0, dot);
  return { clock, siblings };
}

/**
 * The join of two replicas' versions of one key. A sibling survives if both sides hold
 * it, or if the other side has never seen its dot; a sibling that one side has seen and
 * no longer holds was superseded there, and goes. Idempotent, commutative and
 * associative (test/property/versions.property.test.ts), so streams, hints, read repair
 * and anti-entropy may repeat and reorder merges freely.
 */
export function merge(a: Versions, b: Versions): Versions {
  if (a.siblings.length === 0 && a.clock.size === 0) return b;
  if (b.siblings.length === 0 && b.clock.size === 0) return a;
  const siblings: Sibling[] = [];
  const as = a.siblings, bs = b.siblings;
  let i = 0, j = 0;
  // Both lists are in canonical order: one sorted merge walk.
  while (i < as.length || j < bs.length) {
    const x = as[i], y = bs[j];
    const order = x === undefined ? 1 : y === undefined ? -1 : bySiblingOrder(x, y);
    if (order === 0) {
      siblings.push(x!); // the same dot on both sides: the same write
      i++, j++;
    } else if (order < 0) {
      if (!covers(b.clock, x!)) siblings.push(x!);
      i++;
    } else {
      if (!covers(a.clock, y!)) siblings.push(y!);
      j++;
    }
  }
  return { clock: joinClocks(a.clock, b.clock), siblings };
}

/** The values a read returns: every sibling that is not a tombstone. */
export function liveValues(v: Versions): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const s of v.siblings) if (s.value !== null) out.push(s.value);
  return out;
}

/** True when the key exists only as tombstones: deleted, kept until it is safe to drop. */
export function isDeleted(v: Versions): boolean {
  return v.siblings.length > 0 && v.siblings.every((s) => s.value === null);
}

/** True when a and b hold the same dots and clocks (so the same values: dots are unique). */
export function sameVersions(a: Versions, b: Versions): boolean {
  if (a.clock.size !== b.clock.size || a.siblings.length !== b.siblings.length) return false;
  for (const [actor, n] of a.clock) if (b.clock.get(actor) !== n) return false;
  return a.siblings.every((s, i) => s.actor === b.siblings[i]!.actor && s.counter === b.siblings[i]!.counter);
}
