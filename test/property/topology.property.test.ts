/**
 * No acknowledged write loses a copy through topology changes with pending ranges
 * (Jepsen's set check, on the in-memory replica network: 4 to 7 nodes, N=3, 6 keys).
 *
 * A history interleaves batches of concurrent blind puts at random W from random ring
 * members, faults (down: the detector knows, sloppy quorum; silent: unreachable but
 * thought up, hints on failure), hint deliveries, and at most one movement at a time: a
 * spare joins (target = ring + spare), a member leaves (target = ring − member), or a
 * member is removed (same target; the node dies for the rest of the run). While it is
 * pending the coordinators' placement is { ring, target }: writes to a moving range also
 * go to its future replicas and need W of the current ones and W of the future ones.
 *
 * The movements run the real code: each node's node.json and the gossiped member table
 * (converged at once) feed the join's state machine (cluster/join.ts: the joiner's
 * claim, then normal once streamed) and src/cluster/leave.ts (the decommission or
 * removal request, then the driver's steps: pull, hand over hints, a removal's repair of
 * its units (the real exchange of repair/exchange.ts between the units' stores; a unit
 * with a replica down skipped), left or removed); the
 * target ring is the one ring-view.ts derives from the table (heirs and all), its
 * transfers those of cluster/transfer-plan.ts's movementTransfers, and each range's
 * sources those of pullSources. Streaming itself is played here, in steps that interleave
 * with the puts: a step takes one transfer and pulls into its gainer; the records are a
 * snapshot taken at the stream's first step and merged a few per step (a stream racing
 * writes); a stream whose source stops answering starts over. The movement completes when
 * its core says so (every transfer done and every gainer up counts as pulled); a leaver
 * then exits. Hint routing is node/replication.ts's redirect, modelled (`hints: 'route'`).
 *
 * Blind puts never supersede one another, so the oracle is exact. Checked: at each
 * completion, and at the end once everything is healed and every hint delivered, every
 * value acknowledged at W is on at least W of its key's replicas in the new ring (at a
 * completion, without healing anything: counting the hints live nodes hold that delivery
 * would hand to those replicas); then one read per key at R=3 returns every acknowledged
 * value (Jepsen's `lost` otherwise) and nothing never written, and read repair leaves
 * every replica with every acknowledged value. A removed node takes its copies with it:
 * one copy fewer for each hint it kept, for its own copy unless a replica that stays held
 * the value when the removal began (the removal's stream then brings it back), and, where
 * hints for it are never delivered elsewhere, for those.
 *
 * The rules under which this holds (SAFE: src/ now) are stricter than those of the brief
 * this test was written to (BRIEF) and than src/ when it was written (SRC): see the minimal
 * histories at the end, each losing a copy of a write acknowledged at W=3 without one
 * rule. TOPOLOGY_MODEL=SRC (or BRIEF) runs the random histories under those rules.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HintDelivery } from '../../src/hints/delivery.js';
import { movementTransfers, pullSources, type Transfer } from '../../src/cluster/transfer-plan.js';
import {
  nextDriveStep,
  requestDecommission,
  requestRemoval,
  type Persisted,
  type Update,
} from '../../src/cluster/leave.js';
import { nextJoinStep, type JoinStep } from '../../src/cluster/join.js';
import { repairRange } from '../../src/repair/exchange.js';
import { storeSide } from '../../src/repair/store-side.js';
import { formatTokens, initialState, setField, type EndpointState } from '../../src/membership/endpoint.js';
import { ringFromStates, type RingView } from '../../src/membership/ring-view.js';
import { tokenOf, unitKey, type RangeUnit, type Ring } from '../../src/ring/index.js';
import { resolveReplies } from '../../src/storage/index.js';
import { FakeCluster, eventually } from '../unit/replication/fake-cluster.js';

const N = 3;
const KEYS = ['a', 'b', 'c', 'd', 'e', 'f'];
const quiet = { debug() {}, info() {}, warn() {} };

type Fault = 'ok' | 'down' | 'silent';
type MoveKind = 'join' | 'leave' | 'remove';
type Step =
  | { kind: 'puts'; puts: { key: number; at: number; w: number }[] }
  | { kind: 'fault'; node: number; fault: Fault }
  /** Every node's state at once (past the cluster's size: ignored). */
  | { kind: 'faults'; faults: Fault[] }
  /** A fault on the `replica`-th replica of key `key` in the current ring. */
  | { kind: 'replicaFault'; key: number; replica: number; fault: Fault }
  /** A fault on source `source` of the `pick`-th transfer not done (3: its gainer); on a node by number when nothing moves. */
  | { kind: 'sourceFault'; pick: number; source: number; fault: Fault }
  | { kind: 'deliver' }
  /** Start a movement (a no-op while one is pending, or when there is no spare to join or the ring has only N members). */
  | { kind: 'move'; move: MoveKind; node: number }
  /** Advance the `pick`-th transfer not done: merge `records` more of its records (0: all). */
  | { kind: 'stream'; pick: number; records: number }
  /** Every transfer not done, to its end (those whose gainer and sources are up). */
  | { kind: 'streamAll' }
  /** Complete the movement if every transfer is done and every gainer up. */
  | { kind: 'complete' };

/**
 * How ranges stream and hints move during a topology change: SAFE is src/ (its sources
 * are pullSources'); any other value of the first three is a mutation of it.
 */
interface Model {
  /** From the leaver of a range when it is up (else see below); mutations: 'second' from sources[1] even when the leaver is up, 'one-stayer' from the first replica up that stays when it is not. */
  readonly streamFrom: 'leaver' | 'second' | 'one-stayer';
  /** Without the leaver, pull only once every replica that stays is up (else from those that are). */
  readonly allStayers: boolean;
  /** A range whose leaver is alive (a join or a leave; not a removal) comes from the leaver only: wait while it is down. */
  readonly waitForLeaver: boolean;
  /**
   * Hints. 'target': to their target when it is up, whatever it owns. 'redirect': also,
   * hints for a node that left or was removed go to the key's current replicas (all must
   * take them). 'route': a hint whose target is not a replica of the key in both the
   * current and the target ring goes to the key's replicas in the target ring instead.
   */
  readonly hints: 'target' | 'redirect' | 'route';
  /** A leaver exits once its leave completes (what it still holds is gone with it). */
  readonly leaverExits: boolean;
  /** ... after handing the hints it holds to a live member (the driver's hand-over step; false: a mutation that skips it). */
  readonly handOver: boolean;
  /** False: coordinators never see the target ring (a mutation: writes ignore pending ranges). */
  readonly pendingWrites: boolean;
  /** A removal repairs its units (cluster/removal-repair.ts) before it ends; false: src/ before issue 29 (it ended once pulled). */
  readonly removalRepair: boolean;
}

/** The rules the brief describes (a leaver stays up after it left, and delivers its hints). */
const BRIEF: Model = {
  streamFrom: 'leaver',
  allStayers: false,
  waitForLeaver: false,
  hints: 'target',
  leaverExits: false,
  handOver: false,
  pendingWrites: true,
  removalRepair: false,
};
/** src/ as of this writing: streaming/transfers.ts, hints/delivery.ts's redirect, node/topology/movement-driver.ts's exit. */
const SRC: Model = { ...BRIEF, hints: 'redirect', leaverExits: true };
/** Rules under which no acknowledged write loses a copy (the property below): src/'s. */
const SAFE: Model = {
  streamFrom: 'leaver',
  allStayers: true,
  waitForLeaver: true,
  hints: 'route',
  leaverExits: true,
  handOver: true,
  pendingWrites: true,
  removalRepair: true,
};

const putsArb = (nodes: number, keys: number): fc.Arbitrary<Step> =>
  fc.record({
    kind: fc.constant('puts' as const),
    // W=3 most: a value then needs all three new replicas, so a stream that misses it shows.
    puts: fc.array(fc.record({ key: fc.nat(keys - 1), at: fc.nat(nodes - 1), w: fc.constantFrom(1, 2, 2, 3, 3, 3) }), {
      minLength: 1,
      maxLength: 4,
    }),
  });
const faultArb = (nodes: number): fc.Arbitrary<Step> =>
  fc.record({
    kind: fc.constant('fault' as const),
    node: fc.nat(nodes - 1),
    fault: fc.constantFrom<Fault>('ok', 'down', 'silent'),
  });
const faultsArb = (nodes: number): fc.Arbitrary<Step> =>
  fc.record({
    kind: fc.constant('faults' as const),
    faults: fc.array(fc.constantFrom<Fault>('ok', 'ok', 'ok', 'down', 'down', 'silent'), {
      minLength: nodes,
      maxLength: nodes,
    }),
  });
const replicaFaultArb = (keys: number): fc.Arbitrary<Step> =>
  fc.record({
    kind: fc.constant('replicaFault' as const),
    key: fc.nat(keys - 1),
    replica: fc.nat(2),
    fault: fc.constantFrom<Fault>('ok', 'down', 'down', 'silent'),
  });
const sourceFaultArb: fc.Arbitrary<Step> = fc.record({
  kind: fc.constant('sourceFault' as const),
  pick: fc.nat(15),
  source: fc.nat(3),
  fault: fc.constantFrom<Fault>('ok', 'ok', 'down', 'silent'),
});
const deliverArb: fc.Arbitrary<Step> = fc.constant({ kind: 'deliver' as const });
const streamArb: fc.Arbitrary<Step> = fc.record({
  kind: fc.constant('stream' as const),
  pick: fc.nat(15),
  records: fc.nat(2),
});

/**
 * A history: up to 3 episodes, each of puts under a random fault configuration, a
 * movement, its streams under another configuration interleaved with puts, faults aimed
 * at the streams' sources, and rare hint deliveries (so that hints are often still held
 * when a range streams), then (mostly) its completion.
 */
const historyOf = (nodes: number, keys: number): fc.Arbitrary<Step[]> => {
  const fault = fc.oneof(faultArb(nodes), faultsArb(nodes), replicaFaultArb(keys));
  const before = fc
    .tuple(
      faultsArb(nodes),
      fc.array(
        fc.oneof(
          { weight: 4, arbitrary: putsArb(nodes, keys) },
          { weight: 2, arbitrary: fault },
          { weight: 1, arbitrary: deliverArb },
        ),
        { maxLength: 8 },
      ),
    )
    .map(([f, xs]) => [f, ...xs]);
  const during = fc
    .tuple(
      faultsArb(nodes),
      fc.array(
        fc.oneof(
          { weight: 3, arbitrary: streamArb },
          { weight: 2, arbitrary: putsArb(nodes, keys) },
          { weight: 1, arbitrary: fault },
          { weight: 2, arbitrary: sourceFaultArb },
          { weight: 1, arbitrary: deliverArb },
        ),
        { maxLength: 14 },
      ),
    )
    .map(([f, xs]) => [f, ...xs]);
  const move = fc.record({
    kind: fc.constant('move' as const),
    move: fc.constantFrom<MoveKind>('join', 'leave', 'remove'),
    node: fc.nat(nodes - 1),
  });
  const end = fc.constantFrom<Step[]>(
    [{ kind: 'streamAll' }, { kind: 'complete' }],
    [{ kind: 'streamAll' }, { kind: 'complete' }],
    [{ kind: 'complete' }],
    [],
  );
  const episode = fc.tuple(before, move, during, end).map(([b, m, d, e]) => [...b, m, ...d, ...e]);
  return fc
    .tuple(fc.array(episode, { minLength: 1, maxLength: 3 }), fc.array(putsArb(nodes, keys), { maxLength: 2 }))
    .map(([es, tail]) => [...es.flat(), ...tail]);
};

/** 4..7 nodes, of which size − 2 or size − 1 (at least 3) own tokens at first, and a history. */
const historyArb = fc
  .integer({ min: 4, max: 7 })
  .chain((size) =>
    fc.tuple(fc.constant(size), fc.integer({ min: Math.max(3, size - 2), max: size - 1 }), historyOf(7, KEYS.length)),
  );

interface Stream {
  readonly t: Transfer & { readonly leaverGone: boolean };
  /** The snapshot being merged, and the nodes it came from; undefined until the first step (and after a source went away). */
  records: { key: Buffer; record: Buffer }[] | undefined;
  from: string[];
  next: number;
  done: boolean;
}

interface Movement {
  readonly kind: MoveKind;
  readonly node: string;
  /** The node that drives it (cluster/leave.ts): the leaver, the remover, the joiner. */
  readonly driver: string;
  readonly target: Ring;
  readonly streams: Stream[];
}

/** An acknowledged value: its W, and how many of its copies removed nodes took with them. */
interface Ack {
  readonly w: number;
  readonly step: number;
  taken: number;
}

/** Is token `x` in the range (start, end] (the whole ring when start = end)? */
const inRange = (x: bigint, { start, end }: { start: bigint; end: bigint }): boolean =>
  start === end ? true : start < end ? start < x && x <= end : x > start || x <= end;

const valuesOf = (key: string, record: Buffer | undefined): string[] =>
  record === undefined ? [] : resolveReplies(key, [record]).values.map(String);

/** Play `steps` on `size` nodes of which the first `members` own tokens; throws with the history on a violation. */
async function play(size: number, members: number, steps: readonly Step[], model: Model = SAFE): Promise<void> {
  const c = await FakeCluster.create(size, { timeoutMs: 1000 }, members);
  const NODES = [...c.stores.keys()];
  const dead = new Set<string>();
  /** Nodes that left or were removed: no longer members. */
  const gone = new Set<string>();
  const trace: string[] = [`${size} nodes, ring ${c.ring.members.map((m) => m.id).join(',')}`];
  const acked = new Map<string, Map<string, Ack>>(KEYS.map((k) => [k, new Map()]));
  const attempted = new Map<string, Set<string>>(KEYS.map((k) => [k, new Set()]));
  let movement: Movement | undefined;
  let n = 0;
  let nonce = 0;

  // Each node's node.json and the member table every node sees (gossip converged at once):
  // what the join's state machine and src/cluster decide from.
  const saved = new Map<string, Persisted>();
  const table = new Map<string, EndpointState>();
  for (const [g, id] of NODES.entries()) {
    const m = c.ring.member(id);
    saved.set(id, {
      status: m ? 'normal' : 'joining',
      tokens: m ? [...m.tokens] : undefined,
      move: undefined,
      removing: undefined,
      removed: [],
      heirs: '',
    });
    table.set(
      id,
      initialState(id, g + 1, {
        addr: `${id}:1`,
        zone: FakeCluster.zoneOf(id),
        rack: '',
        weight: '1',
        status: m ? 'normal' : 'joining',
        ...(m ? { tokens: formatTokens(m.tokens) } : {}),
      }),
    );
  }
  const view = (): RingView => ringFromStates(table.values(), { tokensPerNode: 16 });
  /** Every node gossips the view's hash (writes to its pending ranges): the fake coordinators' placement is set with it. */
  const agree = (): void => {
    const hash = view().hash;
    for (const id of NODES) if (!dead.has(id)) table.set(id, setField(table.get(id)!, 'topo', hash));
  };
  /** What a node's shell does with the core's update: persist, then gossip. */
  const apply = (id: string, u: Update): void => {
    saved.set(id, { ...saved.get(id)!, ...u.persist });
    let st = table.get(id)!;
    for (const [name, value] of Object.entries(u.gossip)) st = setField(st, name, value);
    table.set(id, st);
    agree();
  };
  const joinStep = (id: string, streamed: boolean): JoinStep =>
    nextJoinStep({
      self: { id, zone: FakeCluster.zoneOf(id), rack: '', weight: 1 },
      clusterName: 'property',
      replicas: N,
      tokensPerNode: 16,
      intervalMs: 1000,
      waitedMs: 1e9,
      quietMs: 1e9,
      tokens: saved.get(id)!.tokens,
      tokensAgeMs: 1e9,
      gossip: {
        shadow: false,
        formerSelf: undefined,
        states: () => table.values(),
        state: (x) => table.get(x),
        isUp: (x) => isUp(x),
      },
      view: view(),
      streamed,
    });
  agree();
  c.ring = view().ring!;

  const isUp = (id: string): boolean => !dead.has(id) && !c.down.has(id) && !c.net.faults.has(`*>${id}`);
  const alive = (): string[] => NODES.filter((id) => !dead.has(id));
  const setFault = (id: string, f: Fault): void => {
    if (dead.has(id)) return;
    c.down.delete(id);
    c.net.faults.delete(`*>${id}`);
    if (f === 'down') c.down.add(id);
    if (f !== 'ok') c.net.faults.set(`*>${id}`, { unreachable: true });
  };
  const die = (id: string): void => {
    setFault(id, 'down');
    dead.add(id);
  };
  const state = (): string =>
    NODES.map((id) =>
      dead.has(id) ? `${id}:dead` : c.down.has(id) ? `${id}:down` : c.net.faults.has(`*>${id}`) ? `${id}:silent` : '',
    )
      .filter(Boolean)
      .join(' ');
  const owners = (ring: Ring, key: string | Buffer): string[] => ring.preferenceList(key, Math.min(N, ring.size));
  /** The ring once the movement in progress is done. */
  const future = (): Ring => movement?.target ?? c.ring;
  /** 'route': does a hint for `t` go to the key's future replicas instead of to `t`? */
  const routed = (t: string, key: string | Buffer): boolean =>
    !(owners(c.ring, key).includes(t) && owners(future(), key).includes(t));

  const deliverAll = async (): Promise<void> => {
    await Promise.all(
      alive().map((id) =>
        new HintDelivery(
          { self: id, bytesPerSecond: 1 << 30 },
          {
            hints: c.store(id).hints,
            isUp,
            send: (to, key, record) =>
              to === id
                ? c.store(id).merge(key, record)
                : c.net.from(id).call(to, { op: 'merge', key, record }, Date.now() + 1000),
            redirect:
              model.hints === 'target'
                ? undefined
                : model.hints === 'redirect'
                  ? (t) => (gone.has(t) ? (key) => owners(c.ring, key) : undefined)
                  : (t) => (key) => (routed(t, key) ? owners(future(), key) : [t]),
            log: quiet,
          },
        ).run(),
      ),
    );
  };

  /**
   * The values of key `k` that healing and delivering every hint would hand to `r`, a
   * replica of `k` in `ring` (no movement pending): the hints live nodes hold for `r`,
   * and those redirected or routed to the key's replicas.
   */
  const hinted = async (r: string, k: string, ring: Ring): Promise<string[]> => {
    const out: string[] = [];
    for (const id of alive())
      for (const t of c.store(id).hints.targets().keys())
        if (
          t === r ||
          (model.hints === 'redirect' && gone.has(t)) ||
          (model.hints === 'route' && !owners(ring, k).includes(t))
        )
          out.push(...valuesOf(k, await c.store(id).hints.get(t, k)));
    return out;
  };

  /** Every value acknowledged so far is on W (less what removed nodes took) of its replicas in `ring`. */
  const checkCopies = async (ring: Ring, when: string, withHints: boolean): Promise<void> => {
    for (const k of KEYS) {
      const held = await Promise.all(
        owners(ring, k).map(async (id) => [
          ...(await c.store(id).get(k)).values.map(String),
          ...(withHints ? await hinted(id, k, ring) : []),
        ]),
      );
      for (const [value, a] of acked.get(k)!) {
        const copies = held.filter((vs) => vs.includes(value)).length;
        if (copies >= a.w - a.taken) continue;
        const where = await Promise.all(
          alive().map(async (id) => ((await c.store(id).get(k)).values.map(String).includes(value) ? id : '')),
        );
        throw new Error(
          `${when}: ${k}=${value} acknowledged at W=${a.w} (step ${a.step}${a.taken ? `; ${a.taken} cop${a.taken === 1 ? 'y' : 'ies'} taken by removed nodes` : ''}) is on ${copies} of its replicas ${owners(ring, k).join(',')}` +
            ` (live stores holding it: ${where.filter(Boolean).join(',') || 'none'})`,
        );
      }
    }
  };

  /**
   * Node `id` dies for good, to be removed, and takes with it the copies it held: each
   * hint it kept, and (in 'target' mode) the hints for it, which can never be delivered,
   * count one copy fewer for their value; so does its own copy, unless `id` is a replica
   * of the key and another replica, which stays, holds the value (the removal's stream
   * from the replicas that stay then brings the copy back).
   */
  const kill = async (id: string): Promise<void> => {
    for (const k of KEYS) {
      const lost: string[] = [];
      for (const t of c.store(id).hints.targets().keys()) lost.push(...valuesOf(k, await c.store(id).hints.get(t, k)));
      if (model.hints === 'target')
        for (const v of new Set(
          (
            await Promise.all(
              alive()
                .filter((x) => x !== id)
                .map(async (x) => valuesOf(k, await c.store(x).hints.get(id, k))),
            )
          ).flat(),
        ))
          lost.push(v);
      const stayers = owners(c.ring, k).includes(id) ? owners(c.ring, k).filter((x) => x !== id) : [];
      const kept = new Set(
        (await Promise.all(stayers.map(async (x) => (await c.store(x).get(k)).values.map(String)))).flat(),
      );
      lost.push(...valuesOf(k, await c.store(id).getRecord(k)).filter((v) => !kept.has(v)));
      for (const v of lost) {
        const a = acked.get(k)!.get(v);
        if (a !== undefined) a.taken++;
      }
    }
    die(id);
  };

  /** A leaver about to exit gives the hints it holds to a live member, which delivers them in its place. */
  const handOver = async (from: string): Promise<void> => {
    const live = c.ring.members.map((m) => m.id).filter((x) => x !== from && !dead.has(x));
    const heir = live.find(isUp) ?? live[0]!;
    for (const t of c.store(from).hints.targets().keys())
      for await (const batch of c.store(from).hints.list(t))
        for (const h of batch)
          await (t === heir ? c.store(heir).merge(h.key, h.record) : c.store(heir).hints.add(t, h.key, h.record));
  };

  const startMove = async (kind: MoveKind, pick: number): Promise<void> => {
    if (movement !== undefined) return;
    let node: string, driver: string;
    if (kind === 'join') {
      const spares = NODES.filter((id) => !c.ring.has(id) && !dead.has(id) && !gone.has(id));
      if (spares.length === 0) return;
      node = driver = spares[pick % spares.length]!;
      const claim = joinStep(node, false);
      if (claim.kind !== 'claim') throw new Error(`${node} does not claim tokens: ${JSON.stringify(claim)}`);
      apply(node, {
        persist: { tokens: claim.tokens, move: `join-${node}-${nonce++}` },
        gossip: { tokens: formatTokens(claim.tokens) },
      });
      expect(joinStep(node, false).kind).toBe('stream');
    } else {
      if (c.ring.size <= N) return;
      const ids = c.ring.members.map((m) => m.id);
      node = ids[pick % ids.length]!;
      if (kind === 'remove') await kill(node);
      driver = kind === 'leave' ? node : ids.find((x) => x !== node && !dead.has(x))!;
      const me = saved.get(driver)!;
      const request = { self: driver, me, view: view(), replicas: N, nonce: String(nonce++) };
      const r =
        kind === 'leave'
          ? requestDecommission(request)
          : requestRemoval({ ...request, target: node, state: table.get(node), up: isUp(node) });
      if (r.kind !== 'start') throw new Error(`the ${kind} of ${node} does not start: ${JSON.stringify(r)}`);
      apply(driver, r.update);
    }
    const v = view();
    expect(v.movements.map((m) => `${m.kind} ${m.node} by ${m.driver}`)).toEqual([`${kind} ${node} by ${driver}`]);
    const target = v.target!;
    // A range that holds none of the keys never has a record: done from the start, so that stream steps go to the others.
    const streams = movementTransfers(v, [N]).map((t): Stream => ({
      t,
      records: undefined,
      from: [],
      next: 0,
      done: !KEYS.some((k) => inRange(tokenOf(k), t)),
    }));
    movement = { kind, node, driver, target, streams };
    repaired.clear();
    if (model.pendingWrites) c.target = target;
    trace.push(
      `  ${kind} ${node}: ${streams.length} transfers; with keys: ${streams
        .filter((x) => !x.done)
        .map((x) => `${x.t.to}<${x.t.sources.join(',')}`)
        .join(' ')}`,
    );
  };

  const sourcesOf = (t: Stream['t']): string[] => {
    // src/: cluster/transfer-plan.ts's pullSources (time does not pass here: a leaver only unreachable is waited for).
    if (model.streamFrom === 'leaver' && model.allStayers && model.waitForLeaver)
      return pullSources(t, isUp(t.sources[0]!), 0, Infinity).find((set) => set.length > 0 && set.every(isUp)) ?? [];
    const stayers = t.sources.filter((s) => s !== t.leaver);
    if (t.leaver !== undefined && isUp(t.leaver))
      return model.streamFrom === 'second' ? stayers.slice(0, 1).filter(isUp) : [t.leaver];
    if (model.waitForLeaver && t.leaver !== undefined && !dead.has(t.leaver)) return [];
    if (model.streamFrom === 'one-stayer') return stayers.filter(isUp).slice(0, 1);
    return model.allStayers && !stayers.every(isUp) ? [] : stayers.filter(isUp);
  };

  const stream = async (s: Stream, records: number): Promise<void> => {
    if (s.done || !isUp(s.t.to)) return;
    if (s.records !== undefined && !s.from.every(isUp)) s.records = undefined; // a source went away: start over
    if (s.records === undefined) {
      const from = sourcesOf(s.t);
      if (from.length === 0) return;
      s.records = [];
      s.from = from;
      s.next = 0;
      for (const src of from)
        for await (const batch of c.store(src).ranges.scan({ start: s.t.start, end: s.t.end }))
          s.records.push(...batch.entries);
    }
    const end = records === 0 ? s.records.length : Math.min(s.records.length, s.next + records);
    for (; s.next < end; s.next++) await c.store(s.t.to).merge(s.records[s.next]!.key, s.records[s.next]!.record);
    s.done = s.next >= s.records.length;
    trace.push(`  stream to ${s.t.to} from ${s.from.join('+')}: ${s.next}/${s.records.length}${s.done ? ' done' : ''}`);
  };

  /** The removal's repair step (its units' keys, as removal-repair.json keeps them): kept across attempts to complete. */
  const repaired = new Set<string>();
  /**
   * The repair step as node/topology/movement-driver.ts takes it: each unit with every
   * replica up repaired by the real exchange (repair/exchange.ts over the stores), else
   * skipped; checked: a repaired unit's replicas then each hold every value of its keys
   * that one of them held when the repair began. Not "the same values": a replica write
   * still in flight (here, one queued behind a store's process.nextTick while the history
   * runs on as microtasks) may land on one replica during the exchange, after its listing,
   * and that write's other copies are its coordinator's business (hints), not the repair's.
   */
  const repairUnits = async (units: readonly RangeUnit[]): Promise<void> => {
    for (const u of units) {
      repaired.add(unitKey(u));
      if (!u.replicas.every(isUp)) {
        trace.push(`  repair ${unitKey(u)} skipped: a replica of ${u.replicas.join(',')} down`);
        continue;
      }
      const range = { start: u.start, end: u.end };
      const keys = KEYS.filter((k) => inRange(tokenOf(k), u));
      const held = (k: string): Promise<string[][]> =>
        Promise.all(u.replicas.map(async (id) => (await c.store(id).get(k)).values.map(String).sort()));
      const before = new Map(await Promise.all(keys.map(async (k) => [k, new Set((await held(k)).flat())] as const)));
      const [first, ...others] = await Promise.all(
        u.replicas.map(async (id) => ({ id, store: c.store(id), tree: await c.store(id).ranges.tree(range, 2) })),
      );
      await repairRange(
        first!.tree,
        storeSide(first!.id, first!.store, first!.tree),
        others.map((o) => storeSide(o.id, o.store, o.tree)),
      );
      for (const k of keys) {
        const after = await held(k);
        const lacking = after.map((vs) => [...before.get(k)!].filter((v) => !vs.includes(v)));
        expect(
          lacking.flat(),
          `after the removal's repair of ${unitKey(u)}, ${k} on ${u.replicas.join(',')}: ${after.map((vs) => vs.join(',')).join(' | ')}; held before by one of them: ${[...before.get(k)!].join(',')}`,
        ).toEqual([]);
      }
      trace.push(`  repair ${unitKey(u)} with ${u.replicas.join(',')}`);
    }
  };

  const complete = async (): Promise<boolean> => {
    if (movement === undefined) return false;
    const m = movement;
    const pulled = m.streams.every((s) => s.done) && m.streams.every((s) => isUp(s.t.to));
    if (m.kind === 'join') {
      if (joinStep(m.node, pulled).kind !== 'normal') return false;
      apply(m.node, { persist: { status: 'normal', move: undefined }, gossip: { status: 'normal' } });
    } else {
      // The driver's steps (cluster/leave.ts), as node/topology/movement-driver.ts takes them.
      let hintsLeft: number | undefined;
      for (;;) {
        const step = nextDriveStep({
          self: m.driver,
          me: saved.get(m.driver)!,
          view: view(),
          states: table.values(),
          isUp,
          pulled,
          hintsLeft,
          classes: [N],
          repaired,
        });
        if (step.kind === 'hand-over-hints') {
          if (model.handOver) await handOver(m.node);
          hintsLeft = 0;
          continue;
        }
        if (step.kind === 'repair') {
          if (model.removalRepair) await repairUnits(step.units);
          else for (const u of step.units) repaired.add(unitKey(u));
          continue;
        }
        if (step.kind !== 'left' && step.kind !== 'removed') {
          if (pulled)
            throw new Error(
              `the ${m.kind} of ${m.node} is pulled but its driver ${m.driver} does not finish it: ${JSON.stringify(step)}`,
            );
          return false;
        }
        apply(m.driver, step.update);
        break;
      }
    }
    const v = view();
    expect(v.movements, 'nothing moves once the change is done').toEqual([]);
    expect(v.ring!.ranges(N), 'the ring is the target the ranges were streamed for').toEqual(m.target.ranges(N));
    c.ring = v.ring!;
    c.target = undefined;
    movement = undefined;
    if (m.kind !== 'join') gone.add(m.node);
    trace.push(`  ${m.kind} ${m.node} complete: ring ${c.ring.members.map((x) => x.id).join(',')}`);
    if (m.kind === 'leave' && model.leaverExits) die(m.node);
    await new Promise((r) => setTimeout(r, 1));
    await checkCopies(c.ring, 'at the completion', true);
    return true;
  };

  const puts = async (i: number, batch: { key: number; at: number; w: number }[]): Promise<string> => {
    const coordinators = c.ring.members.map((m) => m.id).filter((id) => !dead.has(id));
    const results = await Promise.all(
      batch.map(async ({ key, at, w }) => {
        const k = KEYS[key]!;
        if (attempted.get(k)!.size >= 90) return ''; // under the store's sibling cap
        const value = `v${n++}`;
        attempted.get(k)!.add(value);
        try {
          await c
            .coordinator(coordinators[at % coordinators.length]!)
            .put(Buffer.from(k), Buffer.from(value), Buffer.alloc(0), { quorum: w });
          acked.get(k)!.set(value, { w, step: i, taken: 0 });
          return `${k}=${value}@W${w} ok`;
        } catch {
          return `${k}=${value}@W${w} failed`;
        }
      }),
    );
    return results.filter(Boolean).join(', ');
  };

  try {
    for (const [i, step] of steps.entries()) {
      trace.push(`#${i} ${JSON.stringify(step)}${state() ? `  [${state()}]` : ''}`);
      if (step.kind === 'puts') trace.push(`  ${await puts(i, step.puts)}`);
      else if (step.kind === 'fault') setFault(NODES[step.node % size]!, step.fault);
      else if (step.kind === 'faults') NODES.forEach((id, j) => setFault(id, step.faults[j] ?? 'ok'));
      else if (step.kind === 'replicaFault') setFault(owners(c.ring, KEYS[step.key]!)[step.replica % N]!, step.fault);
      else if (step.kind === 'sourceFault') {
        const open = movement?.streams.filter((x) => !x.done) ?? [];
        const t = open[step.pick % Math.max(1, open.length)]?.t;
        const node =
          t === undefined ? NODES[step.pick % size]! : step.source === 3 ? t.to : (t.sources[step.source] ?? t.to);
        trace.push(`  ${node} ${step.fault}`);
        setFault(node, step.fault);
      } else if (step.kind === 'deliver') await deliverAll();
      else if (step.kind === 'move') await startMove(step.move, step.node);
      else if (step.kind === 'stream') {
        const open = movement?.streams.filter((s) => !s.done) ?? [];
        if (open.length > 0) await stream(open[step.pick % open.length]!, step.records);
      } else if (step.kind === 'streamAll') for (const s of movement?.streams ?? []) await stream(s, 0);
      else await complete();
    }
    // Complete what is pending (heal first, so that the streams can run), then deliver every hint and check.
    trace.push(`end${state() ? `  [${state()}]` : ''}`);
    for (const id of NODES) setFault(id, 'ok');
    if (movement !== undefined) {
      for (const s of movement.streams) await stream(s, 0);
      expect(await complete(), 'the pending movement completes once everything is up').toBe(true);
    }
    await new Promise((r) => setTimeout(r, 5)); // writes still in flight land
    await deliverAll();
    for (const id of alive())
      for (const [t, s] of c.store(id).hints.targets())
        if (!dead.has(t)) expect(s.count, `hints left on ${id} for ${t}`).toBe(0);
    await checkCopies(c.ring, 'after hint delivery', false);
    // Jepsen's set check: one read per key at R=3.
    const reader = c.ring.members[0]!.id;
    const lost: string[] = [],
      unexpected: string[] = [],
      excused: string[] = [];
    for (const k of KEYS) {
      const read = (await c.coordinator(reader).get(Buffer.from(k), { quorum: 3 })).values.map(String);
      for (const [v, a] of acked.get(k)!) if (!read.includes(v)) (a.taken >= a.w ? excused : lost).push(`${k}=${v}`);
      unexpected.push(...read.filter((v) => !attempted.get(k)!.has(v)).map((v) => `${k}=${v}`));
    }
    expect(
      { lost, unexpected },
      `lost ${lost.length} acknowledged write(s) (and ${excused.length} with removed nodes), ${unexpected.length} unexpected`,
    ).toEqual({ lost: [], unexpected: [] });
    // Read repair runs in the background: every replica ends with every acknowledged value.
    for (const k of KEYS) {
      const want = [...acked.get(k)!].filter(([, a]) => a.taken < a.w).map(([v]) => v);
      const held = () =>
        Promise.all(owners(c.ring, k).map(async (id) => (await c.store(id).get(k)).values.map(String)));
      await eventually(async () => (await held()).every((vs) => want.every((v) => vs.includes(v))), 1000).catch(
        async () => {
          const now = await held();
          throw new Error(
            `key ${k}: after a read at R=3, replicas ${owners(c.ring, k).join(',')} lack ${now.map((vs) => want.filter((v) => !vs.includes(v)).join(',') || '-').join(' | ')}`,
          );
        },
      );
    }
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    err.message += `\nhistory:\n${trace.join('\n')}`;
    throw err;
  } finally {
    await c.close();
  }
}

/** TOPOLOGY_MODEL=SRC (or BRIEF): the random histories under those rules (they fail). */
const MODEL = ({ SAFE, SRC, BRIEF } as Record<string, Model | undefined>)[process.env.TOPOLOGY_MODEL ?? 'SAFE'] ?? SAFE;

describe('topology changes with pending ranges lose no acknowledged write', () => {
  it('joins, leaves and removals racing puts, faults and hint deliveries (random histories)', async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, ([size, members, steps]) => play(size, members, steps, MODEL)),
      { numRuns: 200, seed: 29, endOnFailure: true },
    );
  }, 120_000);

  // Found by the histories above on random seeds (issue 29). 28414770/182: a write
  // acknowledged on n1 at W=1 whose copy for n2 was still in flight landed on n2 while n2
  // repaired the unit with n6 and n1, so n2's pull from n1 changed nothing there and the
  // exchange sent n6, whose tree had compared equal with n2's, nothing (repair/exchange.ts;
  // its unit test has both timings of such a write). 1024013545/1363: a write's copy for n3,
  // in flight since before the removal, lands on n3 during the exchange, after its listing:
  // held by none of the unit's replicas when the repair began, so not the repair's to spread.
  it("a removal's repair step leaves every replica of each unit it repaired with every value one of them held (seeds 28414770, 1024013545)", async () => {
    for (const [seed, path] of [
      [28414770, '182'],
      [1024013545, '1363'],
    ] as const)
      await fc.assert(
        fc.asyncProperty(historyArb, ([size, members, steps]) => play(size, members, steps, SAFE)),
        { seed, path, endOnFailure: true },
      );
  }, 120_000);

  it('fails when a stream skips the leaver, or when writes ignore pending ranges (mutations, pinned seeds)', async () => {
    const run = (model: Model, seed: number) =>
      fc.check(
        fc.asyncProperty(historyArb, ([size, members, steps]) => play(size, members, steps, model)),
        { numRuns: 100, seed, endOnFailure: true },
      );
    expect(
      (await run({ ...SAFE, streamFrom: 'second' }, 10)).failed,
      'streaming from sources[1] even when the leaver is up',
    ).toBe(true);
    expect(
      (await run({ ...SAFE, streamFrom: 'one-stayer', removalRepair: false }, 3)).failed,
      'streaming from one replica that stays when the leaver is down',
    ).toBe(true);
    // The removal's repair step brings back what such a stream missed.
    expect((await run({ ...SAFE, streamFrom: 'one-stayer' }, 3)).failed, 'the same, with the removal repair step').toBe(
      false,
    );
    expect(
      (await run({ ...SAFE, pendingWrites: false }, 5)).failed,
      'writes acknowledged on the current replicas only',
    ).toBe(true);
  }, 60_000);
});

/**
 * What each of SAFE's rules is for: histories (node i is `n${i + 1}`; `at` indexes the
 * ring's members) in which a write acknowledged at W=3 ends on 2 replicas of the new ring
 * under src's rules as of this writing, and stays on 3 under SAFE.
 */
describe('what src/ misses (minimal histories: SRC loses a copy, SAFE does not)', () => {
  const lostCopy = /acknowledged at W=3 .*is on 2 of its replicas/;
  const check = async (size: number, members: number, steps: Step[], bad: Model = SRC): Promise<void> => {
    await expect(play(size, members, steps, bad)).rejects.toThrow(lostCopy);
    await play(size, members, steps, SAFE);
  };

  it('a join: the hint for the range’s old owner is delivered to it, never to the joiner (hints must be routed by ownership)', async () => {
    // Ring n1..n4, spare n5. Key b: n3,n1,n2 → n5,n3,n1 (n5 pulls from n2). n2 down: b=v0 at W=3 is n3, n1 and a hint for n2 on n4.
    await check(5, 4, [
      { kind: 'fault', node: 1, fault: 'down' },
      { kind: 'puts', puts: [{ key: 1, at: 0, w: 3 }] },
      { kind: 'fault', node: 1, fault: 'ok' },
      { kind: 'move', move: 'join', node: 4 },
      { kind: 'streamAll' }, // n5 pulls b's range from n2, whose copy is still a hint
      { kind: 'complete' }, // b=v0 on n3, n1; the hint for n2 goes to n2, which no longer holds b
    ]);
  });

  it('a decommission: a hint delivered to the leaver after its ranges streamed leaves with it', async () => {
    // Ring n1..n4. Key d: n4,n3,n2, walk n4,n3,n2,n1. n4 down: d=v0 at W=3 is n3, n2 and a hint for n4 on n1. n4 leaves: d → n1,n3,n2.
    await check(4, 4, [
      { kind: 'fault', node: 3, fault: 'down' },
      { kind: 'puts', puts: [{ key: 3, at: 0, w: 3 }] },
      { kind: 'fault', node: 3, fault: 'ok' },
      { kind: 'move', move: 'leave', node: 3 },
      { kind: 'streamAll' }, // n1 pulls d's range from n4, which does not hold v0 yet
      { kind: 'deliver' }, // the hint goes to n4, a member still
      { kind: 'complete' }, // n4 exits with it
    ]);
  });

  it('a decommission: the leaver exits with the hints it holds for others (hand them over first)', async () => {
    // Ring n1..n5, spare n6. Key b: n2,n4,n3, walk n2,n4,n3,n5,n1. n2 down: b=v0 at W=3 is n4, n3 and a hint for n2 on n5.
    await check(6, 5, [
      { kind: 'fault', node: 1, fault: 'down' },
      { kind: 'puts', puts: [{ key: 1, at: 0, w: 3 }] },
      { kind: 'fault', node: 1, fault: 'ok' },
      { kind: 'move', move: 'leave', node: 4 }, // n5 leaves: no key moves
      { kind: 'complete' }, // and it exits before its next hint delivery
    ]);
  });

  it('a decommission while the leaver is unreachable: pulled from the replicas that stay, whose copies are still hints (wait for a live leaver)', async () => {
    // Ring n1..n6, spare n7. Key c: n6,n5,n4 → n5,n4,n3. n4, n5 down: c=v0 at W=3 is n6 and hints for n5 on n2 and for n4 on n1.
    await check(7, 6, [
      { kind: 'faults', faults: ['ok', 'ok', 'ok', 'down', 'down', 'ok', 'ok'] },
      { kind: 'puts', puts: [{ key: 2, at: 0, w: 3 }] },
      { kind: 'move', move: 'leave', node: 5 },
      { kind: 'faults', faults: ['ok', 'ok', 'ok', 'ok', 'ok', 'down', 'ok'] }, // n4, n5 back; n6 unreachable
      { kind: 'streamAll' }, // n3 pulls from n5 + n4: neither holds v0 yet
      { kind: 'complete' },
    ]);
  });

  it('a removal with a replica that stays down: pulled from the others only (wait for every replica that stays)', async () => {
    // Ring n1..n4, spare n5. Key a: n3,n2,n1, walk n3,n2,n1,n4. n1 down: a=v0 at W=3 is n3, n2 and a hint for n1 on n4. n2 dies and is removed: a → n3,n1,n4.
    await check(5, 4, [
      { kind: 'fault', node: 0, fault: 'down' },
      { kind: 'puts', puts: [{ key: 0, at: 1, w: 3 }] },
      { kind: 'fault', node: 0, fault: 'ok' },
      { kind: 'move', move: 'remove', node: 1 },
      { kind: 'fault', node: 2, fault: 'down' }, // n3, which holds v0
      { kind: 'streamAll' }, // n4 pulls from n1 only, whose copy is still a hint
      { kind: 'complete' },
    ]);
  });
});
