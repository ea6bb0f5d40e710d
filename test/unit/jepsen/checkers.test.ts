import { describe, expect, it } from 'vitest';
import { availability, checkRegister, checkSet, type Op } from '../../../test/jepsen/checkers.js';
import { buckets, timelineSvg } from '../../../test/jepsen/timeline.js';

describe('the set checker', () => {
  const attempted = new Map([['1', 'a'], ['2', 'a'], ['3', 'b'], ['4', 'b']]);

  it('counts lost, unexpected and recovered elements', () => {
    const final = new Map([['a', new Set(['1', '2'])], ['b', new Set(['4', '9'])]]);
    const r = checkSet(attempted, new Set(['1', '3']), final);
    expect(r).toEqual({ attempted: 4, acknowledged: 2, lost: ['b:3'], unexpected: ['b:9'], recovered: 2 });
  });

  it('an element found under another key than it was added to is unexpected, and lost where it belonged', () => {
    const r = checkSet(attempted, new Set(['1']), new Map([['b', new Set(['1'])]]));
    expect(r.lost).toEqual(['a:1']);
    expect(r.unexpected).toEqual(['b:1']);
  });
});

describe('the register checker', () => {
  const w = (key: string, acked: boolean, observed: string[] = []) => ({ key, acked, observed });

  it('an acknowledged write survives as a sibling or through a causal successor, however long the chain', () => {
    const writes = new Map([
      ['w1', w('k', true)],
      ['w2', w('k', true, ['w1'])],
      ['w3', w('k', false, ['w2'])], // unknown outcome, yet present: covers w1 and w2
      ['w4', w('k', true)], // concurrent blind write: a sibling
    ]);
    const r = checkRegister(writes, new Map([['k', ['w3', 'w4']]]));
    expect(r).toMatchObject({ lost: [], unexpected: [], acknowledged: 3, superseded: 2 });
  });

  it('finds a lost update: an acknowledged write that nothing present descends from', () => {
    const writes = new Map([
      ['w1', w('k', true)],
      ['w2', w('k', true)],
      ['w3', w('k', true, ['w1'])],
    ]);
    expect(checkRegister(writes, new Map([['k', ['w3']]])).lost).toEqual(['k=w2']);
  });

  it('a successor on another key covers nothing, and a value nobody wrote is unexpected', () => {
    const writes = new Map([
      ['w1', w('k', true)],
      ['w2', w('j', true, ['w1'])],
    ]);
    const r = checkRegister(writes, new Map([['k', ['zz']], ['j', ['w2']]]));
    expect(r.lost).toEqual(['k=w1']);
    expect(r.unexpected).toEqual(['k=zz']);
  });
});

describe('availability', () => {
  const op = (startMs: number, outcome: Op['outcome']): Op => ({ workload: 'set', startMs, endMs: startMs + 10, outcome });

  it('is the fraction that succeeded during each window and after its heal, with the time until every operation succeeded again', () => {
    const ops = [op(0, 'ok'), op(1000, 'fail'), op(1500, 'unknown'), op(1800, 'ok'), op(2100, 'fail'), op(2600, 'ok'), op(3000, 'ok'), op(3500, 'ok'), op(9000, 'ok')];
    const a = availability(ops, [{ kind: 'kill', label: 'kill -9 n1', startMs: 1000, endMs: 2000 }], 2000);
    expect(a.windows[0]).toMatchObject({ ops: 3, during: 1 / 3, after: 3 / 4 });
    expect(a.windows[0]!.recoveredInMs).toBe(250); // from 2250 ms (in 250 ms steps) the next second holds only successes
    expect(a.byKind['kill']).toMatchObject({ faults: 1, measured: 1, during: 1 / 3, after: 3 / 4, worstRecoveryMs: 250 });
    expect(a.overall).toBeCloseTo(6 / 9);
    expect(a.quiet).toBeCloseTo(5 / 6);
  });

  it('leaves out of the seconds after a heal the operations that another fault covers', () => {
    const ops = [op(1100, 'ok'), op(1300, 'fail'), op(1600, 'fail'), op(2500, 'ok')];
    const a = availability(ops, [{ kind: 'kill', label: 'a', startMs: 0, endMs: 1000 }, { kind: 'pause', label: 'b', startMs: 1200, endMs: 2000 }], 2000);
    expect(a.windows[0]).toMatchObject({ after: 1, recoveredInMs: 0 });
    expect(a.windows[1]).toMatchObject({ during: 0, after: 1 });
  });

  it('says nothing of a heal whose aftermath another fault covers whole', () => {
    const ops = [op(1100, 'fail'), op(2500, 'ok')];
    const a = availability(ops, [{ kind: 'kill', label: 'a', startMs: 0, endMs: 1000 }, { kind: 'membership', label: 'b', startMs: 500, endMs: 4000 }], 2000);
    expect(a.windows[0]).toMatchObject({ after: undefined, recoveredInMs: undefined });
    expect(a.byKind['kill']).toMatchObject({ faults: 1, measured: 0, after: undefined, worstRecoveryMs: undefined });
  });

  it('says a kind never recovered within the time after the heal when it did not', () => {
    const a = availability([op(100, 'fail'), op(1200, 'fail')], [{ kind: 'pause', label: 'x', startMs: 0, endMs: 1000 }], 1000);
    expect(a.byKind['pause']!.worstRecoveryMs).toBeUndefined();
  });
});

describe('the timeline', () => {
  it('counts successes and failures per second, with the p99 latency', () => {
    const ops: Op[] = [
      { workload: 'set', startMs: 100, endMs: 150, outcome: 'ok' },
      { workload: 'set', startMs: 200, endMs: 1200, outcome: 'unknown' },
      { workload: 'register', startMs: 1100, endMs: 1110, outcome: 'ok' },
    ];
    expect(buckets(ops, 2)).toEqual({ ok: [1, 1], failed: [1, 0], p99: [1000, 10] });
  });

  it('draws an SVG with each fault window shaded and labelled, escaping the labels', () => {
    const svg = timelineSvg('t <1>', [{ workload: 'set', startMs: 0, endMs: 5, outcome: 'ok' }], [{ kind: 'partition', label: 'halves: {a} | {b}', startMs: 1000, endMs: 3000 }], 5000);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('t &lt;1&gt;');
    expect(svg).toContain('<title>partition: halves: {a} | {b}</title>');
    expect(svg.match(/fill-opacity="0.25"/g)).toHaveLength(1);
  });

  it('labels windows only where there is room (three rows), and grows wider for long runs', () => {
    const windows = [0, 1, 2, 3].map((i) => ({ kind: 'kill', label: `kill -9 n${i}`, startMs: 1000 + i, endMs: 2000 }));
    const svg = timelineSvg('t', [], windows, 10_000);
    expect(svg.match(/<text[^>]*>kill -9 n\d<\/text>/g)).toHaveLength(3);
    expect(svg.match(/<title>kill: kill -9 n\d<\/title>/g)).toHaveLength(4);
    expect(timelineSvg('t', [], [], 1_800_000)).toMatch(/^<svg [^>]*width="4620"/);
  });
});
