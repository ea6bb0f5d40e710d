import { describe, expect, it } from 'vitest';
import { claimRing } from '../../../src/ring/index.js';
import { PlanError, planChanges } from '../../../src/cluster/staged-plan.js';

const ring = claimRing(
  ['a', 'b', 'c', 'd'].map((id) => ({ id })),
  3,
  { tokensPerNode: 16 },
);
const load = (id: string) => ({ bytes: 1_000_000, keys: id === 'a' ? 1000 : 750 });

describe('staged plans', () => {
  it('a join: moves into the newcomer only, estimates from the sources, ownership before and after', () => {
    const p = planChanges(ring, [{ kind: 'join', node: 'e', zone: '', rack: '', weight: 1 }], 3, load);
    expect(p.steps).toHaveLength(1);
    const moves = p.steps[0]!.moves;
    expect(moves.every((m) => m.to === 'e')).toBe(true);
    const share = moves.reduce((s, m) => s + m.share, 0);
    expect(share).toBeCloseTo(p.ownership.find((o) => o.node === 'e')!.after, 9);
    // A source's estimate is its load times the part of its ownership that moves.
    const owned = ring.ownership(3);
    for (const m of moves) expect(m.bytes).toBe(Math.round((1_000_000 * m.share) / owned.get(m.from)!));
    expect(p.ownership.find((o) => o.node === 'e')!.before).toBe(0);
    expect(p.after!.has('e')).toBe(true);
  });

  it('steps apply in order: a leave after a join plans on the ring with the joiner', () => {
    const p = planChanges(
      ring,
      [
        { kind: 'join', node: 'e', zone: '', rack: '', weight: 1 },
        { kind: 'leave', node: 'a' },
      ],
      3,
      load,
    );
    expect(p.steps[1]!.moves.every((m) => m.from === 'a')).toBe(true);
    expect(p.ownership.find((o) => o.node === 'a')!.after).toBe(0);
    expect(p.after!.has('a')).toBe(false);
  });

  it('a removed node is dead: its ranges come from a replica that keeps them', () => {
    const p = planChanges(ring, [{ kind: 'remove', node: 'b' }], 3, load);
    expect(p.steps[0]!.moves.length).toBeGreaterThan(0);
    expect(p.steps[0]!.moves.some((m) => m.from === 'b')).toBe(false);
  });

  it("with buckets of several n: each class's ranges move, a source's load spread over its ownership summed over the classes", () => {
    const join = [{ kind: 'join' as const, node: 'e', zone: '', rack: '', weight: 1 }];
    const one = planChanges(ring, join, 3, load);
    const many = planChanges(ring, join, 3, load, [1, 3]);
    const sum = (p: typeof one): { share: number; keys: number; ranges: number } =>
      p.steps[0]!.moves.reduce(
        (s, m) => ({ share: s.share + m.share, keys: s.keys + m.keys, ranges: s.ranges + m.ranges }),
        { share: 0, keys: 0, ranges: 0 },
      );
    // e gains its n=3 ranges and its n=1 ranges: the shares add up.
    expect(sum(many).share).toBeCloseTo(sum(one).share + many.after!.ownership(1).get('e')!, 9);
    expect(sum(many).ranges).toBeGreaterThan(sum(one).ranges);
    // Each source's keys moved stay within its load: the classes share it.
    for (const m of many.steps[0]!.moves) expect(m.keys).toBeLessThanOrEqual(load(m.from).keys);
    const owned = (id: string): number => ring.ownership(1).get(id)! + ring.ownership(3).get(id)!;
    for (const m of many.steps[0]!.moves) expect(m.bytes).toBe(Math.round((1_000_000 * m.share) / owned(m.from)));
    // Ownership is reported for the cluster's N either way.
    expect(many.ownership).toEqual(one.ownership);
  });

  it('refuses what cannot be: a join of an owner, a leave of a non-owner, the last owner', () => {
    expect(() => planChanges(ring, [{ kind: 'join', node: 'a', zone: '', rack: '', weight: 1 }], 3, load)).toThrow(
      PlanError,
    );
    expect(() => planChanges(ring, [{ kind: 'leave', node: 'z' }], 3, load)).toThrow(/z is not an owner/);
    expect(() => planChanges(claimRing([{ id: 'a' }], 3), [{ kind: 'leave', node: 'a' }], 3, load)).toThrow(
      /last owner/,
    );
  });
});
