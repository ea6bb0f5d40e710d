/**
 * Causal versions of one key: a set of sibling values, each tagged with the dot (actor,
 * counter) that created it, and a version vector summarising every dot the key's
 * history has seen. This is the dotted-version-vector model that Riak 2.0 adopted
 * (DVVSet); docs/causality.md explains the choice and why the laws hold.
 *
 * Owns: the pure algebra — a local write (`update`), the join of two replicas'
 * versions (`merge`), reads (`liveValues`), and what clock pruning may drop (`prune`,
 * `reprune`, below). Must not: do I/O, read clocks or pick actors; the store decides
 * which actor issues a dot, and when a key's history is stable enough to prune.
 *
 * Invariant (checked by the codec): every sibling's dot is covered by the clock.
 * A dot names exactly one value: it is issued once, by the one replica that owns its
 * actor, so two siblings with the same dot are the same write.
 *
 * Write ids make a write safe to send twice (a hedged or retried request reaching two
 * coordinators). A write that carries a request id gets a write id (the store derives
 * it), kept with its sibling. Two dots with one write id are one write issued twice:
 * reads show it once, and whatever supersedes one of them supersedes the other (a
 * context carries the write ids of the siblings it saw). Once superseded, the id moves
 * to the key's `retired` list, so that a late copy of the write is recognised too: a
 * replica issues no new dot for an id it knows, and a merge drops a sibling whose id
 * the other side retired. `retired` is bounded (RETIRED_MAX newest, none older than
 * RETIRED_WINDOW_MS before the newest), deterministically, so the merge stays a join;
 * docs/causality.md states the window.
 *
 * Expiry (docs/reads-and-writes.md#expiry): a sibling may carry `expiresAt`, an absolute
 * time its coordinator chose, which every copy of the sibling carries with it (it is part
 * of the sibling, as its value is). Merges treat an expired sibling as any other: they
 * stay pure functions of their inputs. Reads (`liveValues`) leave out what expired by the
 * reader's clock, which it passes in; `withoutExpired` is how the store reclaims them.
 *
 * Last-writer-wins (a bucket's `siblings: 'lww'`): each sibling carries `at`, its issuing
 * replica's write time, and a key keeps one sibling, the greatest by (at, actor, counter)
 * among those not retired: `updateLww` and `mergeLww`, a join like `merge`.
 */
import type { Actor, WriteId } from '../dots.js';

/** A version vector: actor → highest counter seen. Absent actors are 0. */
export type Clock = ReadonlyMap<Actor, number>;

export interface Sibling {
  readonly actor: Actor;
  readonly counter: number;
  /** The value, or null for a tombstone (a delete that supersedes what it saw). */
  readonly value: Uint8Array | null;
  /** The write id of the request that issued it, if it carried one. */
  readonly id?: WriteId;
  /** When it expires, ms since the epoch (its coordinator's clock); absent: never. Tombstones never expire. */
  readonly expiresAt?: number;
  /** Last-writer-wins buckets: when it was written, ms since the epoch (its issuing replica's clock). */
  readonly at?: number;
}

/** A write id superseded here, and when it was (ms, the retiring replica's clock): what bounds the list. */
export interface Retired {
  readonly id: WriteId;
  readonly at: number;
}

export interface Versions {
  readonly clock: Clock;
  /** Sorted by (actor, counter): the canonical order, so equal states encode equally. */
  readonly siblings: readonly Sibling[];
  /** Write ids superseded in this key's history, sorted by id; absent or empty when none. */
  readonly retired?: readonly Retired[];
}

/** Superseded write ids a key remembers at most: the newest, by `at`. */
export const RETIRED_MAX = 16;
/** Nor any retired before the newest by more than this, ms. */
export const RETIRED_WINDOW_MS = 10 * 60 * 1000;

export const EMPTY_VERSIONS: Versions = Object.freeze({ clock: new Map(), siblings: Object.freeze([]) });

const NO_RETIRED: readonly Retired[] = Object.freeze([]);

function covers(clock: Clock, s: Sibling): boolean {
  return (clock.get(s.actor) ?? 0) >= s.counter;
}

function retiredHas(retired: readonly Retired[] | undefined, id: WriteId): boolean {
  if (retired === undefined) return false;
  for (const r of retired) if (r.id === id) return true;
  return false;
}

/**
 * The union of two retired lists (one entry per id, the later `at`), bounded: only the
 * RETIRED_MAX newest (ties by id), none older than the newest by RETIRED_WINDOW_MS. A
 * function of the union alone, so the bound keeps merge commutative and associative.
 */
export function joinRetired(a: readonly Retired[] | undefined, b: readonly Retired[] | undefined): readonly Retired[] {
  if (b === undefined || b.length === 0) return a ?? NO_RETIRED;
  if ((a === undefined || a.length === 0) && b.length === 1) return b;
  const byId = new Map<WriteId, number>();
  for (const r of a ?? NO_RETIRED) byId.set(r.id, r.at);
  for (const r of b) if (r.at > (byId.get(r.id) ?? -1)) byId.set(r.id, r.at);
  let newest = 0;
  for (const at of byId.values()) if (at > newest) newest = at;
  let kept = [...byId].filter(([, at]) => at >= newest - RETIRED_WINDOW_MS).map(([id, at]) => ({ id, at }));
  if (kept.length > RETIRED_MAX) kept = kept.sort((x, y) => y.at - x.at || byRetiredId(x, y)).slice(0, RETIRED_MAX);
  return kept.sort(byRetiredId);
}

function byRetiredId(x: Retired, y: Retired): number {
  return x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/**
 * True when `id` is a write these versions already hold or have superseded: a replica
 * issues no new dot for it (the write was applied here before, through another
 * coordinator or an earlier attempt).
 */
export function isDuplicate(v: Versions, id: WriteId): boolean {
  for (const s of v.siblings) if (s.id === id) return true;
  return retiredHas(v.retired, id);
}

/** The write ids of the live siblings, sorted and distinct: what a context made from these versions carries. */
export function liveIds(v: Versions): WriteId[] {
  const out: WriteId[] = [];
  for (const s of v.siblings) if (s.id !== undefined && !out.includes(s.id)) out.push(s.id);
  return out.length > 1 ? out.sort() : out;
}

/** What a write knows of the key beyond its context's clock, and who it is. */
export interface WriteInfo {
  /** The write ids the context carries: siblings the writer saw, under whichever dot. */
  readonly seenIds?: readonly WriteId[];
  /** This write's id, if its request carried one. */
  readonly id?: WriteId;
  /** The replica's clock, ms: when the ids this write supersedes are retired. */
  readonly now?: number;
  /** A value's expiry, ms since the epoch (none for a tombstone). */
  readonly expiresAt?: number;
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
 * Two exceptions, both siblings the writer is taken to have seen: one whose write id
 * the context carries (the same write under another dot), and one holding exactly the
 * bytes this put writes (one value to a user: it is written again, not twice).
 *
 * The new dot's counter is one past anything either the replica or the context has
 * seen for `actor`, so it is new. The resulting clock also absorbs the context: a
 * version the reader saw on another replica and that has not reached this one yet is
 * superseded when it arrives. The write ids superseded, and those the context carries,
 * are retired at `w.now`.
 *
 * The caller checks isDuplicate(local, w.id) first: a known id issues no dot.
 */
export function update(
  local: Versions,
  context: Clock,
  actor: Actor,
  value: Uint8Array | null,
  w: WriteInfo = {},
): Versions {
  const counter = Math.max(local.clock.get(actor) ?? 0, context.get(actor) ?? 0) + 1;
  const clock = joinClocks(local.clock, context);
  clock.set(actor, counter);
  const seen = w.seenIds ?? [];
  const retiring: Retired[] = seen.map((id) => ({ id, at: w.now ?? 0 }));
  const siblings: Sibling[] = [];
  for (const s of local.siblings) {
    const superseded =
      covers(context, s) ||
      (s.id !== undefined && seen.includes(s.id)) ||
      (value !== null && s.value !== null && sameBytes(s.value, value));
    if (!superseded) siblings.push(s);
    else if (s.id !== undefined && !seen.includes(s.id)) retiring.push({ id: s.id, at: w.now ?? 0 });
  }
  // A copy of a retiring write that is still live here under another dot goes too.
  const retiredIds = retiring.map((r) => r.id);
  for (let i = siblings.length - 1; i >= 0; i--)
    if (siblings[i]!.id !== undefined && retiredIds.includes(siblings[i]!.id!)) siblings.splice(i, 1);
  // The survivors are in canonical order: insert the new dot in place, no sort.
  const dot = sibling(actor, counter, value, w);
  let at = siblings.length;
  while (at > 0 && bySiblingOrder(siblings[at - 1]!, dot) > 0) at--;
  if (at === siblings.length) siblings.push(dot);
  else siblings.splice(at, 0, dot);
  const retired = joinRetired(local.retired, retiring);
  return retired.length === 0 ? { clock, siblings } : { clock, siblings, retired };
}

/** A new sibling with only the fields it has (absent ones stay absent: the codec's canonical form). */
function sibling(actor: Actor, counter: number, value: Uint8Array | null, w: WriteInfo, at?: number): Sibling {
  const s: { actor: Actor; counter: number; value: Uint8Array | null; id?: WriteId; expiresAt?: number; at?: number } =
    { actor, counter, value };
  if (w.id !== undefined) s.id = w.id;
  if (w.expiresAt !== undefined && value !== null) s.expiresAt = w.expiresAt;
  if (at !== undefined) s.at = at;
  return s;
}

/**
 * The join of two replicas' versions of one key. A sibling survives if both sides hold
 * it, or if the other side has never seen it: neither its dot nor (retired) its write
 * id; a sibling that one side has seen and no longer holds was superseded there, and
 * goes. Idempotent, commutative and associative (test/property/versions.property.test.ts),
 * so streams, hints, read repair and anti-entropy may repeat and reorder merges freely.
 */
export function merge(a: Versions, b: Versions): Versions {
  if (a.siblings.length === 0 && a.clock.size === 0 && (a.retired?.length ?? 0) === 0) return b;
  if (b.siblings.length === 0 && b.clock.size === 0 && (b.retired?.length ?? 0) === 0) return a;
  const seenBy = (v: Versions, s: Sibling): boolean =>
    covers(v.clock, s) || (s.id !== undefined && retiredHas(v.retired, s.id));
  const siblings: Sibling[] = [];
  const as = a.siblings,
    bs = b.siblings;
  let i = 0,
    j = 0;
  // Both lists are in canonical order: one sorted merge walk.
  while (i < as.length || j < bs.length) {
    const x = as[i],
      y = bs[j];
    const order = x === undefined ? 1 : y === undefined ? -1 : bySiblingOrder(x, y);
    if (order === 0) {
      siblings.push(x!); // the same dot on both sides: the same write
      (i++, j++);
    } else if (order < 0) {
      if (!seenBy(b, x!)) siblings.push(x!);
      i++;
    } else {
      if (!seenBy(a, y!)) siblings.push(y!);
      j++;
    }
  }
  const clock = joinClocks(a.clock, b.clock);
  const retired = joinRetired(a.retired, b.retired);
  return retired.length === 0 ? { clock, siblings } : { clock, siblings, retired };
}

/** True when `s` has expired at `now` (ms): from its expiry on, a read leaves it out. */
export function expired(s: Sibling, now: number): boolean {
  return s.expiresAt !== undefined && s.expiresAt <= now;
}

/**
 * The values a read returns at `now` (the reading node's clock, ms): every sibling that
 * is not a tombstone and has not expired, each distinct value once (two siblings holding
 * the same bytes are one value to a user: the same write issued twice, or two writers
 * who wrote the same thing).
 */
export function liveValues(v: Versions, now: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const s of v.siblings)
    if (s.value !== null && !expired(s, now) && !out.some((x) => sameBytes(x, s.value!))) out.push(s.value);
  return out;
}

/** The earliest expiry among the siblings, or undefined when none expires: when the store looks at the key again. */
export function nextExpiry(v: Versions): number | undefined {
  let next: number | undefined;
  for (const s of v.siblings)
    if (s.expiresAt !== undefined && (next === undefined || s.expiresAt < next)) next = s.expiresAt;
  return next;
}

/**
 * True when every dot the clock covers is a sibling held: nothing this key ever held was
 * superseded here, so the clock protects nothing but the siblings themselves.
 */
function clockIsHeld(v: Versions): boolean {
  let covered = 0;
  for (const n of v.clock.values()) covered += n;
  return covered === v.siblings.length; // siblings are distinct dots, each covered: equal counts mean the same set
}

/**
 * Reclamation of expired siblings at `now`: the versions without them (their dots stay in
 * the clock, so a stale copy of one that arrives later is dropped by `merge` as seen and
 * superseded; their write ids are retired (at their expiry), so a late copy of the write issues no new
 * dot), or 'drop' when the whole record may go: every sibling expired, and the clock
 * covers nothing else and no id was ever retired, so no older version exists anywhere
 * that the record's clock would have to keep out (docs/causality.md#expiry). Returns `v`
 * itself when nothing expired.
 */
export function withoutExpired(v: Versions, now: number): Versions | 'drop' {
  if (!v.siblings.some((s) => expired(s, now))) return v;
  const kept = v.siblings.filter((s) => !expired(s, now));
  if (kept.length === 0 && (v.retired?.length ?? 0) === 0 && clockIsHeld(v)) return 'drop';
  const gone: Retired[] = [];
  // Retired at their expiry, not at `now`: every replica that reclaims the same versions writes the same bytes.
  for (const s of v.siblings)
    if (expired(s, now) && s.id !== undefined && !kept.some((k) => k.id === s.id))
      gone.push({ id: s.id, at: s.expiresAt! });
  const retired = joinRetired(v.retired, gone);
  return retired.length === 0 ? { clock: v.clock, siblings: kept } : { clock: v.clock, siblings: kept, retired };
}

/** The last-writer-wins order of siblings: by write time, then dot (unique), so ties are broken the same everywhere. */
function lwwOrder(a: Sibling, b: Sibling): number {
  return (a.at ?? 0) - (b.at ?? 0) || bySiblingOrder(a, b);
}

/** Of `candidates`, the greatest in lww order whose write id is not retired: the one sibling an lww key keeps. */
function lwwWinner(candidates: Iterable<Sibling>, retired: readonly Retired[]): Sibling[] {
  let best: Sibling | undefined;
  for (const s of candidates)
    if ((s.id === undefined || !retiredHas(retired, s.id)) && (best === undefined || lwwOrder(s, best) > 0)) best = s;
  return best === undefined ? [] : [best];
}

/**
 * A write to a last-writer-wins key: like `update`, but the new sibling, written at
 * `at` (at least one past every sibling held, so a write supersedes what its replica
 * holds even if its clock is behind the writer of those), replaces every sibling held,
 * whatever the context saw; their write ids are retired at `w.now`.
 */
export function updateLww(
  local: Versions,
  context: Clock,
  actor: Actor,
  value: Uint8Array | null,
  at: number,
  w: WriteInfo = {},
): Versions {
  const counter = Math.max(local.clock.get(actor) ?? 0, context.get(actor) ?? 0) + 1;
  const clock = joinClocks(local.clock, context);
  clock.set(actor, counter);
  let written = at;
  for (const s of local.siblings) if ((s.at ?? 0) >= written) written = (s.at ?? 0) + 1;
  const retiring: Retired[] = (w.seenIds ?? []).map((id) => ({ id, at: w.now ?? 0 }));
  for (const s of local.siblings) if (s.id !== undefined && s.id !== w.id) retiring.push({ id: s.id, at: w.now ?? 0 });
  const retired = joinRetired(local.retired, retiring);
  const siblings = [sibling(actor, counter, value, w, written)];
  return retired.length === 0 ? { clock, siblings } : { clock, siblings, retired };
}

/**
 * The join of two versions of a last-writer-wins key: the clocks' and retired lists'
 * joins, and of all siblings either side holds, the greatest in lww order whose id is
 * not retired (a function of the unions alone: commutative, associative, and idempotent
 * on what updateLww and mergeLww produce; test/property/versions.property.test.ts). A
 * write that lost to a later one is gone, even if it was causally newer (its writer's
 * clock was behind): the policy's cost, docs/reads-and-writes.md#buckets.
 */
export function mergeLww(a: Versions, b: Versions): Versions {
  const clock = joinClocks(a.clock, b.clock);
  const retired = joinRetired(a.retired, b.retired);
  const siblings = lwwWinner([...a.siblings, ...b.siblings], retired);
  return retired.length === 0 ? { clock, siblings } : { clock, siblings, retired };
}

/**
 * True when the key exists only as tombstones, or (its expired siblings reclaimed) as a
 * clock alone: deleted, kept until it is safe to drop.
 */
export function isDeleted(v: Versions): boolean {
  return (v.siblings.length > 0 || v.clock.size > 0) && v.siblings.every((s) => s.value === null);
}

/** True when a and b hold the same dots, clocks and retired ids (so the same values: dots are unique). */
export function sameVersions(a: Versions, b: Versions): boolean {
  if (a.clock.size !== b.clock.size || a.siblings.length !== b.siblings.length) return false;
  for (const [actor, n] of a.clock) if (b.clock.get(actor) !== n) return false;
  const ra = a.retired ?? NO_RETIRED,
    rb = b.retired ?? NO_RETIRED;
  if (ra.length !== rb.length || !ra.every((r, i) => r.id === rb[i]!.id && r.at === rb[i]!.at)) return false;
  return a.siblings.every((s, i) => s.actor === b.siblings[i]!.actor && s.counter === b.siblings[i]!.counter);
}

/**
 * Bounded clocks (docs/causality.md#bounded-clocks). A key's clock gains an entry for
 * every (node, epoch) that ever issued one of its dots, and the join never removes one.
 * Pruning removes entries under design 4.2's rule, which is safe because in a dotted
 * version vector the clock is only ever used to decide that a sibling was *seen*:
 * dropping an entry from our clock can only make a merge keep more of the other side's
 * siblings, never fewer, so a concurrent write is never turned into a superseded one.
 * What it must not do, and the two rules here prevent:
 *  1. drop `keep`, the replica's own actor for the key: it must remember its highest
 *     counter, or its next write reissues a dot others hold (Riak kv679);
 *  2. drop the entry of a live sibling's actor (value or tombstone): it is what covers
 *     the sibling's own dot (the codec's invariant), so that a write whose context saw the
 *     sibling supersedes it.
 * The third condition (the key's history is stable: unchanged for the grace period and
 * confirmed on every replica since) is the caller's: a stale copy of a superseded sibling
 * that arrives after the prune is no longer recognised as seen (resurrection, as for
 * tombstones). A record that is a clock alone (no siblings) is left to the tombstone purge.
 */

/** The clock entries `prune` may drop: neither `keep` nor the actor of a sibling's dot. */
export function prunable(v: Versions, keep: Actor | undefined): Actor[] {
  const out: Actor[] = [];
  if (v.siblings.length === 0) return out;
  for (const actor of v.clock.keys()) if (actor !== keep && !v.siblings.some((s) => s.actor === actor)) out.push(actor);
  return out;
}

/** The versions without the entries `prunable` names; `v` itself when there are none. Write and retired ids are untouched. */
export function prune(v: Versions, keep: Actor | undefined): Versions {
  const drop = prunable(v, keep);
  return drop.length === 0 ? v : without(v, drop);
}

function without(v: Versions, drop: readonly Actor[]): Versions {
  const clock = new Map(v.clock);
  for (const a of drop) clock.delete(a);
  return v.retired === undefined
    ? { clock, siblings: v.siblings }
    : { clock, siblings: v.siblings, retired: v.retired };
}

/**
 * `merged` (the join of `old` with another copy) less the entries `old` had already
 * pruned, when those are all the other copy brought: then `old` itself. A replica that
 * pruned, merging a copy from one that has not yet (or a context-free stream of it),
 * would otherwise take the entries back and send them on, and the two would trade them
 * for ever (Riak issue #1864). Safe without the stability gate: an entry that `old`'s
 * clock lacks while `old` holds everything else the copy holds is in the causal past of
 * what `old` holds (the writes that superseded its dots are here), so `old` had it and
 * pruned it. When the copy brings anything else, `merged` is returned whole: its new
 * entries may be new history, whose stale copies may still be on their way.
 *
 * The argument needs every entry of the copy to lie in the causal past of a sibling it
 * holds. Expiry breaks that: a sibling reclaimed by expiry leaves its history in the
 * clock with nothing after it. The store therefore never calls this for a copy holding
 * no sibling (every sibling expired there); a copy that still holds siblings but lost
 * one to expiry is the case it cannot tell apart (docs/limits.md#bounded-clocks).
 * A write id breaks it too: a sibling dropped because the other side retired its id is
 * not in the causal past of what `old` holds; store.ts mayHavePruned keeps those out.
 */
export function reprune(old: Versions, merged: Versions, keep: Actor | undefined): Versions {
  if (merged === old || merged.clock.size <= old.clock.size) return merged;
  const extra = prunable(merged, keep).filter((a) => !old.clock.has(a));
  if (extra.length === 0) return merged;
  const back = without(merged, extra);
  return sameVersions(back, old) ? old : merged;
}
