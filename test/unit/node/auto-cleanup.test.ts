import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { AutoCleanup } from '../../../src/node/topology/auto-cleanup.js';
import type { Movement, RingView } from '../../../src/membership/ring-view.js';

function harness(delayMs: number) {
  let now = 0;
  let view = { fingerprint: 'a', movements: [] as Movement[] } as unknown as RingView;
  let owner = true;
  let fail: Error | undefined;
  const calls: number[] = [];
  const auto = new AutoCleanup({
    delayMs,
    now: () => now,
    view: () => view,
    owner: () => owner,
    cleanup: async () => {
      calls.push(now);
      if (fail) throw fail;
      return { deleted: 1, kept: 0, ranges: 1 };
    },
    log: pino({ level: 'silent' }),
  });
  const at = async (ms: number) => {
    now = ms;
    auto.tick();
    await new Promise((r) => setImmediate(r));
  };
  return {
    at,
    calls,
    set: (o: { fingerprint?: string; moving?: boolean; owner?: boolean; fail?: Error }) => {
      view = {
        fingerprint: o.fingerprint ?? view.fingerprint,
        movements: o.moving ? [{ kind: 'join', node: 'x', driver: 'x' }] : [],
      } as unknown as RingView;
      if (o.owner !== undefined) owner = o.owner;
      fail = o.fail;
    },
  };
}

describe('automatic cleanup', () => {
  it('cleans once ownership stood still for the delay, once per ownership', async () => {
    const h = harness(1000);
    await h.at(0);
    await h.at(999);
    expect(h.calls).toEqual([]);
    await h.at(1000);
    expect(h.calls).toEqual([1000]);
    await h.at(5000);
    expect(h.calls).toEqual([1000]); // the same ownership: not again
    h.set({ fingerprint: 'b' });
    await h.at(5500); // a new ownership: the delay starts again
    await h.at(6400);
    expect(h.calls).toEqual([1000]);
    await h.at(6500);
    expect(h.calls).toEqual([1000, 6500]);
  });

  it('never while a change runs or the node is not a normal owner; the delay counts from when it ends', async () => {
    const h = harness(1000);
    h.set({ moving: true });
    await h.at(0);
    await h.at(5000);
    expect(h.calls).toEqual([]);
    h.set({ moving: false });
    await h.at(6000);
    await h.at(6999);
    expect(h.calls).toEqual([]);
    h.set({ owner: false });
    await h.at(8000);
    expect(h.calls).toEqual([]);
    h.set({ owner: true });
    await h.at(8500);
    await h.at(9500);
    expect(h.calls).toEqual([9500]);
  });

  it('a refused cleanup is tried again after another delay; 0 turns it off', async () => {
    const h = harness(1000);
    h.set({ fail: new Error('the ring changed during cleanup; run it again') });
    await h.at(0);
    await h.at(1000);
    h.set({});
    await h.at(1999);
    expect(h.calls).toEqual([1000]);
    await h.at(2000);
    expect(h.calls).toEqual([1000, 2000]);
    await h.at(9000);
    expect(h.calls).toEqual([1000, 2000]);
    const off = harness(0);
    await off.at(0);
    await off.at(10 ** 9);
    expect(off.calls).toEqual([]);
  });
});
