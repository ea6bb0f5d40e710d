/**
 * The ring a member table implies, and the topology change in progress. Every node
 * derives both the same way from the same gossiped states, so once gossip converges every
 * node holds the same current ring, the same target ring and the same movement.
 *
 * - Owners (the current ring) are members whose status is `normal` or `leaving`, that no
 *   one has removed, and whose tokens parse. Joining nodes are not owners yet: they would
 *   answer for data they do not have.
 * - Movements: a joiner that has claimed tokens (`join`, or `replace` when it names a
 *   dead owner in its `replaces` field), an owner that is `leaving`, and an owner some
 *   member is removing (its own `removing` field names it). The target ring is the
 *   current ring with every movement applied: joiners in, leavers and removed nodes out,
 *   a replacer in its dead node's place. While it differs from the current ring,
 *   coordinators write each moving range to the current replicas and to the target ones
 *   (pending ranges), and the movement's data is streamed (src/streaming).
 * - Removed: ids named in any member's `removed` field, members with status `removed`,
 *   and owners whose replacer is `normal`. They are not members any more.
 * - Heirs: a leaver's tokens are not dropped but handed to heirs chosen for balance
 *   (ring/leave-heirs.ts). The node that starts the change (the leaver, or the remover)
 *   gossips them in its `heirs` field; every node applies them to the target ring, and to
 *   the current ring once the leaver is gone, so no one else has to re-gossip its tokens.
 *   The leaver's own entry wins (a node that died while leaving keeps the heirs its leave
 *   streamed to), then entries in member id order. A heir that is not an owner any more
 *   does not inherit: that token is dropped.
 * - Two members claiming one token is a conflict a correct join never makes but gossip
 *   can carry (two nodes joining at the same instant from the same view): members are
 *   taken in id order, owners before joiners, and a later member that claims a token
 *   already taken is left out, on every node alike, and reported, so that it re-picks.
 *
 * Only one movement streams at a time (the `active` one, see `activeMovement`); others
 * that appear at the same moment (two operators, a joiner racing a decommission) yield.
 *
 * Owns: owners, movements, conflicts, the fingerprint by which the node shell skips
 * rebuilding an unchanged view (heartbeats change every second; ownership rarely), and
 * the short hash of it every node gossips (`topo`) so that a movement knows every live
 * member writes to its pending ranges before it streams. Must not: mutate the table or do I/O.
 */

import { Ring, tokenOf, tokenHex, type Member, type RingOptions } from '../ring/index.js';
import { field, parseHeirs, parseTokens, statusOf, type EndpointState } from './endpoint.js';

export type MovementKind = 'join' | 'replace' | 'leave' | 'remove';

export interface Movement {
  readonly kind: MovementKind;
  /** The node whose ownership changes: the joiner, the replacer, the leaver, the node removed. */
  readonly node: string;
  /** The node that streams and then finishes the movement: the joiner, replacer, leaver, or remover. */
  readonly driver: string;
  /** replace: the dead owner whose tokens the replacer takes. */
  readonly replaces?: string;
}

export interface RingView {
  /** The current owners' ring; undefined while no member owns tokens. */
  readonly ring: Ring | undefined;
  /** The ring once every movement is done; `ring` itself when nothing moves. */
  readonly target: Ring | undefined;
  /** Topology changes in progress, the active one first. */
  readonly movements: readonly Movement[];
  /** Ids that are no longer members (removed, or replaced by a normal node). */
  readonly removed: ReadonlySet<string>;
  /** Members left out of the ring because a token of theirs is already owned. */
  readonly conflicts: readonly { readonly id: string; readonly token: bigint; readonly owner: string }[];
  readonly fingerprint: string;
  /** 16 hex digits of the fingerprint: what each node gossips as `topo`. */
  readonly hash: string;
}

const OWNER_STATUSES = new Set(['normal', 'leaving']);

/** The ids a `removed` field lists. */
export function removedIds(s: EndpointState): string[] {
  const v = field(s, 'removed');
  return v === undefined || v === '' ? [] : v.split(',');
}

/** Each leaver's heirs, by the precedence above. */
function heirsBySubject(list: readonly EndpointState[]): Map<string, Map<bigint, string>> {
  const out = new Map<string, Map<bigint, string>>();
  const entries = list.map((s) => ({
    s,
    heirs: parseHeirs(field(s, 'heirs') ?? '') ?? new Map<string, Map<bigint, string>>(),
  }));
  for (const { s, heirs } of entries) {
    const own = heirs.get(s.id);
    if (own !== undefined && (statusOf(s) === 'leaving' || statusOf(s) === 'left')) out.set(s.id, own);
  }
  for (const { heirs } of entries) for (const [subject, map] of heirs) if (!out.has(subject)) out.set(subject, map);
  return out;
}

/** A joiner's claimed tokens (undefined: no claim; '' withdraws one). */
function claimedTokens(s: EndpointState): bigint[] | undefined {
  const v = field(s, 'tokens');
  return v === undefined || v === '' ? undefined : parseTokens(v);
}

/** What ownership and movements depend on: equal fingerprints give equal views. */
export function ringFingerprint(states: Iterable<EndpointState>): string {
  const parts: string[] = [];
  for (const s of states) {
    const status = statusOf(s);
    const v = (name: string): string => `${s.fields.get(name)?.version ?? 0}`;
    const relevant =
      (status !== undefined && OWNER_STATUSES.has(status)) ||
      // A stored tokens field is '' or valid (checkDelta): no need to parse it here.
      (status === 'joining' && (field(s, 'tokens') ?? '') !== '') ||
      s.fields.has('removing') ||
      s.fields.has('removed') ||
      s.fields.has('heirs') ||
      status === 'removed';
    if (!relevant) continue;
    parts.push(
      `${s.id}/${s.generation}/${status}/${v('tokens')}/${v('zone')}/${v('rack')}/${v('weight')}/${v('replaces')}/${v('removing')}/${v('removed')}/${v('heirs')}`,
    );
  }
  return parts.sort().join(' ');
}

function member(s: EndpointState, tokens: bigint[]): Member {
  return {
    id: s.id,
    zone: field(s, 'zone') ?? '',
    rack: field(s, 'rack') ?? '',
    weight: Number(field(s, 'weight') ?? '1'),
    tokens,
  };
}

function byId(a: EndpointState, b: EndpointState): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function ringFromStates(states: Iterable<EndpointState>, options: RingOptions = {}): RingView {
  const list = [...states].sort(byId);
  const fingerprint = ringFingerprint(list);
  const removed = removedOf(list);
  const owners = ownersOf(list, removed);
  const ownerIds = new Set(owners.map((s) => s.id));
  const heirs = heirsBySubject(list);
  // Tokens of the leavers that are gone, as their heirs hold them.
  const inherited = [...heirs].filter(([subject]) => !ownerIds.has(subject)).map(([, map]) => map);
  const current = claimsOf(owners, [], inherited);

  const movements: Movement[] = [];
  const out = new Set<string>();
  const joiners: EndpointState[] = [];
  // Removals first: removing a node that died while leaving takes over its leave.
  for (const s of list) {
    const removing = field(s, 'removing');
    if (
      removing &&
      ownerIds.has(removing) &&
      !out.has(removing) &&
      !removed.has(s.id) &&
      OWNER_STATUSES.has(statusOf(s) ?? '')
    ) {
      movements.push({ kind: 'remove', node: removing, driver: s.id });
      out.add(removing);
    }
  }
  for (const s of list) {
    if (removed.has(s.id) || out.has(s.id)) continue;
    const st = statusOf(s);
    if (st === 'joining' && claimedTokens(s) !== undefined) {
      const r = field(s, 'replaces');
      if (r && ownerIds.has(r)) {
        movements.push({ kind: 'replace', node: s.id, driver: s.id, replaces: r });
        out.add(r);
      } else movements.push({ kind: 'join', node: s.id, driver: s.id });
      joiners.push(s);
    } else if (st === 'leaving' && ownerIds.has(s.id)) {
      movements.push({ kind: 'leave', node: s.id, driver: s.id });
      out.add(s.id);
    }
  }
  movements.sort(byPriority);
  const ring = current.members.length > 0 ? Ring.build(current.members, options) : undefined;
  let target = ring;
  const conflicts = [...current.conflicts];
  if (movements.length > 0) {
    const leaving = [...out].flatMap((id) => (heirs.has(id) ? [heirs.get(id)!] : []));
    const after = claimsOf(
      owners.filter((s) => !out.has(s.id)),
      joiners,
      [...inherited, ...leaving],
    );
    conflicts.push(...after.conflicts.filter((c) => !conflicts.some((x) => x.id === c.id)));
    target = after.members.length > 0 ? Ring.build(after.members, options) : undefined;
  }
  return { ring, target, movements, removed, conflicts, fingerprint, hash: tokenHex(tokenOf(fingerprint)) };
}

function removedOf(list: readonly EndpointState[]): Set<string> {
  const removed = new Set<string>();
  for (const s of list) {
    for (const id of removedIds(s)) removed.add(id);
    if (statusOf(s) === 'removed') removed.add(s.id);
    const r = field(s, 'replaces');
    if (r && statusOf(s) === 'normal') removed.add(r);
  }
  return removed;
}

function ownersOf(list: readonly EndpointState[], removed: ReadonlySet<string>): EndpointState[] {
  return list.filter((s) => OWNER_STATUSES.has(statusOf(s) ?? '') && !removed.has(s.id));
}

/**
 * The subjects of `heirs` entries that no longer shape any ring, so that the member
 * gossiping them may drop them: the subject is no owner any more, and each of its tokens
 * is in some owner's own `tokens` (its heir took it as its own) or its heir is no
 * owner (the token is dropped, or passed on by the heir's own leave).
 */
export function settledHeirs(
  states: Iterable<EndpointState>,
  heirs: ReadonlyMap<string, ReadonlyMap<bigint, string>>,
): string[] {
  const list = [...states];
  const owners = ownersOf(list, removedOf(list));
  const ownerIds = new Set(owners.map((s) => s.id));
  const held = new Set(owners.flatMap((s) => claimedTokens(s) ?? []));
  return [...heirs]
    .filter(
      ([subject, map]) => !ownerIds.has(subject) && [...map].every(([t, heir]) => held.has(t) || !ownerIds.has(heir)),
    )
    .map(([subject]) => subject);
}

/**
 * Operator movements (replace, leave, remove) before joins, then by node id: the order
 * in which movements that appear together take their turn. Joins are automatic and can
 * re-pick their tokens later; an operator's change is what someone is waiting for.
 */
function byPriority(a: Movement, b: Movement): number {
  const rank = (m: Movement): number => (m.kind === 'join' ? 1 : 0);
  return rank(a) - rank(b) || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0);
}

/** The movement that may stream now: the first by priority. */
export function activeMovement(view: RingView): Movement | undefined {
  return view.movements[0];
}

/**
 * The first live member that does not gossip our view hash yet, if any: a movement
 * streams only once every member that coordinates requests (owners and claimed joiners
 * that `isUp` says are up) writes to its pending ranges.
 */
export function disagreeing(
  states: Iterable<EndpointState>,
  self: string,
  hash: string,
  removed: ReadonlySet<string>,
  isUp: (id: string) => boolean,
): string | undefined {
  for (const s of states) {
    if (s.id === self || removed.has(s.id) || !isUp(s.id)) continue;
    const st = statusOf(s);
    const coordinates = OWNER_STATUSES.has(st ?? '') || (st === 'joining' && claimedTokens(s) !== undefined);
    if (coordinates && field(s, 'topo') !== hash) return s.id;
  }
  return undefined;
}

/**
 * The members whose token claims stand, as ring members: owners (and, with `joiners`,
 * joining nodes that hold tokens after them), each group in id order; a member claiming
 * a token already taken is left out and reported. One rule for the ring and for joins.
 */
export function claims(
  states: Iterable<EndpointState>,
  joiners: boolean,
): { members: Member[]; conflicts: { id: string; token: bigint; owner: string }[] } {
  const all = [...states].sort(byId);
  const owners = all.filter((s) => OWNER_STATUSES.has(statusOf(s) ?? ''));
  const ownerIds = new Set(owners.map((s) => s.id));
  const inherited = [...heirsBySubject(all)].filter(([subject]) => !ownerIds.has(subject)).map(([, map]) => map);
  return claimsOf(owners, joiners ? all.filter((s) => statusOf(s) === 'joining') : [], inherited);
}

/**
 * Owners' claims, then the tokens owners inherit from leavers (`inherited`: token → heir
 * maps; a token goes to its heir if the heir is an owner here and nobody holds it), then
 * joiners' claims.
 */
function claimsOf(
  owners: readonly EndpointState[],
  joiners: readonly EndpointState[],
  inherited: readonly ReadonlyMap<bigint, string>[] = [],
): { members: Member[]; conflicts: { id: string; token: bigint; owner: string }[] } {
  const owner = new Map<bigint, string>();
  const claimed = new Map<string, { s: EndpointState; tokens: bigint[] }>();
  const conflicts: { id: string; token: bigint; owner: string }[] = [];
  const claim = (s: EndpointState): void => {
    const tokens = claimedTokens(s);
    if (tokens === undefined) return;
    const clash = tokens.find((t) => owner.has(t));
    if (clash !== undefined) {
      conflicts.push({ id: s.id, token: clash, owner: owner.get(clash)! });
      return;
    }
    for (const t of tokens) owner.set(t, s.id);
    claimed.set(s.id, { s, tokens });
  };
  owners.forEach(claim);
  for (const map of inherited) {
    for (const [t, heir] of map) {
      const c = claimed.get(heir);
      if (c === undefined || owner.has(t)) continue;
      owner.set(t, heir);
      c.tokens.push(t);
    }
  }
  joiners.forEach(claim);
  return { members: [...claimed.values()].map(({ s, tokens }) => member(s, tokens)), conflicts };
}
