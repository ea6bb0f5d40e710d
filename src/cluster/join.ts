/**
 * How a new node takes its place: when to pick tokens, which ones, and when it may own
 * data. Pure: the node shell feeds it the member table, the topology view and what it
 * waited so far.
 *
 * - Listen first (`settleMs`) so that the tables of reachable seeds arrive; a node that
 *   hears no one in that time forms a cluster by itself.
 * - One topology change at a time: a node does not claim tokens while another movement
 *   (a join, leave, removal or replacement) is in progress, and nodes starting together
 *   claim one at a time, lowest id first (a node waits, at most `maxWaitMs`, while a
 *   joiner with a smaller id has no tokens yet), so each picks its tokens from a ring
 *   that already holds the ones picked before it.
 * - Tokens come from the ring's claim functions (claimJoin): balanced for N, zone-aware.
 * - A claim settles for CLAIM_SETTLE_ROUNDS; a claim that loses to another movement that
 *   appeared at the same moment is withdrawn (ring-view.ts orders them) and made again
 *   later. Then the joiner waits until every live member gossips the view that holds its
 *   claim (so every coordinator writes to its pending ranges), streams the ranges it
 *   gains (src/streaming), and only then becomes `normal`: it never owns data it does not have.
 *
 * Owns: these decisions. Must not: persist, gossip, stream or read clocks.
 */

import { Ring, claimJoin, claimRing } from '../ring/index.js';
import { field, parseTokens, statusOf, type EndpointState } from '../membership/endpoint.js';
import { claims, disagreeing, type Movement, type RingView } from '../membership/ring-view.js';

export interface JoinInput {
  readonly self: { readonly id: string; readonly zone: string; readonly rack: string; readonly weight: number };
  readonly tokensPerNode: number;
  /** The cluster's N (--replicas): the tokens are balanced for it. */
  readonly replicas: number;
  readonly states: Iterable<EndpointState>;
  /** ms since the node started listening. */
  readonly waitedMs: number;
  /** ms since the node last saw another node's topology change in progress (or started). */
  readonly quietMs: number;
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
  // A joiner that died waits out maxWaitMs (counted from the last movement: joiners queued
  // behind one claim in id order once it is done).
  // Standbys (--join manual) claim only when admitted: nobody waits for them.
  const earlier = others.filter(
    (s) =>
      s.id < self.id &&
      statusOf(s) === 'joining' &&
      (field(s, 'tokens') ?? '') === '' &&
      field(s, 'standby') !== 'true',
  );
  if (earlier.length > 0 && input.quietMs < input.maxWaitMs) {
    return { kind: 'wait', reason: `${earlier.map((s) => s.id).join(', ')} picks tokens first` };
  }
  // Everyone's standing claims, by the ring's own rule (ring-view.ts): a claim that
  // clashes with one taken before it is left out (its node picks again, see tokenClash).
  const placed = claims(others, true).members;
  const options = { tokensPerNode: input.tokensPerNode };
  const tokens =
    placed.length === 0
      ? claimRing([self], input.replicas, options).member(self.id)!.tokens
      : claimJoin(Ring.build(placed, options), self, input.replicas);
  return { kind: 'claim', tokens: [...tokens], alone: others.length === 0 };
}

/**
 * The member that claimed one of `tokens` before us, if any: an owner, or a joiner with a
 * smaller id (the one that goes first). The node then picks again. Members no longer in
 * the cluster (`removed`: removed, or replaced) claim nothing, whatever they last gossiped:
 * a node replaced twice keeps its first owner's tokens in the table, still `normal`.
 */
export function tokenClash(
  selfId: string,
  tokens: readonly bigint[],
  states: Iterable<EndpointState>,
  replaces?: string,
  removed: ReadonlySet<string> = new Set(),
): string | undefined {
  const mine = new Set(tokens);
  for (const s of states) {
    const st = statusOf(s);
    if (s.id === selfId || s.id === replaces || removed.has(s.id) || st === undefined || GONE.has(st)) continue;
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
 * Gossip rounds between picking tokens and looking for agreement, so that a clash with a
 * node that picked from a view lacking ours surfaces (and we pick again) while we still
 * own nothing. Before joins waited for every live member to gossip their view (three
 * rounds then), two nodes that picked at once both became owners and the ring left one
 * out for good (simulator, 1 run in 300); the agreement now catches such a clash, and one
 * round passes the simulator's 150 formations as three did, two rounds faster per join.
 */
export const CLAIM_SETTLE_ROUNDS = 1;

export interface JoinState {
  readonly self: JoinInput['self'];
  readonly clusterName: string;
  readonly tokensPerNode: number;
  readonly replicas: number;
  readonly intervalMs: number;
  /** ms since the node started. */
  readonly waitedMs: number;
  /** ms since the node last saw another node's topology change in progress (or started). */
  readonly quietMs: number;
  /** Our tokens as persisted, if any. */
  readonly tokens: readonly bigint[] | undefined;
  /** ms since we picked those tokens (or since the start, for tokens from node.json). */
  readonly tokensAgeMs: number;
  readonly gossip: {
    readonly shadow: boolean;
    readonly formerSelf: EndpointState | undefined;
    states(): Iterable<EndpointState>;
    state?(id: string): EndpointState | undefined;
    isUp(id: string): boolean;
  };
  /** The topology as this node sees it now (ring-view.ts), our claim included. */
  readonly view: RingView;
  /** Has every range of our claim's transfer plan been streamed here? */
  readonly streamed: boolean;
  /** The dead owner this node replaces (ringkv node --replace): its tokens are ours to take. */
  readonly replaces?: string | undefined;
  /** Started with --join manual and not admitted yet: wait as a standby. */
  readonly standby?: boolean;
  /** Bytes this node's disk takes before it refuses writes (free space above its floor); undefined: not known yet. */
  readonly room?: number | undefined;
}

export type JoinStep =
  | { readonly kind: 'wait'; readonly reason: string }
  /** Show ourselves to the cluster (end the shadow round and announce). */
  | { readonly kind: 'show' }
  /** Stop the node: it must not take this id. */
  | { readonly kind: 'fail'; readonly message: string }
  /** Persist and gossip these tokens (`clash`: the member whose claim made us pick again). */
  | { readonly kind: 'claim'; readonly tokens: bigint[]; readonly alone: boolean; readonly clash: string | undefined }
  /** Give up our claim (gossip no tokens): `first` goes first; we claim again after it. */
  | { readonly kind: 'withdraw'; readonly first: Movement }
  /** Stream (or keep streaming) the ranges our claim gains. */
  | { readonly kind: 'stream' }
  /**
   * Persist and gossip status normal; a replacer also adds the node it replaced to its
   * `removed` (`replaced`), so that the dead node stays out of the ring once this one leaves
   * or is replaced in turn (ring-view.ts counts a replaced node removed only while its
   * replacer is normal).
   */
  | { readonly kind: 'normal'; readonly reason: string; readonly replaced: string | undefined };

/**
 * The next step of a joining node, from what it knows now. The shell applies it and asks
 * again until it waits; one run a gossip round. The checks run in this order: the shadow
 * round, a standby's wait, a claim to make (none yet, or one that clashes), then a claim's
 * way to normal.
 */
export function nextJoinStep(s: JoinState): JoinStep {
  if (s.gossip.shadow) return shadowStep(s);
  if (s.standby && s.tokens === undefined)
    return {
      kind: 'wait',
      reason: 'standby (--join manual): waiting to be admitted (ringkv plan join ID, then ringkv commit)',
    };
  const clash =
    s.tokens === undefined ? undefined : tokenClash(s.self.id, s.tokens, s.gossip.states(), s.replaces, s.view.removed);
  if (s.tokens === undefined || clash !== undefined) return claimStep(s, clash);
  return claimedStep(s);
}

/** The step during the shadow round: listen, then show ourselves unless a member (not left or removed) already has our id. */
function shadowStep(s: JoinState): JoinStep {
  if (s.waitedMs < SHADOW_ROUNDS * s.intervalMs)
    return { kind: 'wait', reason: 'shadow round: checking that no member has this id' };
  const former = s.gossip.formerSelf;
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

/**
 * The step of a node with no tokens, or whose claim clashes with `clash`'s: wait for
 * another movement (withdrawing a clashing claim), for disk room, then claim (a replacer,
 * its dead node's tokens).
 */
function claimStep(s: JoinState, clash: string | undefined): JoinStep {
  const busy = s.view.movements.find((m) => m.node !== s.self.id && m.driver !== s.self.id);
  if (busy !== undefined) {
    // A claim that clashes while another movement is on: give it up, so that it does not hold the other back.
    if (s.tokens !== undefined) return { kind: 'withdraw', first: busy };
    return {
      kind: 'wait',
      reason: `${describeMovement(busy)}: one topology change at a time, this node joins after it`,
    };
  }
  if (s.tokens === undefined) {
    const short = roomShort(s);
    if (short !== undefined) return { kind: 'wait', reason: short };
  }
  if (s.replaces !== undefined) return replaceClaim(s, s.replaces);
  const d = decideTokens({
    self: s.self,
    tokensPerNode: s.tokensPerNode,
    replicas: s.replicas,
    states: s.gossip.states(),
    waitedMs: s.waitedMs,
    quietMs: s.quietMs,
    settleMs: (SHADOW_ROUNDS + SETTLE_ROUNDS) * s.intervalMs,
    maxWaitMs: MAX_WAIT_ROUNDS * s.intervalMs,
  });
  return d.kind === 'wait' ? d : { ...d, clash };
}

/**
 * The step of a node whose claim stands: let it settle, withdraw it if another movement
 * goes first, wait until every live member sees it, stream, then become normal.
 */
function claimedStep(s: JoinState): JoinStep {
  if (s.tokensAgeMs < CLAIM_SETTLE_ROUNDS * s.intervalMs)
    return { kind: 'wait', reason: 'letting our token claim settle' };
  const first = s.view.movements[0];
  if (first !== undefined && first.node !== s.self.id) return { kind: 'withdraw', first };
  if (first === undefined) return { kind: 'wait', reason: 'our claim is not in our view yet' };
  if (s.view.movements.length > 1)
    return {
      kind: 'wait',
      reason: `waiting for ${s.view.movements
        .slice(1)
        .map((m) => m.node)
        .join(', ')} to withdraw`,
    };
  const g = s.gossip;
  const behind = disagreeing(g.states(), s.self.id, s.view.hash, s.view.removed, (id) => g.isUp(id));
  if (behind !== undefined)
    return {
      kind: 'wait',
      reason: `waiting for ${behind} to see our claim (then every coordinator writes to our pending ranges)`,
    };
  if (!s.streamed) return { kind: 'stream' };
  return {
    kind: 'normal',
    reason:
      s.view.ring === undefined
        ? 'the first owner: nothing to stream'
        : 'every range this node gains has been streamed',
    replaced: s.replaces,
  };
}

/**
 * Why this node must not claim tokens yet for want of disk, or undefined: the data it
 * would take (a replacer, its dead node's load; a new node, the owners' loads shared
 * with it as one more owner) is more than its disk takes before it refuses writes. A
 * claim would stream into a disk that fills, holding the cluster's one topology change;
 * waiting only delays joiners with larger ids (decideTokens: at most maxWaitMs).
 */
function roomShort(s: JoinState): string | undefined {
  if (s.room === undefined) return undefined;
  const load = (st: EndpointState): number => Number(field(st, 'load') ?? '0') || 0;
  let need: number;
  if (s.replaces !== undefined) {
    const dead = [...s.gossip.states()].find((x) => x.id === s.replaces);
    need = dead === undefined ? 0 : load(dead);
  } else {
    const owners = [...s.gossip.states()].filter(
      (x) => x.id !== s.self.id && statusOf(x) === 'normal' && (field(x, 'tokens') ?? '') !== '',
    );
    need = owners.length === 0 ? 0 : owners.reduce((sum, x) => sum + load(x), 0) / (owners.length + 1);
  }
  if (need <= s.room) return undefined;
  const mib = (n: number): string => `${(n / 2 ** 20).toFixed(n < 2 ** 30 ? 1 : 0)} MiB`;
  return `not enough disk to join: this node would take about ${mib(need)} (${s.replaces !== undefined ? `${s.replaces}'s load` : "the owners' load shared with one more"}), and its disk takes ${mib(s.room)} more before it refuses writes (--min-free-disk). Free space or give it a larger disk; it joins once there is room`;
}

/** The claim of a node that replaces `dead`: its tokens, once it is known to be a dead owner. */
function replaceClaim(s: JoinState, dead: string): JoinStep {
  if (s.waitedMs < (SHADOW_ROUNDS + SETTLE_ROUNDS) * s.intervalMs)
    return { kind: 'wait', reason: 'listening for the cluster' };
  const st = s.gossip.state?.(dead) ?? [...s.gossip.states()].find((x) => x.id === dead);
  if (st === undefined) return { kind: 'wait', reason: `learning the state of ${dead}, the node to replace` };
  if (s.view.removed.has(dead) || !(s.view.ring?.has(dead) ?? false))
    return {
      kind: 'fail',
      message: `cannot replace ${dead}: it is not an owner of cluster ${s.clusterName} (status ${statusOf(st) ?? '?'}${s.view.removed.has(dead) ? ', removed' : ''}); start this node without --replace to join as a new node`,
    };
  if (s.gossip.isUp(dead))
    return {
      kind: 'fail',
      message: `cannot replace ${dead}: it is up. Stop it first (replace is for a node that is dead), or decommission it and join this node normally`,
    };
  // Placement follows zones and racks: a replacer elsewhere would move ranges other than the
  // dead node's to other owners, and nobody would stream those (a replacement streams its own).
  const was = s.view.ring!.member(dead)!;
  if (was.zone !== s.self.zone || was.rack !== s.self.rack)
    return {
      kind: 'fail',
      message:
        `cannot replace ${dead}: it was in zone "${was.zone}", rack "${was.rack}", and this node is in zone "${s.self.zone}", rack "${s.self.rack}". ` +
        `A replacer takes the dead node's tokens and place: start it with --zone "${was.zone}" --rack "${was.rack}", or remove ${dead} (ringkv removenode) and join this node as a new one`,
    };
  const tokens = parseTokens(field(st, 'tokens') ?? '');
  if (tokens === undefined) return { kind: 'wait', reason: `learning the tokens of ${dead}` };
  return { kind: 'claim', tokens, alone: false, clash: undefined };
}

/** A movement in words, for logs and refusals: "n4 is joining". */
export function describeMovement(m: Movement): string {
  switch (m.kind) {
    case 'join':
      return `${m.node} is joining`;
    case 'replace':
      return `${m.node} is replacing ${m.replaces}`;
    case 'leave':
      return `${m.node} is leaving`;
    case 'remove':
      return `${m.node} is being removed by ${m.driver}`;
  }
}
