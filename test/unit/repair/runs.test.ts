import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Ring } from '../../../src/ring/index.js';
import { RepairRuns, overlaps } from '../../../src/repair/runs.js';
import type { GrpcRepair } from '../../../src/transport/repair-wire.js';
import type { Store } from '../../../src/storage/index.js';

function runs(ring: Ring | undefined): RepairRuns {
  return new RepairRuns({
    id: 'a',
    classes: () => [3],
    only: () => () => true,
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

describe('background repair', () => {
  it('repairs each range this node is first replica of once per interval, oldest first, only when quiet and with every peer up', async () => {
    let now = 0;
    let quiet = true;
    const down = new Set<string>();
    const calls: string[] = [];
    const ring = Ring.build([{ id: 'a', tokens: [10n, 30n] }, { id: 'b', tokens: [20n] }, { id: 'c', tokens: [40n] }]);
    class Recording extends RepairRuns {
      override async repairOne(range: { start: bigint; end: bigint }, peers: readonly string[]) {
        calls.push(`${range.start}-${range.end}:${peers.join(',')}`);
        this.record(range, now);
        return { leavesDiffering: 0, keysExchanged: 1, bytes: 10, recordBytes: 5 };
      }
    }
    const r = new Recording({
      id: 'a',
      classes: () => [2],
      only: () => () => true,
      store: { ranges: { approximateBytes: async () => 0 } } as unknown as Store,
      ring: () => ring,
      isUp: (x) => !down.has(x),
      wire: {} as GrpcRepair,
      timeoutMs: 1000,
      now: () => now,
      log: pino({ level: 'silent' }),
    });
    const stop = new AbortController();
    const loop = r.runBackground({ intervalMs: 1000, bytesPerSecond: 1 << 20, share: () => 1, quiet: () => quiet, signal: stop.signal, pollMs: 1 });
    const settle = () => new Promise((res) => setTimeout(res, 30));
    await settle();
    expect(calls).toEqual([]); // not before an interval has passed since the start
    quiet = false;
    now = 1500;
    await settle();
    expect(calls).toEqual([]); // a topology change or a manual run: not now
    down.add('b');
    quiet = true;
    await settle();
    // a is first replica of (40, 10] (peer b) and (20, 30] (peer c); b is down: only the other.
    expect(calls).toEqual(['20-30:c']);
    down.delete('b');
    await settle();
    expect(calls).toEqual(['20-30:c', '40-10:b']);
    await settle();
    expect(calls).toHaveLength(2); // both repaired within the interval
    now = 2600;
    await settle();
    expect(calls.slice(2).sort()).toEqual(['20-30:c', '40-10:b']);
    expect(r.background).toMatchObject({ ranges: 4, keysExchanged: 4, bytes: 40, failed: 0 });
    stop.abort();
    await loop;
  });
});
