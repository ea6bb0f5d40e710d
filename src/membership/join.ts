/**
 * How a new node takes its place: when to pick tokens, which ones, and when it may own
 * data. Pure: the node shell feeds it the member table and what it waited so far.
 *
 * - Listen first (`settleMs`) so that the tables of reachable seeds arrive; a node that
 *   hears no one in that time forms a cluster by itself.
 * - Nodes starting together join one at a time, lowest id first: a node waits while a
 *   live joiner with a smaller id has no tokens yet (at most `maxWaitMs`), so each picks
 *   its tokens from a ring that already holds the ones picked before it. Equal picks from
 *   equal views cannot happen then; ring-view.ts resolves any that gossip still carries.
 * - Tokens come from the ring allocator (Ring.withMember): balanced, zone-aware.
 * - A joiner becomes `normal` only when no owner holds data (the cluster is new), since
 *   nothing needs streaming then. Otherwise it stays `joining` until handoff (the data
 *   streaming issue) has moved its ranges to it: it never claims data it does not have.
 *
 * Owns: these decisions. Must not: persist, gossip or read clocks.
 */

import { Ring } from '../ring/index.js';
import { field, parseTokens, statusOf, type EndpointState } from './endpoint.js';

export interface JoinInput {
  readonly self: { readonly id: string; readonly zone: string; readonly rack: string; readonly weight: number };
  readonly tokensPerNode: number;
  readonly states: Iterable<EndpointState>;
  readonly isUp: (id: string) => boolean;
  /** ms since the node started listening. */
  readonly waitedMs: number;
  readonly settleMs: number;
  readonly maxWaitMs: number;
}

export type JoinDecision =
  | { readonly kind: 'wait'; readonly reason: string }
  | { readonly kind: 'claim'; readonly tokens: bigint[]; readonly alone: boolean };

const GONE = new Set(['left', 'removed']);

export function decideTokens(input: JoinInput): JoinDecision {
  const { self, waitedMs } = input;
  if (waitedMs < input.settleMs) return { kind: 'wait', reason: 'listening for the cluster' };
  const others = [...input.states].filter((s) => s.id !== self.id && !GONE.has(statusOf(s) ?? ''));
  const earlier = others.filter(
    (s) => s.id < self.id && statusOf(s) === 'joining' && field(s, 'tokens') === undefined && input.isUp(s.id),
  );
  if (earlier.length > 0 && waitedMs < input.maxWaitMs) {
    return { kind: 'wait', reason: `${earlier.map((s) => s.id).join(', ')} picks tokens first` };
  }
  const placed = others.flatMap((s) => {
    const tokens = parseTokens(field(s, 'tokens') ?? '');
    return tokens === undefined
      ? []
      : [{ id: s.id, zone: field(s, 'zone') ?? '', rack: field(s, 'rack') ?? '', weight: Number(field(s, 'weight') ?? '1'), tokens }];
  });
  const options = { tokensPerNode: input.tokensPerNode };
  const ring = placed.length === 0 ? Ring.build([self], options) : Ring.build(placed, options).withMember(self);
  return { kind: 'claim', tokens: [...ring.member(self.id)!.tokens], alone: others.length === 0 };
}

/**
 * May a joiner with tokens become normal? Yes when neither it nor any owner holds data
 * (each node gossips `empty`); an owner whose `empty` we have not heard counts as holding data.
 */
export function mayBecomeNormal(selfEmpty: boolean, selfId: string, states: Iterable<EndpointState>): { ok: boolean; reason: string } {
  if (!selfEmpty) return { ok: false, reason: 'this node already holds data' };
  for (const s of states) {
    if (s.id === selfId) continue;
    const st = statusOf(s);
    if ((st === 'normal' || st === 'leaving') && field(s, 'empty') !== 'true') {
      return { ok: false, reason: `${s.id} holds data: the ranges must be streamed first (handoff)` };
    }
  }
  return { ok: true, reason: 'the cluster holds no data' };
}

/**
 * The member that claimed one of `tokens` before us, if any: an owner, or a joiner with a
 * smaller id (the one that goes first). The node then picks again.
 */
export function tokenClash(selfId: string, tokens: readonly bigint[], states: Iterable<EndpointState>): string | undefined {
  const mine = new Set(tokens);
  for (const s of states) {
    const st = statusOf(s);
    if (s.id === selfId || st === undefined || GONE.has(st)) continue;
    if (st === 'joining' && s.id > selfId) continue;
    if ((parseTokens(field(s, 'tokens') ?? '') ?? []).some((t) => mine.has(t))) return s.id;
  }
  return undefined;
}
