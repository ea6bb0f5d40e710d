import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Ring } from '../../../src/ring/index.js';
import { RepairRuns, overlaps, repairUnits, unitKey } from '../../../src/repair/runs.js';
import type { GrpcRepair } from '../../../src/transport/repair-wire.js';
import type { Store } from '../../../src/storage/index.js';

function runs(ring: Ring | undefined, classes: readonly number[] = [3]): RepairRuns {
  return new RepairRuns({
    id: 'a',
    classes: () => classes,
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
    const ring = Ring.build([
      { id: 'a', tokens: [10n, 30n] },
      { id: 'b', tokens: [20n] },
    ]);
    const r = runs(ring);
    r.record({ start: 10n, end: 20n }, 500);
    r.record({ start: 10n, end: 20n }, 400); // an older repair does not move it back
    r.record({ start: 30n, end: 10n }, 700); // wraps
    expect([15n, 20n, 21n, 30n, 31n, 5n, 10n].map((t) => r.confirmedBefore(t))).toEqual([
      500, 500, 0, 0, 700, 700, 700,
    ]);
    expect(runs(undefined).confirmedBefore(5n)).toBe(0);
  });

  it('refuse to start before the node owns ranges', () => {
    expect(() => runs(Ring.build([{ id: 'b', tokens: [1n] }])).start()).toThrow(
      /a owns no ranges yet: nothing to repair/,
    );
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
    const ring = Ring.build([
      { id: 'a', tokens: [10n, 30n] },
      { id: 'b', tokens: [20n] },
      { id: 'c', tokens: [40n] },
    ]);
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
    const loop = r.runBackground({
      intervalMs: 1000,
      bytesPerSecond: 1 << 20,
      share: () => 1,
      quiet: () => quiet,
      signal: stop.signal,
      pollMs: 1,
    });
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

describe('background repair pacing', () => {
  // a is first replica of (40, 10] and (20, 30]; each range holds 10 MiB; the pace is 1 MiB/s.
  /** How many of a's two ranges background repair has done by when the first is done plus `waitMs` (or both are done). */
  async function rangesRepaired(kept: boolean, waitMs: number): Promise<number> {
    const ring = Ring.build([
      { id: 'a', tokens: [10n, 30n] },
      { id: 'b', tokens: [20n] },
      { id: 'c', tokens: [40n] },
    ]);
    let calls = 0;
    let now = 0;
    class Recording extends RepairRuns {
      override async repairOne(range: { start: bigint; end: bigint }) {
        calls++;
        this.record(range, now);
        return { leavesDiffering: 0, keysExchanged: 0, bytes: 64, recordBytes: 0, kept };
      }
    }
    const r = new Recording({
      id: 'a',
      classes: () => [2],
      only: () => () => true,
      store: { ranges: { approximateBytes: async () => 10 << 20 } } as unknown as Store,
      ring: () => ring,
      isUp: () => true,
      wire: {} as GrpcRepair,
      timeoutMs: 1000,
      now: () => now,
      log: pino({ level: 'silent' }),
    });
    const stop = new AbortController();
    const loop = r.runBackground({
      intervalMs: 1000,
      bytesPerSecond: 1 << 20,
      share: () => 1,
      quiet: () => true,
      signal: stop.signal,
      pollMs: 1,
    });
    now = 2000; // an interval after the start: both ranges due
    const until = async (done: () => boolean, ms: number) => {
      for (const end = Date.now() + ms; !done() && Date.now() < end;) await new Promise((res) => setTimeout(res, 5));
    };
    await until(() => calls >= 1, 10_000);
    await until(() => calls >= 2, waitMs);
    stop.abort();
    void loop;
    return calls;
  }

  it("on kept trees paces by what the exchange moved (an in-sync range waits for nothing); by scans, by the range's data", async () => {
    expect(await rangesRepaired(true, 5_000)).toBe(2);
    expect(await rangesRepaired(false, 500)).toBe(1); // 10 MiB at 1 MiB/s: 10 s before the second
  });
});

describe('repair per N class', () => {
  // a: (30, 10]; b: (10, 20]; c: (20, 30]. Walks: (30,10] a,b,c; (10,20] b,c,a; (20,30] c,a,b.
  const ring = Ring.build([
    { id: 'a', tokens: [10n] },
    { id: 'b', tokens: [20n] },
    { id: 'c', tokens: [30n] },
  ]);

  it("units: with one class the ranges of its N, unmarked; with more, each class's ranges this node replicates, with that class's replicas", () => {
    expect(repairUnits(ring, 'a', [2])).toEqual([
      { start: 30n, end: 10n, replicas: ['a', 'b'] },
      { start: 20n, end: 30n, replicas: ['c', 'a'] },
    ]);
    const units = repairUnits(ring, 'a', [1, 3]);
    expect(units).toEqual([
      { start: 30n, end: 10n, replicas: ['a'], n: 1 },
      { start: 30n, end: 10n, replicas: ['a', 'b', 'c'], n: 3 },
      { start: 10n, end: 20n, replicas: ['b', 'c', 'a'], n: 3 },
      { start: 20n, end: 30n, replicas: ['c', 'a', 'b'], n: 3 },
    ]);
    expect(units.map(unitKey)[0]).toBe('000000000000001e-000000000000000a/n1');
    expect(unitKey({ start: 30n, end: 10n })).toBe('000000000000001e-000000000000000a');
    expect(repairUnits(ring, 'x', [1, 3])).toEqual([]);
  });

  it('confirmedBefore: the earliest repair over the classes this node replicates the range for', () => {
    const r = runs(ring, [1, 3]);
    // (10, 20]: a is an n=3 replica only (b is its n=1 replica).
    r.record({ start: 10n, end: 20n }, 500, 3);
    r.record({ start: 10n, end: 20n }, 900, 1); // not a's class there: does not count
    expect(r.confirmedBefore(15n)).toBe(500);
    // (30, 10]: a replicates it for n=1 and n=3: both must be confirmed.
    r.record({ start: 30n, end: 10n }, 700, 1);
    expect(r.confirmedBefore(5n)).toBe(0);
    r.record({ start: 30n, end: 10n }, 600, 3);
    expect(r.confirmedBefore(5n)).toBe(600);
    // A record without a class (one class in use) is not a class's record.
    const one = runs(ring, [3]);
    one.record({ start: 30n, end: 10n }, 800, 1);
    expect(one.confirmedBefore(5n)).toBe(0);
    one.record({ start: 30n, end: 10n }, 800);
    expect(one.confirmedBefore(5n)).toBe(800);
  });

  it('a range of one replica (n=1) is repaired at once, without a tree or a peer', async () => {
    const r = runs(ring, [1, 3]);
    expect(await r.repairOne({ start: 30n, end: 10n }, [], 1)).toEqual({
      leavesDiffering: 0,
      keysExchanged: 0,
      bytes: 0,
      recordBytes: 0,
    });
    expect(r.lastRepaired.get('000000000000001e-000000000000000a/n1')).toBe(0);
    expect(r.lastRepaired.has('000000000000001e-000000000000000a')).toBe(false);
  });
});
