/**
 * The client's view of node health (health.ts) and its hedging arithmetic (hedging.ts),
 * on an injected clock: when a node counts as stopped, the order candidates are tried
 * in, the hedge delay, and the budget of extra calls.
 */
import { describe, expect, it } from 'vitest';
import { NodeHealth } from '../../../src/client/health.js';
import { HedgeDelay, RetryBudget } from '../../../src/client/hedging.js';

function clock(): { now: () => number; advance(ms: number): void } {
  let t = 1000;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe('NodeHealth', () => {
  it('takes a node with calls in flight and no answer for stallMs as stopped; an answer brings it back', () => {
    const c = clock();
    const h = new NodeHealth({ stallMs: 250, now: c.now });
    h.sent('a');
    h.sent('b');
    c.advance(200);
    h.ended('b', 'answered', 200);
    expect(h.unresponsive('a')).toBe(false);
    c.advance(100); // a: 300 ms without an answer; b answered 100 ms ago
    expect(h.unresponsive('a')).toBe(true);
    expect(h.healthy('a')).toBe(false);
    h.ended('a', 'answered', 300);
    expect(h.unresponsive('a')).toBe(false);
  });

  it('counts an answer without a time (a batch) as progress, but not in the latency it orders nodes by', () => {
    const c = clock();
    const h = new NodeHealth({ stallMs: 250, now: c.now });
    h.sent('a');
    h.ended('a', 'answered', 10);
    const before = h.score('a');
    h.sent('a');
    c.advance(300);
    expect(h.unresponsive('a')).toBe(true);
    h.ended('a', 'answered', NaN);
    expect(h.unresponsive('a')).toBe(false);
    expect(h.score('a')).toBe(before);
  });

  it("blames no node for the client's own stall: after a timer fired late, silences start again", () => {
    const c = clock();
    const h = new NodeHealth({ stallMs: 250, now: c.now });
    h.sent('a');
    c.advance(1000);
    h.late(100); // a little late: not a stall of the client's
    expect(h.unresponsive('a')).toBe(true);
    h.late(900);
    expect(h.unresponsive('a')).toBe(false);
    c.advance(251);
    expect(h.unresponsive('a')).toBe(true);
  });

  it('counts a node that has nothing in flight as making progress: an idle node is never stopped', () => {
    const c = clock();
    const h = new NodeHealth({ stallMs: 250, now: c.now });
    h.sent('a');
    h.ended('a', 'answered', 1);
    c.advance(10_000);
    h.sent('a'); // its first call in flight after a long idle: the silence starts now
    h.sent('b');
    h.ended('b', 'answered', 1);
    expect(h.unresponsive('a')).toBe(false);
  });

  it('a timed-out call is no progress; a refusal is (the node answered)', () => {
    const c = clock();
    const h = new NodeHealth({ stallMs: 250, now: c.now });
    h.sent('a');
    h.sent('a');
    c.advance(300);
    h.ended('a', 'timeout', 300);
    expect(h.unresponsive('a')).toBe(true);
    h.ended('a', 'refused', 300);
    expect(h.inFlight('a')).toBe(0);
    expect(h.unresponsive('a')).toBe(false);
  });

  it('orders healthy nodes first, the better of the first two leading, then the cluster-down ones, then the unhealthy', () => {
    const c = clock();
    const h = new NodeHealth({ stallMs: 250, now: c.now });
    for (const [a, ms] of [
      ['fast', 2],
      ['slow', 40],
      ['mid', 10],
    ] as const) {
      h.sent(a);
      h.ended(a, 'answered', ms);
    }
    expect(h.order(['slow', 'fast', 'mid'])).toEqual(['fast', 'mid', 'slow']);
    expect(h.order(['mid', 'slow', 'fast'])).toEqual(['mid', 'fast', 'slow']);
    h.avoid('fast', 1000);
    expect(h.order(['fast', 'mid', 'slow'], (a) => a === 'mid')).toEqual(['slow', 'mid', 'fast']);
    c.advance(1001);
    expect(h.order(['fast', 'mid', 'slow'])[0]).toBe('fast');
  });

  it('keeps the turn among nodes as good as each other (within 1.5×), so load spreads', () => {
    const c = clock();
    const h = new NodeHealth({ stallMs: 250, now: c.now });
    for (const [a, ms] of [
      ['x', 10],
      ['y', 12],
      ['z', 14],
    ] as const) {
      h.sent(a);
      h.ended(a, 'answered', ms);
    }
    expect(h.order(['y', 'z', 'x'])).toEqual(['y', 'z', 'x']);
    expect(h.order(['z', 'x', 'y'])).toEqual(['z', 'x', 'y']);
  });

  it('weighs calls in flight: a busy node scores worse; an old latency figure decays to the typical one', () => {
    const c = clock();
    const h = new NodeHealth({ stallMs: 250, now: c.now });
    for (const a of ['p', 'q']) {
      h.sent(a);
      h.ended(a, 'answered', 10);
    }
    for (let i = 0; i < 5; i++) h.sent('p');
    expect(h.score('p')).toBeGreaterThan(4 * h.score('q'));
    const g = new NodeHealth({ stallMs: 250, now: c.now });
    g.sent('slow');
    g.ended('slow', 'answered', 1000);
    for (let i = 0; i < 50; i++) {
      g.sent('ok');
      g.ended('ok', 'answered', 10);
    }
    const before = g.score('slow');
    c.advance(5000);
    expect(g.score('slow')).toBeLessThan(before / 5);
  });
});

describe('HedgeDelay', () => {
  it('waits maxMs until it has samples, then the percentile of recent latencies, clamped, per kind', () => {
    const d = new HedgeDelay({ percentile: 0.99, minMs: 5, maxMs: 1000 });
    expect(d.delay('read')).toBe(1000);
    for (let i = 1; i <= 128; i++) d.add('read', i); // 1..128 ms: p99 is the 127th
    expect(d.delay('read')).toBe(127);
    expect(d.delay('write')).toBe(1000);
    for (let i = 0; i < 600; i++) d.add('write', 1);
    expect(d.delay('write')).toBe(5); // clamped up
    for (let i = 0; i < 600; i++) d.add('write', 50_000);
    expect(d.delay('write')).toBe(1000); // clamped down
    // The window is the recent samples: old fast ones are forgotten.
    for (let i = 0; i < 600; i++) d.add('write', 20);
    expect(d.delay('write')).toBe(20);
  });

  it('refuses a percentile or bounds that make no sense', () => {
    expect(() => new HedgeDelay({ percentile: 1.5 })).toThrow(/percentile must be 0.5 to 0.999/);
    expect(() => new HedgeDelay({ minMs: 50, maxMs: 10 })).toThrow(/minMs <= maxMs/);
  });
});

describe('RetryBudget', () => {
  it('starts full, lends one token per extra call, and refills by ratio per call up to maxTokens', () => {
    const b = new RetryBudget({ ratio: 0.1, maxTokens: 3 });
    expect([b.take(), b.take(), b.take(), b.take()]).toEqual([true, true, true, false]);
    for (let i = 0; i < 9; i++) b.earn();
    expect(b.take()).toBe(false); // 0.9 tokens
    b.earn();
    expect(b.take()).toBe(true);
    for (let i = 0; i < 1000; i++) b.earn();
    expect(b.tokens).toBe(3);
  });

  it('bounds extra calls to ratio of calls over time, after the burst', () => {
    const b = new RetryBudget({ ratio: 0.05, maxTokens: 10 });
    let extra = 0;
    for (let i = 0; i < 10_000; i++) {
      b.earn();
      if (b.take()) extra++; // a client that would hedge every call
    }
    expect(extra).toBeLessThanOrEqual(10 + 0.05 * 10_000);
    expect(extra).toBeGreaterThanOrEqual(0.05 * 10_000 - 1);
  });

  it('refuses a ratio or size that makes no sense', () => {
    expect(() => new RetryBudget({ ratio: 0 })).toThrow(/ratio must be in \[0.001, 1\]/);
    expect(() => new RetryBudget({ maxTokens: 0.5 })).toThrow(/maxTokens must be at least 1/);
  });
});
