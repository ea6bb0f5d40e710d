/**
 * The CAS register's linearizability checker (test/jepsen/linearizability.ts) on
 * histories built to pass and to fail: each failing one is a known anomaly (a stale read,
 * a value that goes back, two CAS that both won, a lost acknowledged write), and each
 * passing one needs the search to find a non-obvious order or to place (or drop) an
 * operation of unknown outcome.
 */
import { describe, expect, it } from 'vitest';
import { checkKey, checkLinearizable, step, type CasOp, type HistoryOp } from '../../../test/jepsen/linearizability.js';

/** An operation on key k from `start` to `end` ms. */
const op = (start: number, end: number, o: CasOp, outcome: 'ok' | 'unknown' = 'ok', key = 'k'): HistoryOp => ({
  key,
  startMs: start,
  endMs: end,
  outcome,
  op: o,
});
const w = (value: string | null): CasOp => ({ kind: 'write', value });
const r = (value: string | null): CasOp => ({ kind: 'read', value });
const cas = (expect: string | null, value: string | null, applied: boolean, current?: string | null): CasOp => ({
  kind: 'cas',
  expect,
  value,
  applied,
  ...(current === undefined ? {} : { current }),
});

describe('the register model', () => {
  it('steps reads, writes and CAS by their outcomes', () => {
    expect(step('a', r('a'), 'ok')).toBe('a');
    expect(step('a', r('b'), 'ok')).toBeUndefined();
    expect(step(null, w('x'), 'ok')).toBe('x');
    expect(step('a', cas('a', 'b', true), 'ok')).toBe('b');
    expect(step('c', cas('a', 'b', true), 'ok')).toBeUndefined();
    expect(step('c', cas('a', 'b', false, 'c'), 'ok')).toBe('c');
    expect(step('c', cas('a', 'b', false, 'd'), 'ok')).toBeUndefined(); // the reply named another value than held
    expect(step('a', cas('a', 'b', false), 'ok')).toBeUndefined(); // it held what was expected, so it would have applied
    expect(step(null, cas(null, 'b', true), 'ok')).toBe('b'); // if absent
    expect(step('a', cas('a', 'b', true), 'unknown')).toBe('b');
    expect(step('c', cas('a', 'b', true), 'unknown')).toBeUndefined(); // not applied: the same as left out
  });
});

describe('histories that are linearizable', () => {
  it('sequential, and concurrent ones whose order the search must find', () => {
    expect(
      checkKey('k', [op(0, 1, w('a')), op(2, 3, r('a')), op(4, 5, cas('a', 'b', true)), op(6, 7, r('b'))]).linearizable,
    ).toBe(true);
    // Two overlapping writes; reads after both see the one that went last, and a read during both may see either.
    expect(
      checkKey('k', [op(0, 10, w('a')), op(1, 11, w('b')), op(2, 9, r('b')), op(12, 13, r('a'))]).linearizable,
    ).toBe(true);
    // A CAS that lost to a concurrent one, and said what it found.
    expect(
      checkKey('k', [
        op(0, 1, w('a')),
        op(2, 10, cas('a', 'b', true)),
        op(3, 11, cas('a', 'c', false, 'b')),
        op(12, 13, r('b')),
      ]).linearizable,
    ).toBe(true);
  });

  it('places a write of unknown outcome where a later read needs it, or leaves it out', () => {
    expect(checkKey('k', [op(0, 1, w('a')), op(2, 3, w('b'), 'unknown'), op(50, 51, r('b'))]).linearizable).toBe(true);
    expect(checkKey('k', [op(0, 1, w('a')), op(2, 3, w('b'), 'unknown'), op(50, 51, r('a'))]).linearizable).toBe(true);
    // Even long after it timed out: it may have been applied late.
    expect(
      checkKey('k', [op(0, 1, w('a')), op(2, 3, w('b'), 'unknown'), op(50, 51, r('a')), op(60, 61, r('b'))])
        .linearizable,
    ).toBe(true);
    // A CAS of unknown outcome that applied, seen by a later CAS.
    expect(
      checkKey('k', [
        op(0, 1, cas(null, 'a', false, 'x'), 'unknown'),
        op(0, 1, w('x')),
        op(2, 3, cas('x', 'y', true), 'unknown'),
        op(4, 5, cas('y', 'z', true)),
      ]).linearizable,
    ).toBe(true);
  });
});

describe('histories that are not', () => {
  const not = (h: HistoryOp[]): void => expect(checkKey('k', h).linearizable).toBe(false);

  it('a stale read after an acknowledged write completed', () =>
    not([op(0, 1, w('a')), op(2, 3, w('b')), op(4, 5, r('a'))]));
  it('a value that goes back (b, then a) after two concurrent writes', () =>
    not([op(0, 10, w('a')), op(0, 10, w('b')), op(11, 12, r('b')), op(13, 14, r('a'))]));
  it('two CAS from one value that both won', () =>
    not([op(0, 1, w('a')), op(2, 10, cas('a', 'b', true)), op(2, 10, cas('a', 'c', true))]));
  it('a CAS refused though the register held what it expected', () =>
    not([op(0, 1, w('a')), op(2, 3, cas('a', 'b', false))]));
  it('a CAS refused naming a value nobody wrote', () => not([op(0, 1, w('a')), op(2, 3, cas('x', 'b', false, 'q'))]));
  it('a read of a value nobody wrote', () => not([op(0, 1, w('a')), op(2, 3, r('z'))]));
  it('an acknowledged write lost: absent after it', () => not([op(0, 1, w('a')), op(2, 3, r(null))]));
  it('a CAS that applied though absent was not the state', () =>
    not([op(0, 1, w('a')), op(2, 3, cas(null, 'b', true))]));
  it('an unknown write seen, then not seen, then seen again', () =>
    not([op(0, 1, w('a')), op(2, 3, w('b'), 'unknown'), op(4, 5, r('b')), op(6, 7, r('a')), op(8, 9, r('b'))]));

  it('reports the operation it could not place', () => {
    const v = checkKey('k', [op(0, 1, w('a')), op(2, 3, w('b')), op(4, 5, r('a'), 'ok'), op(6, 7, r('b'))]);
    expect(v.linearizable).toBe(false);
    expect(v.stuckAt?.op).toEqual(r('a'));
  });
});

describe('checkLinearizable', () => {
  it('checks each key on its own, and the whole fails when one key does', () => {
    const good = [op(0, 1, w('a'), 'ok', 'x'), op(2, 3, r('a'), 'ok', 'x')];
    const bad = [op(0, 1, w('a'), 'ok', 'y'), op(2, 3, r('b'), 'ok', 'y')];
    expect(checkLinearizable(good).linearizable).toBe(true);
    const v = checkLinearizable([...good, ...bad]);
    expect(v.linearizable).toBe(false);
    expect(v.keys.map((k) => [k.key, k.linearizable])).toEqual([
      ['x', true],
      ['y', false],
    ]);
  });

  it('says unknown, not valid, when a search passes its budget', () => {
    const many = Array.from({ length: 12 }, (_, i) => op(0, 100, w(String(i))));
    expect(checkLinearizable([...many, op(101, 102, r('nobody'))], null, 50).linearizable).toBeUndefined();
  });

  it('checks a long concurrent history of a simulated linearizable register quickly', () => {
    // Five clients on two keys, each op taking effect at one random instant inside its window; some time out.
    let seed = 7;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const held = new Map<string, string | null>();
    const events: { at: number; apply: () => void }[] = [];
    const history: HistoryOp[] = [];
    for (let c = 0; c < 5; c++) {
      let t = 0;
      for (let i = 0; i < 300; i++) {
        const key = rand() < 0.5 ? 'p' : 'q';
        const start = t + rand() * 3,
          end = start + 1 + rand() * 10,
          at = start + (end - start) * rand();
        const kind = rand();
        const value = `${c}.${i}`;
        const unknown = rand() < 0.05;
        const h: { key: string; startMs: number; endMs: number; outcome: 'ok' | 'unknown'; op: CasOp } = {
          key,
          startMs: start,
          endMs: end,
          outcome: unknown ? 'unknown' : 'ok',
          op: r(null),
        };
        history.push(h);
        events.push({
          at,
          apply: () => {
            const now = held.get(key) ?? null;
            if (kind < 0.4) h.op = r(now);
            else if (kind < 0.7) ((h.op = w(value)), held.set(key, value));
            else {
              const expect = rand() < 0.5 ? now : 'nope';
              h.op = cas(expect, value, expect === now, expect === now ? undefined : now);
              if (expect === now) held.set(key, value);
            }
          },
        });
        t = end;
      }
    }
    for (const e of events.sort((a, b) => a.at - b.at)) e.apply();
    const started = performance.now();
    const v = checkLinearizable(history);
    expect(v.linearizable).toBe(true);
    expect(performance.now() - started).toBeLessThan(20_000);
    // The same history with one read changed to a value it could not have seen is caught.
    const i = history.findIndex(
      (h, j) => j > 1000 && h.op.kind === 'read' && h.outcome === 'ok' && h.op.value !== null,
    );
    const broken = history.map((h, j) => (j === i ? { ...h, op: r('never written') } : h));
    expect(checkLinearizable(broken).linearizable).toBe(false);
  });
});
