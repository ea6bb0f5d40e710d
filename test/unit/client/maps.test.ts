/**
 * The client's map shapes (src/client/maps.ts): entries assembled into one value by field
 * type, whatever the fields are named, and ops checked before they are sent.
 */
import { describe, expect, it } from 'vitest';
import { assemble, updateBatches, wireMapOps, type MapEntry, type MapOp } from '../../../src/client/maps.js';

const B = (s: string): Buffer => Buffer.from(s);
const step = (name: string, type: 'register' | 'flag' | 'counter' | 'set' | 'map') => ({ name: B(name), type });

describe('updateBatches', () => {
  it('splits ops into updates of at most 1,000 ops and 2 MiB of contexts, in order', () => {
    const path = [step('f', 'counter')];
    const small = Array.from({ length: 2500 }, (): MapOp => ({ op: 'enable', path: [step('x', 'flag')] }));
    expect(updateBatches(small).map((b) => b.length)).toEqual([1000, 1000, 500]);
    const big = Array.from({ length: 600 }, (_, i): MapOp => ({
      op: 'remove',
      path,
      context: Buffer.alloc(8000, i % 256),
    }));
    const batches = updateBatches(big);
    expect(batches.map((b) => b.length)).toEqual([262, 262, 76]);
    expect(batches.flat()).toEqual(big);
    expect(updateBatches([])).toEqual([]);
  });
});

describe('assemble', () => {
  it('nests maps and keys each field type apart; names such as constructor and __proto__ are fields like any other', () => {
    const entries: MapEntry[] = [
      { kind: 'register', path: [step('__proto__', 'register')], value: B('p'), context: B('c') },
      { kind: 'element', path: [step('constructor', 'set')], element: B('x'), context: B('c') },
      { kind: 'element', path: [step('constructor', 'set')], element: B('y'), context: B('c') },
      {
        kind: 'counter',
        path: [step('toString', 'map'), step('hasOwnProperty', 'counter')],
        value: 3n,
        context: B('c'),
      },
      { kind: 'flag', path: [step('constructor', 'flag')], context: B('c') },
      { kind: 'register', path: [], value: B('no field'), context: B('c') },
    ];
    const m = assemble(entries);
    expect(Object.keys(m.registers)).toEqual(['__proto__']);
    expect(String(m.registers['__proto__'])).toBe('p');
    expect(m.sets['constructor']!.map(String)).toEqual(['x', 'y']);
    expect(m.flags['constructor']).toBe(true);
    expect(m.maps['toString']!.counters['hasOwnProperty']).toBe(3n);
    expect(JSON.stringify(m.registers)).toBe('{"__proto__":{"type":"Buffer","data":[112]}}');
    expect(JSON.stringify(m.flags)).toBe('{"constructor":true}');
  });
});

describe('wireMapOps', () => {
  it('refuses none or too many ops, a bad amount, and an op of no known shape, before anything is sent', () => {
    expect(() => wireMapOps([])).toThrow(/1 to 1000 operations, got 0/);
    expect(() => wireMapOps([{ op: 'increment', path: [{ name: 'n', type: 'counter' }], amount: 2 ** 53 }])).toThrow(
      /whole number within/,
    );
    expect(() => wireMapOps([{ op: 'toggle', path: [] } as never])).toThrow(/assign, enable, increment, add or remove/);
    expect(() => wireMapOps([{ op: 'enable' } as never])).toThrow(/by path/);
    expect(wireMapOps([{ op: 'remove', path: [{ name: 'f', type: 'flag' }], context: B('c') }])).toEqual([
      { path: [{ name: B('f'), type: 'MAP_FIELD_TYPE_FLAG' }], remove: { element: Buffer.alloc(0), context: B('c') } },
    ]);
  });
});
