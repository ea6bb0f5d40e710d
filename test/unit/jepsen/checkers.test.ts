import { describe, expect, it } from 'vitest';
import {
  availability,
  checkCounter,
  checkExpiry,
  checkMap,
  checkOrSet,
  checkRegister,
  checkSet,
  faultImpact,
  offsetRange,
  percentile,
  type CounterIncrement,
  type ExpiryWrite,
  type OffsetChange,
  type MapRequest,
  type Op,
  type OrSetElement,
  type Window,
} from '../../../test/jepsen/checkers.js';
import { buckets, timelineSvg } from '../../../test/jepsen/timeline.js';

describe('the set checker', () => {
  const attempted = new Map([
    ['1', 'a'],
    ['2', 'a'],
    ['3', 'b'],
    ['4', 'b'],
  ]);

  it('counts lost, unexpected and recovered elements', () => {
    const final = new Map([
      ['a', new Set(['1', '2'])],
      ['b', new Set(['4', '9'])],
    ]);
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
    const r = checkRegister(
      writes,
      new Map([
        ['k', ['zz']],
        ['j', ['w2']],
      ]),
    );
    expect(r.lost).toEqual(['k=w1']);
    expect(r.unexpected).toEqual(['k=zz']);
  });
});

describe('availability', () => {
  const op = (startMs: number, outcome: Op['outcome']): Op => ({
    workload: 'set',
    startMs,
    endMs: startMs + 10,
    outcome,
  });

  it('is the fraction that succeeded during each window and after its heal, with the time until every operation succeeded again', () => {
    const ops = [
      op(0, 'ok'),
      op(1000, 'fail'),
      op(1500, 'unknown'),
      op(1800, 'ok'),
      op(2100, 'fail'),
      op(2600, 'ok'),
      op(3000, 'ok'),
      op(3500, 'ok'),
      op(9000, 'ok'),
    ];
    const a = availability(ops, [{ kind: 'kill', label: 'kill -9 n1', startMs: 1000, endMs: 2000 }], 2000);
    expect(a.windows[0]).toMatchObject({ ops: 3, during: 1 / 3, after: 3 / 4 });
    expect(a.windows[0]!.recoveredInMs).toBe(250); // from 2250 ms (in 250 ms steps) the next second holds only successes
    expect(a.byKind['kill']).toMatchObject({
      faults: 1,
      measured: 1,
      during: 1 / 3,
      after: 3 / 4,
      worstRecoveryMs: 250,
    });
    expect(a.overall).toBeCloseTo(6 / 9);
    expect(a.quiet).toBeCloseTo(5 / 6);
  });

  it('leaves out of the seconds after a heal the operations that another fault covers', () => {
    const ops = [op(1100, 'ok'), op(1300, 'fail'), op(1600, 'fail'), op(2500, 'ok')];
    const a = availability(
      ops,
      [
        { kind: 'kill', label: 'a', startMs: 0, endMs: 1000 },
        { kind: 'pause', label: 'b', startMs: 1200, endMs: 2000 },
      ],
      2000,
    );
    expect(a.windows[0]).toMatchObject({ after: 1, recoveredInMs: 0 });
    expect(a.windows[1]).toMatchObject({ during: 0, after: 1 });
  });

  it('says nothing of a heal whose aftermath another fault covers whole', () => {
    const ops = [op(1100, 'fail'), op(2500, 'ok')];
    const a = availability(
      ops,
      [
        { kind: 'kill', label: 'a', startMs: 0, endMs: 1000 },
        { kind: 'membership', label: 'b', startMs: 500, endMs: 4000 },
      ],
      2000,
    );
    expect(a.windows[0]).toMatchObject({ after: undefined, recoveredInMs: undefined });
    expect(a.byKind['kill']).toMatchObject({ faults: 1, measured: 0, after: undefined, worstRecoveryMs: undefined });
  });

  it('says a kind never recovered within the time after the heal when it did not', () => {
    const a = availability(
      [op(100, 'fail'), op(1200, 'fail')],
      [{ kind: 'pause', label: 'x', startMs: 0, endMs: 1000 }],
      1000,
    );
    expect(a.byKind['pause']!.worstRecoveryMs).toBeUndefined();
  });
});

describe('throughput and p99 per kind of fault', () => {
  /** `n` operations evenly spread over [from, to), each taking `ms`, with `outcome`. */
  const spread = (from: number, to: number, n: number, ms: number, outcome: Op['outcome'] = 'ok'): Op[] =>
    Array.from({ length: n }, (_, i) => ({
      workload: 'set' as const,
      startMs: from + ((to - from) * i) / n,
      endMs: from + ((to - from) * i) / n + ms,
      outcome,
    }));

  // 20 s of workload. Quiet: [0, 8 s) and [12 s, 14 s) and [18 s, 20 s) = 12 s, 100 ok/s at 10 ms
  // with 1% at 50 ms (so the quiet p99 is 10 ms by nearest rank: 12 of 1,200 are slower).
  // An isolate partition [8 s, 10 s): 30 ok/s at 100 ms and 10 failures at 2,000 ms.
  // A halves partition [10 s, 12 s): 50 ok/s at 20 ms.
  // A cpu slow fault [14 s, 18 s): 40 ok/s, 95% at 10 ms and 5% at 400 ms.
  const quietOps = [
    ...spread(0, 8000, 800, 10),
    ...spread(12_000, 14_000, 200, 10),
    ...spread(18_000, 20_000, 200, 10),
  ];
  for (let i = 0; i < 12; i++) quietOps[i * 100] = { ...quietOps[i * 100]!, endMs: quietOps[i * 100]!.startMs + 50 };
  const ops: Op[] = [
    ...quietOps,
    ...spread(8000, 10_000, 60, 100),
    ...spread(8000, 10_000, 10, 2000, 'fail'),
    ...spread(10_000, 12_000, 100, 20),
    ...spread(14_000, 18_000, 152, 10),
    ...spread(14_000, 18_000, 8, 400),
    // Started after the workload's end: not counted.
    ...spread(20_000, 21_000, 50, 1, 'fail'),
  ];
  const windows: Window[] = [
    { kind: 'partition', shape: 'isolate', label: 'isolate: n1', startMs: 8000, endMs: 10_000 },
    { kind: 'partition', shape: 'halves', label: 'halves: …', startMs: 10_000, endMs: 12_000 },
    { kind: 'slow', shape: 'cpu', label: 'cpu: n3 throttled to 10% of a core', startMs: 14_000, endMs: 18_000 },
  ];
  const r = faultImpact(ops, windows, 20_000);

  it('measures quiet time outside every window', () => {
    expect(r.quiet).toEqual({ seconds: 12, ops: 1200, okPerSec: 100, p99Ms: 10, failed: 0 });
  });

  it('gives ok ops/s and p99 during each kind and shape ÷ quiet, and the failures during', () => {
    expect(r.byKind['partition:isolate']).toEqual({
      faults: 1,
      seconds: 2,
      ops: 70,
      okPerSec: 30,
      throughput: 0.3,
      p99Ms: 2000,
      p99: 200,
      failed: 10,
    });
    expect(r.byKind['partition:halves']).toEqual({
      faults: 1,
      seconds: 2,
      ops: 100,
      okPerSec: 50,
      throughput: 0.5,
      p99Ms: 20,
      p99: 2,
      failed: 0,
    });
    // Both shapes together: 160 ok over 4 s; p99 of 170 operations: the 169th by nearest rank (the slowest 10 took 2 s).
    expect(r.byKind['partition']).toEqual({
      faults: 2,
      seconds: 4,
      ops: 170,
      okPerSec: 40,
      throughput: 0.4,
      p99Ms: 2000,
      p99: 200,
      failed: 10,
    });
    expect(r.byKind['slow']).toMatchObject({
      faults: 1,
      seconds: 4,
      ops: 160,
      okPerSec: 40,
      throughput: 0.4,
      p99Ms: 400,
      p99: 40,
      failed: 0,
    });
    expect(r.byKind['slow:cpu']).toEqual(r.byKind['slow']);
  });

  it('counts overlapping windows of a kind once, and says n/a with no quiet time', () => {
    const w: Window[] = [
      { kind: 'kill', label: 'a', startMs: 0, endMs: 6000 },
      { kind: 'kill', label: 'b', startMs: 4000, endMs: 10_000 },
    ];
    const x = faultImpact(spread(0, 10_000, 100, 5), w, 10_000);
    expect(x.quiet).toMatchObject({ seconds: 0, ops: 0, p99Ms: undefined });
    expect(x.byKind['kill']).toMatchObject({
      faults: 2,
      seconds: 10,
      ops: 100,
      okPerSec: 10,
      throughput: undefined,
      p99: undefined,
    });
  });

  it('percentile is the nearest rank', () => {
    expect(percentile([], 99)).toBeUndefined();
    expect(percentile([5, 1, 3], 50)).toBe(3);
    expect(
      percentile(
        Array.from({ length: 100 }, (_, i) => i + 1),
        99,
      ),
    ).toBe(99);
    expect(
      percentile(
        Array.from({ length: 101 }, (_, i) => i + 1),
        99,
      ),
    ).toBe(100);
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
    const svg = timelineSvg(
      't <1>',
      [{ workload: 'set', startMs: 0, endMs: 5, outcome: 'ok' }],
      [{ kind: 'partition', label: 'halves: {a} | {b}', startMs: 1000, endMs: 3000 }],
      5000,
    );
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

describe('the expiry checker', () => {
  const write = (key: string, ttlMs: number, startMs: number, endMs: number, acked = true): ExpiryWrite => ({
    key,
    ttlMs,
    startMs,
    endMs,
    acked,
  });
  const writes = new Map([
    ['e1', write('k', 1000, 0, 100)],
    ['e2', write('k', 1000, 0, 100, false)],
  ]);

  it('a value read before its expiry is fine; one read after expiry plus no skew is late', () => {
    const ok = checkExpiry(writes, [{ key: 'k', values: ['e1'], startMs: 1100, endMs: 1150 }], []);
    expect(ok).toMatchObject({ late: 0, judged: 1, unexpected: [] });
    const late = checkExpiry(writes, [{ key: 'k', values: ['e1'], startMs: 1101, endMs: 1150 }], []);
    expect(late.late).toBe(1);
    expect(late.lateReads[0]).toMatchObject({ value: 'e1', boundMs: 1100 });
  });

  it("the skew bound is the writers' highest offset while the write ran less the readers' lowest while the read ran", () => {
    // A node 500 ms ahead during the write, another 300 ms behind during the read.
    const offsets: OffsetChange[] = [
      { id: 'n1', offsetMs: 500, fromMs: -50, toMs: -40 },
      { id: 'n1', offsetMs: 0, fromMs: 200, toMs: 210 },
      { id: 'n2', offsetMs: -300, fromMs: 1500, toMs: 1510 },
    ];
    expect(offsetRange(offsets, 0, 100)).toEqual({ max: 500, min: 0 });
    expect(offsetRange(offsets, 1800, 1900)).toEqual({ max: 0, min: -300 });
    expect(checkExpiry(writes, [{ key: 'k', values: ['e1'], startMs: 1900, endMs: 1950 }], offsets)).toMatchObject({
      late: 0,
      maxSkewMs: 800,
    });
    expect(checkExpiry(writes, [{ key: 'k', values: ['e1'], startMs: 1901, endMs: 1950 }], offsets).late).toBe(1);
    // A change may be in force anywhere between when it was asked and when its call returned.
    expect(offsetRange(offsets, 205, 205)).toEqual({ max: 500, min: 0 });
  });

  it('writes of unknown outcome are not judged; a value nobody wrote to the key is unexpected', () => {
    const r = checkExpiry(
      writes,
      [
        { key: 'k', values: ['e2', 'zz'], startMs: 99_999, endMs: 100_000 },
        { key: 'other', values: ['e1'], startMs: 0, endMs: 1 },
      ],
      [],
    );
    expect(r).toMatchObject({ late: 0, judged: 0, unexpected: ['k=zz', 'other=e1'] });
  });
});

describe('the counter checker', () => {
  const inc = (
    key: string,
    amount: number,
    startMs: number,
    endMs: number,
    outcome: CounterIncrement['outcome'],
  ): CounterIncrement => ({ key, amount, startMs, endMs, outcome });
  const history = [
    inc('a', 1, 0, 10, 'ok'),
    inc('a', 2, 5, 20, 'unknown'),
    inc('a', 4, 30, 40, 'ok'),
    inc('b', 3, 0, 5, 'fail'),
  ];

  it('passes a final value between the acknowledged and the attempted sums, counting unknowns that applied', () => {
    for (const [a, b, applied] of [
      [5n, 0n, 0],
      [7n, 0n, 2],
      [7n, 3n, 5],
    ] as const) {
      const r = checkCounter(
        history,
        [],
        new Map([
          ['a', a],
          ['b', b],
        ]),
      );
      expect([r.lost, r.doubled, r.badReads]).toEqual([[], [], []]);
      expect(r.unknownApplied).toBe(applied);
    }
  });

  it('finds a lost increment, one counted twice, and a value nobody incremented', () => {
    const r = checkCounter(
      history,
      [],
      new Map([
        ['a', 4n],
        ['b', 6n],
        ['c', 1n],
      ]),
    );
    expect(r.lost).toEqual(['a: final 4 < 5 acknowledged']);
    expect(r.doubled).toEqual(['b: final 6 > 3 attempted', 'c: final 1, never incremented']);
  });

  it('finds a read above what was invoked before it ended, or below zero', () => {
    const reads = [
      { key: 'a', value: 3n, startMs: 6, endMs: 8 }, // 1 + 2 invoked by 8: fine
      { key: 'a', value: 7n, startMs: 21, endMs: 25 }, // 4 was invoked at 30: too high
      { key: 'a', value: -1n, startMs: 50, endMs: 60 },
    ];
    const r = checkCounter(
      history,
      reads,
      new Map([
        ['a', 7n],
        ['b', 0n],
      ]),
    );
    expect(r.badReads).toHaveLength(2);
    expect(r.badReads[0]).toMatch(/^a read 7 at 21-25 ms; at most 3/);
    expect(r.badReads[1]).toMatch(/^a read -1/);
  });
});

describe('the observed-remove set checker', () => {
  const el = (key: string, add: OrSetElement['add'], remove?: OrSetElement['remove']): OrSetElement => ({
    key,
    add,
    remove,
  });
  const elements = new Map([
    ['1', el('k', 'ok')],
    ['2', el('k', 'ok', 'ok')],
    ['3', el('k', 'unknown')],
    ['4', el('k', 'ok', 'unknown')],
    ['5', el('j', 'ok')],
  ]);

  it('passes what may be there, unknowns either way', () => {
    for (const k of [new Set(['1']), new Set(['1', '3', '4'])]) {
      const r = checkOrSet(
        elements,
        new Map([
          ['k', k],
          ['j', new Set(['5'])],
        ]),
      );
      expect([r.lost, r.resurrected, r.unexpected]).toEqual([[], [], []]);
      expect([r.elements, r.acknowledged, r.removed]).toEqual([5, 4, 1]);
    }
  });

  it('finds a lost add, a removed element back, and an element on the wrong key or never added', () => {
    const r = checkOrSet(
      elements,
      new Map([
        ['k', new Set(['2', '5', '9'])],
        ['j', new Set<string>()],
      ]),
    );
    expect(r.lost).toEqual(['k:1', 'j:5']);
    expect(r.resurrected).toEqual(['k:2']);
    expect(r.unexpected).toEqual(['k:5', 'k:9']);
  });
});

describe('the map checker', () => {
  const req = (key: string, element: string, amount: number, outcome: MapRequest['outcome']): MapRequest => ({
    key,
    element,
    amount,
    outcome,
  });
  const requests = [
    req('k', '1', 2, 'ok'),
    req('k', '2', 3, 'unknown'),
    req('k', '3', 5, 'ok'),
    req('j', '4', 1, 'fail'),
  ];
  const final = (counter: bigint, elements: string[], last?: string) => ({
    counter,
    elements: new Set(elements),
    last,
  });

  it('passes a map whose counter is the sum of the updates its set shows, unknowns either way', () => {
    for (const k of [final(7n, ['1', '3'], '3'), final(10n, ['1', '2', '3'], '2')]) {
      const r = checkMap(
        requests,
        new Map([
          ['k', k],
          ['j', final(0n, [])],
        ]),
      );
      expect([r.lost, r.torn, r.unexpected]).toEqual([[], [], []]);
      expect([r.requests, r.acknowledged, r.keys]).toEqual([4, 2, 2]);
    }
  });

  it('finds a lost update, an update applied in part or counted twice, and elements or register values nobody wrote there', () => {
    expect(checkMap(requests, new Map([['k', final(2n, ['1'], '1')]])).lost).toEqual(['k: 3']);
    // An increment without its add (the counter runs ahead), or an add without its increment, or one counted twice.
    expect(checkMap(requests, new Map([['k', final(10n, ['1', '3'], '3')]])).torn).toHaveLength(1);
    expect(checkMap(requests, new Map([['k', final(2n, ['1', '3'], '3')]])).torn).toHaveLength(1);
    expect(checkMap(requests, new Map([['k', final(12n, ['1', '3'], '3')]])).torn).toHaveLength(1);
    const r = checkMap(
      requests,
      new Map([
        ['k', final(8n, ['1', '3', '4'], '2')],
        ['j', final(0n, [], '4')],
      ]),
    );
    expect(r.unexpected).toEqual([
      'k: element 4',
      "k: register 2 is no applied update's",
      "j: register 4 is no applied update's",
    ]);
    expect(checkMap(requests, new Map([['k', final(7n, ['1', '3'])]])).unexpected).toEqual([
      "k: register (none) is no applied update's",
    ]);
  });
});
