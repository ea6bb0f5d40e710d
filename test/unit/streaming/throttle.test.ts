import { describe, expect, it } from 'vitest';
import { Throttle } from '../../../src/streaming/throttle.js';

function fakeClock() {
  let now = 0;
  const slept: number[] = [];
  return {
    now: () => now,
    sleep: async (ms: number) => {
      slept.push(ms);
      now += ms;
    },
    slept,
    advance: (ms: number) => (now += ms),
  };
}

describe('the stream throttle', () => {
  it('lets a second of bytes through, then makes the sender wait at the rate', async () => {
    const c = fakeClock();
    const t = new Throttle(1000, c);
    await t.take(1000);
    expect(c.slept).toEqual([]);
    await t.take(500);
    expect(c.slept).toEqual([500]);
    c.advance(1000); // a full second's worth again (never more: the burst is one second)
    await t.take(1000);
    expect(c.slept).toEqual([500]);
    await t.take(1000);
    expect(c.slept).toEqual([500, 1000]);
    expect(t.taken).toBe(3500);
  });

  it('unthrottled (Infinity) never waits; a new rate applies to the next take', async () => {
    const c = fakeClock();
    const t = new Throttle(Infinity, c);
    await t.take(1e12);
    expect(c.slept).toEqual([]);
    t.rate = 100;
    await t.take(50);
    expect(c.slept).toEqual([500]);
  });
});
