/**
 * This node's side of Control RepairRange: a removal's driver asks a replica of a unit it
 * does not hold itself to repair that unit with its other replicas (cluster/removal-repair.ts
 * decides whether it may; repair/runs.ts's repairOne runs it, as an operator repair).
 *
 * Owns: reading the request and answering it. Must not: choose units (the driver's core
 * does) or talk gRPC (transport/control-wire.ts does).
 */
import { unitRefusal } from '../../cluster/removal-repair.js';
import type { RingView } from '../../membership/ring-view.js';
import type { RepairStats } from '../../repair/exchange.js';
import type { TokenRange } from '../../storage/keys.js';
import type { RepairRangeReply } from '../../transport/generated/ringkv/internal/v1/RepairRangeReply.js';
import type { RepairRangeRequest__Output } from '../../transport/generated/ringkv/internal/v1/RepairRangeRequest.js';

/** A unit this node will not repair now: FAILED_PRECONDITION (OP_REPAIR_REFUSED), or INVALID_ARGUMENT (OP_BAD_ARGUMENT) for a malformed one. */
export class UnitRepairRefused extends Error {
  override readonly name = 'UnitRepairRefused';
  constructor(
    readonly code: 'OP_REPAIR_REFUSED' | 'OP_BAD_ARGUMENT',
    message: string,
  ) {
    super(message);
  }
}

export interface UnitRepairDeps {
  readonly id: string;
  /** The cluster's N: a unit of class 0 (every key) has this many replicas. */
  readonly replicas: number;
  view(): RingView;
  isUp(id: string): boolean;
  /** Throws (BK_NOT_READY) when the caller's classes are not this node's, or the class is not in use here. */
  checkClasses(n: number, classes: readonly number[]): void;
  repairOne(range: TokenRange, peers: readonly string[], n?: number): Promise<RepairStats>;
}

const token = (v: string): bigint | undefined => (/^[0-9a-f]{16}$/.test(v) ? BigInt(`0x${v}`) : undefined);

/** Repair the unit `r` names with its other replicas, if this node may (unitRefusal). */
export async function repairUnitFor(deps: UnitRepairDeps, r: RepairRangeRequest__Output): Promise<RepairRangeReply> {
  const start = token(r.start),
    end = token(r.end);
  if (start === undefined || end === undefined)
    throw new UnitRepairRefused(
      'OP_BAD_ARGUMENT',
      `a range is two tokens of 16 hex digits, got "${r.start}"-"${r.end}"`,
    );
  if (r.n > 16)
    throw new UnitRepairRefused('OP_BAD_ARGUMENT', `n must be a replica count of 1-16 (0: every key), got ${r.n}`);
  deps.checkClasses(r.n, r.classes);
  const why = unitRefusal(
    deps.view().target,
    deps.id,
    { start, end, replicas: r.replicas },
    r.n === 0 ? deps.replicas : r.n,
  );
  if (why !== undefined) throw new UnitRepairRefused('OP_REPAIR_REFUSED', why);
  const peers = r.replicas.filter((x) => x !== deps.id);
  const down = peers.filter((x) => !deps.isUp(x));
  if (down.length > 0)
    throw new UnitRepairRefused('OP_REPAIR_REFUSED', `${down.join(', ')} down: the unit cannot be repaired now`);
  const s = await deps.repairOne({ start, end }, peers, r.n === 0 ? undefined : r.n);
  return { leavesDiffering: s.leavesDiffering, keysExchanged: s.keysExchanged, bytes: s.bytes };
}
