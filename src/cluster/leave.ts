/**
 * Leaving the ring, decided: an operator's decommission of this node (`leaving` → its
 * gainers pull → hints handed over → `left`, then the node exits) and the removal of a
 * dead member (`removing` → the heirs pull its ranges from the surviving replicas → the
 * survivors repair the units whose copies it took with it (removal-repair.ts) →
 * `removed`), and the heirs bookkeeping once leaves are done. In the style of
 * cluster/join.ts (etcd raft's Step): every function here is a synchronous function
 * of what the node persisted (node.json: `Persisted`), the view gossip gives it
 * (membership/ring-view.ts) and what it knows of the pulls it asked for, and returns
 * what to do; node/topology/movement-driver.ts does it (persist, gossip, pull, announce, exit).
 *
 * A restart is calling these again with what was persisted: the movement is in node.json
 * (status `leaving`, or `removing`, with its `move` id), so the next step after a restart
 * is the same as before it, and pulls asked again under the same move id resume from the
 * gainers' checkpoints (handoff/checkpoints.ts). Each update is one persist (atomic, in
 * node.json) followed by gossip, so a node killed between the two gossips what it
 * persisted when it starts again (its start fields come from node.json).
 *
 * Owns: the checks an operator's leave or removal must pass, and each next step of the
 * movement this node drives. Must not: persist, gossip, stream, read clocks or draw
 * random numbers (the shell passes the move id's nonce), or decide the ring
 * (membership/ring-view.ts does).
 */
import { leaveHeirs, unitKey, type RangeUnit, type Ring } from '../ring/index.js';
import {
  field,
  formatHeirs,
  formatTokens,
  parseHeirs,
  statusOf,
  type EndpointState,
  type NodeStatus,
} from '../membership/endpoint.js';
import { disagreeing, settledHeirs, type Movement, type RingView } from '../membership/ring-view.js';
import { describeMovement } from './join.js';
import { removalRepairUnits } from './removal-repair.js';

/** What the core reads of node.json (node/identity.ts's Identity has these fields). */
export interface Persisted {
  readonly status: NodeStatus;
  readonly tokens: readonly bigint[] | undefined;
  readonly move: string | undefined;
  readonly removing: string | undefined;
  readonly removed: readonly string[];
  readonly heirs: string;
}

export type PersistedChange = Partial<Pick<Persisted, 'status' | 'tokens' | 'move' | 'removing' | 'removed' | 'heirs'>>;

/** Persist `persist` (node.json), then set the gossip fields `gossip`: in that order. */
export interface Update {
  readonly persist: PersistedChange;
  readonly gossip: Readonly<Record<string, string>>;
}

/** What an operator's request comes to. */
export type Request =
  /** Refused now (FAILED_PRECONDITION): `message` says why and what to do. */
  | { readonly kind: 'refuse'; readonly message: string }
  /** Asked again: the change is under way with this move id. */
  | { readonly kind: 'already'; readonly move: string }
  /** Start the change: apply `update`; `warning` (if any) is for the log. */
  | { readonly kind: 'start'; readonly move: string; readonly update: Update; readonly warning: string | undefined }
  /** A member that owned nothing: marked removed at once (`update`), nothing to move. */
  | { readonly kind: 'removed'; readonly update: Update };

export interface RequestInput {
  readonly self: string;
  readonly me: Persisted;
  readonly view: RingView;
  /** This node's N. */
  readonly replicas: number;
  /** Random hex the shell draws: a new move id per change (progress under an old one missed the writes since). */
  readonly nonce: string;
}

/** The heirs of `id`'s tokens on `ring` for N replicas: the one call of the ring's allocator on this path. */
function heirsOf(ring: Ring, id: string, replicas: number): ReadonlyMap<bigint, string> {
  return leaveHeirs(ring, id, replicas);
}

/**
 * `heirs` (the gossip field) with the entry for `subject` set, or withdrawn (undefined).
 * Entries of finished changes stay: the ring goes on applying them (ring-view.ts).
 */
export function heirsWith(heirs: string, subject: string, map: ReadonlyMap<bigint, string> | undefined): string {
  const entries = parseHeirs(heirs) ?? new Map<string, ReadonlyMap<bigint, string>>();
  if (map === undefined) entries.delete(subject);
  else entries.set(subject, map);
  return formatHeirs(entries);
}

function refuseWhileMoving(movements: readonly Movement[]): Request | undefined {
  const m = movements[0];
  return m === undefined
    ? undefined
    : {
        kind: 'refuse',
        message: `${describeMovement(m)}: one topology change at a time; wait for it to finish (ringkv transfers) and try again`,
      };
}

/** Refused when `leaving` is the last owner; a warning when fewer than N would be left. */
function sizeCheck(view: RingView, leaving: string, replicas: number): { refuse?: Request; warning?: string } {
  const left = (view.ring?.size ?? 0) - 1;
  if (left < 1)
    return { refuse: { kind: 'refuse', message: `${leaving} is the last member: a cluster needs at least one` } };
  if (left < replicas)
    return {
      warning: `after this change the cluster has ${left} members, fewer than N=${replicas}: each key will have fewer copies than N`,
    };
  return {};
}

/** Decommission this node (`ringkv decommission`). */
export function requestDecommission(i: RequestInput): Request {
  const { self, me, view } = i;
  if (me.status === 'leaving' && me.move !== undefined) return { kind: 'already', move: me.move };
  if (me.status !== 'normal')
    return {
      kind: 'refuse',
      message: `${self} is ${me.status}, not normal: only a normal member can be decommissioned`,
    };
  const busy = refuseWhileMoving(view.movements);
  if (busy !== undefined) return busy;
  const size = sizeCheck(view, self, i.replicas);
  if (size.refuse !== undefined) return size.refuse;
  const move = `leave-${self}-${i.nonce}`;
  const heirs = heirsWith(me.heirs, self, heirsOf(view.ring!, self, i.replicas));
  return {
    kind: 'start',
    move,
    update: { persist: { status: 'leaving', move, heirs }, gossip: { status: 'leaving', heirs } },
    warning: size.warning,
  };
}

/** Withdraw this node's decommission (`ringkv decommission --cancel`): it is normal again. */
export function cancelDecommission(
  self: string,
  me: Persisted,
): { kind: 'refuse'; message: string } | { kind: 'withdraw'; update: Update } {
  if (me.status !== 'leaving')
    return { kind: 'refuse', message: `${self} is ${me.status}, not leaving: there is no decommission to cancel` };
  return { kind: 'withdraw', update: withdrawal(self, me)! };
}

export interface RemoveInput extends RequestInput {
  readonly target: string;
  /** The target's gossiped state, if known. */
  readonly state: EndpointState | undefined;
  /** Is the target up, in this node's opinion? */
  readonly up: boolean;
}

/** Remove `target`, a member that is down and will not come back (`ringkv removenode`). */
export function requestRemoval(i: RemoveInput): Request {
  const { self, me, view, target, state } = i;
  if (target === self)
    return {
      kind: 'refuse',
      message: `${self} cannot remove itself: decommission it instead (ringkv decommission --node <its address>)`,
    };
  if (me.removing === target && me.move !== undefined) return { kind: 'already', move: me.move };
  if (me.status !== 'normal')
    return { kind: 'refuse', message: `${self} is ${me.status}: ask a normal member to remove ${target}` };
  if (state === undefined || view.removed.has(target) || statusOf(state) === 'left')
    return { kind: 'refuse', message: `${target} is not a member of this cluster (see ringkv status)` };
  if (i.up)
    return {
      kind: 'refuse',
      message: `${target} is up: decommission it (ringkv decommission --node ${state.fields.get('addr')?.value ?? '<its address>'}) or stop it first; removenode is for nodes that will not come back`,
    };
  // A joiner that never became an owner holds nothing anyone needs: it is simply removed.
  if (!(view.ring?.has(target) ?? false)) return { kind: 'removed', update: markRemoved(me, target) };
  // A node that died while leaving may be removed: its removal takes over its leave.
  const busy = refuseWhileMoving(view.movements.filter((m) => !(m.kind === 'leave' && m.node === target)));
  if (busy !== undefined) return busy;
  const size = sizeCheck(view, target, i.replicas);
  if (size.refuse !== undefined) return size.refuse;
  const move = `remove-${target}-${i.nonce}`;
  const heirs = heirsWith(me.heirs, target, heirsOf(view.ring!, target, i.replicas));
  return {
    kind: 'start',
    move,
    update: { persist: { removing: target, move, heirs }, gossip: { removing: target, heirs } },
    warning: size.warning,
  };
}

/** `target` joins our `removed` list (gossiped: no one counts it as a member again). */
function markRemoved(
  me: Persisted,
  target: string,
  also: PersistedChange = {},
  gossip: Record<string, string> = {},
): Update {
  const removed = [...new Set([...me.removed, target])];
  return { persist: { removed, ...also }, gossip: { removed: removed.join(','), ...gossip } };
}

/** Undo the change this node drives (its leave, or its removal): undefined when none. */
function withdrawal(self: string, me: Persisted): Update | undefined {
  if (me.status === 'leaving') {
    const heirs = heirsWith(me.heirs, self, undefined);
    return { persist: { status: 'normal', move: undefined, heirs }, gossip: { status: 'normal', heirs } };
  }
  if (me.removing !== undefined) {
    const heirs = heirsWith(me.heirs, me.removing, undefined);
    return { persist: { removing: undefined, move: undefined, heirs }, gossip: { removing: '', heirs } };
  }
  return undefined;
}

export interface DriveInput {
  readonly self: string;
  readonly me: Persisted;
  readonly view: RingView;
  readonly states: Iterable<EndpointState>;
  isUp(id: string): boolean;
  /** Has every gainer pulled its ranges under `me.move`, as this run of the node knows? (false after a restart) */
  readonly pulled: boolean;
  /** Hints this node still held after its last hand-over (a leave); undefined before one. */
  readonly hintsLeft: number | undefined;
  /** The N classes in use, ascending (a removal repairs each). */
  readonly classes: readonly number[];
  /** Keys (unitKey) of the units a removal under `me.move` has repaired or skipped (persisted: it resumes after a restart). */
  readonly repaired: ReadonlySet<string>;
}

export type DriveStep =
  /** This node drives no movement. */
  | { readonly kind: 'idle' }
  | { readonly kind: 'wait'; readonly reason: string }
  /** Another movement started at the same moment goes first: apply `update` (ours is withdrawn). */
  | { readonly kind: 'withdraw'; readonly reason: string; readonly update: Update }
  /** Ask every gainer of the view's plan to pull its ranges under `move` (resumable). */
  | { readonly kind: 'pull'; readonly movement: Movement; readonly move: string }
  /**
   * A removal whose ranges are in: repair `units` (those not yet repaired of `total`) among
   * their replicas, each recorded as repaired or skipped (a replica down) under `move`.
   */
  | { readonly kind: 'repair'; readonly move: string; readonly units: readonly RangeUnit[]; readonly total: number }
  /** A leave whose ranges are in: hand the hints this node holds to their targets or live replicas. */
  | { readonly kind: 'hand-over-hints'; readonly hintsLeft: number | undefined }
  /** The leave is done: apply `update` (status left), tell every peer, exit. */
  | { readonly kind: 'left'; readonly move: string; readonly update: Update }
  /** The removal is done: apply `update` (`peer` removed, our `removing` cleared). */
  | { readonly kind: 'removed'; readonly peer: string; readonly move: string | undefined; readonly update: Update };

/**
 * The next step of the movement this node drives (its leave, or its removal of a dead
 * member). The shell takes it, and asks again when a step's work is done; one run a
 * gossip round.
 */
export function nextDriveStep(i: DriveInput): DriveStep {
  const { self, me, view } = i;
  const subject = me.status === 'leaving' ? self : me.removing;
  if (subject === undefined || me.move === undefined) return { kind: 'idle' };
  const mine = view.movements.find((m) => m.node === subject && m.driver === self);
  if (mine === undefined) {
    // A removal whose subject is no longer an owner (removed meanwhile, or killed between our
    // persist of `removed` and clearing `removing`): done.
    if (me.removing !== undefined && !(view.ring?.has(subject) ?? false))
      return { kind: 'removed', peer: subject, move: me.move, update: finishRemoval(me, subject) };
    return {
      kind: 'wait',
      reason: `our ${me.status === 'leaving' ? 'leave' : `removal of ${subject}`} is not in our view yet`,
    };
  }
  const first = view.movements[0]!;
  if (first !== mine) {
    return {
      kind: 'withdraw',
      reason: `${describeMovement(first)} started at the same moment and goes first; run the command again once it is done`,
      update: withdrawal(self, me)!,
    };
  }
  if (view.movements.length > 1)
    return {
      kind: 'wait',
      reason: `waiting for ${view.movements.slice(1).map(describeMovement).join(', ')} to withdraw`,
    };
  const behind = disagreeing(i.states, self, view.hash, view.removed, (x) => i.isUp(x));
  if (behind !== undefined)
    return {
      kind: 'wait',
      reason: `waiting for ${behind} to see the change (then every coordinator writes to the pending ranges)`,
    };
  if (!i.pulled) return { kind: 'pull', movement: mine, move: me.move };
  if (mine.kind === 'leave') {
    // Hints this node keeps for others would leave with it.
    if (i.hintsLeft !== 0) return { kind: 'hand-over-hints', hintsLeft: i.hintsLeft };
    return {
      kind: 'left',
      move: me.move,
      update: { persist: { status: 'left', move: undefined }, gossip: { status: 'left' } },
    };
  }
  // The dead node's copies, and the writes it held hints for, back on N replicas before the removal ends.
  const dead = [...i.states].find((s) => s.id === subject);
  const hinted = (dead === undefined ? undefined : field(dead, 'hinted')) ?? '';
  const units = removalRepairUnits(
    { before: view.ring!, after: view.target },
    subject,
    hinted === '' ? [] : hinted.split(','),
    i.classes,
  );
  const pending = units.filter((u) => !i.repaired.has(unitKey(u)));
  if (pending.length > 0) return { kind: 'repair', move: me.move, units: pending, total: units.length };
  return { kind: 'removed', peer: subject, move: me.move, update: finishRemoval(me, subject) };
}

/** One persist: `target` removed, and our removal of it over. */
function finishRemoval(me: Persisted, target: string): Update {
  return markRemoved(me, target, { removing: undefined, move: undefined }, { removing: '' });
}

/**
 * Heirs bookkeeping, once leaves are done. Tokens the ring gives this node through a
 * gone leaver's heirs become its own (gossiped in `tokens`: the ring does not change);
 * and entries of our `heirs` field that no ring needs any more are dropped, so that the
 * field does not grow with every removal. Undefined: nothing to settle.
 */
export function settleHeirs(i: {
  readonly self: string;
  readonly me: Persisted;
  readonly view: RingView;
  readonly states: Iterable<EndpointState>;
}): { update: Update; gained: number } | undefined {
  const { self, me, view } = i;
  const persist: { tokens?: readonly bigint[]; heirs?: string } = {};
  const gossip: Record<string, string> = {};
  const own = new Set(me.tokens ?? []);
  const gained = me.status === 'normal' ? (view.ring?.member(self)?.tokens ?? []).filter((t) => !own.has(t)) : [];
  if (gained.length > 0) {
    const tokens = [...own, ...gained].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    persist.tokens = tokens;
    gossip.tokens = formatTokens(tokens);
  }
  if (me.heirs !== '') {
    const entries = parseHeirs(me.heirs) ?? new Map<string, ReadonlyMap<bigint, string>>();
    const settled = settledHeirs(i.states, entries).filter((s) => s !== self && s !== me.removing);
    if (settled.length > 0) {
      for (const s of settled) entries.delete(s);
      persist.heirs = gossip.heirs = formatHeirs(entries);
    }
  }
  return Object.keys(persist).length === 0 ? undefined : { update: { persist, gossip }, gained: gained.length };
}
