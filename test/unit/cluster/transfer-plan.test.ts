import { describe, expect, it } from 'vitest';
import { claimRing, joinRing } from '../../../src/ring/index.js';
import { chooseSource, planTransfers, pullSources, transferShare } from '../../../src/cluster/transfer-plan.js';

const ring = claimRing(
  ['a', 'b', 'c', 'd'].map((id) => ({ id })),
  3,
  { tokensPerNode: 8 },
);

describe('transfer plans', () => {
  it('a join: the newcomer gains exactly its ranges, each from the replica it replaces there', () => {
    const after = joinRing(ring, { id: 'e' }, 3);
    const plan = planTransfers(ring, after, 3);
    expect(plan.length).toBeGreaterThan(0);
    for (const t of plan) {
      expect(t.to).toBe('e');
      const before = ring.replicasForToken(t.end, 3);
      const now = after.replicasForToken(t.end, 3);
      expect(t.leaver).toBe(before.find((x) => !now.includes(x)));
      expect(t.sources[0]).toBe(t.leaver);
      expect(new Set(t.sources)).toEqual(new Set(before));
    }
    // Exactly e's share moves: the plan's ranges add up to e's replicated ownership.
    const moved = plan.reduce((s, t) => s + transferShare(t), 0);
    expect(moved).toBeCloseTo(after.ownership(3).get('e')!, 9);
  });

  it('a leave: every range of the leaver goes to one heir, from the leaver first', () => {
    const after = ring.withoutMember('b');
    const plan = planTransfers(ring, after, 3);
    for (const t of plan) {
      expect(t.leaver).toBe('b');
      expect(t.to).not.toBe('b');
    }
    expect(plan.reduce((s, t) => s + transferShare(t), 0)).toBeCloseTo(ring.ownership(3).get('b')!, 9);
  });

  it('a join into a cluster smaller than N adds the newcomer to every range, from anyone', () => {
    const two = claimRing([{ id: 'a' }, { id: 'b' }], 3, { tokensPerNode: 4 });
    const plan = planTransfers(two, joinRing(two, { id: 'c' }, 3), 3);
    expect(plan.reduce((s, t) => s + transferShare(t), 0)).toBeCloseTo(1, 9);
    for (const t of plan) expect(t.leaver).toBeUndefined();
  });

  it('no current ring or no change: nothing to move; the source is the first that is up', () => {
    expect(planTransfers(undefined, ring, 3)).toEqual([]);
    expect(planTransfers(ring, ring, 3)).toEqual([]);
    const t = { start: 0n, end: 1n, to: 'e', leaver: 'b', sources: ['b', 'a', 'c'] };
    expect(chooseSource(t, () => true)).toBe('b');
    expect(chooseSource(t, (id) => id !== 'b')).toBe('a');
    expect(chooseSource(t, () => false)).toBeUndefined();
  });

  it('pull sources: the leaver, then every replica that stays; a range with no other replica (n=1) waits for its leaver, and is done with nothing once it is gone for good', () => {
    const t = { sources: ['b', 'a', 'c'] };
    expect(pullSources(t, true, 0, 60_000)).toEqual([['b'], ['a', 'c']]);
    expect(pullSources(t, false, 1000, 60_000)).toEqual([]);
    expect(pullSources(t, false, 60_000, 60_000)).toEqual([['a', 'c']]);
    expect(pullSources({ ...t, leaverGone: true }, false, 0, 60_000)).toEqual([['a', 'c']]);
    const alone = { sources: ['b'] };
    expect(pullSources(alone, true, 0, 60_000)).toEqual([['b'], []]);
    expect(pullSources(alone, false, 10 * 60_000, 60_000)).toEqual([]); // only down: its copy is the only one, wait
    expect(pullSources({ ...alone, leaverGone: true }, false, 0, 60_000)).toEqual([[]]); // gone: nothing left
  });
});
