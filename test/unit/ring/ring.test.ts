import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../src/ring/allocate-tokens.js';
import {
  Ring,
  RingError,
  arcFraction,
  balance,
  claimJoin,
  claimRing,
  fairShares,
  joinRing,
  leaveHeirs,
  leaveRing,
  tokenOf,
} from '../../../src/ring/index.js';
import type { Member } from '../../../src/ring/index.js';

/** The cluster's N the claims balance for (the store's default). */
const N = 3;

const at = (...tokens: number[]): bigint[] => tokens.map(BigInt);

function expectRingError(fn: () => unknown, code: string, message: RegExp): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(RingError);
    expect((e as RingError).code).toBe(code);
    expect((e as Error).message).toMatch(message);
    return;
  }
  throw new Error(`expected a RingError ${code}`);
}

describe('the seed write-ups, worked on a ring whose tokens sit at 0–99', () => {
  // 000: A = 10, B = 45, C = 80; a key belongs to the first node at or after it.
  const abc = Ring.build([
    { id: 'A', tokens: at(10) },
    { id: 'B', tokens: at(45) },
    { id: 'C', tokens: at(80) },
  ]);

  it('looks keys up clockwise, wrapping past the last token', () => {
    expect([7, 33, 52, 91, 45].map((h) => abc.replicasForToken(BigInt(h), 1)[0])).toEqual(['A', 'B', 'C', 'A', 'B']);
  });

  it('adding D at 60 moves only 46–60, from C to D', () => {
    const abcd = abc.withMember({ id: 'D', tokens: at(60) });
    expect(Ring.diff(abc, abcd, 1)).toEqual([{ start: 45n, end: 60n, before: ['C'], after: ['D'] }]);
  });

  it('removing B hands its range 11–45 to its clockwise successor C, and nothing else', () => {
    expect(Ring.diff(abc, abc.withoutMember('B'), 1)).toEqual([{ start: 10n, end: 45n, before: ['B'], after: ['C'] }]);
  });

  it('003: nodes at 20, 60, 90 and a newcomer at 40 take (20, 40] from 60: 20% of the ring', () => {
    const before = Ring.build([
      { id: '20', tokens: at(20) },
      { id: '60', tokens: at(60) },
      { id: '90', tokens: at(90) },
    ]);
    const after = before.withMember({ id: '40', tokens: at(40) });
    const owner = (r: Ring, h: number) => r.replicasForToken(BigInt(h), 1)[0];
    for (const h of [5, 20, 91, 99]) expect([owner(before, h), owner(after, h)]).toEqual(['20', '20']);
    for (const h of [21, 39, 40]) expect([owner(before, h), owner(after, h)]).toEqual(['60', '40']);
    for (const h of [41, 59, 60]) expect([owner(before, h), owner(after, h)]).toEqual(['60', '60']);
    for (const h of [61, 90]) expect([owner(before, h), owner(after, h)]).toEqual(['90', '90']);
    expect(Ring.diff(before, after, 1)).toEqual([{ start: 20n, end: 40n, before: ['60'], after: ['40'] }]);
  });

  it('replicas walk clockwise collecting distinct nodes', () => {
    const ring = Ring.build([
      { id: 'A', tokens: at(10, 55) },
      { id: 'B', tokens: at(41, 70) },
      { id: 'C', tokens: at(90) },
    ]);
    expect(ring.replicasForToken(30n, 2)).toEqual(['B', 'A']);
    expect(ring.replicasForToken(95n, 3)).toEqual(['A', 'B', 'C']);
    expect(ring.walk(30n)).toEqual(['B', 'A', 'C']);
  });

  it('diff joins a changed range that wraps past 2^64 − 1', () => {
    const before = Ring.build([
      { id: 'A', tokens: at(10) },
      { id: 'B', tokens: at(50) },
    ]);
    const after = before.withMember({ id: 'C', tokens: [5n, (1n << 64n) - 5n] });
    expect(Ring.diff(before, after, 1)).toEqual([{ start: 50n, end: 5n, before: ['A'], after: ['C'] }]);
  });
});

describe('placement', () => {
  const zones = ['a', 'b', 'c'];
  const members = (n: number, zoneCount = 3, rack = (_i: number) => ''): Member[] =>
    Array.from({ length: n }, (_, i) => ({ id: `n${i}`, zone: zones[i % zoneCount], rack: rack(i) }));

  it('puts the n replicas of every range in n distinct zones when there are n zones', () => {
    const ring = claimRing(members(12), N);
    for (const { replicas } of ring.ranges(3)) {
      expect(new Set(replicas.map((id) => ring.member(id)!.zone)).size).toBe(3);
    }
  });

  it('spreads 3 replicas over 2 zones as 2 + 1, and over racks inside a zone', () => {
    const ring = claimRing(
      members(8, 2, (i) => `r${Math.floor(i / 2) % 2}`),
      N,
    );
    for (const { replicas } of ring.ranges(3)) {
      const counts = new Map<string, number>();
      for (const id of replicas) counts.set(ring.member(id)!.zone, (counts.get(ring.member(id)!.zone) ?? 0) + 1);
      expect([...counts.values()].sort()).toEqual([1, 2]);
      // the two replicas in the same zone are on distinct racks
      const [zone2] = [...counts].find(([, c]) => c === 2)!;
      const racks = replicas.filter((id) => ring.member(id)!.zone === zone2).map((id) => ring.member(id)!.rack);
      expect(new Set(racks).size).toBe(2);
    }
  });

  it('follows the documented rule on a ring worked by hand', () => {
    // walk from 5: A(a/r1) B(a/r2) C(b) D(b) E(c) F(a/r1); from 55: F A B C D E
    const ring = Ring.build([
      { id: 'A', zone: 'a', rack: 'r1', tokens: [10n] },
      { id: 'B', zone: 'a', rack: 'r2', tokens: [20n] },
      { id: 'C', zone: 'b', tokens: [30n] },
      { id: 'D', zone: 'b', tokens: [40n] },
      { id: 'E', zone: 'c', tokens: [50n] },
      { id: 'F', zone: 'a', rack: 'r1', tokens: [60n] },
    ]);
    expect(ring.replicasForToken(5n, 3)).toEqual(['A', 'C', 'E']); // one per zone, first met
    expect(ring.replicasForToken(55n, 3)).toEqual(['F', 'C', 'E']);
    // zone c is exhausted; zones a and b tie, and in zone a rack r2 has no replica yet
    expect(ring.replicasForToken(5n, 4)).toEqual(['A', 'C', 'E', 'B']);
    expect(ring.replicasForToken(55n, 4)).toEqual(['F', 'C', 'E', 'B']);
    expect(ring.replicasForToken(5n, 5)).toEqual(['A', 'C', 'E', 'B', 'D']);
  });

  it('uses distinct racks in a single zone', () => {
    const ring = claimRing(
      members(9, 1, (i) => `r${i % 3}`),
      N,
    );
    for (const { replicas } of ring.ranges(3)) {
      expect(new Set(replicas.map((id) => ring.member(id)!.rack)).size).toBe(3);
    }
  });

  it('falls back to a zone with nodes left when one is exhausted', () => {
    const ring = claimRing(
      [
        { id: 'a1', zone: 'a' },
        { id: 'a2', zone: 'a' },
        { id: 'a3', zone: 'a' },
        { id: 'b1', zone: 'b' },
      ],
      N,
    );
    for (const { replicas } of ring.ranges(4)) expect([...replicas].sort()).toEqual(['a1', 'a2', 'a3', 'b1']);
    for (const { replicas } of ring.ranges(3)) expect(replicas).toContain('b1');
  });

  it('answers a key given as a string or as its UTF-8 bytes alike, with a fresh array', () => {
    const ring = claimRing(members(12), N);
    const list = ring.preferenceList('user:123456', 3);
    expect(ring.preferenceList(new TextEncoder().encode('user:123456'), 3)).toEqual(list);
    expect(ring.replicasForToken(tokenOf('user:123456'), 3)).toEqual(list);
    list.push('mutated');
    expect(ring.preferenceList('user:123456', 3)).toHaveLength(3);
  });

  it('is deterministic: the same members in any order give the same tokens and lists', () => {
    const a = claimRing(members(10), N);
    const b = claimRing([...members(10)].reverse(), N);
    expect(b.tokens).toEqual(a.tokens);
    for (let k = 0; k < 200; k++) expect(b.preferenceList(`k${k}`, 3)).toEqual(a.preferenceList(`k${k}`, 3));
    const c = joinRing(a, { id: 'x', zone: 'a' }, N);
    const d = joinRing(b, { id: 'x', zone: 'a' }, N);
    expect(d.tokens).toEqual(c.tokens);
  });
});

describe('membership changes', () => {
  const five = claimRing(
    Array.from({ length: 5 }, (_, i) => ({ id: `n${i}`, zone: ['a', 'b', 'c'][i % 3] })),
    N,
  );

  it('withMember returns a new ring and leaves the old one as it was', () => {
    const before = five.tokens;
    const six = joinRing(five, { id: 'n5', zone: 'c' }, N);
    expect(five.size).toBe(5);
    expect(five.tokens).toBe(before);
    expect(six.size).toBe(6);
    for (const m of five.members) expect(six.member(m.id)!.tokens).toEqual(m.tokens);
    expect(six.member('n5')!.tokens).toHaveLength(64);
  });

  it('rangeOf gives the range (start, end] that holds a token, wrapping', () => {
    const ring = Ring.build([
      { id: 'a', tokens: [10n, 30n] },
      { id: 'b', tokens: [20n] },
    ]);
    expect([5n, 10n, 11n, 20n, 25n, 30n, 31n].map((t) => ring.rangeOf(t))).toEqual([
      { start: 30n, end: 10n },
      { start: 30n, end: 10n },
      { start: 10n, end: 20n },
      { start: 10n, end: 20n },
      { start: 20n, end: 30n },
      { start: 20n, end: 30n },
      { start: 30n, end: 10n },
    ]);
  });

  it('withoutMember keeps everyone else’s tokens', () => {
    const four = five.withoutMember('n2');
    expect(four.has('n2')).toBe(false);
    for (const m of four.members) expect(m.tokens).toEqual(five.member(m.id)!.tokens);
  });

  it('keeps explicit tokens as given', () => {
    const ring = five.withMember({ id: 'x', tokens: [7n, 3n] });
    expect(ring.member('x')!.tokens).toEqual([3n, 7n]);
  });

  it('random allocation derives tokens from the id and the seed', () => {
    const r1 = claimRing([{ id: 'a' }, { id: 'b' }], N, { allocation: 'random', tokensPerNode: 8 });
    const r2 = joinRing(claimRing([{ id: 'a' }], N, { allocation: 'random', tokensPerNode: 8 }), { id: 'b' }, N);
    expect(r1.tokens).toEqual(r2.tokens);
    expect(r1.member('a')!.tokens).toHaveLength(8);
    expect(r1.member('a')!.tokens).toContain(tokenOf('ringkv/a#0'));
  });
});

describe('ownership and balance', () => {
  it('ownership sums to n and the default allocation is balanced', () => {
    const ring = claimRing(
      Array.from({ length: 12 }, (_, i) => ({ id: `n${i}`, zone: ['a', 'b', 'c'][i % 3] })),
      N,
    );
    for (const n of [1, 2, 3]) {
      const total = [...ring.ownership(n).values()].reduce((a, b) => a + b, 0);
      expect(total).toBeCloseTo(n, 9);
    }
    expect(balance(ring, 1).max).toBeLessThan(1.05);
    expect(balance(ring, 3).max).toBeLessThan(1.05);
  });

  it('gives a node of weight 2 twice the share, at build and on join', () => {
    const members = Array.from({ length: 6 }, (_, i) => ({ id: `n${i}`, weight: i === 0 ? 2 : 1 }));
    const ring = claimRing(members, N);
    const own = ring.ownership(1);
    expect(own.get('n0')! / own.get('n1')!).toBeCloseTo(2, 1);
    expect(ring.member('n0')!.tokens).toHaveLength(128);
    const grown = joinRing(ring, { id: 'big', weight: 3 }, N);
    expect(balance(grown, 1).max).toBeLessThan(1.05);
    // The join gives up a few percent of the newcomer's share where taking it would
    // concentrate who inherits whose ranges (join-tokens.ts, PRIMARY_HANDOFF_WEIGHT).
    const ratio = grown.ownership(1).get('big')! / (3 / 10);
    expect(ratio).toBeGreaterThan(0.97);
    expect(ratio).toBeLessThan(1.01);
  });

  it('a join moves the newcomer’s fair share of keys and no more', () => {
    const ten = claimRing(
      Array.from({ length: 10 }, (_, i) => ({ id: `n${i}`, zone: ['a', 'b', 'c'][i % 3] })),
      N,
    );
    const eleven = joinRing(ten, { id: 'n10', zone: 'b' }, N);
    let moved = 0;
    for (const c of Ring.diff(ten, eleven, 1)) {
      expect(c.after).toEqual(['n10']);
      moved += Number((c.end - c.start + (1n << 64n)) % (1n << 64n)) / 2 ** 64;
    }
    expect(moved).toBeGreaterThan(0.95 / 11);
    expect(moved).toBeLessThan(1.05 / 11);
  });
});

describe('bad input names the problem', () => {
  const ring = claimRing([{ id: 'a' }, { id: 'b' }], N);

  it('n outside 1..distinct nodes', () => {
    expectRingError(() => ring.preferenceList('k', 0), 'RING_BAD_REPLICAS', /n must be an integer in 1\.\.2.*got 0/);
    expectRingError(() => ring.preferenceList('k', 3), 'RING_BAD_REPLICAS', /got 3/);
    expectRingError(() => ring.preferenceList('k', 1.5), 'RING_BAD_REPLICAS', /got 1\.5/);
    expectRingError(() => ring.ownership(5), 'RING_BAD_REPLICAS', /got 5/);
    expectRingError(() => Ring.diff(ring, ring, 0), 'RING_BAD_REPLICAS', /got 0/);
  });

  it('an empty ring', () => {
    expectRingError(() => Ring.build([]), 'RING_EMPTY', /at least one member/);
    expectRingError(() => Ring.build([{ id: 'a', tokens: [1n] }]).withoutMember('a'), 'RING_EMPTY', /last member/);
    expectRingError(() => leaveRing(Ring.build([{ id: 'a', tokens: [1n] }]), 'a', N), 'RING_EMPTY', /last member/);
    expectRingError(() => claimRing([], N), 'RING_EMPTY', /at least one member/);
  });

  it('a ring holds tokens, it does not choose them: members without go through the claim functions', () => {
    expectRingError(() => Ring.build([{ id: 'a' }]), 'RING_BAD_TOKEN', /a has no tokens.*claimRing/);
    expectRingError(() => ring.withMember({ id: 'c' }), 'RING_BAD_TOKEN', /c has no tokens.*joinRing/);
  });

  it('N outside the integers ≥ 1, for every claim', () => {
    for (const n of [0, -1, 1.5, Number.NaN]) {
      expectRingError(
        () => claimRing([{ id: 'a' }], n),
        'RING_BAD_REPLICAS',
        /replicas \(the cluster's N\) must be an integer ≥ 1/,
      );
      expectRingError(() => claimJoin(ring, { id: 'c' }, n), 'RING_BAD_REPLICAS', /must be an integer ≥ 1/);
      expectRingError(() => joinRing(ring, { id: 'c' }, n), 'RING_BAD_REPLICAS', /must be an integer ≥ 1/);
      expectRingError(() => leaveHeirs(ring, 'a', n), 'RING_BAD_REPLICAS', /must be an integer ≥ 1/);
      expectRingError(() => leaveRing(ring, 'a', n), 'RING_BAD_REPLICAS', /must be an integer ≥ 1/);
    }
  });

  it('duplicate and unknown ids', () => {
    expectRingError(() => Ring.build([{ id: 'a' }, { id: 'a' }]), 'RING_DUPLICATE_MEMBER', /a appears twice/);
    expectRingError(() => ring.withMember({ id: 'b' }), 'RING_DUPLICATE_MEMBER', /b is already a member/);
    expectRingError(() => ring.withoutMember('zz'), 'RING_UNKNOWN_MEMBER', /zz is not a member/);
    expectRingError(() => claimJoin(ring, { id: 'b' }, N), 'RING_DUPLICATE_MEMBER', /b is already a member/);
    expectRingError(() => leaveHeirs(ring, 'zz', N), 'RING_UNKNOWN_MEMBER', /zz is not a member/);
  });

  it('malformed members', () => {
    expectRingError(() => Ring.build([{ id: '' }]), 'RING_BAD_MEMBER', /non-empty string/);
    expectRingError(() => Ring.build([{ id: 'a', weight: 0 }]), 'RING_BAD_MEMBER', /a: weight must be.*got 0/);
    expectRingError(() => Ring.build([{ id: 'a', weight: Number.NaN }]), 'RING_BAD_MEMBER', /weight/);
    expectRingError(
      () => Ring.build([{ id: 'a', zone: 3 as unknown as string }]),
      'RING_BAD_MEMBER',
      /zone must be a string/,
    );
    expectRingError(() => Ring.build([null as unknown as Member]), 'RING_BAD_MEMBER', /must be an object/);
  });

  it('malformed tokens', () => {
    expectRingError(() => Ring.build([{ id: 'a', tokens: [-1n] }]), 'RING_BAD_TOKEN', /a: token #0 \(-1\)/);
    expectRingError(() => Ring.build([{ id: 'a', tokens: [1n << 64n] }]), 'RING_BAD_TOKEN', /\[0, 2\^64 - 1\]/);
    expectRingError(
      () => Ring.build([{ id: 'a', tokens: [5 as unknown as bigint] }]),
      'RING_BAD_TOKEN',
      /must be a bigint/,
    );
    expectRingError(() => Ring.build([{ id: 'a', tokens: [] }]), 'RING_BAD_TOKEN', /empty; omit tokens/);
    expectRingError(() => Ring.build([{ id: 'a', tokens: [3n, 3n] }]), 'RING_BAD_TOKEN', /listed twice/);
    expectRingError(
      () =>
        Ring.build([
          { id: 'a', tokens: [3n] },
          { id: 'b', tokens: [3n] },
        ]),
      'RING_BAD_TOKEN',
      /claimed by both a and b/,
    );
  });

  it('bad options and keys', () => {
    expectRingError(() => Ring.build([{ id: 'a' }], { tokensPerNode: 0 }), 'RING_BAD_OPTION', /tokensPerNode/);
    expectRingError(
      () => Ring.build([{ id: 'a' }], { allocation: 'nope' as 'random' }),
      'RING_BAD_OPTION',
      /'balanced' or 'random'/,
    );
    expectRingError(() => ring.preferenceList(42 as unknown as string, 1), 'RING_BAD_OPTION', /key must be a string/);
  });
});

describe('building with some tokens given', () => {
  it('gives the members without tokens theirs one by one, in id order, as joins would', () => {
    const base = claimRing(
      [
        { id: 'a', zone: 'a' },
        { id: 'b', zone: 'b' },
      ],
      N,
    );
    const given = base.members.map((m) => ({ id: m.id, zone: m.zone, tokens: m.tokens }));
    const mixed = claimRing([{ id: 'd', zone: 'a' }, ...given, { id: 'c', zone: 'c' }], N);
    const joined = joinRing(joinRing(base, { id: 'c', zone: 'c' }, N), { id: 'd', zone: 'a' }, N);
    expect(mixed.tokens).toEqual(joined.tokens);
    expect(balance(mixed, 1).max).toBeLessThan(1.1);
  });
});

describe('replication-aware joins (fewer zones than N)', () => {
  /** A cluster formed as gossip forms it: one node, then one join at a time, no zones. */
  function grown(count: number, tokensPerNode = 64): Ring[] {
    const rings = [claimRing([{ id: 'n00' }], N, { tokensPerNode })];
    for (let i = 1; i < count; i++) rings.push(joinRing(rings[i - 1]!, { id: `n${String(i).padStart(2, '0')}` }, N));
    return rings;
  }
  /** The shortest range ÷ a fair token's share (1 / the ring's tokens). */
  function shortest(ring: Ring): number {
    const t = ring.tokens;
    let min = Infinity;
    for (let i = 0; i < t.length; i++) min = Math.min(min, arcFraction(t[i === 0 ? t.length - 1 : i - 1]!, t[i]!));
    return min * t.length;
  }
  /** `count` members picked with a seeded PRNG, as bench/lib.ts picks leavers. */
  function leavers(ring: Ring, count: number, seed: number): string[] {
    const random = mulberry32(seed);
    const ids = ring.members.map((m) => m.id);
    const out: string[] = [];
    while (out.length < count) out.push(...ids.splice(Math.floor(random() * ids.length), 1));
    return out;
  }

  it('keeps replicated (n = 3) and primary ownership within 1.05× fair at every step from 4 to 12 nodes', () => {
    // Balancing primary ownership alone left these rings at 1.10–1.19× fair replicated
    // (64 tokens per node) and up to 1.26× (16).
    for (const tokensPerNode of [16, 64]) {
      for (const ring of grown(12, tokensPerNode).slice(3)) {
        expect(balance(ring, 3).max, `${ring.size} nodes, ${tokensPerNode} tokens`).toBeLessThanOrEqual(1.05);
        expect(balance(ring, 1).max, `${ring.size} nodes, ${tokensPerNode} tokens`).toBeLessThanOrEqual(1.05);
      }
    }
  });

  it('leaves no range shorter than 1/32 of a fair token’s share', () => {
    // The allocator used to leave ranges 2 hash values long (a token owning nothing).
    const least = 1 / 32 - 1e-12; // arcFraction rounds to a double
    for (const ring of grown(12)) expect(shortest(ring)).toBeGreaterThanOrEqual(least);
    let ring = claimRing(
      Array.from({ length: 12 }, (_, i) => ({ id: `n${i}`, zone: ['a', 'b', 'c'][i % 3] })),
      N,
    );
    for (let j = 0; j < 10; j++) {
      ring = joinRing(ring, { id: `j${j}`, zone: ['a', 'b', 'c'][j % 3] }, N);
      expect(shortest(ring)).toBeGreaterThanOrEqual(least);
    }
  });

  it('a grown ring, after 10 joins and 5 random leaves, stays within 1.10× fair (20 leave sets)', () => {
    // Dropping the leavers' tokens (their ranges go to whoever follows) ended at a median
    // 1.07× and at worst 1.105× replicated, 1.15× primary; before joins modelled
    // replication, 1.14× and 1.27×. Handing each token to a chosen heir: 1.04× at worst.
    let ring = grown(12).at(-1)!;
    for (let j = 0; j < 10; j++) ring = joinRing(ring, { id: `j${j}` }, N);
    expect(balance(ring, 3).max).toBeLessThanOrEqual(1.05);
    for (let seed = 1; seed <= 20; seed++) {
      let left = ring;
      let dropped = ring;
      for (const id of leavers(ring, 5, seed)) ((left = leaveRing(left, id, N)), (dropped = dropped.withoutMember(id)));
      expect(balance(left, 3).max, `leave set ${seed}`).toBeLessThanOrEqual(
        Math.min(1.1, balance(dropped, 3).max + 1e-9),
      );
      expect(balance(left, 1).max, `leave set ${seed}`).toBeLessThanOrEqual(1.1);
    }
  });

  it('with 3 zones, 10 joins and 5 random leaves stay within 1.10× fair, primary too (20 leave sets)', () => {
    // Dropping tokens: primary up to 1.14×. Heirs stay in the leaver's zone or are a
    // range's existing replicas, so replicas keep one per zone.
    let ring = claimRing(
      Array.from({ length: 12 }, (_, i) => ({ id: `n${i}`, zone: ['a', 'b', 'c'][i % 3] })),
      N,
    );
    for (let j = 0; j < 10; j++) ring = joinRing(ring, { id: `j${j}`, zone: ['a', 'b', 'c'][j % 3] }, N);
    for (let seed = 1; seed <= 20; seed++) {
      let left = ring;
      for (const id of leavers(ring, 5, seed)) left = leaveRing(left, id, N);
      expect(balance(left, 3).max, `leave set ${seed}`).toBeLessThanOrEqual(1.1);
      expect(balance(left, 1).max, `leave set ${seed}`).toBeLessThanOrEqual(1.1);
    }
  });

  it("withoutMember with heirs refuses a token that is not the leaver's, and a heir that is no other member", () => {
    const ring = Ring.build([
      { id: 'a', tokens: [10n] },
      { id: 'b', tokens: [20n, 40n] },
      { id: 'c', tokens: [30n] },
    ]);
    expect(
      ring
        .withoutMember(
          'b',
          new Map([
            [20n, 'c'],
            [40n, 'a'],
          ]),
        )
        .members.map((m) => [m.id, m.tokens]),
    ).toEqual([
      ['a', [10n, 40n]],
      ['c', [20n, 30n]],
    ]);
    expectRingError(() => ring.withoutMember('b', new Map([[10n, 'c']])), 'RING_BAD_TOKEN', /not one of b's tokens/);
    expectRingError(
      () => ring.withoutMember('b', new Map([[20n, 'zz']])),
      'RING_UNKNOWN_MEMBER',
      /heir zz is not a member/,
    );
    expectRingError(
      () => ring.withoutMember('b', new Map([[20n, 'b']])),
      'RING_UNKNOWN_MEMBER',
      /heir b is not a member/,
    );
    expectRingError(() => leaveRing(ring, 'zz', N), 'RING_UNKNOWN_MEMBER', /zz is not a member/);
  });

  it('a weighted newcomer: replicated shares are capped at one replica per key, and reached', () => {
    // Weights 2, 1, 1 and a newcomer of 1 with N = 3: the node of weight 2 would be due
    // 3 · 2/5 = 1.2 replicas of every key; it holds every key once, the others 2/3 of them.
    const ring = joinRing(
      claimRing(
        [2, 1, 1].map((weight, i) => ({ id: `n${i}`, weight })),
        N,
      ),
      { id: 'new' },
      N,
    );
    expect(fairShares(ring, 3).get('n0')).toBeCloseTo(1);
    expect(fairShares(ring, 3).get('new')).toBeCloseTo(2 / 3);
    expect(balance(ring, 3).max).toBeLessThan(1.02);
    expect(balance(ring, 1).max).toBeLessThan(1.02);
  });
});

describe('fair shares', () => {
  it('follow the zones: one replica per zone when there are n zones', () => {
    const ring = claimRing(
      [
        { id: 'a1', zone: 'a' },
        { id: 'a2', zone: 'a' },
        { id: 'b1', zone: 'b' },
        { id: 'c1', zone: 'c' },
      ],
      N,
    );
    const fair = fairShares(ring, 3);
    expect(fair.get('a1')).toBeCloseTo(0.5);
    expect(fair.get('b1')).toBeCloseTo(1);
    expect(fairShares(ring, 1).get('b1')).toBeCloseTo(0.25);
    expect(balance(ring, 3).max).toBeLessThan(1.05);
  });

  it('caps a zone at one replica per key when there are at least n zones', () => {
    // zone a has half the weight but can hold only one of the 3 replicas of a key
    const ring = claimRing(
      [
        { id: 'a1', zone: 'a', weight: 3 },
        { id: 'b1', zone: 'b' },
        { id: 'c1', zone: 'c' },
        { id: 'd1', zone: 'd' },
      ],
      N,
    );
    const fair = fairShares(ring, 3);
    expect(fair.get('a1')).toBeCloseTo(1);
    expect(fair.get('b1')).toBeCloseTo(2 / 3);
    expect([...fair.values()].reduce((x, y) => x + y, 0)).toBeCloseTo(3);
  });

  it('spreads n over fewer zones evenly, each node holding at most one replica', () => {
    const ring = claimRing(
      [
        { id: 'a1', zone: 'a' },
        { id: 'a2', zone: 'a' },
        { id: 'b1', zone: 'b' },
      ],
      N,
    );
    const fair = fairShares(ring, 3);
    expect(fair.get('b1')).toBeCloseTo(1);
    expect(fair.get('a1')).toBeCloseTo(1);
  });
});

describe('edges of the token space', () => {
  const MAX = (1n << 64n) - 1n;

  it('wraps: token 0 owns (max, 0], and the largest token owns what lies just below it', () => {
    const ring = Ring.build([
      { id: 'zero', tokens: [0n] },
      { id: 'top', tokens: [MAX] },
      { id: 'mid', tokens: [1n << 63n] },
    ]);
    expect(ring.replicasForToken(0n, 1)).toEqual(['zero']);
    expect(ring.replicasForToken(MAX, 1)).toEqual(['top']);
    expect(ring.replicasForToken(MAX - 1n, 1)).toEqual(['top']);
    expect(ring.replicasForToken(1n, 1)).toEqual(['mid']);
    expect(ring.replicasForToken((1n << 63n) + 1n, 3)).toEqual(['top', 'zero', 'mid']);
  });

  it('finds the right token when all tokens crowd into one corner of the ring', () => {
    // Every token in the same lookup bucket, and keys hashing far from them wrap around.
    const base = 0xfffffff0_00000000n;
    const ring = Ring.build(Array.from({ length: 6 }, (_, i) => ({ id: `n${i}`, tokens: [base + BigInt(i) * 3n] })));
    expect(ring.replicasForToken(base, 1)).toEqual(['n0']);
    expect(ring.replicasForToken(base + 1n, 1)).toEqual(['n1']);
    expect(ring.replicasForToken(base + 15n, 1)).toEqual(['n5']);
    expect(ring.replicasForToken(base + 16n, 1)).toEqual(['n0']);
    expect(ring.replicasForToken(5n, 2)).toEqual(['n0', 'n1']);
    for (let k = 0; k < 100; k++) expect(ring.preferenceList(`k${k}`, 1)).toHaveLength(1);
  });

  it('a newcomer gets all its tokens even when the ring has fewer ranges than that', () => {
    const ring = joinRing(Ring.build([{ id: 'a', tokens: [1n << 62n] }]), { id: 'b' }, N);
    expect(ring.member('b')!.tokens).toHaveLength(64);
    expect(balance(ring, 1).max).toBeLessThan(1.05);
  });
});

describe('targets: sloppy quorum with fallbacks', () => {
  // walk from 5: A(a) B(a) C(b) D(b) E(c) F(c) G(a)
  const ring = Ring.build([
    { id: 'A', zone: 'a', tokens: [10n] },
    { id: 'B', zone: 'a', tokens: [20n] },
    { id: 'C', zone: 'b', tokens: [30n] },
    { id: 'D', zone: 'b', tokens: [40n] },
    { id: 'E', zone: 'c', tokens: [50n] },
    { id: 'F', zone: 'c', tokens: [60n] },
    { id: 'G', zone: 'a', tokens: [70n] },
  ]);
  const key = [...Array(10_000).keys()].map((i) => `k${i}`).find((k) => tokenOf(k) <= 5n || tokenOf(k) > 70n)!;
  const up =
    (...down: string[]) =>
    (id: string) =>
      !down.includes(id);

  it('with everyone up, is the preference list', () => {
    expect(ring.preferenceList(key, 3)).toEqual(['A', 'C', 'E']);
    expect(ring.targets(key, 3, up())).toEqual([{ id: 'A' }, { id: 'C' }, { id: 'E' }]);
  });

  it('replaces a down primary by the next up node of its zone, saying whom it stands in for', () => {
    expect(ring.targets(key, 3, up('C'))).toEqual([{ id: 'A' }, { id: 'D', for: 'C' }, { id: 'E' }]);
    expect(ring.targets(key, 3, up('A'))).toEqual([{ id: 'B', for: 'A' }, { id: 'C' }, { id: 'E' }]);
  });

  it('falls back to any zone when the down primary’s zone has no one left', () => {
    expect(ring.targets(key, 3, up('E', 'F'))).toEqual([{ id: 'A' }, { id: 'C' }, { id: 'B', for: 'E' }]);
  });

  it('returns fewer than n when too few nodes are up', () => {
    expect(ring.targets(key, 3, up('A', 'B', 'C', 'D', 'G'))).toEqual([{ id: 'F', for: 'A' }, { id: 'E' }]);
    expect(ring.targets(key, 3, () => false)).toEqual([]);
  });
});

describe('claims take the cluster’s N as a parameter', () => {
  const id = (i: number) => `n${String(i).padStart(2, '0')}`;
  /** One node, then one join at a time, no zones, every claim for N. */
  function grow(count: number, n: number): Ring {
    let ring = claimRing([{ id: id(0) }], n, { tokensPerNode: 32 });
    for (let i = 1; i < count; i++) ring = joinRing(ring, { id: id(i) }, n);
    return ring;
  }

  it('a brand-new ring is laid out whatever N: nobody has tokens yet', () => {
    const members = Array.from({ length: 6 }, (_, i) => ({ id: id(i), zone: ['a', 'b'][i % 2] }));
    expect(claimRing(members, 1).tokens).toEqual(claimRing(members, 5).tokens);
  });

  it('claimJoin gives the tokens joinRing adds, and nobody else’s tokens move', () => {
    const ring = grow(5, 2);
    const tokens = claimJoin(ring, { id: 'x', zone: '' }, 2);
    const joined = joinRing(ring, { id: 'x' }, 2);
    expect(joined.member('x')!.tokens).toEqual(tokens);
    for (const m of ring.members) expect(joined.member(m.id)!.tokens).toEqual(m.tokens);
    // a member given with tokens keeps them
    expect(claimJoin(ring, { id: 'y', tokens: [7n, 3n] }, 2)).toEqual([3n, 7n]);
  });

  it('joins balance primary and replicated ownership among the N they are given (N = 1, 2, 4, 5; 3 above)', () => {
    for (const n of [1, 2, 4, 5]) {
      let ring = claimRing([{ id: id(0) }], n, { tokensPerNode: 32 });
      for (let i = 1; i < 12; i++) {
        ring = joinRing(ring, { id: id(i) }, n);
        if (ring.size > n + 1) {
          expect(balance(ring, n).max, `N = ${n}, ${ring.size} nodes`).toBeLessThan(1.04);
          expect(balance(ring, 1).max, `N = ${n}, ${ring.size} nodes`).toBeLessThan(1.04);
        }
      }
    }
  });

  it('leaves choose heirs for the N they are given: heirs chosen for another N leave the ring less even', () => {
    for (const n of [2, 5]) {
      const ring = grow(12, n);
      let forN = ring;
      let for3 = ring;
      for (const gone of [id(3), id(7), id(10)]) ((forN = leaveRing(forN, gone, n)), (for3 = leaveRing(for3, gone, 3)));
      expect(balance(forN, n).max, `N = ${n}`).toBeLessThan(1.03);
      expect(balance(for3, n).max, `N = ${n}`).toBeGreaterThan(1.05);
    }
  });

  it('N larger than the ring: every node replicates every key, and the claims still work', () => {
    const ring = joinRing(claimRing([{ id: 'a' }, { id: 'b' }], 5, { tokensPerNode: 8 }), { id: 'c' }, 5);
    expect(ring.member('c')!.tokens).toHaveLength(8);
    const heirs = leaveHeirs(ring, 'b', 5);
    expect([...heirs.keys()].sort((x, y) => (x < y ? -1 : 1))).toEqual([...ring.member('b')!.tokens]);
    expect(leaveRing(ring, 'b', 5).tokens).toEqual(ring.tokens);
  });
});

describe('joins model replicas with the ring’s own placement walk, racks included', () => {
  // Behaviour change (issue 27): join-tokens.ts had its own zones-only copy of the walk, so
  // in a zone with racks it balanced replicas the ring does not place. Grown one node at
  // a time into one zone of 2 racks it reached 1.11× fair replicated (N = 3), and 1.11×
  // after 6 joins to a laid-out ring of 12; with placement.ts's walk, 1.035× and 1.013×.
  const topo = (i: number) => ({ rack: `r${i % 2}` });
  it('one zone of 2 racks, grown from 1 to 12 nodes: within 1.05× fair replicated at every step from 5', () => {
    let ring = claimRing([{ id: 'n00', ...topo(0) }], N);
    for (let i = 1; i < 12; i++) {
      ring = joinRing(ring, { id: `n${String(i).padStart(2, '0')}`, ...topo(i) }, N);
      if (ring.size > 4) expect(balance(ring, N).max, `${ring.size} nodes`).toBeLessThan(1.05);
    }
  });

  it('one zone of 2 racks, 6 joins to a laid-out ring of 12: within 1.03× fair replicated', () => {
    let ring = claimRing(
      Array.from({ length: 12 }, (_, i) => ({ id: `m${String(i).padStart(2, '0')}`, ...topo(i) })),
      N,
    );
    for (let j = 0; j < 6; j++) ring = joinRing(ring, { id: `j${j}`, ...topo(j) }, N);
    expect(balance(ring, N).max).toBeLessThan(1.03);
    expect(balance(ring, 1).max).toBeLessThan(1.03);
  });
});
