/**
 * How the store shares trips to the engine: the read batcher (lanes, bursts, caps), group
 * commit in the write queue, and the two groups that concurrent overwrites settle into.
 */
import { describe, expect, it } from 'vitest';
import { MemoryEngine, Store } from '../../../src/storage/index.js';
import type { Engine, WriteOp } from '../../../src/storage/index.js';
import { ReadBatcher } from '../../../src/storage/read-batcher.js';
import { WriteQueue } from '../../../src/storage/write-queue.js';
import { wrapEngine } from './engines.js';

/** An engine whose reads and writes wait until released, recording each call. */
function gated(): {
  engine: Engine;
  calls: { kind: 'get' | 'getMany' | 'write'; size: number }[];
  inFlight: () => number;
  maxInFlight: () => number;
  release: () => void;
} {
  const inner = new MemoryEngine();
  void inner.open();
  const calls: { kind: 'get' | 'getMany' | 'write'; size: number }[] = [];
  let waiting: Array<() => void> = [];
  let now = 0,
    max = 0;
  const hold = <T>(p: () => Promise<T>): Promise<T> => {
    now++;
    max = Math.max(max, now);
    return new Promise<void>((r) => waiting.push(r)).then(p).finally(() => now--);
  };
  const engine = wrapEngine(inner, {
    get: (k) => (calls.push({ kind: 'get', size: 1 }), hold(() => inner.get(k))),
    getMany: (k) => (calls.push({ kind: 'getMany', size: k.length }), hold(() => inner.getMany(k))),
    write: (ops, sync) => (calls.push({ kind: 'write', size: ops.length }), hold(() => inner.write(ops, sync))),
  });
  const release = () => {
    const w = waiting;
    waiting = [];
    for (const r of w) r();
  };
  return { engine, calls, inFlight: () => now, maxInFlight: () => max, release };
}

/** Let every pending callback and microtask run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

describe('read batcher', () => {
  it('never has more reads in flight than its lanes, however they finish', async () => {
    const g = gated();
    const b = new ReadBatcher(g.engine, { lanes: 2 });
    const reads: Promise<unknown>[] = [];
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 3; i++) reads.push(b.get(Buffer.from(`k${round}-${i}`)));
      await settle();
      g.release(); // lanes finish one by one, while others are still reading
      await settle();
    }
    while (g.inFlight() > 0) (g.release(), await settle());
    await Promise.all(reads);
    expect(g.maxInFlight()).toBeLessThanOrEqual(2);
  });

  it('with burst, reads asked in one tick share one getMany; with cap, no getMany is larger', async () => {
    const g = gated();
    let cap = 100;
    const b = new ReadBatcher(g.engine, { lanes: 1, burst: true, cap: () => cap });
    const first = Array.from({ length: 10 }, (_, i) => b.get(Buffer.from(`a${i}`)));
    await settle();
    expect(g.calls).toEqual([{ kind: 'getMany', size: 10 }]); // not one alone, then nine
    cap = 4;
    const second = Array.from({ length: 10 }, (_, i) => b.get(Buffer.from(`b${i}`)));
    while (g.inFlight() > 0) (g.release(), await settle());
    await Promise.all([...first, ...second]);
    expect(g.calls.slice(1).map((c) => c.size)).toEqual([4, 4, 2]);
  });
});

describe('write queue', () => {
  it('writes queued in one tick go as one batch; later ones wait for it and go together', async () => {
    const g = gated();
    const q = new WriteQueue(g.engine, false);
    const put = (k: string): WriteOp[] => [{ type: 'put', key: Buffer.from(k), value: Buffer.from('v') }];
    const first = [q.write(put('a')), q.write(put('b')), q.write(put('c'))];
    await settle();
    const second = [q.write(put('f')), q.write(put('g'))];
    await settle();
    expect(g.calls).toEqual([{ kind: 'write', size: 3 }]); // one batch in flight
    while (g.inFlight() > 0) (g.release(), await settle());
    await Promise.all([...first, ...second]);
    expect(g.calls).toEqual([
      { kind: 'write', size: 3 },
      { kind: 'write', size: 2 },
    ]);
    expect({ batches: q.batches, writes: q.writes }).toEqual({ batches: 2, writes: 5 });
  });

  it('a lone write is written without waiting for others', async () => {
    const engine = new MemoryEngine();
    await engine.open();
    const q = new WriteQueue(engine, false);
    await q.write([{ type: 'put', key: Buffer.from('k'), value: Buffer.from('v') }]);
    expect(q.batches).toBe(1);
  });
});

describe('concurrent overwrites', () => {
  it('split into two groups that take turns: no read batch holds more than half of them, and each put returns the context a get then sees', async () => {
    const inner = new MemoryEngine();
    const sizes: number[] = [];
    const engine = wrapEngine(inner, {
      get: (k) => (sizes.push(1), inner.get(k)),
      getMany: (k) => (sizes.push(k.length), inner.getMany(k)),
    });
    const s = await Store.open({ engine });
    await s.keyFilter.settled;
    const keys = Array.from({ length: 64 }, (_, i) => `key-${i}`);
    await Promise.all(keys.map((k) => s.put(k, Buffer.from('v1'))));
    const contexts = await Promise.all(keys.map(async (k) => (await s.get(k)).context));
    sizes.length = 0;
    let next = 0;
    const results = new Map<string, Buffer>();
    // 16 writers in flight, each overwriting the next key with its read's context.
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < keys.length) {
          const i = next++;
          results.set(keys[i]!, (await s.put(keys[i]!, Buffer.from('v2'), contexts[i])).context);
        }
      }),
    );
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(keys.length); // each key read once
    expect(Math.max(...sizes)).toBeLessThanOrEqual(8);
    for (const k of keys) {
      const r = await s.get(k);
      expect(r.values.map(String)).toEqual(['v2']); // superseded, not a sibling
      expect(r.context).toEqual(results.get(k));
    }
    await s.close();
  });
});
