import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PhiDetector, erfc, phi } from '../../../src/membership/phi-detector.js';

describe('phi-accrual detector', () => {
  it('computes phi as -log10 of the normal tail', () => {
    expect(phi(1000, 1000, 100)).toBeCloseTo(Math.log10(2), 5); // at the mean: P = 0.5
    expect(phi(1000 + 100 * 5.612, 1000, 100)).toBeCloseTo(8, 1); // 5.6 sigma: 1e-8
    expect(phi(1e9, 1000, 100)).toBe(Infinity);
    expect(erfc(0)).toBeCloseTo(1, 6);
    expect(erfc(1)).toBeCloseTo(0.157299207, 6);
    expect(erfc(-1)).toBeCloseTo(1.842700793, 6);
  });

  it('grows with silence and convicts past the threshold', () => {
    const d = new PhiDetector({ threshold: 8 });
    for (let t = 0; t <= 60_000; t += 1000) d.report('p', t);
    expect(d.phi('p', 60_500)).toBeLessThan(1);
    expect(d.isAvailable('p', 62_000)).toBe(true);
    // mean 1 s + 1 s acceptable pause, sd floored at 0.5 s: phi 8 near 2 + 5.6 * 0.5 = 4.8 s.
    expect(d.isAvailable('p', 60_000 + 4_500)).toBe(true);
    expect(d.isAvailable('p', 60_000 + 5_200)).toBe(false);
    expect(d.phi('never-heard', 1e9)).toBe(0);
  });

  it('is more patient with a peer whose heartbeats are irregular', () => {
    const regular = new PhiDetector();
    const irregular = new PhiDetector();
    let t = 0;
    for (let i = 0; i < 200; i++) {
      regular.report('p', i * 1000);
      t += i % 2 ? 300 : 2700; // mean 1.5 s, sd 1.2 s
      irregular.report('p', t);
    }
    expect(irregular.phi('p', t + 6000)).toBeLessThan(regular.phi('p', 199_000 + 6000));
    expect(irregular.isAvailable('p', t + 6000)).toBe(true);
  });

  it('does not learn intervals longer than maxSampleMs (a restart or a pause is not normal)', () => {
    const d = new PhiDetector({ maxSampleMs: 4000 });
    for (let t = 0; t <= 20_000; t += 1000) d.report('p', t);
    d.report('p', 60_000); // a 40 s gap
    for (let t = 61_000; t <= 65_000; t += 1000) d.report('p', t);
    expect(d.isAvailable('p', 65_000 + 5_500)).toBe(false);
  });

  it('absorbs its own stall: after a long local pause no peer is convicted for the silence', () => {
    const d = new PhiDetector({ localPauseMs: 5000 });
    for (let t = 0; t <= 30_000; t += 1000) {
      d.report('p', t);
      expect(d.checkLocalPause(t)).toBe(0);
    }
    // The process stops for 12 s: no heartbeats processed, no interpretation either.
    expect(d.checkLocalPause(42_000)).toBe(12_000);
    expect(d.isAvailable('p', 42_000)).toBe(true);
    // Without the guard the same silence convicts.
    const unguarded = new PhiDetector();
    for (let t = 0; t <= 30_000; t += 1000) unguarded.report('p', t);
    expect(unguarded.isAvailable('p', 42_000)).toBe(false);
  });

  it('isAvailable agrees with phi < threshold (it compares the silence with where phi crosses it)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 50, max: 3000 }), { minLength: 0, maxLength: 50 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.double({ min: 1, max: 16, noNaN: true }),
        (intervals, silence, threshold) => {
          const d = new PhiDetector({ threshold });
          let t = 0;
          d.report('p', t);
          for (const i of intervals) d.report('p', (t += i));
          const p = d.phi('p', t + silence);
          if (Math.abs(p - threshold) > 1e-6) expect(d.isAvailable('p', t + silence)).toBe(p < threshold);
        },
      ),
    );
  });

  it('forgets a peer and refuses nonsense options', () => {
    const d = new PhiDetector();
    d.report('p', 0);
    d.forget('p');
    expect(d.has('p')).toBe(false);
    expect(() => new PhiDetector({ threshold: 0 })).toThrow(/positive/);
  });
});
