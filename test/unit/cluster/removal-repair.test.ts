import { describe, expect, it } from 'vitest';
import { removalRepairUnits, unitRefusal } from '../../../src/cluster/removal-repair.js';
import { claimRing, leaveHeirs, tokenHex, unitKey, type RangeUnit, type Ring } from '../../../src/ring/index.js';
import { targetsWithFallbacks } from '../../../src/ring/fallbacks.js';

const N = 3;

function rings(ids: string[], dead: string, zones: Record<string, string> = {}): { before: Ring; after: Ring } {
  const before = claimRing(
    ids.map((id) => ({ id, zone: zones[id] ?? '' })),
    N,
    { tokensPerNode: 8 },
  );
  return { before, after: before.withoutMember(dead, leaveHeirs(before, dead, N)) };
}

const ends = (units: readonly RangeUnit[]): Set<bigint> => new Set(units.map((u) => u.end));

/** Ranges (by end) where `dead` is a fallback for some set of its down primaries, every other node up (ring/fallbacks.ts). */
function fallbackRanges(before: Ring, dead: string, n: number): Set<bigint> {
  const out = new Set<bigint>();
  for (const r of before.ranges(n)) {
    if (r.replicas.includes(dead)) continue;
    for (let mask = 1; mask < 1 << r.replicas.length; mask++) {
      const down = new Set(r.replicas.filter((_, i) => mask & (1 << i)));
      const t = targetsWithFallbacks(
        r.replicas,
        before.walk(r.end),
        (id) => before.member(id)!.zone,
        (id) => !down.has(id),
      );
      if (t.some((x) => x.id === dead)) out.add(r.end);
    }
  }
  return out;
}

describe('removalRepairUnits', () => {
  it('4 nodes, N=3: every range (the dead node replicated it or is the one node left to stand in), with its replicas once it is gone', () => {
    const { before, after } = rings(['a', 'b', 'c', 'd'], 'd');
    const units = removalRepairUnits({ before, after }, 'd', [], [N]);
    expect(units.map((u) => u.end)).toEqual(after.ranges(N).map((r) => r.end));
    for (const u of units) {
      expect(u.replicas).toEqual(after.replicasForToken(u.end, N));
      expect(u.replicas).not.toContain('d');
      expect(u.n).toBeUndefined();
    }
  });

  it('8 nodes: the ranges the dead node replicated and those it could stand in for with any of their primaries down, not the others', () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const { before, after } = rings(ids, 'e');
    const units = ends(removalRepairUnits({ before, after }, 'e', [], [N]));
    const replicated = before
      .ranges(N)
      .filter((r) => r.replicas.includes('e'))
      .map((r) => after.rangeOf(r.end).end);
    for (const end of replicated) expect(units.has(end), `a range e replicated (${tokenHex(end)})`).toBe(true);
    const fallback = fallbackRanges(before, 'e', N);
    expect(fallback.size).toBeGreaterThan(0);
    for (const end of fallback)
      expect(units.has(after.rangeOf(end).end), `a range e could stand in for (${tokenHex(end)})`).toBe(true);
    // Not every range: some are far from e in every walk.
    expect(units.size).toBeLessThan(after.ranges(N).length);
    expect(units.size).toBe(new Set([...replicated, ...[...fallback].map((t) => after.rangeOf(t).end)]).size);
  });

  it("zones: a fallback in a down primary's zone is preferred, and that range is a unit", () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
    const zones = Object.fromEntries(ids.map((id, i) => [id, `z${i % 3}`]));
    const { before, after } = rings(ids, 'i', zones);
    const units = ends(removalRepairUnits({ before, after }, 'i', [], [N]));
    const fallback = fallbackRanges(before, 'i', N);
    expect(fallback.size).toBeGreaterThan(0);
    for (const end of fallback) expect(units.has(after.rangeOf(end).end)).toBe(true);
  });

  it("zones fewer than N: a zone's second fallback is a unit when it has two primaries", () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const zones = Object.fromEntries(ids.map((id, i) => [id, `z${i % 2}`]));
    for (const dead of ['a', 'd', 'g']) {
      const { before, after } = rings(ids, dead, zones);
      const units = ends(removalRepairUnits({ before, after }, dead, [], [N]));
      const fallback = fallbackRanges(before, dead, N);
      expect(fallback.size).toBeGreaterThan(0);
      for (const end of fallback)
        expect(units.has(after.rangeOf(end).end), `${dead} could stand in for ${tokenHex(end)}`).toBe(true);
    }
  });

  it("every range a node named in the dead node's hinted field replicates is a unit too", () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    const { before, after } = rings(ids, 'e');
    const without = ends(removalRepairUnits({ before, after }, 'e', [], [N]));
    const withHints = ends(removalRepairUnits({ before, after }, 'e', ['a', 'e', 'zz'], [N]));
    const ofA = after
      .ranges(N)
      .filter((r) => r.replicas.includes('a'))
      .map((r) => r.end);
    for (const end of ofA) expect(withHints.has(end)).toBe(true);
    expect(withHints).toEqual(new Set([...without, ...ofA]));
  });

  it("once per N class, each with that class's replicas; keys carry the class", () => {
    const { before, after } = rings(['a', 'b', 'c', 'd', 'e'], 'b');
    const units = removalRepairUnits({ before, after }, 'b', [], [1, 3]);
    const one = units.filter((u) => u.n === 1);
    const three = units.filter((u) => u.n === 3);
    expect(one.length + three.length).toBe(units.length);
    for (const u of one) expect(u.replicas).toEqual(after.replicasForToken(u.end, 1));
    for (const u of three) expect(u.replicas).toEqual(after.replicasForToken(u.end, 3));
    // n=1: the ranges b was the only replica of are units (their heir pulled nothing from anyone else).
    for (const r of before.ranges(1).filter((x) => x.replicas[0] === 'b'))
      expect(one.some((u) => u.end === after.rangeOf(r.end).end)).toBe(true);
    expect(unitKey(one[0]!)).toMatch(/^[0-9a-f]{16}-[0-9a-f]{16}\/n1$/);
    expect(unitKey({ start: 1n, end: 2n })).toBe('0000000000000001-0000000000000002');
    expect(new Set(units.map(unitKey)).size).toBe(units.length);
  });

  it('nothing when the node is not on the ring before, or no ring is left after', () => {
    const { before, after } = rings(['a', 'b', 'c', 'd'], 'd');
    expect(removalRepairUnits({ before: after, after }, 'd', [], [N])).toEqual([]);
    expect(removalRepairUnits({ before, after: undefined }, 'd', [], [N])).toEqual([]);
  });
});

describe("unitRefusal (a replica asked to repair a removal's unit)", () => {
  it('accepts a range of its ring with itself among the replicas named; refuses anything else, saying why', () => {
    const { after } = rings(['a', 'b', 'c', 'd', 'e'], 'e');
    const r = after.ranges(N)[0]!;
    const self = r.replicas[1]!;
    const outsider = after.members.map((m) => m.id).find((x) => !r.replicas.includes(x))!;
    expect(unitRefusal(after, self, r, N)).toBeUndefined();
    expect(unitRefusal(after, self, { ...r, replicas: [...r.replicas].reverse() }, N)).toBeUndefined();
    expect(unitRefusal(undefined, self, r, N)).toMatch(/owns no ranges/);
    expect(unitRefusal(after, 'e', r, N)).toMatch(/e owns no ranges/);
    expect(unitRefusal(after, outsider, { ...r, replicas: r.replicas }, N)).toMatch(
      new RegExp(`${outsider} is not a replica of \\(`),
    );
    expect(unitRefusal(after, self, { ...r, start: r.start + 1n }, N)).toMatch(
      /is not a range of .*'s ring: the rings differ; retry once gossip settles/,
    );
    expect(unitRefusal(after, self, { ...r, replicas: [self, outsider, 'zz'] }, N)).toMatch(
      /the replicas of .* differ: .* the request names/,
    );
    // n=1: only the primary.
    expect(unitRefusal(after, r.replicas[0]!, { ...r, replicas: [r.replicas[0]!] }, 1)).toBeUndefined();
    expect(unitRefusal(after, self, { ...r, replicas: [r.replicas[0]!] }, 1)).toMatch(/is not a replica/);
  });
});
