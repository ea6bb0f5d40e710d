/**
 * The short form of `npm run soak:cluster`: 5 real processes, blind puts at W=2 for 25 s
 * while nodes are killed (-9) and restarted or paused; at the end no acknowledged value
 * is missing and none appears that nobody wrote.
 */
import { expect, it } from 'vitest';
import { runSetCheck } from './set-check.js';

it('loses no acknowledged write while nodes are killed, restarted and paused (5 nodes, W=2, R=3)', async () => {
  // 300 keys × 90 puts stays under the 100-sibling cap (blind puts add a sibling each).
  const r = await runSetCheck({ nodes: 5, keys: 300, workers: 8, maxOps: 27_000, seconds: 25, faultEveryMs: 5000, faultForMs: 3000 });
  expect(r.faults.length).toBeGreaterThanOrEqual(2);
  expect(r.acknowledged).toBeGreaterThan(r.attempted / 2);
  expect(r.lost).toEqual([]);
  expect(r.unexpected).toEqual([]);
}, 240_000);
