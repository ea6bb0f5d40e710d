/**
 * The ring a member table implies. Every node derives it the same way from the same
 * gossiped states, so once gossip converges every node holds the same Ring.
 *
 * Owners are members whose status is `normal` or `leaving` and whose tokens parse
 * (joining nodes are not owners yet: they would answer for data they do not have). Two
 * members claiming one token is a conflict a correct join never makes but gossip can
 * carry (two nodes joining at the same instant from the same view): members are taken
 * in id order and a later member that claims a token already taken is left out, on every
 * node alike, and reported, so that it re-picks.
 *
 * Owns: owners, conflicts, and the fingerprint by which the node shell skips rebuilding
 * an unchanged ring (heartbeats change every second; ownership rarely). Must not: mutate
 * the table or do I/O.
 */

import { Ring, type Member, type RingOptions } from '../ring/index.js';
import { field, parseTokens, statusOf, type EndpointState } from './endpoint.js';

export interface RingView {
  /** Undefined while no member owns tokens. */
  readonly ring: Ring | undefined;
  /** Members left out of the ring because a token of theirs is already owned. */
  readonly conflicts: readonly { readonly id: string; readonly token: bigint; readonly owner: string }[];
  readonly fingerprint: string;
}

const OWNER_STATUSES = new Set(['normal', 'leaving']);

/** What ownership depends on, per member: equal fingerprints give equal rings. */
export function ringFingerprint(states: Iterable<EndpointState>): string {
  const parts: string[] = [];
  for (const s of states) {
    const status = statusOf(s);
    if (status === undefined || !OWNER_STATUSES.has(status)) continue;
    const v = (name: string): string => `${s.fields.get(name)?.version ?? 0}`;
    parts.push(`${s.id}/${s.generation}/${status}/${v('tokens')}/${v('zone')}/${v('rack')}/${v('weight')}`);
  }
  return parts.sort().join(' ');
}

export function ringFromStates(states: Iterable<EndpointState>, options: RingOptions = {}): RingView {
  const list = [...states];
  const { members, conflicts } = claims(list, false);
  const ring = members.length > 0 ? Ring.build(members, options) : undefined;
  return { ring, conflicts, fingerprint: ringFingerprint(list) };
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
  const rank = (s: EndpointState): number => (OWNER_STATUSES.has(statusOf(s) ?? '') ? 0 : statusOf(s) === 'joining' && joiners ? 1 : 2);
  const candidates = [...states].filter((s) => rank(s) < 2).sort((a, b) => rank(a) - rank(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const owner = new Map<bigint, string>();
  const members: Member[] = [];
  const conflicts: { id: string; token: bigint; owner: string }[] = [];
  for (const s of candidates) {
    const tokens = parseTokens(field(s, 'tokens') ?? '');
    if (tokens === undefined) continue;
    const clash = tokens.find((t) => owner.has(t));
    if (clash !== undefined) {
      conflicts.push({ id: s.id, token: clash, owner: owner.get(clash)! });
      continue;
    }
    for (const t of tokens) owner.set(t, s.id);
    members.push({ id: s.id, zone: field(s, 'zone') ?? '', rack: field(s, 'rack') ?? '', weight: Number(field(s, 'weight') ?? '1'), tokens });
  }
  return { members, conflicts };
}
