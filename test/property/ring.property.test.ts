/**
 * Laws of the ring, checked on random rings (fast-check): random members with zones,
 * racks and weights, with explicit random tokens (any ring a cluster could gossip) or
 * tokens from either allocator.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  MAX_TOKEN,
  Ring,
  arcFraction,
  balance,
  claimRing,
  fairShares,
  joinRing,
  leaveHeirs,
  tokenOf,
} from '../../src/ring/index.js';
import type { Member, RingOptions } from '../../src/ring/index.js';

const ZONES = ['a', 'b', 'c', 'd'];
const RACKS = ['r1', 'r2', 'r3'];

const tokenArb = fc.bigInt({ min: 0n, max: MAX_TOKEN });

/** Members n0..n{k-1} with random topology and, optionally, random explicit tokens. */
function membersArb(opts: { min?: number; max?: number; explicitTokens: boolean }) {
  return fc
    .integer({ min: opts.min ?? 1, max: opts.max ?? 9 })
    .chain((count) =>
      fc.tuple(
        fc.array(
          fc.record({
            zone: fc.option(fc.constantFrom(...ZONES), { nil: undefined }),
            rack: fc.option(fc.constantFrom(...RACKS), { nil: undefined }),
            weight: fc.constantFrom(1, 1, 2, 0.5),
          }),
          { minLength: count, maxLength: count },
        ),
        opts.explicitTokens
          ? fc.uniqueArray(tokenArb, { minLength: count * 4, maxLength: count * 4 })
          : fc.constant([] as bigint[]),
      ),
    )
    .map(([topology, tokens]) =>
      topology.map((t, i): Member => ({
        id: `n${i}`,
        ...t,
        ...(tokens.length > 0 ? { tokens: tokens.slice(i * 4, i * 4 + 4) } : {}),
      })),
    );
}

const optionsArb: fc.Arbitrary<RingOptions> = fc.record({
  tokensPerNode: fc.integer({ min: 1, max: 12 }),
  allocation: fc.constantFrom('balanced' as const, 'random' as const),
});

/** The N claims balance for, where a law does not depend on it. */
const N = 3;

/** A ring from explicit tokens or from either allocator, claimed for N from 1 to 5. */
const ringArb = fc.oneof(
  membersArb({ explicitTokens: true }).map((m) => Ring.build(m)),
  fc
    .tuple(membersArb({ explicitTokens: false }), optionsArb, fc.integer({ min: 1, max: 5 }))
    .map(([m, o, n]) => claimRing(m, n, o)),
);

/** Tokens worth probing: random ones and every token boundary with its neighbours. */
function probes(rings: Ring[], random: bigint[]): bigint[] {
  const out = new Set(random);
  for (const r of rings) {
    for (const t of r.tokens) {
      out.add(t);
      out.add(t === 0n ? MAX_TOKEN : t - 1n);
      out.add(t === MAX_TOKEN ? 0n : t + 1n);
    }
  }
  return [...out];
}

const asSet = (xs: readonly string[]) => [...xs].sort();

function zoneOf(ring: Ring, id: string): string {
  return ring.member(id)!.zone;
}

describe('ring laws', () => {
  it('every replica list has n distinct nodes, the range owner first', () => {
    fc.assert(
      fc.property(ringArb, (ring) => {
        for (let n = 1; n <= ring.size; n++) {
          for (const r of ring.ranges(n)) {
            expect(new Set(r.replicas).size).toBe(n);
            expect(r.replicas[0]).toBe(ring.replicasForToken(r.end, 1)[0]);
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  it('zone spread: n distinct zones when there are n zones, else as even as the zones allow', () => {
    fc.assert(
      fc.property(ringArb, (ring) => {
        const zones = new Map<string, number>();
        for (const m of ring.members) zones.set(m.zone, (zones.get(m.zone) ?? 0) + 1);
        for (let n = 1; n <= ring.size; n++) {
          for (const { replicas } of ring.ranges(n)) {
            const used = new Map<string, number>();
            for (const id of replicas) used.set(zoneOf(ring, id), (used.get(zoneOf(ring, id)) ?? 0) + 1);
            if (zones.size >= n) {
              expect(used.size).toBe(n);
            } else {
              // A zone short of replicas must have run out of nodes.
              const most = Math.max(...used.values());
              for (const [zone, size] of zones) {
                const c = used.get(zone) ?? 0;
                if (c < most - 1) expect(c).toBe(size);
              }
            }
          }
        }
      }),
      { numRuns: 150 },
    );
  });

  // The one exception to minimal movement, as with Cassandra's rack-aware placement: the
  // first node of a new rack in a zone that has other racks (or the last node of a rack
  // leaving one) changes which racks a zone's replicas may use. See placement.ts.
  const addsRack = (ring: Ring, zone = '', rack = '') =>
    ring.members.some((m) => m.zone === zone) && !ring.members.some((m) => m.zone === zone && m.rack === rack);
  const removesRack = (ring: Ring, id: string) => {
    const { zone, rack } = ring.member(id)!;
    const inZone = ring.members.filter((m) => m.zone === zone);
    return inZone.filter((m) => m.rack === rack).length === 1 && inZone.some((m) => m.rack !== rack);
  };

  it('adding a node moves keys only to the new node', () => {
    fc.assert(
      fc.property(
        ringArb,
        fc.record({
          zone: fc.option(fc.constantFrom(...ZONES), { nil: undefined }),
          rack: fc.option(fc.constantFrom(...RACKS), { nil: undefined }),
        }),
        fc.array(tokenArb, { maxLength: 30 }),
        (before, topology, random) => {
          fc.pre(!addsRack(before, topology.zone, topology.rack));
          const after = joinRing(before, { id: 'new', ...topology }, N);
          // Checked in plain code, reported with one expect: an expect per probe made this
          // test take 11 s.
          const broken: string[] = [];
          for (let n = 1; n <= before.size; n++) {
            for (const t of probes([before, after], random)) {
              const b = before.replicasForToken(t, n);
              const a = after.replicasForToken(t, n);
              const moved = a.some((id) => id !== 'new' && !b.includes(id));
              if (moved || (asSet(a).join() !== asSet(b).join() && !a.includes('new')))
                broken.push(`n=${n} token ${t}: [${b}] became [${a}]`);
            }
          }
          expect(broken).toEqual([]);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('removing a node moves only its keys', () => {
    fc.assert(
      fc.property(
        ringArb.filter((r) => r.size > 1),
        fc.nat(),
        fc.array(tokenArb, { maxLength: 30 }),
        (before, pick, random) => {
          const gone = before.members[pick % before.size]!.id;
          fc.pre(!removesRack(before, gone));
          const after = before.withoutMember(gone);
          const broken: string[] = [];
          for (let n = 1; n <= after.size; n++) {
            for (const t of probes([before], random)) {
              const b = before.replicasForToken(t, n);
              const a = after.replicasForToken(t, n);
              const ok = b.includes(gone)
                ? b.every((id) => id === gone || a.includes(id))
                : asSet(a).join() === asSet(b).join();
              if (!ok) broken.push(`n=${n} token ${t}: [${b}] became [${a}]`);
            }
          }
          expect(broken).toEqual([]);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('a leave that hands its tokens to heirs chosen for N moves only its keys too, as many as dropping them (N = 1..5)', () => {
    fc.assert(
      fc.property(
        ringArb.filter((r) => r.size > 1),
        fc.integer({ min: 1, max: 5 }),
        fc.nat(),
        fc.array(tokenArb, { maxLength: 30 }),
        (before, N, pick, random) => {
          const gone = before.members[pick % before.size]!.id;
          fc.pre(!removesRack(before, gone));
          const heirs = leaveHeirs(before, gone, N);
          expect([...heirs.keys()].sort((a, b) => (a < b ? -1 : 1))).toEqual([...before.member(gone)!.tokens]);
          for (const h of heirs.values()) expect(h !== gone && before.has(h)).toBe(true);
          const after = before.withoutMember(gone, heirs);
          expect(after.tokens).toEqual(before.tokens); // every token keeps its place
          const n = Math.min(N, after.size);
          for (const t of probes([before], random)) {
            const b = before.replicasForToken(t, n);
            const a = after.replicasForToken(t, n);
            if (!b.includes(gone)) expect(asSet(a)).toEqual(asSet(b));
            else for (const id of b) if (id !== gone) expect(a).toContain(id);
          }
          const moved = (r: Ring) =>
            Ring.diff(before, r, n).reduce(
              (sum, c) => sum + arcFraction(c.start, c.end) * c.after.filter((x) => !c.before.includes(x)).length,
              0,
            );
          expect(moved(after)).toBeCloseTo(moved(before.withoutMember(gone)), 12);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('diff covers exactly the tokens whose replica set changes, with their lists', () => {
    const changeArb = fc.tuple(ringArb, fc.nat(), fc.boolean()).map(([ring, pick, add]) => {
      if (add || ring.size === 1) return [ring, joinRing(ring, { id: 'new', zone: ZONES[pick % 4] }, N)] as const;
      return [ring, ring.withoutMember(ring.members[pick % ring.size]!.id)] as const;
    });
    fc.assert(
      fc.property(
        changeArb,
        fc.array(tokenArb, { maxLength: 30 }),
        fc.array(fc.string(), { maxLength: 30 }),
        ([before, after], random, keys) => {
          const n = Math.min(before.size, after.size, 3);
          const changes = Ring.diff(before, after, n);
          const inRange = (t: bigint, s: bigint, e: bigint) => (s < e ? t > s && t <= e : s === e || t > s || t <= e);
          for (const key of keys) {
            // a key's replicas, as the coordinator asks for them, agree with the diff
            const t = tokenOf(key);
            const moves = changes.some((c) => inRange(t, c.start, c.end));
            expect(moves).toBe(
              asSet(before.preferenceList(key, n)).join() !== asSet(after.preferenceList(key, n)).join(),
            );
          }
          for (const t of probes([before, after], random)) {
            const b = before.replicasForToken(t, n);
            const a = after.replicasForToken(t, n);
            const covering = changes.filter((c) => inRange(t, c.start, c.end));
            if (asSet(a).join() === asSet(b).join()) {
              expect(covering).toEqual([]);
            } else {
              expect(covering).toHaveLength(1);
              expect(covering[0]!.before).toEqual(b);
              expect(covering[0]!.after).toEqual(a);
            }
          }
        },
      ),
      { numRuns: 120 },
    );
  });

  it('a new rack in a zone with racks may move replicas between old nodes (why the laws above exclude it)', () => {
    const before = Ring.build([
      { id: 'n0', rack: 'r2', tokens: [4n] },
      { id: 'n1', zone: 'b', tokens: [20n] },
      { id: 'n2', zone: 'b', tokens: [88n] },
      { id: 'n3', rack: 'r3', tokens: [68n] },
    ]);
    const after = before.withMember({ id: 'new', zone: 'b', rack: 'r3', tokens: [75n] });
    expect(before.replicasForToken(76n, 3)).toEqual(['n2', 'n0', 'n1']);
    // zone b now has a rack with no replica yet, so n1 (rack '') waits for it, and
    // zone '' supplies the third replica first
    expect(after.replicasForToken(76n, 3)).toEqual(['n2', 'n0', 'n3']);
  });

  it('targets: distinct up nodes, up primaries kept, one fallback per down primary, min(n, up) in all', () => {
    fc.assert(
      fc.property(
        ringArb,
        fc.nat(),
        fc.string(),
        fc.array(fc.boolean(), { maxLength: 9 }),
        (ring, pick, key, flags) => {
          const n = 1 + (pick % ring.size);
          const down = new Set(ring.members.filter((_, i) => flags[i] === true).map((m) => m.id));
          const isUp = (id: string) => !down.has(id);
          const primaries = ring.preferenceList(key, n);
          const targets = ring.targets(key, n, isUp);
          const ids = targets.map((t) => t.id);
          expect(new Set(ids).size).toBe(ids.length);
          for (const id of ids) expect(isUp(id)).toBe(true);
          expect(targets.filter((t) => t.for === undefined).map((t) => t.id)).toEqual(primaries.filter(isUp));
          const stoodInFor = targets.flatMap((t) => (t.for === undefined ? [] : [t.for]));
          expect(new Set(stoodInFor).size).toBe(stoodInFor.length);
          for (const p of stoodInFor) expect(down.has(p) && primaries.includes(p)).toBe(true);
          for (const t of targets) if (t.for !== undefined) expect(primaries).not.toContain(t.id);
          expect(targets).toHaveLength(Math.min(n, ring.size - down.size));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('is deterministic: the member order does not matter', () => {
    fc.assert(
      fc.property(
        membersArb({ explicitTokens: false, max: 7 }),
        optionsArb,
        fc.array(fc.string(), { maxLength: 20 }),
        (members, options, keys) => {
          const a = claimRing(members, N, options);
          const b = claimRing([...members].reverse(), N, options);
          expect(b.tokens).toEqual(a.tokens);
          for (const k of keys)
            expect(b.preferenceList(k, Math.min(3, a.size))).toEqual(a.preferenceList(k, Math.min(3, a.size)));
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a newcomer to a small weighted, zoned ring gets (nearly) its fair share', () => {
    // Regression: chasing ideal heirs in rings of a few nodes starved newcomers (a node
    // of weight 3 joining weights 3, 1 and 3 got 69% of its share). Zone rings of a few
    // nodes are lumpy, hence the looser bounds than without zones.
    fc.assert(
      fc.property(
        fc.array(fc.record({ weight: fc.constantFrom(1, 2, 3), zone: fc.constantFrom('a', 'b', 'c') }), {
          minLength: 2,
          maxLength: 9,
        }),
        fc.constantFrom(1, 2, 3),
        fc.constantFrom('a', 'b', 'c'),
        (nodes, weight, zone) => {
          const ring = claimRing(
            nodes.map((m, i) => ({ id: `n${i}`, ...m })),
            N,
          );
          const grown = joinRing(ring, { id: 'new', weight, zone }, N);
          expect(grown.ownership(1).get('new')! / fairShares(grown, 1).get('new')!).toBeGreaterThan(0.85);
          expect(balance(grown, 1).max).toBeLessThan(1.15);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a join splits ranges into parts no shorter than 1/32 of a fair token’s share', () => {
    fc.assert(
      fc.property(ringArb, fc.option(fc.constantFrom(...ZONES), { nil: undefined }), (before, zone) => {
        fc.pre(before.options.allocation === 'balanced');
        const after = joinRing(before, { id: 'new', zone }, N);
        const t = after.tokens;
        const least = 1 / 32 / t.length - 1e-15;
        const mine = new Set(after.member('new')!.tokens);
        for (let i = 0; i < t.length; i++) {
          const prev = t[i === 0 ? t.length - 1 : i - 1]!;
          // the newcomer's own ranges, and what it left of the ranges it split
          if (mine.has(t[i]!) || (mine.has(prev) && !mine.has(t[i]!))) {
            expect(arcFraction(prev, t[i]!)).toBeGreaterThanOrEqual(least);
          }
        }
      }),
      { numRuns: 80 },
    );
  });

  it('grown one node at a time without zones, replicated ownership stays within 1.05× fair', () => {
    // The join allocator models the plain walk's replication (join-replicated.ts,
    // Replicated) when there are fewer zones than N = 3.
    fc.assert(
      fc.property(fc.integer({ min: 4, max: 9 }), fc.integer({ min: 24, max: 64 }), (nodes, tokensPerNode) => {
        let ring = claimRing([{ id: 'n0' }], N, { tokensPerNode });
        for (let i = 1; i < nodes; i++) {
          ring = joinRing(ring, { id: `n${i}` }, N);
          if (ring.size > 3) expect(balance(ring, 3).max).toBeLessThanOrEqual(1.05);
        }
      }),
      { numRuns: 10 },
    );
  });

  it('ownership sums to n and, with the balanced allocator, follows weights', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(1, 2, 3), { minLength: 2, maxLength: 8 }),
        fc.constantFrom(1, 2, 3),
        (weights, newWeight) => {
          const ring = claimRing(
            weights.map((weight, i) => ({ id: `n${i}`, weight })),
            N,
          );
          for (let n = 1; n <= Math.min(3, ring.size); n++) {
            expect([...ring.ownership(n).values()].reduce((x, y) => x + y, 0)).toBeCloseTo(n, 9);
          }
          expect(balance(ring, 1).max).toBeLessThan(1.02);
          const grown = joinRing(ring, { id: 'new', weight: newWeight }, N);
          const share = grown.ownership(1).get('new')!;
          expect(share / fairShares(grown, 1).get('new')!).toBeGreaterThan(0.9);
          expect(balance(grown, 1).max).toBeLessThan(1.1);
        },
      ),
      { numRuns: 40 },
    );
  });
});
