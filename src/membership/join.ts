/**
 * How a new node takes its place: when to pick tokens, which ones, and when it may own
 * data. Pure: the node shell feeds it the member table and what it waited so far.
 *
 * - Listen first (`settleMs`) so that the tables of reachable seeds arrive; a node that
 *   hears no one in that time forms a cluster by itself.
 * - Nodes starting together join one at a time, lowest id first: a node waits while a
 *   joiner with a smaller id has no tokens yet (at most `maxWaitMs`), so each picks
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
import { claims } from './ring-view.js';

export interface JoinInput {
  readonly self: { readonly id: string; readonly zone: string; readonly rack: string; readonly weight: number };
  readonly tokensPerNode: number;
  readonly states: Iterable<EndpointState>;
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
  // Not only live ones: a joiner we heard of second-hand is not "up" until a newer
  // heartbeat of it arrives, and not waiting for it let two nodes pick from one view.
  // A joiner that died waits out maxWaitMs.
  const earlier = others.filter((s) => s.id < self.id && statusOf(s) === 'joining' && field(s, 'tokens') === undefined);
  if (earlier.length > 0 && waitedMs < input.maxWaitMs) {
    return { kind: 'wait', reason: `${earlier.map((s) => s.id).join(', ')} picks tokens first` };
  }
  // Everyone's standing claims, by the ring's own rule (ring-view.ts): a claim that
  // clashes with one taken before it is left out (its node picks again, see tokenClash).
  const placed = claims(others, true).members;
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

/** Gossip rounds a new node listens unseen before it shows itself (shadow round). */
export const SHADOW_ROUNDS = 2;
/** Gossip rounds a new node is visible before it picks tokens, so that joiners see each other. */
export const SETTLE_ROUNDS = 2;
/** Gossip rounds a joiner waits for a smaller-id joiner to pick first, at most. */
export const MAX_WAIT_ROUNDS = 30;
/**
 * Gossip rounds between picking tokens and becoming an owner, so that a clash with a
 * node that picked from a view lacking ours surfaces (and we pick again) while we still
 * own nothing. Without it two nodes that picked at once both became owners and the ring
 * left one out for good (simulator, 1 run in 300).
 */
export const CLAIM_SETTLE_ROUNDS = 3;

export interface JoinState {
  readonly self: JoinInput['self'];
  readonly clusterName: string;
  readonly tokensPerNode: number;
  readonly intervalMs: number;
  /** ms since the node started. */
  readonly waitedMs: number;
  /** Our tokens as persisted, if any. */
  readonly tokens: readonly bigint[] | undefined;
  /** ms since we picked those tokens (or since the start, for tokens from node.json). */
  readonly tokensAgeMs: number;
  /** Does our store hold no data? */
  readonly empty: boolean;
  readonly gossip: {
    readonly shadow: boolean;
    readonly formerSelf: EndpointState | undefined;
    states(): Iterable<EndpointState>;
  };
}

export type JoinStep =
  | { readonly kind: 'wait'; readonly reason: string }
  /** Show ourselves to the cluster (end the shadow round and announce). */
  | { readonly kind: 'show' }
  /** Stop the node: it must not take this id. */
  | { readonly kind: 'fail'; readonly message: string }
  /** Persist and gossip these tokens (`clash`: the member whose claim made us pick again). */
  | { readonly kind: 'claim'; readonly tokens: bigint[]; readonly alone: boolean; readonly clash: string | undefined }
  /** Persist and gossip status normal. */
  | { readonly kind: 'normal'; readonly reason: string };

/**
 * The next step of a joining node, from what it knows now. The shell applies it and asks
 * again until it waits; one run a gossip round.
 */
export function nextJoinStep(s: JoinState): JoinStep {
  const g = s.gossip;
  if (g.shadow) {
    if (s.waitedMs < SHADOW_ROUNDS * s.intervalMs) return { kind: 'wait', reason: 'shadow round: checking that no member has this id' };
    const former = g.formerSelf;
    const st = former === undefined ? undefined : statusOf(former);
    if (former !== undefined && !GONE.has(st ?? '')) {
      const tokens = parseTokens(field(former, 'tokens') ?? '')?.length ?? 0;
      return {
        kind: 'fail',
        message:
          `node id ${s.self.id} is already a member of cluster ${s.clusterName} (status ${st ?? '?'}, ${tokens} tokens, ` +
          `generation ${former.generation}), but this data dir is new, so that node's data is lost here. ` +
          'Start this node without --id (it gets a new id) and remove the old member once removal exists, ' +
          'or restore the old data dir.',
      };
    }
    return { kind: 'show' };
  }
  const clash = s.tokens === undefined ? undefined : tokenClash(s.self.id, s.tokens, g.states());
  if (s.tokens === undefined || clash !== undefined) {
    const d = decideTokens({
      self: s.self,
      tokensPerNode: s.tokensPerNode,
      states: g.states(),
      waitedMs: s.waitedMs,
      settleMs: (SHADOW_ROUNDS + SETTLE_ROUNDS) * s.intervalMs,
      maxWaitMs: MAX_WAIT_ROUNDS * s.intervalMs,
    });
    return d.kind === 'wait' ? d : { ...d, clash };
  }
  if (s.tokensAgeMs < CLAIM_SETTLE_ROUNDS * s.intervalMs) return { kind: 'wait', reason: 'letting our token claim settle' };
  const may = mayBecomeNormal(s.empty, s.self.id, g.states());
  return may.ok ? { kind: 'normal', reason: may.reason } : { kind: 'wait', reason: may.reason };
}
