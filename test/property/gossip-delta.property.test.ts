/**
 * Delta gossip (membership/gossiper.ts: heartbeat vectors, broadcasts, table hashes) ends
 * where full Scuttlebutt ends. One random scenario — nodes joining, restarting with new
 * generations, dying, setting fields, the network losing, duplicating and reordering
 * messages, partitions healing — runs on the simulator (testkit/gossip-sim.ts) three
 * times: every node on full Scuttlebutt, every node on delta gossip, and a mixed cluster
 * (every other node on the old protocol, as in a rolling upgrade). Checked: while it runs,
 * no node ever sees a member's heartbeat or a field's version move backwards within a
 * generation, nor a generation go back; after quiescence every node of every mode holds
 * exactly every member's own state (fields and versions), and the three modes agree on
 * every member's generation and field values.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { GossipSim, ids } from '../../testkit/gossip-sim.js';
import { field } from '../../src/membership/endpoint.js';

type Op =
  | { t: 'set'; node: number; name: 'zone' | 'rack' | 'load'; value: number }
  | { t: 'restart'; node: number }
  | { t: 'kill'; node: number }
  | { t: 'join' }
  | { t: 'partition'; cut: number }
  | { t: 'heal' };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      t: fc.constant('set' as const),
      node: fc.nat(9),
      name: fc.constantFrom('zone' as const, 'rack' as const, 'load' as const),
      value: fc.nat(1000),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('restart' as const), node: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('kill' as const), node: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('join' as const) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('partition' as const), cut: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('heal' as const) }) },
);

type Mode = 'full' | 'delta' | 'mixed';

interface Seen {
  generation: number;
  heartbeat: number;
  versions: Map<string, number>;
}

/** Each member as every node ends up holding it: generation and field values (versions are mode-specific). */
function run(mode: Mode, seed: number, start: number, ops: readonly { op: Op; waitMs: number }[]): Map<string, string> {
  const sim = new GossipSim({ seed, dropRate: 0.05, duplicateRate: 0.05, minDelayMs: 1, maxDelayMs: 400 });
  const options = (i: number): { delta: boolean } => ({ delta: mode === 'delta' || (mode === 'mixed' && i % 2 === 0) });
  const all = ids(start);
  all.forEach((id, i) => sim.add(id, all.slice(0, 2), {}, false, options(i)));
  const seen = new Map<string, Seen>();
  const check = (): void => {
    for (const n of sim.alive()) {
      for (const s of n.gossiper.states()) {
        const key = `${n.id}@${n.generation}|${s.id}`;
        const before = seen.get(key);
        if (before !== undefined) {
          expect(s.generation, `${key} generation`).toBeGreaterThanOrEqual(before.generation);
          if (s.generation === before.generation) {
            expect(s.heartbeat, `${key} heartbeat`).toBeGreaterThanOrEqual(before.heartbeat);
            for (const [name, v] of before.versions)
              expect(s.fields.get(name)?.version ?? -1, `${key}.${name} version`).toBeGreaterThanOrEqual(v);
          }
        }
        seen.set(key, {
          generation: s.generation,
          heartbeat: s.heartbeat,
          versions: new Map([...s.fields].map(([k, f]) => [k, f.version])),
        });
      }
    }
  };
  let size = start;
  for (const { op, waitMs } of ops) {
    const id = `n${'node' in op ? op.node % size : 0}`;
    switch (op.t) {
      case 'set':
        sim.set(id, op.name, op.name === 'load' ? String(op.value) : `v${op.value}`);
        break;
      case 'restart':
        sim.kill(id);
        sim.start(id);
        break;
      case 'kill':
        sim.kill(id);
        break;
      case 'join':
        sim.add(`n${size}`, all.slice(0, 2), {}, false, options(size));
        size++;
        break;
      case 'partition': {
        const everyone = [...sim.nodes.keys()];
        sim.partition([everyone.slice(0, op.cut % everyone.length)]);
        break;
      }
      case 'heal':
        sim.heal();
        break;
    }
    for (let t = 0; t < waitMs; t += 500) {
      sim.runFor(Math.min(500, waitMs - t));
      check();
    }
  }
  // Quiescence: the network heals, the dead come back (a new generation each), and gossip runs on.
  sim.heal();
  sim.network({ dropRate: 0, duplicateRate: 0 });
  for (const n of sim.nodes.values()) if (!n.alive) sim.start(n.id);
  for (let t = 0; t < 60; t++) {
    sim.runFor(1000);
    check();
  }
  const truth = new Map([...sim.nodes.values()].map((n) => [n.id, n.gossiper.self]));
  for (const n of sim.nodes.values()) {
    const table = new Map([...n.gossiper.states()].map((s) => [s.id, s]));
    expect([...table.keys()].sort(), `${mode}: ${n.id}'s members`).toEqual([...truth.keys()].sort());
    for (const [id, own] of truth) {
      const s = table.get(id)!;
      expect({ generation: s.generation, fields: [...s.fields] }, `${mode}: ${n.id}'s view of ${id}`).toEqual({
        generation: own.generation,
        fields: [...own.fields],
      });
    }
  }
  const out = new Map<string, string>();
  for (const [id, own] of truth) {
    const values = [...own.fields]
      .filter(([name]) => name !== 'gossip')
      .map(([name]) => `${name}=${field(own, name)}`)
      .sort();
    out.set(id, `${own.generation} ${values.join(' ')}`);
  }
  return out;
}

describe('delta gossip against full Scuttlebutt', () => {
  it('ends with the same tables, with no version or heartbeat ever going back', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1 << 30 }),
        fc.integer({ min: 3, max: 6 }),
        fc.array(fc.record({ op, waitMs: fc.integer({ min: 100, max: 4000 }) }), { minLength: 5, maxLength: 25 }),
        (seed, start, ops) => {
          const full = run('full', seed, start, ops);
          expect(run('delta', seed, start, ops)).toEqual(full);
          expect(run('mixed', seed, start, ops)).toEqual(full);
        },
      ),
      // A fixed seed: a failure found by a random one is shrunk for as long as it takes
      // (synchronous, so no test timeout stops it); endOnFailure reports it unshrunk.
      { numRuns: 25, seed: 29, endOnFailure: true },
    );
  }, 240_000);

  // Found by this property on a random seed (-1141967124, run 69): in a mixed cluster one
  // node on full Scuttlebutt (n7) kept an older view of n4's fields for ever. A node on
  // delta gossip had told it a heartbeat (from a vector) beyond the fields it held, which
  // full Scuttlebutt reads as having seen every field up to it (gossiper.ts #complete).
  it('a mixed cluster converges after field changes, joins and partitions', () => {
    const set = (node: number, name: 'zone' | 'rack' | 'load', value: number): Op => ({ t: 'set', node, name, value });
    const ops: { op: Op; waitMs: number }[] = [
      { op: set(8, 'load', 551), waitMs: 3015 },
      { op: set(8, 'zone', 440), waitMs: 3447 },
      { op: set(4, 'rack', 178), waitMs: 415 },
      { op: { t: 'join' }, waitMs: 3132 },
      { op: { t: 'partition', cut: 3 }, waitMs: 2568 },
      { op: { t: 'partition', cut: 2 }, waitMs: 648 },
      { op: set(4, 'load', 842), waitMs: 3088 },
      { op: set(0, 'rack', 719), waitMs: 1682 },
      { op: { t: 'join' }, waitMs: 1250 },
      { op: { t: 'join' }, waitMs: 3747 },
      { op: set(4, 'rack', 982), waitMs: 1221 },
      { op: set(4, 'load', 229), waitMs: 551 },
    ];
    expect(run('mixed', 1030086366, 6, ops)).toEqual(run('full', 1030086366, 6, ops));
  }, 60_000);
});
