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
    }
  }, 120_000);

  it('fails when the pulls bring nothing (the check has teeth)', () => {
    const r = new TopologySim({ seed: 1, nodes: 40, changes: 8, dropPulls: true, limitMs: 3_600_000 }).run();
    expect(r.violations.join('\n')).toMatch(/keys with fewer than N replicas holding them/);
  }, 60_000);
});
