/**
 * Expiry under faults (docs/reads-and-writes.md#expiry): 4 real nodes, keys written with
 * TTLs of 0.3–2 s and read back all the while, under partitions, clock skews of 0.5–2 s
 * (strobed too), kill -9 with restarts whose clocks run behind, then heal, hints, a
 * repair of every range and a final read of every key. No read may show a value past its
 * expiry plus the clock skew bound the nemesis allowed (checkers.ts checkExpiry): not a
 * late one, and not one that came back through repair, a hint or a restarted replica.
 */
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { capabilities } from '../../testkit/jepsen/net.js';
import { runJepsen } from './run.js';

const RESULTS = join(import.meta.dirname, '../../results/jepsen');
const root = capabilities().namespaces === true;

it('never shows a value past its expiry plus the skew bound, under partitions, skew, kills and repair', async () => {
  const lines: string[] = [];
  const r = await runJepsen({
    timeS: 25,
    nodes: 4,
    nemeses: root ? ['partition', 'clock', 'kill'] : ['clock', 'kill'],
    workloads: ['expiry'],
    seed: 20261203,
    everyMs: 3000,
    workers: 6,
    clockSkewMs: { min: 500, max: 2000 },
    resultsDir: RESULTS,
    requireAll: false,
    log: (l) => lines.push(l),
  });
  const summary = `${lines.join('\n')}\n${JSON.stringify({ faults: r.faults, violations: r.violations, expiry: r.expiry }, null, 1)}`;
  expect(r.violations, summary).toEqual([]);
  expect(r.expiry!.late, summary).toBe(0);
  expect(r.expiry!.unexpected).toEqual([]);
  // Enough happened to mean something: values written and acknowledged, reads that showed them, skews in force.
  expect(r.expiry!.acknowledged, summary).toBeGreaterThan(200);
  expect(r.expiry!.judged, summary).toBeGreaterThan(100);
  expect(r.expiry!.maxSkewMs, summary).toBeGreaterThan(0);
  const kinds = new Set(r.faults.filter((f) => f.skipped === undefined).map((f) => f.kind));
  for (const k of root ? ['partition', 'clock', 'kill'] : ['clock', 'kill'])
    expect(kinds.has(k as never), `${k} applied\n${summary}`).toBe(true);
  expect(r.convergence.converged, summary).toBe(true);
}, 240_000);
