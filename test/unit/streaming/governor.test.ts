import { describe, expect, it } from 'vitest';
import { INITIAL_GOVERNOR, govern, type GovernorState } from '../../../src/streaming/governor.js';

describe('the background-work governor', () => {
  it('learns the idle p99 while nothing runs in the background', () => {
    let s: GovernorState = INITIAL_GOVERNOR;
    s = govern(s, { p99: 10, loopDelay: 1, background: false });
    expect(s.idleP99).toBe(10);
    s = govern(s, { p99: 20, loopDelay: 1, background: false });
    expect(s.idleP99).toBeCloseTo(12); // moving average, weight 0.2
    s = govern(s, { p99: undefined, loopDelay: 1, background: false });
    expect(s.idleP99).toBeCloseTo(12);
  });

  it('halves the share at once when the foreground p99 passes 2x idle, and adds back slowly when it is fine', () => {
    let s: GovernorState = { share: 1, idleP99: 10 };
    s = govern(s, { p99: 25, loopDelay: 1, background: true });
    expect(s.share).toBe(0.5);
    s = govern(s, { p99: 25, loopDelay: 1, background: true });
    expect(s.share).toBe(0.25);
    s = govern(s, { p99: 15, loopDelay: 1, background: true });
    expect(s.share).toBeCloseTo(0.35);
    // The idle figure is not learnt from a window with background work.
    expect(s.idleP99).toBe(10);
  });

  it('backs off on event-loop delay alone, never below the minimum share', () => {
    let s: GovernorState = { share: 1, idleP99: undefined };
    for (let i = 0; i < 20; i++) s = govern(s, { p99: undefined, loopDelay: 120, background: true });
    expect(s.share).toBe(0.05);
    s = govern(s, { p99: 3, loopDelay: 2, background: true });
    expect(s.share).toBeCloseTo(0.15);
  });

  it('ignores latencies under the noise floor, and takes its factor from the options', () => {
    expect(govern({ share: 1, idleP99: 0.5 }, { p99: 4, loopDelay: 1, background: true }).share).toBe(1);
    expect(
      govern({ share: 1, idleP99: 10 }, { p99: 25, loopDelay: 1, background: true }, { latencyFactor: 3 }).share,
    ).toBe(1);
  });
});
