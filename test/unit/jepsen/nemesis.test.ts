import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../src/ring/allocate-tokens.js';
import {
  majoritiesRing,
  parseNemeses,
  partition,
  PARTITION_SHAPES,
  schedule,
  NEMESES,
  SLOW_SHAPES,
  type Member,
} from '../../../test/jepsen/nemesis.js';
import type { Grudge } from '../../../testkit/jepsen/net.js';

const members = (n: number, zones = 3): Member[] =>
  Array.from({ length: n }, (_, i) => ({ id: `n${i + 1}`, zone: `z${(i % zones) + 1}` }));

/** Who `to` hears from, given the grudges (packets of all kinds). */
function hears(grudges: readonly Grudge[], ids: readonly string[], to: string): Set<string> {
  return new Set(ids.filter((from) => !grudges.some((g) => g.to === to && g.from === from && !g.initiatedOnly)));
}

describe('partition shapes', () => {
  it('majorities-ring: every node sees a majority and no two nodes see the same one', () => {
    fc.assert(
      fc.property(fc.integer({ min: 3, max: 15 }), fc.integer(), (n, seed) => {
        const ids = members(n).map((m) => m.id);
        const p = partition('majorities-ring', members(n), mulberry32(seed));
        const seen = ids.map((id) => [...hears(p.grudges, ids, id)].sort().join(','));
        for (const s of seen) expect(s.split(',').length).toBeGreaterThan(n / 2);
        expect(new Set(seen).size).toBe(n);
      }),
    );
  });

  it('majoritiesRing sees itself and its nearest neighbours', () => {
    const v = majoritiesRing(['a', 'b', 'c', 'd', 'e']);
    expect([...v.get('a')!].sort()).toEqual(['a', 'b', 'e']);
    expect([...v.get('c')!].sort()).toEqual(['b', 'c', 'd']);
  });

  it('isolate, halves, bridge and zone cut both directions; the rest of the cluster stays whole', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 12 }),
        fc.integer(),
        fc.constantFrom('isolate', 'halves', 'bridge', 'zone' as const),
        (n, seed, shape) => {
          const ms = members(n);
          const ids = ms.map((m) => m.id);
          const p = partition(shape, ms, mulberry32(seed));
          expect(p.grudges.length).toBeGreaterThan(0);
          // Symmetric: a drops b exactly when b drops a.
          for (const g of p.grudges) expect(p.grudges.some((h) => h.from === g.to && h.to === g.from)).toBe(true);
          // Components: "hears" is an equivalence on each side except for the bridge node.
          if (shape === 'bridge') {
            const bridge = ids.find((id) => hears(p.grudges, ids, id).size === n)!;
            expect(bridge).toBeDefined();
            for (const id of ids) expect(hears(p.grudges, ids, id).has(bridge)).toBe(true);
          }
          if (shape === 'isolate') expect(ids.filter((id) => hears(p.grudges, ids, id).size === 1)).toHaveLength(1);
          if (shape === 'zone') {
            const cutOff = ids.filter((id) => hears(p.grudges, ids, id).size < n);
            const zones = new Set(ms.filter((m) => cutOff.includes(m.id)).map((m) => m.zone));
            expect(cutOff.length).toBe(n);
            // One zone on one side: every node hears exactly the nodes of its own side.
            const side = (id: string): string =>
              ms.find((m) => m.id === id)!.zone ===
              [...zones].find((z) =>
                ms
                  .filter((m) => m.zone === z)
                  .every((m) => hears(p.grudges, ids, m.id).size === ms.filter((x) => x.zone === z).length),
              )
                ? 'in'
                : 'out';
            for (const a of ids) for (const b of ids) expect(hears(p.grudges, ids, a).has(b)).toBe(side(a) === side(b));
          }
        },
      ),
    );
  });

  it('one-way: one half reaches the other, which cannot reach it back', () => {
    const p = partition('one-way', members(5), mulberry32(7));
    expect(p.grudges.every((g) => g.initiatedOnly)).toBe(true);
    const receivers = new Set(p.grudges.map((g) => g.to)),
      senders = new Set(p.grudges.map((g) => g.from));
    expect([...receivers].some((r) => senders.has(r))).toBe(false);
    expect(receivers.size + senders.size).toBe(5);
  });

  it('refuses fewer than 3 nodes', () => {
    expect(() => partition('halves', members(2), Math.random)).toThrow(/at least 3 nodes/);
  });
});

describe('the schedule', () => {
  it('is reproduced by its seed, differs with another, and meets every kind and shape before repeating', () => {
    const o = { seed: 42, nemeses: [...NEMESES], timeMs: 300_000, everyMs: 10_000 };
    expect(schedule(o)).toEqual(schedule(o));
    expect(schedule({ ...o, seed: 43 })).not.toEqual(schedule(o));
    const s = schedule(o);
    const kinds = NEMESES.length - 2 + PARTITION_SHAPES.length + SLOW_SHAPES.length;
    const first = s.slice(0, kinds).map((f) => (f.shape !== undefined ? `${f.kind}:${f.shape}` : f.kind));
    expect(new Set(first).size).toBe(kinds);
    for (const shape of SLOW_SHAPES) expect(first).toContain(`slow:${shape}`);
    // One fault at a time, none starting in the last interval.
    for (let i = 1; i < s.length; i++) expect(s[i]!.atMs).toBeGreaterThanOrEqual(s[i - 1]!.atMs + s[i - 1]!.forMs);
    expect(s.at(-1)!.atMs + o.everyMs).toBeLessThanOrEqual(o.timeMs);
  });

  it('fits every kind and shape of every nemesis in the CI pass (80 s, a fault every 4 s), whatever the seed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (seed) => {
        const s = schedule({ seed, nemeses: [...NEMESES], timeMs: 80_000, everyMs: 4000 });
        const met = new Set(s.map((f) => (f.shape !== undefined ? `${f.kind}:${f.shape}` : f.kind)));
        expect(met.size).toBe(NEMESES.length - 2 + PARTITION_SHAPES.length + SLOW_SHAPES.length);
      }),
    );
  });

  it('parses --nemesis and says what it knows when a name is wrong', () => {
    expect(parseNemeses('all')).toEqual([...NEMESES]);
    expect(parseNemeses('kill, partition')).toEqual(['kill', 'partition']);
    expect(() => parseNemeses('kill,flood')).toThrow(
      /unknown nemesis "flood"; known: partition, kill, pause, packet, clock, membership, slow/,
    );
    expect(parseNemeses('slow')).toEqual(['slow']);
    expect(parseNemeses('all')).toContain('slow');
    expect(() => parseNemeses(',')).toThrow(/name at least one nemesis/);
  });
});
