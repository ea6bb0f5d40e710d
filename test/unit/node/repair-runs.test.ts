import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Ring } from '../../../src/ring/index.js';
import { RepairRuns, overlaps } from '../../../src/node/repair.js';
import type { GrpcRepair } from '../../../src/transport/repair-wire.js';
import type { Store } from '../../../src/storage/index.js';

function runs(ring: Ring | undefined): RepairRuns {
  return new RepairRuns({
    id: 'a',
    replicas: 3,
    store: {} as Store,
    ring: () => ring,
    isUp: () => true,
    wire: {} as GrpcRepair,
    timeoutMs: 1000,
    now: () => 0,
    log: pino({ level: 'silent' }),
  });
}

describe('repair runs', () => {
  it('tell as of when the current range holding a token was repaired; a range never repaired is 0', () => {
    const ring = Ring.build([{ id: 'a', tokens: [10n, 30n] }, { id: 'b', tokens: [20n] }]);
    const r = runs(ring);
    r.record({ start: 10n, end: 20n }, 500);
    r.record({ start: 10n, end: 20n }, 400); // an older repair does not move it back
    r.record({ start: 30n, end: 10n }, 700); // wraps
    expect([15n, 20n, 21n, 30n, 31n, 5n, 10n].map((t) => r.confirmedBefore(t))).toEqual([500, 500, 0, 0, 700, 700, 700]);
    expect(runs(undefined).confirmedBefore(5n)).toBe(0);
  });

  it('refuse to start before the node owns ranges', () => {
    expect(() => runs(Ring.build([{ id: 'b', tokens: [1n] }])).start()).toThrow(/a owns no ranges yet: nothing to repair/);
  });

  it('overlaps: ranges on the circle, start == end being the whole ring', () => {
    expect(overlaps({ start: 10n, end: 20n }, { start: 15n, end: 30n })).toBe(true);
    expect(overlaps({ start: 10n, end: 20n }, { start: 20n, end: 30n })).toBe(false);
    expect(overlaps({ start: 30n, end: 5n }, { start: 0n, end: 2n })).toBe(true);
    expect(overlaps({ start: 30n, end: 5n }, { start: 5n, end: 30n })).toBe(false);
    expect(overlaps({ start: 7n, end: 7n }, { start: 5n, end: 6n })).toBe(true);
  });
});
