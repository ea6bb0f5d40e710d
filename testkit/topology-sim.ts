/**
 * A seeded simulation of topology changes driven by the real decisions: joins and
 * replacements through cluster/join.ts, decommissions, removals and the heirs'
 * bookkeeping through src/cluster/leave.ts, transfers and sources from
 * cluster/transfer-plan.ts. What is simulated is what the node's shell does around them:
 *
 * - Gossip: one table of every node's own state (what node.json holds, gossiped); each node
 *   sees it as it was `lag` ms ago (its own entry as it is now), a lag drawn per node. A
 *   node's `topo` is the hash of the view it sees.
 * - Data: sample keys; a node holds a key once it was a replica at the start or pulled a
 *   range holding it from a source that held it. A pull of a gainer's ranges takes time,
 *   needs the gainer and each range's sources up (pullSources), and keeps per-move
 *   checkpoints (transfers.json): asked again, done ranges are not pulled again. A
 *   removal's repair step (cluster/removal-repair.ts's units) makes every replica of a
 *   unit with all its replicas up hold each key one of them held, and records each unit
 *   done (removal-repair.json, kept across a crash); a unit with a replica down is skipped.
 * - Failures: nodes crash and restart (a new generation; node.json and checkpoints kept,
 *   everything in memory lost), some in the middle of driving a change; removals and
 *   replacements are of nodes killed for good.
 * - An operator: a list of changes (join, decommission, remove, replace), issued at
 *   random moments, sometimes while another runs (the core refuses or withdraws one; the
 *   operator asks again later), each followed to its end.
 *
 * Buckets of different n (`classes`): each sample key has an n (its index picks one of
 * the classes in turn), its replicas are that n's, and pulls are planned per class and
 * bring a transfer's keys of its class only, as the nodes do (cluster/n-classes.ts).
 *
 * Checked: every change completes; whenever the ring changes, every replica of every
 * key in the new ring that is not dead for good holds it (so no range ever has fewer than
 * its n replicas holding its data, except those a dead node took until its removal); no two
 * movements ever pull at once; every node that sees the whole table sees the same ring.
 *
 * Used by test/sim/topology.sim.test.ts and bench/sim-topology.ts.
 */
import {
  formatTokens,
  initialState,
  setField,
  statusOf,
  type EndpointState,
  type NodeStatus,
} from '../src/membership/endpoint.js';
import { nextJoinStep } from '../src/cluster/join.js';
import { ringFingerprint, ringFromStates, type RingView } from '../src/membership/ring-view.js';
import {
  nextDriveStep,
  requestDecommission,
  requestRemoval,
  settleHeirs,
  type Persisted,
  type Update,
} from '../src/cluster/leave.js';
import { movementTransfers, pullSources, type Transfer } from '../src/cluster/transfer-plan.js';
import { mulberry32 } from '../src/ring/allocate-tokens.js';
import { claimRing, tokenHex, tokenOf, unitKey, type RangeUnit, type Ring } from '../src/ring/index.js';

export interface TopologySimOptions {
  readonly seed: number;
  /** Nodes at the start (normal owners). */
  readonly nodes: number;
  /** Changes the operator makes, in equal parts joins, decommissions, removals and replacements. */
  readonly changes: number;
  readonly tokensPerNode?: number;
  readonly replicas?: number;
  /** Sample keys whose copies are tracked. */
  readonly keys?: number;
  /** A node's view lags the table by up to this, ms. */
  readonly maxLagMs?: number;
  /** Chance per gossip round that some node crashes (it restarts 2 to 15 s later). */
  readonly crashRate?: number;
  /** Give up after this much simulated time, ms. */
  readonly limitMs?: number;
  /** A mutation, to show the checks can fail: pulls copy nothing. */
  readonly dropPulls?: boolean;
  /** The N classes of the sample keys (buckets of different n), ascending; default: `replicas` alone. */
  readonly classes?: readonly number[];
  /** A mutation, to show the class checks can fail: plan transfers for `replicas` alone whatever the keys' classes. */
  readonly planOneN?: boolean;
}

export interface TopologySimResult {
  readonly completed: number;
  readonly simulatedMs: number;
  readonly crashes: number;
  readonly refusals: number;
  readonly withdrawals: number;
  readonly violations: readonly string[];
  readonly pending: readonly string[];
  /** Units the removals' repair steps repaired, and skipped (a replica down). */
  readonly repairedUnits: number;
  readonly skippedUnits: number;
}

type Kind = 'join' | 'leave' | 'remove' | 'replace';

interface SimNode {
  readonly id: string;
  me: Persisted & { readonly replaces: string | undefined };
  state: EndpointState;
  alive: boolean;
  /** Killed for good (to be removed or replaced). */
  dead: boolean;
  readonly lagMs: number;
  // In memory: lost at a crash.
  startedAt: number;
  tokensAt: number;
  busySince: number;
  pulled: string | undefined;
  pulling: boolean;
  run: number;
  /** The removal repair's progress (its removal-repair.json: survives a crash). */
  repaired: { move: string; keys: Set<string> } | undefined;
  /** A repair step in flight (in memory). */
  repairing: boolean;
}

interface Change {
  readonly kind: Kind;
  /** The node that changes: the joiner, the leaver, the node removed, the node replaced. */
  node: string;
  /** Its replacer, or who removes it. */
  by: string | undefined;
  issuedAt: number;
  done: boolean;
}

const INTERVAL = 1000;
const LEAVER_WAIT_MS = 60_000;

export class TopologySim {
  readonly o: Required<TopologySimOptions>;
  readonly random: () => number;
  now = 0;
  readonly nodes = new Map<string, SimNode>();
  /** The table as it was at each change: (time, id → state). */
  readonly #history: { at: number; table: Map<string, EndpointState>; fingerprint: string }[] = [];
  readonly #views = new Map<string, RingView>();
  readonly #keys: bigint[];
  readonly #holders: Set<string>[];
  /** Each sample key's n, and the classes in use. */
  readonly #n: number[];
  readonly #classes: readonly number[];
  /** Ranges each node pulled, per move (its transfers.json). */
  readonly #checkpoints = new Map<string, Set<string>>();
  readonly #events: { at: number; run: () => void }[] = [];
  readonly #pulling = new Map<string, string>();
  /** Since when each range's leaver was seen down, per gainer and move (in transfers.ts's memory). */
  readonly #leaverDown = new Map<string, number>();
  readonly violations: string[] = [];
  readonly changes: Change[] = [];
  #next = 0;
  #seq = 0;
  #lastRing = '';
  crashes = 0;
  refusals = 0;
  withdrawals = 0;
  repairedUnits = 0;
  skippedUnits = 0;
  /** Sample keys (by index) a transfer found no replica left to pull from (only an n=1 key can be): lost, not counted as missing. */
  readonly #lost = new Set<number>();

  get lostKeys(): number {
    return this.#lost.size;
  }

  constructor(options: TopologySimOptions) {
    const replicas = options.replicas ?? 3;
    this.o = {
      tokensPerNode: 8,
      replicas,
      keys: 2000,
      maxLagMs: 3000,
      crashRate: 0.05,
      limitMs: 24 * 3600_000,
      dropPulls: false,
      planOneN: false,
      classes: [replicas],
      ...options,
    };
    this.#classes = this.o.classes;
    this.random = mulberry32(options.seed);
    const ids = Array.from({ length: options.nodes }, () => this.#newId());
    const ring = claimRing(
      ids.map((id) => ({ id, zone: this.#zone(id) })),
      this.o.replicas,
      { tokensPerNode: this.o.tokensPerNode, seed: `sim-${options.seed}` },
    );
    for (const id of ids) this.#add(id, 'normal', [...ring.member(id)!.tokens], undefined);
    this.#keys = Array.from({ length: this.o.keys }, (_, i) => tokenOf(`key-${i}`));
    this.#n = this.#keys.map((_, i) => this.#classes[i % this.#classes.length]!);
    this.#holders = this.#keys.map((k, i) => new Set(ring.replicasForToken(k, Math.min(this.#n[i]!, ring.size))));
    this.#lastRing = this.#ringKey(ring);
    const kinds: Kind[] = [];
    for (let i = 0; i < options.changes; i++) kinds.push((['join', 'leave', 'remove', 'replace'] as const)[i % 4]!);
    for (let i = kinds.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [kinds[i], kinds[j]] = [kinds[j]!, kinds[i]!];
    }
    this.#plan = kinds;
  }

  readonly #plan: Kind[];

  #newId(): string {
    return `n${String(++this.#seq).padStart(5, '0')}`;
  }

  /** A node's zone: round robin by id; a replacer takes its dead node's (see #issue). */
  #zone(id: string): string {
    return this.#zones.get(id) ?? `z${Number(id.slice(1)) % 3}`;
  }

  readonly #zones = new Map<string, string>();

  #add(id: string, status: NodeStatus, tokens: bigint[] | undefined, replaces: string | undefined): SimNode {
    const me = { status, tokens, move: undefined, removing: undefined, removed: [], heirs: '', replaces };
    const node: SimNode = {
      id,
      me,
      state: initialState(id, 0, {}),
      alive: true,
      dead: false,
      lagMs: this.random() * this.o.maxLagMs,
      startedAt: this.now,
      tokensAt: this.now,
      busySince: this.now,
      pulled: undefined,
      pulling: false,
      run: 0,
      repaired: undefined,
      repairing: false,
    };
    this.nodes.set(id, node);
    this.#start(node);
    return node;
  }

  /** (Re)start: a new generation gossiping what node.json holds; what was in memory is gone. */
  #start(n: SimNode): void {
    const f: Record<string, string> = {
      addr: `${n.id}:1`,
      zone: this.#zone(n.id),
      rack: '',
      weight: '1',
      status: n.me.status,
    };
    if (n.me.tokens !== undefined) f.tokens = formatTokens(n.me.tokens);
    if (n.me.removing !== undefined) f.removing = n.me.removing;
    if (n.me.removed.length > 0) f.removed = n.me.removed.join(',');
    if (n.me.replaces !== undefined) f.replaces = n.me.replaces;
    if (n.me.heirs !== '') f.heirs = n.me.heirs;
    n.state = initialState(n.id, n.state.generation + 1, f);
    Object.assign(n, {
      alive: true,
      startedAt: this.now,
      tokensAt: this.now,
      busySince: this.now,
      pulled: undefined,
      pulling: false,
      repairing: false,
      run: n.run + 1,
    });
    this.#record();
  }

  /** The table changed: remember it as of now. */
  #record(): void {
    const table = new Map([...this.nodes].map(([id, n]) => [id, n.state]));
    const last = this.#history.at(-1);
    const entry = { at: this.now, table, fingerprint: ringFingerprint(table.values()) };
    if (last !== undefined && last.at === this.now) this.#history[this.#history.length - 1] = entry;
    else this.#history.push(entry);
    // Nothing lags more than maxLagMs: older tables are not needed.
    while (this.#history.length > 1 && this.#history[1]!.at <= this.now - this.o.maxLagMs - INTERVAL)
      this.#history.shift();
  }

  #viewOf(fingerprint: string, states: () => Iterable<EndpointState>): RingView {
    let v = this.#views.get(fingerprint);
    if (v === undefined) {
      v = ringFromStates(states(), { tokensPerNode: this.o.tokensPerNode });
      if (this.#views.size > 64) this.#views.delete(this.#views.keys().next().value!);
      this.#views.set(fingerprint, v);
    }
    return v;
  }

  /** The table node `n` sees: as it was `lag` ms ago, with its own state as it is now. */
  #table(n: SimNode): { table: Map<string, EndpointState>; fingerprint: string } {
    const at = this.now - n.lagMs;
    let h = this.#history[0]!;
    for (const x of this.#history) if (x.at <= at) h = x;
    if (h.table.get(n.id) === n.state) return h;
    const table = new Map(h.table).set(n.id, n.state);
    return { table, fingerprint: ringFingerprint(table.values()) };
  }

  /** What node `n` sees: its table and the view of it. */
  #seen(n: SimNode): { states: EndpointState[]; view: RingView } {
    const { table, fingerprint } = this.#table(n);
    const states = [...table.values()];
    return { states, view: this.#viewOf(fingerprint, () => states) };
  }

  /** The `topo` node `n` gossips: the hash of the view it sees. */
  #hash(n: SimNode): string {
    return tokenHex(tokenOf(this.#table(n).fingerprint));
  }

  #isUp = (id: string): boolean => this.nodes.get(id)?.alive ?? false;

  /** Persist, then gossip. */
  #apply(n: SimNode, u: Update | { persist: Partial<SimNode['me']>; gossip: Record<string, string> }): void {
    n.me = { ...n.me, ...u.persist };
    for (const [name, value] of Object.entries(u.gossip)) n.state = setField(n.state, name, value);
    this.#record();
  }

  #after(ms: number, run: () => void): void {
    this.#events.push({ at: this.now + ms, run });
  }

  #ringKey(ring: Ring | undefined): string {
    return ring?.members.map((m) => `${m.id}:${m.tokens.join(',')}`).join('|') ?? '';
  }

  /** The states every node gossips now, with each one's `topo` (the hash of the view it sees). */
  #withTopo(states: readonly EndpointState[]): EndpointState[] {
    return states.map((s) => {
      const n = this.nodes.get(s.id)!;
      return n.alive ? setField(s, 'topo', this.#hash(n)) : s;
    });
  }

  // Data: pulls.

  /** The sample keys a transfer moves: in its range, and of its class when it has one. */
  #keysIn(t: Pick<Transfer, 'start' | 'end' | 'n'>): number[] {
    const out: number[] = [];
    const wrap = t.start >= t.end;
    this.#keys.forEach((k, i) => {
      if ((wrap ? k > t.start || k <= t.end : k > t.start && k <= t.end) && (t.n === undefined || t.n === this.#n[i]))
        out.push(i);
    });
    return out;
  }

  /** A view's transfers, per class (as node/handoff.ts plans them). */
  #transfers(view: RingView): (Transfer & { leaverGone: boolean })[] {
    return movementTransfers(view, this.o.planOneN ? [this.o.replicas] : this.#classes);
  }

  /** Node `gainer` pulls `items` under `move`; `done(ok)` once it has them all, or failed. */
  #pull(
    gainer: string,
    move: string,
    items: readonly (Transfer & { leaverGone: boolean })[],
    done: (ok: boolean) => void,
  ): void {
    const cp = this.#checkpoints.get(`${gainer}/${move}`) ?? new Set<string>();
    this.#checkpoints.set(`${gainer}/${move}`, cp);
    const todo = items.filter((t) => !cp.has(`${t.start}:${t.end}/${t.n}`));
    const g = this.nodes.get(gainer)!;
    const run = g.run;
    this.#after(INTERVAL * (0.5 + todo.length * 0.1), () => {
      if (!g.alive || g.run !== run) return done(false);
      let ok = true;
      for (const t of todo) {
        // A leaver only unreachable is waited for (a minute, transfers.ts's default), then the replicas that stay.
        const key = `${gainer}/${move}/${t.start}:${t.end}`;
        const leaverUp = this.#isUp(t.sources[0]!);
        if (!leaverUp && !this.#leaverDown.has(key)) this.#leaverDown.set(key, this.now);
        const waited = leaverUp ? 0 : this.now - this.#leaverDown.get(key)!;
        const plan = pullSources(t, leaverUp, waited, LEAVER_WAIT_MS);
        // Nothing left anywhere (an n=1 range of a node gone for good): done, with nothing; its keys are lost.
        const nothing = plan.length === 1 && plan[0]!.length === 0;
        if (nothing) for (const k of this.#keysIn(t)) this.#lost.add(k);
        const sources = nothing ? [] : plan.find((set) => set.length > 0 && set.every(this.#isUp));
        if (sources === undefined) {
          ok = false;
          continue;
        }
        if (!this.o.dropPulls)
          for (const k of this.#keysIn(t))
            if (sources.some((s) => this.#holders[k]!.has(s))) this.#holders[k]!.add(gainer);
        cp.add(`${t.start}:${t.end}/${t.n}`);
      }
      done(ok);
    });
  }

  /** Movement `key` starts pulling: no other movement may pull now. */
  #startPulling(n: SimNode, movement: string): void {
    for (const [driver, other] of this.#pulling)
      if (driver !== n.id && other !== movement)
        this.violations.push(
          `t=${this.now}: ${movement} (driven by ${n.id}) pulls while ${other} (driven by ${driver}) does`,
        );
    this.#pulling.set(n.id, movement);
    n.pulling = true;
  }

  #stopPulling(n: SimNode, run: number): void {
    if (n.run === run) n.pulling = false;
    this.#pulling.delete(n.id);
  }

  /** Every gainer of the driver's view pulls its ranges; the driver knows once all have. */
  #drivePulls(n: SimNode, view: RingView, movement: string, move: string): void {
    const byGainer = new Map<string, (Transfer & { leaverGone: boolean })[]>();
    for (const t of this.#transfers(view)) byGainer.set(t.to, [...(byGainer.get(t.to) ?? []), t]);
    this.#startPulling(n, movement);
    const run = n.run;
    let left = byGainer.size;
    let failed = false;
    const finish = (): void => {
      this.#stopPulling(n, run);
      if (!failed && n.run === run) n.pulled = move;
    };
    if (left === 0) return finish();
    for (const [gainer, items] of byGainer)
      this.#pull(gainer, move, items, (ok) => {
        failed ||= !ok;
        if (--left === 0) finish();
      });
  }

  // One gossip round of one node: the core's steps, taken.

  #round(n: SimNode): void {
    if (!n.alive || n.pulling || n.repairing) return;
    const { states, view } = this.#seen(n);
    if (n.me.status === 'joining') return this.#joinRound(n, states, view);
    const settle = settleHeirs({ self: n.id, me: n.me, view, states });
    if (settle !== undefined) this.#apply(n, settle.update);
    if (n.me.move === undefined) return;
    const all = this.#withTopo(states);
    for (let i = 0; i < 4; i++) {
      const step = nextDriveStep({
        self: n.id,
        me: n.me,
        view: this.#seen(n).view,
        states: all,
        isUp: this.#isUp,
        pulled: n.pulled === n.me.move,
        hintsLeft: 0,
        classes: this.#classes,
        repaired: this.#repairedBy(n),
      });
      switch (step.kind) {
        case 'idle':
        case 'wait':
        case 'hand-over-hints':
          return;
        case 'withdraw':
          this.withdrawals++;
          this.#apply(n, step.update);
          return;
        case 'pull':
          return this.#drivePulls(n, this.#seen(n).view, `${step.movement.kind} ${step.movement.node}`, step.move);
        case 'repair':
          return this.#repair(n, step.move, step.units);
        case 'left':
          this.#apply(n, step.update);
          n.alive = false; // it exits
          this.#record();
          return;
        case 'removed':
          this.#apply(n, step.update);
          return;
      }
    }
  }

  /** The units the removal `n` drives has repaired or skipped (its removal-repair.json). */
  #repairedBy(n: SimNode): ReadonlySet<string> {
    return n.repaired !== undefined && n.repaired.move === n.me.move ? n.repaired.keys : new Set();
  }

  /**
   * The removal's repair step (node/topology/movement-driver.ts): each unit with every
   * replica up is repaired (every replica then holds each sample key of it that one
   * held), else skipped; a unit's record survives a crash of the driver.
   */
  #repair(n: SimNode, move: string, units: readonly RangeUnit[]): void {
    if (n.repaired?.move !== move) n.repaired = { move, keys: new Set() };
    const done = n.repaired;
    const run = n.run;
    n.repairing = true;
    this.#after(INTERVAL * (0.5 + units.length * 0.01), () => {
      if (n.run !== run || !n.alive) return;
      n.repairing = false;
      for (const u of units) {
        if (u.replicas.some((r) => !this.#isUp(r))) this.skippedUnits++;
        else {
          for (const k of this.#keysIn(u))
            if (u.replicas.some((r) => this.#holders[k]!.has(r))) for (const r of u.replicas) this.#holders[k]!.add(r);
          this.repairedUnits++;
        }
        done.keys.add(unitKey(u));
      }
    });
  }

  #joinRound(n: SimNode, states: readonly EndpointState[], view: RingView): void {
    if (view.movements.some((m) => m.node !== n.id)) n.busySince = this.now;
    const all = this.#withTopo(states);
    const table = new Map(all.map((s) => [s.id, s]));
    for (let i = 0; i < 3 && n.me.status === 'joining'; i++) {
      const v = this.#seen(n).view;
      const step = nextJoinStep({
        self: { id: n.id, zone: this.#zone(n.id), rack: '', weight: 1 },
        clusterName: 'sim',
        replicas: this.o.replicas,
        tokensPerNode: this.o.tokensPerNode,
        intervalMs: INTERVAL,
        waitedMs: this.now - n.startedAt,
        quietMs: this.now - n.busySince,
        tokens: n.me.tokens,
        tokensAgeMs: this.now - n.tokensAt,
        gossip: {
          shadow: false,
          formerSelf: undefined,
          states: () => table.values(),
          state: (id) => table.get(id),
          isUp: this.#isUp,
        },
        view: v,
        streamed: n.me.move !== undefined && n.pulled === n.me.move,
        replaces: n.me.replaces,
      });
      switch (step.kind) {
        case 'wait':
        case 'show':
          return;
        case 'fail':
          this.violations.push(`t=${this.now}: ${n.id} stopped: ${step.message}`);
          n.alive = false;
          return;
        case 'claim':
          n.tokensAt = this.now;
          this.#apply(n, {
            persist: { tokens: step.tokens, move: `join-${n.id}-${this.now}` },
            gossip: { ...(n.me.replaces ? { replaces: n.me.replaces } : {}), tokens: formatTokens(step.tokens) },
          });
          table.set(n.id, n.state);
          break;
        case 'withdraw':
          this.withdrawals++;
          this.#apply(n, { persist: { tokens: undefined, move: undefined }, gossip: { tokens: '' } });
          return;
        case 'stream': {
          const move = n.me.move!;
          const items = this.#transfers(v).filter((t) => t.to === n.id);
          this.#startPulling(n, `${n.me.replaces ? 'replace' : 'join'} ${n.id}`);
          const run = n.run;
          this.#pull(n.id, move, items, (ok) => {
            this.#stopPulling(n, run);
            if (ok && n.run === run) n.pulled = move;
          });
          return;
        }
        case 'normal': {
          // As node/topology/joining.ts does: a replacer takes the node it replaced out for good.
          const removed = step.replaced === undefined ? n.me.removed : [...new Set([...n.me.removed, step.replaced])];
          this.#apply(n, {
            persist: { status: 'normal', move: undefined, removed },
            gossip: { ...(step.replaced === undefined ? {} : { removed: removed.join(',') }), status: 'normal' },
          });
          return;
        }
      }
    }
  }

  // The operator.

  #issue(): void {
    const kind = this.#plan[this.#next++]!;
    const change: Change = { kind, node: '', by: undefined, issuedAt: this.now, done: false };
    this.changes.push(change);
    if (kind === 'join' && ![...this.nodes.values()].some((n) => n.dead && !this.#trueView().removed.has(n.id))) {
      change.node = this.#newId();
      this.#add(change.node, 'joining', undefined, undefined);
      return;
    }
    const owners = this.#trueView()
      .ring!.members.map((m) => m.id)
      .filter(
        (id) =>
          this.nodes.get(id)!.alive &&
          this.nodes.get(id)!.me.status === 'normal' &&
          this.nodes.get(id)!.me.move === undefined,
      );
    // A node dead for good waits for no other change: nothing else is issued until it is
    // removed or replaced, and it dies only while nothing moves. (A removal pulls each range
    // from every replica that stays, all up, so two dead replicas of one range would wait
    // for ever; a decommission whose gainer died waits until an operator cancels it.)
    const deadOwner = [...this.nodes.values()].some((n) => n.dead && !this.#trueView().removed.has(n.id));
    const busy = this.changes.some((c) => !c.done && c !== change) || this.#trueView().movements.length > 0;
    if (owners.length <= this.o.replicas + 1 || deadOwner || ((kind === 'remove' || kind === 'replace') && busy)) {
      this.#plan.push(kind); // not now: later
      this.changes.pop();
      return;
    }
    change.node = owners[Math.floor(this.random() * owners.length)]!;
    if (kind === 'leave') return this.#ask(change);
    // A removal or a replacement: the node dies for good first.
    const dead = this.nodes.get(change.node)!;
    dead.alive = false;
    dead.dead = true;
    this.#record();
    this.#after(5 * INTERVAL, () => {
      if (kind === 'replace') {
        // In the dead node's zone: a replacer elsewhere moves other ranges than the dead
        // node's, which no one would pull (a join streams only its own: see the report).
        change.by = this.#newId();
        this.#zones.set(change.by, this.#zone(change.node));
        this.#add(change.by, 'joining', undefined, change.node);
      } else this.#ask(change);
    });
  }

  /** Ask the node concerned (a decommission) or a live owner (a removal) to start the change; refused: again later. */
  #ask(change: Change): void {
    if (change.done) return;
    const view = this.#trueView();
    if (change.kind === 'leave') {
      const n = this.nodes.get(change.node)!;
      if (n.alive && n.me.status !== 'leaving') {
        const r = requestDecommission({
          self: n.id,
          me: n.me,
          view: this.#seen(n).view,
          replicas: this.o.replicas,
          nonce: String(this.now),
        });
        if (r.kind === 'start') this.#apply(n, r.update);
        else if (r.kind === 'refuse') this.refusals++;
      }
    } else if (view.removed.has(change.node) === false) {
      const by = change.by === undefined ? undefined : this.nodes.get(change.by);
      const candidates = view
        .ring!.members.map((m) => this.nodes.get(m.id)!)
        .filter((x) => x.alive && x.me.status === 'normal' && x.id !== change.node);
      const n =
        by?.alive && by.me.removing === change.node ? by : candidates[Math.floor(this.random() * candidates.length)];
      if (n !== undefined && n.me.removing === undefined) {
        const { view: seen } = this.#seen(n);
        const r = requestRemoval({
          self: n.id,
          me: n.me,
          view: seen,
          replicas: this.o.replicas,
          nonce: String(this.now),
          target: change.node,
          state: this.nodes.get(change.node)!.state,
          up: false,
        });
        if (r.kind === 'start' || r.kind === 'removed') {
          change.by = n.id;
          this.#apply(n, r.update);
        } else if (r.kind === 'refuse') this.refusals++;
      }
    }
    this.#after((5 + this.random() * 10) * INTERVAL, () => this.#ask(change));
  }

  #trueView(): RingView {
    const h = this.#history.at(-1)!;
    return this.#viewOf(h.fingerprint, () => h.table.values());
  }

  #isDone(c: Change, view: RingView): boolean {
    if (c.kind === 'join') return this.nodes.get(c.node)!.me.status === 'normal';
    if (c.kind === 'leave') return this.nodes.get(c.node)!.me.status === 'left';
    if (c.kind === 'replace')
      return c.by !== undefined && this.nodes.get(c.by)!.me.status === 'normal' && view.removed.has(c.node);
    return view.removed.has(c.node);
  }

  // Checks.

  /** The ring changed: every replica of every key that is not dead for good holds it. */
  #checkCopies(view: RingView): void {
    const ring = view.ring!;
    let bad = 0;
    let example = '';
    this.#keys.forEach((k, i) => {
      const n = Math.min(this.#n[i]!, ring.size);
      // A key whose range had no replica left to pull from (an n=1 key of a node dead for good) is lost.
      if (this.#lost.has(i)) return;
      const missing = ring.replicasForToken(k, n).filter((r) => !this.nodes.get(r)!.dead && !this.#holders[i]!.has(r));
      if (missing.length > 0) {
        bad++;
        example ||= `key-${i}: replicas ${ring.replicasForToken(k, n).join(',')} lack it on ${missing.join(',')} (held by ${[...this.#holders[i]!].join(',')})`;
      }
    });
    if (bad > 0)
      this.violations.push(`t=${this.now}: ${bad} keys with fewer than N replicas holding them, e.g. ${example}`);
  }

  #crash(): void {
    const live = [...this.nodes.values()].filter((n) => n.alive);
    // Half the time a node driving a change (mid-pull or not), else anyone.
    const drivers = live.filter((n) => n.me.move !== undefined);
    const n =
      drivers.length > 0 && this.random() < 0.5
        ? drivers[Math.floor(this.random() * drivers.length)]!
        : live[Math.floor(this.random() * live.length)]!;
    n.alive = false;
    n.run++;
    this.#pulling.delete(n.id);
    this.crashes++;
    this.#record();
    this.#after((2 + this.random() * 13) * INTERVAL, () => {
      if (!n.dead && n.me.status !== 'left' && !this.#trueView().removed.has(n.id)) this.#start(n);
    });
  }

  run(): TopologySimResult {
    const target = this.#plan.length;
    let nextIssue = 10 * INTERVAL;
    while (this.now < this.o.limitMs) {
      this.now += INTERVAL;
      this.#events.sort((a, b) => a.at - b.at);
      while (this.#events.length > 0 && this.#events[0]!.at <= this.now) this.#events.shift()!.run();
      if (this.#next < this.#plan.length && this.now >= nextIssue) {
        this.#issue();
        // Mostly one change after another; sometimes the next comes while one runs.
        const open = this.changes.some((c) => !c.done);
        nextIssue = this.now + (open && this.random() < 0.7 ? 60 * INTERVAL : (1 + this.random() * 5) * INTERVAL);
      }
      if (this.random() < this.o.crashRate) this.#crash();
      const ring = this.#trueView().ring;
      // Nodes with something to do: changing, driving, holding heirs, or heirs of tokens not yet their own.
      const order = [...this.nodes.values()].filter(
        (n) =>
          n.alive &&
          (n.me.status !== 'normal' ||
            n.me.move !== undefined ||
            n.me.heirs !== '' ||
            (ring?.member(n.id)?.tokens.length ?? 0) !== (n.me.tokens?.length ?? 0)),
      );
      for (const n of order) this.#round(n);
      const view = this.#trueView();
      const key = this.#ringKey(view.ring);
      if (key !== this.#lastRing) {
        this.#lastRing = key;
        this.#checkCopies(view);
      }
      for (const c of this.changes) if (!c.done && this.#isDone(c, view)) c.done = true;
      if (this.changes.length === target && this.changes.every((c) => c.done) && view.movements.length === 0) break;
    }
    return {
      completed: this.changes.filter((c) => c.done).length,
      simulatedMs: this.now,
      crashes: this.crashes,
      repairedUnits: this.repairedUnits,
      skippedUnits: this.skippedUnits,
      refusals: this.refusals,
      withdrawals: this.withdrawals,
      violations: this.violations,
      pending: this.changes
        .filter((c) => !c.done)
        .map((c) => `${c.kind} ${c.node}${c.by ? ` by ${c.by}` : ''} (issued at ${c.issuedAt})`),
    };
  }

  /** What is going on, for a failing run's message. */
  describe(): string {
    const v = this.#trueView();
    const lines = [
      `dead not removed: ${[...this.nodes.values()]
        .filter((n) => n.dead && !v.removed.has(n.id))
        .map((n) => n.id + ' ' + n.me.status)
        .join('; ')}`,
      `plan ${this.#next}/${this.#plan.length}`,
      `t=${this.now} movements: ${v.movements.map((m) => `${m.kind} ${m.node} by ${m.driver}`).join('; ') || 'none'}`,
    ];
    for (const n of this.nodes.values()) {
      if (n.me.move === undefined && n.me.status === 'normal') continue;
      if (n.me.status === 'left' || n.dead) continue;
      const { states, view } = this.#seen(n);
      const step =
        n.me.status === 'joining'
          ? ''
          : JSON.stringify(
              nextDriveStep({
                self: n.id,
                me: n.me,
                view,
                states: this.#withTopo(states),
                isUp: this.#isUp,
                pulled: n.pulled === n.me.move,
                hintsLeft: 0,
                classes: this.#classes,
                repaired: this.#repairedBy(n),
              }),
              (_, x: unknown) => (typeof x === 'bigint' ? String(x) : x),
            ).slice(0, 300);
      lines.push(
        `  ${n.id} ${n.alive ? 'up' : 'down'} ${n.me.status} move=${n.me.move} removing=${n.me.removing} replaces=${n.me.replaces} pulling=${n.pulling} ${step}`,
      );
    }
    return lines.join('\n');
  }

  /** Once every view has caught up with the table (the longest lag later), every live node derives the same ring. */
  sameRing(): boolean {
    this.now += this.o.maxLagMs + INTERVAL;
    const views = [...this.nodes.values()].filter((n) => n.alive).map((n) => this.#seen(n).view);
    return views.every((v) => this.#ringKey(v.ring) === this.#ringKey(views[0]!.ring));
  }
}
