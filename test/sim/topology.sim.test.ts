/**
 * Topology changes on the seeded simulator (topology-sim.ts): the real decisions of joins,
 * decommissions, removals and replacements, with nodes crashing and restarting in the
 * middle of them. Every change completes, no range ever has fewer than N replicas holding
 * its data, no two movements pull at once, and every node ends with the same ring. The
 * 1,000-node run is `npm run sim:topology`.
 */
import { describe, expect, it } from 'vitest';
import { TopologySim } from '../../testkit/topology-sim.js';

describe('topology changes on the simulator', () => {
  it('80 nodes, 24 changes of each kind in turn, crashes mid-change: all complete, no copy missing, one change at a time', () => {
    for (const seed of [1, 2, 3, 4]) {
      const sim = new TopologySim({ seed, nodes: 80, changes: 24, crashRate: 0.08 });
      const r = sim.run();
      const why = `seed ${seed}:\n${r.violations.slice(0, 5).join('\n')}\n${sim.describe()}`;
      expect(r.violations, why).toEqual([]);
      expect(r.pending, why).toEqual([]);
      expect(r.completed, why).toBe(24);
      expect(r.crashes, 'nodes crashed during the run').toBeGreaterThan(10);
      expect(sim.sameRing(), why).toBe(true);
      expect(sim.lostKeys, 'no key loses every copy with N=3').toBe(0);
    }
  }, 120_000);

  it("buckets of n 1, 3 and 5: every key on its own n's replicas through every change, pulled per class", () => {
    const sim = new TopologySim({ seed: 5, nodes: 40, changes: 12, crashRate: 0.08, classes: [1, 3, 5] });
    const r = sim.run();
    const why = `${r.violations.slice(0, 5).join('\n')}\n${sim.describe()}`;
    expect(r.violations, why).toEqual([]);
    expect(r.completed, why).toBe(12);
    // Removals and replacements of dead nodes lose their n=1 keys (their only copies), and are not held up by them.
    expect(sim.lostKeys).toBeGreaterThan(0);
    // Planned for one N, the n=5 keys' fourth and fifth replicas are never pulled: the check sees it.
    const oneN = new TopologySim({
      seed: 5,
      nodes: 40,
      changes: 12,
      crashRate: 0.08,
      classes: [1, 3, 5],
      planOneN: true,
    }).run();
    expect(oneN.violations.join('\n')).toMatch(/keys with fewer than N replicas holding them/);
  }, 120_000);

  it('fails when the pulls bring nothing (the check has teeth)', () => {
    const r = new TopologySim({ seed: 1, nodes: 40, changes: 8, dropPulls: true, limitMs: 3_600_000 }).run();
    expect(r.violations.join('\n')).toMatch(/keys with fewer than N replicas holding them/);
  }, 60_000);
});
