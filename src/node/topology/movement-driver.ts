/**
 * Driving the topology changes an operator starts on this node: its own decommission
 * (`leaving` → streams → `left`, then the node exits) and the removal of a dead node
 * (`removing` → the heirs pull its ranges from the surviving replicas → the units whose
 * copies it took are repaired → `removed`).
 *
 * Every decision is cluster/leave.ts's (requestDecommission, requestRemoval,
 * nextDriveStep, settleHeirs): a pure function of node.json, the view and what this run
 * knows of the pulls. This shell takes the steps it returns: persists and gossips the
 * updates, asks each gainer to pull its ranges (Handoff.Fetch, which resumes from the
 * gainer's checkpoints), repairs a removal's units (repair/runs.ts's repairOne, as an
 * operator repair: not paced, the governor counting it as background work) and records
 * each in removal-repair.json, hands over hints, announces and exits. A crash of this node
 * resumes at restart: the movement is in node.json, and the core decides from it again.
 *
 * Owns: the pulls' progress in this run (Admin Transfers' `drive`), the removal repair's
 * progress (kept in removal-repair.json), and taking the
 * core's steps. Must not: decide whether or when a change may go on (cluster/leave.ts),
 * decide the topology (membership/ring-view.ts) or move data (handoff/).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Gossiper } from '../../membership/gossiper.js';
import type { Movement, RingView } from '../../membership/ring-view.js';
import {
  cancelDecommission,
  nextDriveStep,
  requestDecommission,
  requestRemoval,
  settleHeirs,
  type DriveStep,
  type Request,
  type Update,
} from '../../cluster/leave.js';
import { unitKey, type RangeUnit } from '../../ring/index.js';
import type { PullItem } from '../../streaming/transfers.js';
import type { RemovalRepairProgress } from './removal-repair-file.js';
import type { Handoff } from '../handoff.js';
import type { Identity } from '../identity.js';

/** An operator's request that cannot be run now: FAILED_PRECONDITION, with what to do. */
export class MovementRefused extends Error {
  override readonly name = 'MovementRefused';
  readonly code = 'OP_MOVEMENT_REFUSED';
}

export interface DriverDeps {
  readonly id: string;
  readonly replicas: number;
  readonly gossiper: Gossiper;
  readonly handoff: Handoff;
  view(): RingView;
  identity(): Identity;
  persist(
    change: Partial<Pick<Identity, 'status' | 'move' | 'removing' | 'removed' | 'heirs' | 'tokens'>>,
  ): Promise<void>;
  /** Set our gossip fields and republish the view. */
  gossip(fields: Record<string, string>): void;
  /** Tell every peer our state now (before exiting). */
  announce(): Promise<void>;
  /** The decommission is done: stop serving and exit. */
  exit(): void;
  /** Hand every hint this node holds to its target or to a live replica; resolves with how many are left. */
  handOverHints(): Promise<number>;
  /** ms a gainer gets to pull its ranges in one Fetch call before the driver asks again. */
  readonly fetchTimeoutMs: number;
  /**
   * Repair a removal's unit among its replicas: here (repair/runs.ts's repairOne) when this
   * node is one of them, else by one of them (Control RepairRange). Rejects with UnitSkipped
   * when it cannot be done by this cluster's releases (the unit is skipped at once).
   */
  repairUnit(unit: RangeUnit): Promise<unknown>;
  /**
   * Whether `id`, which gossip does not show up, is known down: convicted after we heard
   * from it, or silent past the settle window since this process started. A node restarted
   * mid-removal has heard from nobody yet; its units wait a round rather than being skipped.
   */
  knownDown(id: string): boolean;
  /** The removal repair's progress file (removal-repair-file.ts): load for a move, save (undefined: delete). */
  readonly removalRepair: {
    load(move: string): Promise<RemovalRepairProgress>;
    save(p: RemovalRepairProgress | undefined): Promise<void>;
  };
  readonly log: Logger;
}

/** A unit that cannot be repaired for a removal at all (a replica of an older release): skipped, not tried again. */
export class UnitSkipped extends Error {
  override readonly name = 'UnitSkipped';
}

/** Attempts at a unit whose repair fails (not a replica down) before the removal skips it, leaving it to background repair. */
export const REPAIR_ATTEMPTS = 3;

/** What the repair step of a removal did: units of the step, repaired, skipped (a replica down, or failing) and failed attempts. */
export interface RemovalRepairStatus {
  units: number;
  repaired: number;
  skipped: number;
  failures: number;
  /** Why the last unit skipped or failed was. */
  lastProblem: string;
}

export interface GainerProgress {
  readonly node: string;
  readonly ranges: number;
  state: 'waiting' | 'pulling' | 'done' | 'failed';
  keys: number;
  bytes: number;
  error: string;
}

export interface DriveStatus {
  readonly movement: Movement;
  readonly move: string;
  readonly startedAt: number;
  phase: string;
  readonly gainers: GainerProgress[];
  /** A removal's repair step, once it started. */
  repair?: RemovalRepairStatus;
}

export class MovementDriver {
  #running: Promise<void> | undefined;
  #status: DriveStatus | undefined;
  #lastWait = '';
  #settling = false;
  /** The move (and N classes) whose gainers have all pulled in this run, and the hints left after the last hand-over. */
  #pulled: string | undefined;
  #hintsLeft: { move: string; left: number } | undefined;
  /** The pull key (#pullKey) `#status` is for. */
  #statusKey = '';
  /** The removal repair's progress (as in removal-repair.json) of the move it was loaded for. */
  #repaired: { move: string; repaired: Set<string>; skipped: Set<string> } | undefined;
  /** Failed attempts per unit key in this run. */
  readonly #failures = new Map<string, number>();

  constructor(private readonly deps: DriverDeps) {}

  /** The movement this node drives, with each gainer's progress; undefined when none. */
  get status(): DriveStatus | undefined {
    return this.#status;
  }

  /** Start decommissioning this node. */
  async decommission(): Promise<string> {
    const r = requestDecommission(this.#request());
    await this.#started(r);
    if (r.kind === 'start')
      this.deps.log.info(
        { move: r.move },
        'decommission started: status leaving; streaming starts once every member sees it',
      );
    return r.kind === 'start' || r.kind === 'already' ? r.move : '';
  }

  /** Give up a decommission that has not finished: the node is normal again. */
  async cancelDecommission(): Promise<void> {
    const r = cancelDecommission(this.deps.id, this.deps.identity());
    if (r.kind === 'refuse') throw new MovementRefused(r.message);
    await this.#apply(r.update);
    this.#withdrawn('cancelled by an operator', 'decommission withdrawn: the node is normal again');
  }

  /** Start removing `target`, a member that is down and will not come back. */
  async removeNode(target: string): Promise<string> {
    const { gossiper } = this.deps;
    const r = requestRemoval({ ...this.#request(), target, state: gossiper.state(target), up: gossiper.isUp(target) });
    await this.#started(r);
    if (r.kind === 'removed') this.deps.log.info({ peer: target }, 'removed a member that owned nothing');
    if (r.kind === 'start')
      this.deps.log.info(
        { peer: target, move: r.move },
        'removal started: the nodes that gain its ranges pull them from the surviving replicas',
      );
    return r.kind === 'start' || r.kind === 'already' ? r.move : '';
  }

  #request(): { self: string; me: Identity; view: RingView; replicas: number; nonce: string } {
    return {
      self: this.deps.id,
      me: this.deps.identity(),
      view: this.deps.view(),
      replicas: this.deps.replicas,
      nonce: randomBytes(6).toString('hex'),
    };
  }

  async #started(r: Request): Promise<void> {
    if (r.kind === 'refuse') throw new MovementRefused(r.message);
    if (r.kind === 'already') return;
    if (r.kind === 'start' && r.warning !== undefined) this.deps.log.warn({ replicas: this.deps.replicas }, r.warning);
    await this.#apply(r.update);
  }

  /** Persist, then gossip (a restart gossips what node.json holds). */
  async #apply(u: Update): Promise<void> {
    await this.deps.persist(u.persist);
    if (Object.keys(u.gossip).length > 0) this.deps.gossip({ ...u.gossip });
  }

  /** Heirs bookkeeping, once leaves are done (cluster/leave.ts's settleHeirs). */
  async #settleHeirs(): Promise<void> {
    if (this.#settling) return;
    this.#settling = true;
    try {
      const s = settleHeirs({
        self: this.deps.id,
        me: this.deps.identity(),
        view: this.deps.view(),
        states: this.deps.gossiper.states(),
      });
      if (s === undefined) return;
      await this.#apply(s.update);
      if (s.gained > 0)
        this.deps.log.info({ tokens: s.gained }, 'took the tokens inherited from a node that left as our own');
    } finally {
      this.#settling = false;
    }
  }

  /** One gossip round: drive our movement on if it may go on. */
  step(): void {
    void this.#settleHeirs();
    if (this.#running !== undefined) return;
    this.#running = this.#run().finally(() => (this.#running = undefined));
  }

  /** The core's next steps, taken until one waits or starts work that ends later. */
  async #run(): Promise<void> {
    for (let i = 0; i < 4; i++) {
      const me = this.deps.identity();
      const { gossiper } = this.deps;
      const done = me.removing !== undefined && me.move !== undefined ? await this.#repairProgress(me.move) : undefined;
      const step = nextDriveStep({
        self: this.deps.id,
        me,
        view: this.deps.view(),
        states: gossiper.states(),
        isUp: (x) => gossiper.isUp(x),
        pulled: me.move !== undefined && this.#pulled === this.#pullKey(me.move),
        hintsLeft: me.move !== undefined && this.#hintsLeft?.move === me.move ? this.#hintsLeft.left : undefined,
        classes: this.deps.handoff.classes().classes,
        repaired: done === undefined ? new Set() : new Set([...done.repaired, ...done.skipped]),
      });
      if (!(await this.#take(step))) return;
    }
  }

  /** Take one step; true when the core is to be asked again at once. */
  async #take(step: DriveStep): Promise<boolean> {
    const { deps } = this;
    switch (step.kind) {
      case 'idle':
        return false;
      case 'wait':
        if (step.reason !== this.#lastWait) deps.log.info({ reason: step.reason }, 'topology change: waiting');
        this.#lastWait = step.reason;
        return false;
      case 'withdraw': {
        const me = deps.identity();
        await this.#apply(step.update);
        await this.#forgetRepair();
        if (me.status === 'leaving') this.#withdrawn(step.reason, 'decommission withdrawn: the node is normal again');
        else this.#withdrawn(step.reason, 'removal withdrawn', me.removing);
        return false;
      }
      case 'pull':
        return this.#pull(this.deps.view(), step.movement, step.move);
      case 'repair':
        return this.#repair(step.move, step.units, step.total);
      case 'hand-over-hints': {
        const left = await deps.handOverHints();
        this.#hintsLeft = { move: deps.identity().move!, left };
        if (left > 0) {
          if (this.#status) this.#status.phase = `handing over hints (${left} left)`;
          deps.log.info(
            { hints: left },
            'ranges streamed; some hints could not be handed over yet: trying again next round',
          );
          return false;
        }
        return true;
      }
      case 'left': {
        const status = this.#status;
        if (status) status.phase = 'left';
        await this.#apply(step.update);
        await deps.announce();
        deps.log.info(
          { move: step.move, ...this.#totals(), ms: status ? Date.now() - status.startedAt : undefined },
          'decommissioned: every range is on its new replicas; status left, stopping',
        );
        deps.exit();
        return false;
      }
      case 'removed': {
        const status = this.#status?.move === step.move ? this.#status : undefined;
        await this.#apply(step.update);
        await this.#forgetRepair();
        if (status !== undefined) {
          status.phase = 'removed';
          const r = status.repair;
          const repair = r === undefined ? {} : { units: r.units, repaired: r.repaired, skipped: r.skipped };
          deps.log.info(
            { move: step.move, peer: step.peer, ...this.#totals(), ...repair, ms: Date.now() - status.startedAt },
            r !== undefined && r.skipped > 0
              ? 'removed: every range of the node is on its new replicas; some units were skipped (a replica down) and are left to background repair'
              : 'removed: every range of the node is back on N replicas',
          );
        } else deps.log.info({ move: step.move, peer: step.peer }, 'removal over: the node is no longer an owner');
        return false;
      }
    }
  }

  /** The removal repair's progress under `move`, loaded once per move (a damaged file counts as nothing done: the step starts over, which is safe). */
  async #repairProgress(move: string): Promise<{ repaired: Set<string>; skipped: Set<string> }> {
    if (this.#repaired?.move === move) return this.#repaired;
    let saved: RemovalRepairProgress = { move, repaired: [], skipped: [] };
    try {
      saved = await this.deps.removalRepair.load(move);
    } catch (e) {
      this.deps.log.warn(
        { move, err: (e as Error).message },
        'the removal repair progress cannot be read: its repair step starts over',
      );
    }
    this.#repaired = { move, repaired: new Set(saved.repaired), skipped: new Set(saved.skipped) };
    this.#failures.clear();
    return this.#repaired;
  }

  async #forgetRepair(): Promise<void> {
    this.#repaired = undefined;
    this.#failures.clear();
    await this.deps.removalRepair
      .save(undefined)
      .catch((e: unknown) => this.deps.log.warn({ err: (e as Error).message }, 'cannot delete removal-repair.json'));
  }

  /**
   * The repair step of a removal: each pending unit repaired among its replicas, or
   * skipped when one is down (or after REPAIR_ATTEMPTS failures), each recorded in
   * removal-repair.json before the next; true once none is pending (the core is asked again).
   */
  async #repair(move: string, units: readonly RangeUnit[], total: number): Promise<boolean> {
    const { deps } = this;
    const done = await this.#repairProgress(move);
    const status = this.#status?.move === move ? this.#status : undefined;
    const started = status?.repair;
    const r: RemovalRepairStatus = started ?? { units: total, repaired: 0, skipped: 0, failures: 0, lastProblem: '' };
    Object.assign(r, { units: total, repaired: done.repaired.size, skipped: done.skipped.size });
    if (status !== undefined) status.repair = r;
    const show = (): void => {
      if (status !== undefined)
        status.phase = `repairing: ${r.repaired + r.skipped}/${r.units} units${r.skipped > 0 ? ` (${r.skipped} skipped)` : ''}`;
    };
    show();
    if (started === undefined)
      deps.log.info(
        { move, units: total, pending: units.length },
        'ranges pulled: repairing the units whose copies the removed node took (its replicas, and the writes it held hints for)',
      );
    const record = async (): Promise<void> =>
      deps.removalRepair.save({ move, repaired: [...done.repaired], skipped: [...done.skipped] });
    let pending = 0;
    for (const u of units) {
      if (deps.identity().move !== move) return false;
      const key = unitKey(u);
      const down = u.replicas.filter((x) => x !== deps.id && !deps.gossiper.isUp(x));
      let skip: string | undefined;
      if (down.some((x) => !deps.knownDown(x))) {
        pending++; // not heard from since we started: tried next round
        continue;
      }
      if (down.length > 0) skip = `${down.join(', ')} down`;
      else {
        try {
          await deps.repairUnit(u);
          done.repaired.add(key);
          r.repaired++;
        } catch (e) {
          const err = (e as { details?: string; message?: string })?.details ?? (e as Error)?.message ?? String(e);
          const attempts = e instanceof UnitSkipped ? REPAIR_ATTEMPTS : (this.#failures.get(key) ?? 0) + 1;
          this.#failures.set(key, attempts);
          r.failures++;
          r.lastProblem = `unit ${key}: ${err}`;
          if (e instanceof UnitSkipped) skip = err;
          else if (attempts >= REPAIR_ATTEMPTS) skip = `${attempts} attempts failed, the last: ${err}`;
          else {
            deps.log.warn({ move, unit: key, err, attempts }, 'removal repair: a unit failed; tried again next round');
            pending++;
          }
        }
      }
      if (skip !== undefined) {
        done.skipped.add(key);
        r.skipped++;
        r.lastProblem = `unit ${key} skipped: ${skip}`;
        deps.log.warn({ move, unit: key, reason: skip }, 'removal repair: unit skipped, left to background repair');
      }
      if (skip !== undefined || done.repaired.has(key)) {
        try {
          await record();
        } catch (e) {
          // What is done stays known to this run; the file catches up at the next unit or round.
          deps.log.warn(
            { move, err: (e as Error).message },
            'removal repair: cannot record progress in removal-repair.json; trying again next round',
          );
          pending++;
          break;
        }
      }
      show();
    }
    return pending === 0;
  }

  #withdrawn(why: string, message: string, peer?: string): void {
    this.deps.log.warn({ reason: why, ...(peer === undefined ? {} : { peer }) }, message);
    if (this.#status) this.#status.phase = `withdrawn: ${why}`;
  }

  #totals(): { keys: number; bytes: number } {
    const g = this.#status?.gainers ?? [];
    return { keys: g.reduce((s, x) => s + x.keys, 0), bytes: g.reduce((s, x) => s + x.bytes, 0) };
  }

  /**
   * What a finished pull is remembered under: the move and the bucket table's N classes. A
   * bucket of a new n created during the movement adds that class's transfers, which the
   * gainers pull before the movement may end.
   */
  #pullKey(move: string): string {
    return `${move}|${this.deps.handoff.classes().classes.join(',')}`;
  }

  /** Ask every gainer to pull its ranges; true once all have (then the core is asked again). */
  async #pull(view: RingView, movement: Movement, move: string): Promise<boolean> {
    const key = this.#pullKey(move);
    const byGainer = new Map<string, PullItem[]>();
    for (const t of this.deps.handoff.plan(view)) {
      const items = byGainer.get(t.to) ?? [];
      items.push(t);
      byGainer.set(t.to, items);
    }
    const status: DriveStatus =
      this.#status?.move === move && this.#statusKey === key
        ? this.#status
        : {
            movement,
            move,
            startedAt: Date.now(),
            phase: 'streaming',
            gainers: [...byGainer].map(([node, items]) => ({
              node,
              ranges: items.length,
              state: 'waiting',
              keys: 0,
              bytes: 0,
              error: '',
            })),
          };
    this.#status = status;
    this.#statusKey = key;
    status.phase = 'streaming';
    this.deps.log.info(
      { move, gainers: [...byGainer.keys()], ranges: [...byGainer.values()].reduce((s, x) => s + x.length, 0) },
      'asking the nodes that gain ranges to pull them',
    );
    await Promise.all(
      status.gainers.map(async (g) => {
        if (g.state === 'done') return;
        g.state = 'pulling';
        try {
          const items = byGainer.get(g.node)!;
          const r =
            g.node === this.deps.id
              ? await this.deps.handoff.transfers.pull(move, this.deps.id, items)
              : await this.deps.handoff.peers.fetch(g.node, move, items, Date.now() + this.deps.fetchTimeoutMs);
          g.keys = Number(r.keys);
          g.bytes = Number(r.bytes);
          g.state = 'done';
          g.error = '';
        } catch (e) {
          g.state = 'failed';
          g.error = (e as { details?: string; message?: string })?.details ?? (e as Error)?.message ?? String(e);
          this.deps.log.warn(
            { peer: g.node, err: g.error },
            'a node could not pull its ranges yet; asking again next round',
          );
        }
      }),
    );
    if (!status.gainers.every((g) => g.state === 'done')) return false;
    this.#pulled = key;
    return true;
  }
}
