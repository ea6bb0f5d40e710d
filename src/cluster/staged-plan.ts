/**
 * What a staged set of topology changes would move (Riak's `cluster plan`): for each
 * change in turn, the ranges that change replicas, from which node to which, the keys and
 * bytes that come with them, and every node's replicated ownership before and after.
 * Nothing changes: it is a pure function of the ring and the changes.
 *
 * Keys and bytes are estimates from what each source gossips (its load and key count),
 * in proportion to the share of its replicated ownership a range is: exact counts would
 * mean scanning every range on every node. With buckets of several n (N classes), each
 * class's ranges move (transfer-plan.ts's classTransfers), and a node's load is taken as
 * spread over its replicated ownership summed over the classes (a node gossips no figure
 * per class), so each class is weighed as if it held as many keys per replica.
 *
 * Must not: do I/O or execute anything (the node's commit does).
 */
import { type Ring, joinRing, leaveRing } from '../ring/index.js';
import { classTransfers, transferShare } from './transfer-plan.js';

export type StagedChange =
  | {
      readonly kind: 'join';
      readonly node: string;
      readonly zone: string;
      readonly rack: string;
      readonly weight: number;
    }
  | { readonly kind: 'leave' | 'remove'; readonly node: string };

export interface PlannedMove {
  readonly from: string;
  readonly to: string;
  readonly ranges: number;
  /** Fraction of the token space. */
  readonly share: number;
  readonly keys: number;
  readonly bytes: number;
}

export interface PlanStep {
  readonly change: StagedChange;
  readonly moves: readonly PlannedMove[];
}

export interface PlanResult {
  readonly steps: readonly PlanStep[];
  /** Every node's replicated ownership (fraction of keys it holds a copy of) before and after all steps. */
  readonly ownership: readonly { readonly node: string; readonly before: number; readonly after: number }[];
  /** The ring once every change is done. */
  readonly after: Ring | undefined;
}

export class PlanError extends Error {
  override readonly name = 'PlanError';
}

/**
 * Plan `changes` in order on `ring` (the cluster's N replicas: tokens are claimed and
 * ownership reported for it); `load(id)` is what a node last gossiped of its data;
 * `classes` the N classes in use (ascending; default the cluster's N alone).
 */
export function planChanges(
  ring: Ring,
  changes: readonly StagedChange[],
  n: number,
  load: (id: string) => { bytes: number; keys: number },
  classes: readonly number[] = [n],
): PlanResult {
  const steps: PlanStep[] = [];
  let current = ring;
  for (const change of changes) {
    let next: Ring;
    if (change.kind === 'join') {
      if (current.has(change.node)) throw new PlanError(`${change.node} is already an owner: it cannot join`);
      next = joinRing(current, { id: change.node, zone: change.zone, rack: change.rack, weight: change.weight }, n);
    } else {
      if (!current.has(change.node))
        throw new PlanError(
          `${change.node} is not an owner${ring.has(change.node) ? ' any more after the changes staged before' : ''}: it cannot ${change.kind === 'leave' ? 'leave' : 'be removed'}`,
        );
      if (current.size === 1) throw new PlanError(`${change.node} is the last owner: a cluster needs at least one`);
      next = leaveRing(current, change.node, n);
    }
    // A node's replicated ownership summed over the classes: what its gossiped load spreads over.
    const owned = new Map<string, number>();
    for (const c of classes)
      for (const [id, share] of current.ownership(Math.min(c, current.size)))
        owned.set(id, (owned.get(id) ?? 0) + share);
    const moves = new Map<
      string,
      { from: string; to: string; ranges: number; share: number; keys: number; bytes: number }
    >();
    for (const t of classTransfers(current, next, classes)) {
      // A removed node is dead: its ranges come from the first replica that keeps them.
      const from =
        change.kind === 'remove' && t.sources[0] === change.node ? (t.sources[1] ?? t.sources[0]!) : t.sources[0]!;
      const share = transferShare(t);
      const of = load(from);
      const fraction = (owned.get(from) ?? 0) > 0 ? share / owned.get(from)! : 0;
      const key = `${from}>${t.to}`;
      const m = moves.get(key) ?? { from, to: t.to, ranges: 0, share: 0, keys: 0, bytes: 0 };
      m.ranges++;
      m.share += share;
      m.keys += of.keys * fraction;
      m.bytes += of.bytes * fraction;
      moves.set(key, m);
    }
    steps.push({
      change,
      moves: [...moves.values()]
        .map((m) => ({ ...m, keys: Math.round(m.keys), bytes: Math.round(m.bytes) }))
        .sort((a, b) => (a.from + a.to < b.from + b.to ? -1 : 1)),
    });
    current = next;
  }
  const before = ring.ownership(Math.min(n, ring.size));
  const after = current.ownership(Math.min(n, current.size));
  const nodes = [...new Set([...before.keys(), ...after.keys()])].sort();
  return {
    steps,
    ownership: nodes.map((node) => ({ node, before: before.get(node) ?? 0, after: after.get(node) ?? 0 })),
    after: current,
  };
}
