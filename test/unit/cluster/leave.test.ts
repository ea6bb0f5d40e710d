import { describe, expect, it } from 'vitest';
import { parseHeirs } from '../../../src/membership/endpoint.js';
import {
  cancelDecommission,
  heirsWith,
  nextDriveStep,
  requestDecommission,
  requestRemoval,
  settleHeirs,
  type DriveInput,
  type DriveStep,
} from '../../../src/cluster/leave.js';
import { nextJoinStep } from '../../../src/cluster/join.js';
import { unitKey } from '../../../src/ring/index.js';
import { World } from './world.js';

const N = 3;

/** x's next join step in world `w`, with these fields of its state replaced. */
function joinStep(w: World, over: Partial<Parameters<typeof nextJoinStep>[0]>): ReturnType<typeof nextJoinStep> {
  return nextJoinStep({
    self: { id: 'x', zone: '', rack: '', weight: 1 },
    clusterName: 'c',
    replicas: 3,
    tokensPerNode: 8,
    intervalMs: 1000,
    waitedMs: 1e6,
    quietMs: 1e6,
    tokens: undefined,
    tokensAgeMs: 0,
    gossip: {
      shadow: false,
      formerSelf: undefined,
      states: () => w.states(),
      state: (id) => w.nodes.get(id)?.state,
      isUp: w.isUp,
    },
    view: w.view(),
    streamed: false,
    ...over,
  });
}

function decommission(w: World, id: string, nonce = 'aa') {
  return requestDecommission({ self: id, me: w.node(id).me, view: w.view(), replicas: N, nonce });
}

function remove(w: World, by: string, target: string, nonce = 'bb') {
  return requestRemoval({
    self: by,
    me: w.node(by).me,
    view: w.view(),
    replicas: N,
    nonce,
    target,
    state: w.node(target)?.state,
    up: w.isUp(target),
  });
}

function drive(
  w: World,
  id: string,
  progress: Partial<Pick<DriveInput, 'pulled' | 'hintsLeft' | 'repaired' | 'classes'>> = {},
): DriveStep {
  return nextDriveStep({
    self: id,
    me: w.node(id).me,
    view: w.view(),
    states: w.states(),
    isUp: w.isUp,
    pulled: progress.pulled ?? false,
    hintsLeft: progress.hintsLeft,
    classes: progress.classes ?? [N],
    repaired: progress.repaired ?? new Set(),
  });
}

/** The removal driven by `id` once pulled: its repair step, then every unit of it repaired. */
function repairedAll(w: World, id: string): DriveStep {
  const step = drive(w, id, { pulled: true });
  if (step.kind !== 'repair') throw new Error(`not a repair step: ${JSON.stringify(step.kind)}`);
  return drive(w, id, { pulled: true, repaired: new Set(step.units.map(unitKey)) });
}

/** Start a decommission of `id` in `w` and let every member see it. */
function leaving(w: World, id: string): string {
  const r = decommission(w, id);
  if (r.kind !== 'start') throw new Error(`not started: ${JSON.stringify(r)}`);
  w.apply(id, r.update);
  w.agree();
  return r.move;
}

/** `by` starts removing `target` (down) and every member sees it. */
function removing(w: World, by: string, target: string): string {
  w.node(target).up = false;
  const r = remove(w, by, target);
  if (r.kind !== 'start') throw new Error(`not started: ${JSON.stringify(r)}`);
  w.apply(by, r.update);
  w.agree();
  return r.move;
}

describe('a decommission request', () => {
  it('starts on a normal member with nothing moving: status leaving, a new move id, its heirs gossiped', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    const r = decommission(w, 'b', '0f0f');
    expect(r).toMatchObject({ kind: 'start', move: 'leave-b-0f0f', warning: undefined });
    if (r.kind !== 'start') return;
    expect(r.update.persist).toMatchObject({ status: 'leaving', move: 'leave-b-0f0f' });
    expect(r.update.gossip.status).toBe('leaving');
    // Every token of b has a heir among the others.
    const heirs = parseHeirs(r.update.gossip.heirs!)!.get('b')!;
    expect([...heirs.keys()].sort()).toEqual([...w.node('b').me.tokens!].sort());
    expect(new Set(heirs.values()).has('b')).toBe(false);
    w.apply('b', r.update);
    expect(w.view().movements).toEqual([{ kind: 'leave', node: 'b', driver: 'b' }]);
    expect(w.view().target!.has('b')).toBe(false);
  });

  it('asked again while leaving: the same move', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    const move = leaving(w, 'b');
    expect(decommission(w, 'b', 'ff')).toEqual({ kind: 'already', move });
  });

  it('is refused for a member not normal, while another change is in progress, and for the last member; warns below N', () => {
    const w = World.of(['a', 'b', 'c', 'd'], ['j']);
    expect(decommission(w, 'j')).toMatchObject({
      kind: 'refuse',
      message: expect.stringMatching(/j is joining, not normal/),
    });
    leaving(w, 'c');
    expect(decommission(w, 'b')).toMatchObject({
      kind: 'refuse',
      message: expect.stringMatching(/c is leaving: one topology change at a time/),
    });
    expect(decommission(World.of(['a']), 'a')).toMatchObject({
      kind: 'refuse',
      message: 'a is the last member: a cluster needs at least one',
    });
    expect(decommission(World.of(['a', 'b', 'c']), 'a')).toMatchObject({
      kind: 'start',
      warning: expect.stringMatching(/2 members, fewer than N=3/),
    });
  });

  it('cancelled: normal again, its heirs entry withdrawn; refused when not leaving', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    expect(cancelDecommission('b', w.node('b').me)).toMatchObject({
      kind: 'refuse',
      message: expect.stringMatching(/b is normal, not leaving/),
    });
    leaving(w, 'b');
    const r = cancelDecommission('b', w.node('b').me);
    expect(r).toEqual({
      kind: 'withdraw',
      update: { persist: { status: 'normal', move: undefined, heirs: '' }, gossip: { status: 'normal', heirs: '' } },
    });
    if (r.kind === 'withdraw') w.apply('b', r.update);
    expect(w.view().movements).toEqual([]);
    expect(drive(w, 'b')).toEqual({ kind: 'idle' });
  });
});

describe('a removal request', () => {
  it('starts for a dead owner: removing and heirs gossiped by the remover, a removal movement in every view', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    w.node('d').up = false;
    const r = remove(w, 'a', 'd', '12');
    expect(r).toMatchObject({ kind: 'start', move: 'remove-d-12' });
    if (r.kind !== 'start') return;
    expect(r.update.persist).toMatchObject({ removing: 'd', move: 'remove-d-12' });
    expect(parseHeirs(r.update.gossip.heirs!)!.has('d')).toBe(true);
    w.apply('a', r.update);
    expect(w.view().movements).toEqual([{ kind: 'remove', node: 'd', driver: 'a' }]);
    expect(remove(w, 'a', 'd', '34')).toEqual({ kind: 'already', move: 'remove-d-12' });
  });

  it('is refused for itself, an up node, a non-member, a node that left, from a member not normal, and while another change runs', () => {
    const w = World.of(['a', 'b', 'c', 'd', 'e'], ['j']);
    expect(remove(w, 'a', 'a')).toMatchObject({
      kind: 'refuse',
      message: expect.stringMatching(/a cannot remove itself/),
    });
    expect(remove(w, 'a', 'b')).toMatchObject({
      kind: 'refuse',
      message: expect.stringMatching(/b is up: decommission it \(ringkv decommission --node b:1\)/),
    });
    expect(
      requestRemoval({
        self: 'a',
        me: w.node('a').me,
        view: w.view(),
        replicas: N,
        nonce: '1',
        target: 'zz',
        state: undefined,
        up: false,
      }),
    ).toMatchObject({ kind: 'refuse', message: 'zz is not a member of this cluster (see ringkv status)' });
    w.set('e', { status: 'left' });
    w.node('e').up = false;
    expect(remove(w, 'a', 'e')).toMatchObject({ kind: 'refuse', message: expect.stringMatching(/e is not a member/) });
    w.node('b').up = false;
    expect(remove(w, 'j', 'b')).toMatchObject({
      kind: 'refuse',
      message: expect.stringMatching(/j is joining: ask a normal member to remove b/),
    });
    leaving(w, 'c');
    expect(remove(w, 'a', 'b')).toMatchObject({
      kind: 'refuse',
      message: expect.stringMatching(/c is leaving: one topology change at a time/),
    });
  });

  it('a joiner that never owned anything is marked removed at once: nothing moves', () => {
    const w = World.of(['a', 'b', 'c'], ['j']);
    w.node('j').up = false;
    const r = remove(w, 'a', 'j');
    expect(r).toEqual({ kind: 'removed', update: { persist: { removed: ['j'] }, gossip: { removed: 'j' } } });
    if (r.kind === 'removed') w.apply('a', r.update);
    expect(w.view().removed.has('j')).toBe(true);
    expect(w.view().movements).toEqual([]);
  });

  it('takes over the leave of a node that died while leaving', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    leaving(w, 'd');
    w.node('d').up = false;
    const r = remove(w, 'a', 'd');
    expect(r.kind).toBe('start');
    if (r.kind === 'start') w.apply('a', r.update);
    // The removal replaces the leave as the movement of d (ring-view.ts: removals first).
    expect(w.view().movements).toEqual([{ kind: 'remove', node: 'd', driver: 'a' }]);
  });
});

describe('driving a decommission', () => {
  it('waits until every live coordinator gossips the view, pulls, hands over hints until none are left, then goes left', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    const r = decommission(w, 'b');
    if (r.kind !== 'start') throw new Error('not started');
    w.apply('b', r.update);
    expect(drive(w, 'b')).toMatchObject({
      kind: 'wait',
      reason: expect.stringMatching(/waiting for a to see the change/),
    });
    // A member that is down does not hold it up.
    w.node('a').up = false;
    w.set('b', { topo: w.view().hash });
    w.set('c', { topo: w.view().hash });
    w.set('d', { topo: w.view().hash });
    expect(drive(w, 'b')).toEqual({ kind: 'pull', movement: { kind: 'leave', node: 'b', driver: 'b' }, move: r.move });
    expect(drive(w, 'b', { pulled: true })).toEqual({ kind: 'hand-over-hints', hintsLeft: undefined });
    expect(drive(w, 'b', { pulled: true, hintsLeft: 4 })).toEqual({ kind: 'hand-over-hints', hintsLeft: 4 });
    const left = drive(w, 'b', { pulled: true, hintsLeft: 0 });
    expect(left).toEqual({
      kind: 'left',
      move: r.move,
      update: { persist: { status: 'left', move: undefined }, gossip: { status: 'left' } },
    });
    if (left.kind === 'left') w.apply('b', left.update);
    // Gone: its tokens are its heirs' in every view, and it drives nothing.
    const v = w.view();
    expect(v.ring!.has('b')).toBe(false);
    expect(v.ring!.tokens.length).toBe(4 * 8);
    expect(drive(w, 'b')).toEqual({ kind: 'idle' });
  });

  it('withdraws when another change that started at the same moment goes first', () => {
    const w = World.of(['a', 'b', 'c', 'd', 'e']);
    // Both decided on the same view: c's decommission, and e's removal of a (dead).
    w.node('a').up = false;
    const r = decommission(w, 'c');
    const rm = remove(w, 'e', 'a');
    if (r.kind !== 'start' || rm.kind !== 'start') throw new Error('not started');
    w.apply('c', r.update);
    w.apply('e', rm.update);
    // Operator changes go by node id: the removal of a goes first.
    w.agree();
    const s = drive(w, 'c');
    expect(s).toMatchObject({
      kind: 'withdraw',
      reason: expect.stringMatching(/a is being removed by e started at the same moment and goes first/),
    });
    expect(drive(w, 'e')).toMatchObject({
      kind: 'wait',
      reason: expect.stringMatching(/waiting for c is leaving to withdraw/),
    });
    if (s.kind === 'withdraw') w.apply('c', s.update);
    expect(w.node('c').me).toMatchObject({ status: 'normal', move: undefined });
    w.agree();
    expect(drive(w, 'e')).toMatchObject({ kind: 'pull', move: rm.move });
  });
});

describe('driving a removal', () => {
  it('pulls once every live member sees it, repairs, then marks the node removed and clears removing in one update', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    const move = removing(w, 'a', 'd');
    expect(drive(w, 'a')).toEqual({ kind: 'pull', movement: { kind: 'remove', node: 'd', driver: 'a' }, move });
    const done = repairedAll(w, 'a');
    expect(done).toMatchObject({
      kind: 'removed',
      peer: 'd',
      move,
      update: {
        persist: { removed: ['d'], removing: undefined, move: undefined },
        gossip: { removed: 'd', removing: '' },
      },
    });
    if (done.kind === 'removed') w.apply('a', done.update);
    expect(w.view().removed.has('d')).toBe(true);
    expect(w.view().movements).toEqual([]);
    expect(drive(w, 'a')).toEqual({ kind: 'idle' });
  });

  it('repairs once pulled: every unit the dead node replicated or could stand in for, then those of its hinted targets; resumes with what was recorded', () => {
    const w = World.of(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
    const move = removing(w, 'a', 'e');
    const first = drive(w, 'a', { pulled: true });
    if (first.kind !== 'repair') throw new Error(`not a repair step: ${first.kind}`);
    expect(first.move).toBe(move);
    expect(first.total).toBe(first.units.length);
    const target = w.view().target!;
    for (const u of first.units) {
      expect(u.replicas).toEqual(target.replicasForToken(u.end, N));
      expect(u.replicas).not.toContain('e');
    }
    // Not yet pulled: no repair.
    expect(drive(w, 'a', { pulled: false })).toMatchObject({ kind: 'pull' });
    // The dead node's last gossiped hinted field adds its targets' units.
    w.set('e', { hinted: 'b' });
    const hinted = drive(w, 'a', { pulled: true });
    if (hinted.kind !== 'repair') throw new Error('not a repair step');
    const ofB = target.ranges(N).filter((r) => r.replicas.includes('b'));
    expect(hinted.total).toBeGreaterThan(first.total);
    for (const r of ofB) expect(hinted.units.some((u) => u.end === r.end)).toBe(true);
    // Half recorded (as removal-repair.json keeps them): the rest is pending, of the same total.
    const half = new Set(hinted.units.slice(0, Math.floor(hinted.units.length / 2)).map(unitKey));
    const rest = drive(w, 'a', { pulled: true, repaired: half });
    expect(rest).toMatchObject({ kind: 'repair', move, total: hinted.total });
    if (rest.kind === 'repair') expect(rest.units.map(unitKey)).toEqual(hinted.units.slice(half.size).map(unitKey));
    // A restart of the driver pulls again (resumable), then goes on from what was recorded.
    w.restart('a');
    w.agree();
    expect(drive(w, 'a', { repaired: half })).toMatchObject({ kind: 'pull', move });
    expect(drive(w, 'a', { pulled: true, repaired: half })).toMatchObject({
      kind: 'repair',
      units: rest.kind === 'repair' ? rest.units : [],
    });
    const all = new Set(hinted.units.map(unitKey));
    expect(drive(w, 'a', { pulled: true, repaired: all })).toMatchObject({ kind: 'removed', peer: 'e', move });
  });

  it('repairs each N class in use', () => {
    const w = World.of(['a', 'b', 'c', 'd', 'e']);
    removing(w, 'a', 'e');
    const step = drive(w, 'a', { pulled: true, classes: [1, N] });
    if (step.kind !== 'repair') throw new Error('not a repair step');
    expect(new Set(step.units.map((u) => u.n))).toEqual(new Set([1, N]));
    expect(step.units.filter((u) => u.n === 1).every((u) => u.replicas.length === 1)).toBe(true);
  });

  it('done at once when its subject stopped being an owner meanwhile (another member removed it)', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    removing(w, 'a', 'd');
    w.set('b', { removed: 'd' });
    expect(drive(w, 'a')).toMatchObject({
      kind: 'removed',
      peer: 'd',
      update: { persist: { removing: undefined, move: undefined } },
    });
  });
});

describe('a node killed in the middle resumes from node.json and the gossiped view', () => {
  it('restarted while leaving, before any pull: it waits for the members to see its new generation, then pulls under the same move id', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    const move = leaving(w, 'b');
    w.restart('b');
    // Its new generation is a new view: it waits until every live member gossips it.
    expect(drive(w, 'b')).toMatchObject({
      kind: 'wait',
      reason: expect.stringMatching(/waiting for a to see the change/),
    });
    w.agree();
    expect(drive(w, 'b')).toEqual({ kind: 'pull', movement: { kind: 'leave', node: 'b', driver: 'b' }, move });
  });

  it('restarted with its pulls half done: asks every gainer again under the same move (their checkpoints resume), then hands over hints', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    const move = leaving(w, 'b');
    expect(drive(w, 'b', { pulled: false })).toMatchObject({ kind: 'pull', move });
    w.restart('b'); // this run's progress (pulled) is lost; node.json still says leaving
    w.agree();
    expect(drive(w, 'b', { pulled: false })).toMatchObject({ kind: 'pull', move });
    expect(drive(w, 'b', { pulled: true })).toEqual({ kind: 'hand-over-hints', hintsLeft: undefined });
  });

  it('restarted after its pulls, with hints not yet handed over: pulls again (checkpoints: nothing to stream), hands over, then goes left', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    const move = leaving(w, 'b');
    w.restart('b');
    w.agree();
    expect(drive(w, 'b', { pulled: false })).toMatchObject({ kind: 'pull', move });
    expect(drive(w, 'b', { pulled: true, hintsLeft: 0 })).toMatchObject({ kind: 'left', move });
  });

  it('killed between persisting left and gossiping it: starts gossiping left, drives nothing, owns nothing', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    leaving(w, 'b');
    const left = drive(w, 'b', { pulled: true, hintsLeft: 0 });
    if (left.kind !== 'left') throw new Error('not left');
    w.node('b').me = { ...w.node('b').me, ...left.update.persist }; // persisted, not gossiped
    w.restart('b');
    expect(w.node('b').state.fields.get('status')?.value).toBe('left');
    expect(w.view().ring!.has('b')).toBe(false);
    expect(drive(w, 'b')).toEqual({ kind: 'idle' });
  });

  it('a remover restarted mid-removal resumes it; one killed between its final persist and gossip gossips the removal at start', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    const move = removing(w, 'a', 'd');
    w.restart('a');
    expect(w.view().movements).toEqual([{ kind: 'remove', node: 'd', driver: 'a' }]);
    expect(drive(w, 'a')).toMatchObject({ kind: 'wait' });
    w.agree();
    expect(drive(w, 'a')).toMatchObject({ kind: 'pull', move });
    const done = repairedAll(w, 'a');
    if (done.kind !== 'removed') throw new Error('not removed');
    w.node('a').me = { ...w.node('a').me, ...done.update.persist };
    w.restart('a');
    expect(w.view().removed.has('d')).toBe(true);
    expect(w.view().movements).toEqual([]);
    expect(drive(w, 'a')).toEqual({ kind: 'idle' });
  });

  it('a leaver that died is removed by another member, which takes over its leave and its heirs', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    leaving(w, 'd');
    const heirs = parseHeirs(w.node('d').me.heirs)!.get('d')!;
    const move = removing(w, 'a', 'd');
    expect(drive(w, 'a')).toMatchObject({ kind: 'pull', move });
    const done = repairedAll(w, 'a');
    if (done.kind === 'removed') w.apply('a', done.update);
    // The leaver's own heirs entry wins (ring-view.ts): its tokens went where its leave streamed to.
    const ring = w.view().ring!;
    for (const [t, heir] of heirs) expect(ring.member(heir)!.tokens).toContain(t);
  });
});

describe('heirs bookkeeping', () => {
  it("once a leaver is gone, each heir takes its inherited tokens as its own, and the leaver's entry is dropped once held", () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    removing(w, 'a', 'd');
    const done = repairedAll(w, 'a');
    if (done.kind === 'removed') w.apply('a', done.update);
    expect(
      settleHeirs({ self: 'a', me: w.node('a').me, view: w.view(), states: w.states() })?.update.persist.heirs,
    ).toBeUndefined();
    for (const id of ['a', 'b', 'c']) {
      const s = settleHeirs({ self: id, me: w.node(id).me, view: w.view(), states: w.states() });
      if (s === undefined) continue;
      expect(s.gained).toBeGreaterThan(0);
      w.apply(id, s.update);
    }
    expect(w.view().ring!.tokens.length).toBe(3 * 8 + 8);
    // Every token of d is now in an owner's own tokens: a's entry for d is settled.
    const s = settleHeirs({ self: 'a', me: w.node('a').me, view: w.view(), states: w.states() });
    expect(s?.update).toEqual({ persist: { heirs: '' }, gossip: { heirs: '' } });
    if (s) w.apply('a', s.update);
    expect(settleHeirs({ self: 'a', me: w.node('a').me, view: w.view(), states: w.states() })).toBeUndefined();
  });

  it("heirsWith sets and withdraws one subject's entry, keeping the others", () => {
    const one = heirsWith('', 'x', new Map([[5n, 'a']]));
    const two = heirsWith(one, 'y', new Map([[6n, 'b']]));
    expect([...parseHeirs(two)!.keys()].sort()).toEqual(['x', 'y']);
    expect(heirsWith(two, 'x', undefined)).toBe(heirsWith('', 'y', new Map([[6n, 'b']])));
  });
});

describe('a replacer elsewhere', () => {
  it('is refused, saying where to start it: in another zone or rack it would move ranges nobody streams', () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    w.node('d').up = false;
    w.add('x', 'joining', undefined);
    w.agree();
    const claim = (zone: string, rack: string) =>
      joinStep(w, { self: { id: 'x', zone, rack, weight: 1 }, replaces: 'd' });
    expect(claim('z2', '')).toMatchObject({
      kind: 'fail',
      message: expect.stringMatching(
        /cannot replace d: it was in zone "", rack "", and this node is in zone "z2".*start it with --zone "" --rack ""/,
      ),
    });
    expect(claim('', 'r1')).toMatchObject({ kind: 'fail' });
    expect(claim('', '')).toMatchObject({ kind: 'claim', tokens: w.node('d').me.tokens });
  });
});

describe('a replacer leaving later', () => {
  it("keeps the node it replaced out of the ring: its normal step names it, and it joins the replacer's removed", () => {
    const w = World.of(['a', 'b', 'c', 'd']);
    w.node('d').up = false;
    // x replaces d: it claims d's tokens and streams (cluster/join.ts), then turns normal.
    w.add('x', 'joining', undefined);
    const tokens = [...w.node('d').me.tokens!];
    w.node('x').me = { ...w.node('x').me, tokens, move: 'join-x-1' };
    w.set('x', { replaces: 'd', tokens: w.node('d').state.fields.get('tokens')!.value });
    w.agree();
    const step = joinStep(w, { tokens, tokensAgeMs: 1e6, streamed: true, replaces: 'd' });
    expect(step).toMatchObject({ kind: 'normal', replaced: 'd' });
    // What node/topology/joining.ts does with it.
    w.apply('x', {
      persist: { status: 'normal', move: undefined, removed: ['d'] },
      gossip: { removed: 'd', status: 'normal' },
    });
    w.agree();
    expect(w.view().ring!.has('x')).toBe(true);
    expect(w.view().removed.has('d')).toBe(true);
    // x decommissions: d, dead with x's old tokens in its last state, stays out.
    const move = leaving(w, 'x');
    expect(w.view().movements).toEqual([{ kind: 'leave', node: 'x', driver: 'x' }]);
    expect(w.view().ring!.has('d')).toBe(false);
    expect(drive(w, 'x')).toMatchObject({ kind: 'pull', move });
    const left = drive(w, 'x', { pulled: true, hintsLeft: 0 });
    if (left.kind === 'left') w.apply('x', left.update);
    expect(w.view().ring!.members.map((m) => m.id)).toEqual(['a', 'b', 'c']);
    expect(w.view().removed.has('d')).toBe(true);
  });
});

describe('a joiner whose disk is too small', () => {
  it('does not claim tokens while its share of the data is more than its disk takes, and says why; it claims once there is room', () => {
    const w = World.of(['a', 'b', 'c']);
    for (const id of ['a', 'b', 'c']) w.set(id, { load: String(300 * 2 ** 20) });
    w.add('x', 'joining', undefined);
    w.agree();
    const step = (room: number | undefined, replaces?: string) =>
      joinStep(w, { room, ...(replaces ? { replaces } : {}) });
    // Three owners of 300 MiB each, shared with a fourth: about 225 MiB.
    expect(step(100 * 2 ** 20)).toEqual({
      kind: 'wait',
      reason: expect.stringMatching(
        /^not enough disk to join: this node would take about 225\.0 MiB .*takes 100\.0 MiB more before it refuses writes \(--min-free-disk\)\. Free space or give it a larger disk/,
      ),
    });
    expect(step(300 * 2 ** 20)).toMatchObject({ kind: 'claim' });
    expect(step(undefined)).toMatchObject({ kind: 'claim' }); // not known yet: no reason to wait
    // A replacer takes its dead node's load.
    w.node('c').up = false;
    expect(step(250 * 2 ** 20, 'c')).toMatchObject({
      kind: 'wait',
      reason: expect.stringMatching(/about 300\.0 MiB \(c's load\)/),
    });
  });
});
