/**
 * The removal's repair step as node/topology/movement-driver.ts takes it, on the cluster
 * core's test world (test/unit/cluster/world.ts) with fake repairs and a fake progress
 * file: each unit repaired or skipped and recorded before the next, a restart resuming
 * from the file, and a removal never held by a down replica or a failing unit.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { requestRemoval } from '../../../src/cluster/leave.js';
import { unitKey, type RangeUnit } from '../../../src/ring/index.js';
import {
  MovementDriver,
  REPAIR_ATTEMPTS,
  UnitSkipped,
  type DriverDeps,
} from '../../../src/node/topology/movement-driver.js';
import type { RemovalRepairProgress } from '../../../src/node/topology/removal-repair-file.js';
import { World } from '../cluster/world.js';

const N = 3;

function setUp(ids: string[]) {
  const w = World.of(ids);
  const dead = ids.at(-1)!;
  w.node(dead).up = false;
  const r = requestRemoval({
    self: 'a',
    me: w.node('a').me,
    view: w.view(),
    replicas: N,
    nonce: '01',
    target: dead,
    state: w.node(dead).state,
    up: false,
  });
  if (r.kind !== 'start') throw new Error(`not started: ${r.kind}`);
  w.apply('a', r.update);
  w.agree();
  return { w, move: r.move, dead };
}

function driver(
  w: World,
  o: {
    repairUnit(u: RangeUnit): Promise<unknown>;
    file: { saved: RemovalRepairProgress | undefined; saves: number };
    knownDown?: (x: string) => boolean;
  },
): MovementDriver {
  const deps = {
    id: 'a',
    replicas: N,
    gossiper: { states: () => w.states(), isUp: (x: string) => w.isUp(x), state: (x: string) => w.node(x)?.state },
    handoff: { plan: () => [], classes: () => ({ classes: [N], nOf: () => N }) },
    view: () => w.view(),
    identity: () => ({ ...w.node('a').me, id: 'a' }),
    persist: async (c: object) => void (w.node('a').me = { ...w.node('a').me, ...c }),
    gossip: (f: Record<string, string>) => w.set('a', f),
    announce: async () => undefined,
    exit: () => undefined,
    handOverHints: async () => 0,
    fetchTimeoutMs: 1000,
    repairUnit: o.repairUnit,
    knownDown: o.knownDown ?? ((x: string) => !w.isUp(x)),
    removalRepair: {
      load: async (move: string) => (o.file.saved?.move === move ? o.file.saved : { move, repaired: [], skipped: [] }),
      save: async (p: RemovalRepairProgress | undefined) => void ((o.file.saved = p), o.file.saves++),
    },
    log: pino({ level: 'silent' }),
  } as unknown as DriverDeps;
  return new MovementDriver(deps);
}

/** Rounds of the driver until `done` or `rounds` run out. */
async function rounds(d: MovementDriver, n: number, done: () => boolean): Promise<void> {
  for (let i = 0; i < n && !done(); i++) {
    d.step();
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("a removal's repair step, taken", () => {
  it('repairs every unit, recording each before the next, then marks the node removed and deletes the file', async () => {
    const { w, move, dead } = setUp(['a', 'b', 'c', 'd', 'e']);
    const file = { saved: undefined as RemovalRepairProgress | undefined, saves: 0 };
    const repaired: string[] = [];
    const d = driver(w, { repairUnit: async (u) => void repaired.push(unitKey(u)), file });
    await rounds(d, 20, () => w.view().removed.has(dead));
    expect(w.view().removed.has(dead)).toBe(true);
    expect(repaired.length).toBeGreaterThan(0);
    expect(new Set(repaired).size).toBe(repaired.length);
    expect(file.saves).toBe(repaired.length + 1); // one record per unit, then the delete
    expect(file.saved).toBeUndefined();
    expect(d.status).toMatchObject({
      move,
      phase: 'removed',
      repair: { units: repaired.length, repaired: repaired.length, skipped: 0 },
    });
  });

  it('a restarted driver resumes from the file: units recorded are not repaired again', async () => {
    const { w, dead } = setUp(['a', 'b', 'c', 'd', 'e']);
    const file = { saved: undefined as RemovalRepairProgress | undefined, saves: 0 };
    const first: string[] = [];
    // The node dies during its sixth unit: that repair never ends.
    const d1 = driver(w, {
      repairUnit: (u) =>
        first.length === 5 ? new Promise(() => undefined) : Promise.resolve(void first.push(unitKey(u))),
      file,
    });
    d1.step();
    await new Promise((r) => setTimeout(r, 20));
    expect(file.saved?.repaired).toEqual(first);
    expect(first.length).toBe(5);
    // A new process: nothing in memory, the same file.
    w.restart('a');
    w.agree();
    const second: string[] = [];
    const d2 = driver(w, { repairUnit: async (u) => void second.push(unitKey(u)), file });
    await rounds(d2, 20, () => w.view().removed.has(dead));
    expect(w.view().removed.has(dead)).toBe(true);
    expect(second.filter((k) => first.includes(k))).toEqual([]);
    expect(second.length).toBeGreaterThan(0);
  });

  it('a restarted driver that has heard from no replica yet waits for them rather than skipping their units', async () => {
    const { w, dead } = setUp(['a', 'b', 'c', 'd', 'e']);
    const file = { saved: undefined as RemovalRepairProgress | undefined, saves: 0 };
    const survivors = ['b', 'c', 'd'];
    for (const x of survivors) w.node(x).up = false; // just restarted: gossip shows nobody up yet
    const repaired: string[] = [];
    const d = driver(w, { repairUnit: async (u) => void repaired.push(unitKey(u)), file, knownDown: () => false });
    await rounds(d, 5, () => false);
    expect(d.status?.repair).toMatchObject({ repaired: 0, skipped: 0 });
    expect(w.view().removed.has(dead)).toBe(false);
    for (const x of survivors) w.node(x).up = true; // heard from
    await rounds(d, 20, () => w.view().removed.has(dead));
    expect(w.view().removed.has(dead)).toBe(true);
    expect(d.status!.repair).toMatchObject({ skipped: 0, repaired: repaired.length });
    expect(repaired.length).toBeGreaterThan(0);
  });

  it('skips a unit with a replica down, one whose replica cannot do it, and one failing REPAIR_ATTEMPTS times: the removal ends', async () => {
    const { w, dead } = setUp(['a', 'b', 'c', 'd', 'e', 'f']);
    const file = { saved: undefined as RemovalRepairProgress | undefined, saves: 0 };
    const tries = new Map<string, number>();
    let old: string | undefined, failing: string | undefined;
    w.node('e').up = false; // a survivor down: its units are skipped
    const d = driver(w, {
      repairUnit: async (u) => {
        const k = unitKey(u);
        tries.set(k, (tries.get(k) ?? 0) + 1);
        old ??= k;
        if (k === old) throw new UnitSkipped('b runs a release that cannot repair for a removal');
        failing ??= k;
        if (k === failing) throw new Error('deadline exceeded');
      },
      file,
    });
    await rounds(d, 40, () => w.view().removed.has(dead));
    expect(w.view().removed.has(dead)).toBe(true);
    expect(tries.get(old!)).toBe(1);
    expect(tries.get(failing!)).toBe(REPAIR_ATTEMPTS);
    const r = d.status!.repair!;
    expect(r.skipped).toBeGreaterThan(2);
    expect(r.repaired + r.skipped).toBe(r.units);
  });
});
