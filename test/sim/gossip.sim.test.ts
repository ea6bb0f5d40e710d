/**
 * Deterministic simulations of gossip membership and failure detection (testkit/gossip-sim.ts):
 * fake clock, in-memory network, one seed per run. A failing seed replays exactly.
 */
import { describe, expect, it } from 'vitest';
import { GossipSim, ids } from '../../testkit/gossip-sim.js';

function downs(sim: GossipSim, of?: string): number {
  let n = 0;
  for (const node of sim.nodes.values()) {
    n += node.events.filter(
      (e) => e.event.type === 'down' && (of === undefined || (e.event as { id: string }).id === of),
    ).length;
  }
  return n;
}

function clearEvents(sim: GossipSim): void {
  for (const n of sim.nodes.values()) n.events = [];
}

function everyoneSees(sim: GossipSim, of: string, up: boolean): boolean {
  return sim.alive().every((n) => n.id === of || n.gossiper.isUp(of) === up);
}

function cluster(
  size: number,
  seed: number,
  opts: Partial<ConstructorParameters<typeof GossipSim>[0]> = {},
): GossipSim {
  const sim = new GossipSim({ seed, minDelayMs: 0.2, maxDelayMs: 5, ...opts });
  const all = ids(size);
  for (const id of all) sim.add(id, all.slice(0, 3));
  return sim;
}

describe('gossip simulation', () => {
  it('5 nodes started together with 3 seeds all see each other up within a few rounds', () => {
    const sim = cluster(5, 1);
    const ok = sim.runFor(10_000, () => sim.alive().every((n) => ids(5).every((o) => n.gossiper.isUp(o))));
    expect(ok).toBe(true);
    expect(sim.now).toBeLessThan(5_000);
  });

  it('converges on a change in O(log N) rounds: 10, 100 and 1,000 nodes', () => {
    const rounds: number[] = [];
    for (const size of [10, 100, 1000]) {
      const sim = new GossipSim({ seed: 7, detector: { windowSize: 50 } });
      const all = ids(size);
      for (const id of all) sim.add(id, all.slice(0, 3), {}, true);
      sim.seedTables();
      sim.runFor(1000);
      sim.set('n1', 'status', 'leaving');
      const start = sim.now;
      const ok = sim.runFor(60_000, () => all.every((v) => sim.sees(v, 'n1', 'status', 'leaving')));
      expect(ok).toBe(true);
      rounds.push((sim.now - start) / sim.intervalMs);
    }
    // Push-pull gossip spreads in about log3(N) + ln ln N rounds; 2·log2(N) is a generous bound.
    for (const [i, size] of [10, 100, 1000].entries()) expect(rounds[i]!).toBeLessThan(2 * Math.log2(size));
    expect(rounds[2]!).toBeLessThan(rounds[0]! * 5);
  }, 120_000);

  it('delta gossip: a mixed cluster (every other node on full Scuttlebutt) converges, convicts no one falsely, convicts the dead', () => {
    const sim = new GossipSim({ seed: 11, dropRate: 0.01, maxDelayMs: 50, judgeEveryMs: 250 });
    const all = ids(12);
    all.forEach((id, i) => sim.add(id, all.slice(0, 3), {}, false, { delta: i % 2 === 0 }));
    expect(sim.runFor(30_000, () => sim.alive().every((n) => all.every((o) => n.gossiper.isUp(o))))).toBe(true);
    clearEvents(sim);
    sim.runFor(1800_000);
    expect(downs(sim)).toBe(0);
    sim.set('n3', 'zone', 'z9');
    expect(sim.runFor(20_000, () => all.every((v) => sim.sees(v, 'n3', 'zone', 'z9')))).toBe(true);
    const t0 = sim.now;
    sim.kill('n4');
    expect(sim.runFor(10_000, () => everyoneSees(sim, 'n4', false))).toBe(true);
    expect(sim.now - t0).toBeLessThan(10_000);
  }, 60_000);

  it('delta gossip under churn at 200 nodes (joins and restarts every 2 rounds, rosters differing): no false conviction', () => {
    const sim = new GossipSim({ seed: 5, dropRate: 0.01, maxDelayMs: 50, detector: { windowSize: 50 } });
    const all = ids(200);
    for (const id of all) sim.add(id, all.slice(0, 3), {}, true);
    sim.seedTables();
    sim.runFor(5000);
    const { falseDowns, restarted } = sim.churn(20, 2);
    expect(restarted.size).toBeGreaterThan(5);
    expect(falseDowns).toBe(0);
    // And every node ends with every member, joiners included.
    sim.runFor(20_000);
    for (const n of sim.alive()) expect([...n.gossiper.states()].length).toBe(sim.nodes.size);
  }, 120_000);

  it('a healthy 5-node cluster marks no one down over 2 simulated hours, with loss and jitter', () => {
    for (const seed of [1, 2, 3]) {
      const sim = cluster(5, seed, { dropRate: 0.01, maxDelayMs: 50 });
      sim.runFor(30_000);
      clearEvents(sim);
      sim.runFor(2 * 3600_000);
      expect(downs(sim), `seed ${seed}`).toBe(0);
    }
  }, 120_000); // CPU-bound: the budget allows for a machine running at a third of its speed

  it('a killed node is convicted by every other node within 10 s; a restart is seen within 3 s', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const sim = cluster(5, seed);
      sim.runFor(60_000);
      const t0 = sim.now;
      sim.kill('n3');
      expect(
        sim.runFor(20_000, () => everyoneSees(sim, 'n3', false)),
        `seed ${seed}`,
      ).toBe(true);
      expect(sim.now - t0, `seed ${seed}`).toBeLessThan(10_000);
      sim.runFor(30_000);
      const t1 = sim.now;
      const gen = sim.nodes.get('n3')!.generation;
      sim.start('n3');
      expect(
        sim.runFor(10_000, () => everyoneSees(sim, 'n3', true)),
        `seed ${seed}`,
      ).toBe(true);
      expect(sim.now - t1, `seed ${seed}`).toBeLessThan(3_000);
      for (const n of sim.alive()) expect(n.gossiper.state('n3')!.generation).toBeGreaterThan(gen);
    }
  });

  it('a node paused for 10 s comes back up everywhere and convicts no one for good', () => {
    const sim = cluster(5, 11);
    sim.runFor(60_000);
    clearEvents(sim);
    sim.pause('n2', 10_000);
    sim.runFor(10_000);
    sim.runFor(5_000);
    expect(everyoneSees(sim, 'n2', true)).toBe(true);
    const n2 = sim.nodes.get('n2')!;
    expect(ids(5).every((o) => n2.gossiper.isUp(o))).toBe(true);
    // The paused node absorbed its own stall instead of convicting its peers.
    expect(n2.events.some((e) => e.event.type === 'paused')).toBe(true);
    expect(n2.events.filter((e) => e.event.type === 'down')).toEqual([]);
  });

  it('a partitioned cluster re-converges after healing', () => {
    const sim = cluster(10, 21, { detector: {} });
    sim.runFor(30_000);
    const a = ids(10).slice(0, 5),
      b = ids(10).slice(5);
    sim.partition([a, b]);
    sim.runFor(30_000);
    // Each side convicts the other, and changes on one side stay there.
    expect(sim.nodes.get('n0')!.gossiper.isUp('n7')).toBe(false);
    sim.set('n7', 'status', 'leaving');
    sim.runFor(10_000);
    expect(sim.sees('n0', 'n7', 'status', 'leaving')).toBe(false);
    sim.heal();
    const ok = sim.runFor(30_000, () =>
      ids(10).every(
        (v) => sim.sees(v, 'n7', 'status', 'leaving') && ids(10).every((o) => sim.nodes.get(v)!.gossiper.isUp(o)),
      ),
    );
    expect(ok).toBe(true);
  });

  it('replays exactly from its seed', () => {
    const trace = (seed: number): string => {
      const sim = cluster(8, seed, { dropRate: 0.05 });
      sim.runFor(20_000);
      sim.kill('n5');
      sim.runFor(20_000);
      return JSON.stringify([...sim.nodes.values()].map((n) => n.events.map((e) => [e.at, e.event])));
    };
    expect(trace(42)).toBe(trace(42));
    expect(trace(42)).not.toBe(trace(43));
  });
});
