import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  beat,
  checkDelta,
  deltaOf,
  formatTokens,
  initialState,
  mergeDelta,
  parseTokens,
  setField,
  type EndpointState,
} from '../../../src/membership/endpoint.js';

const a1 = initialState('a', 100, { addr: '127.0.0.1:7001', status: 'joining' });

describe('endpoint state', () => {
  it('versions every change from one counter; the digest version is the largest', () => {
    expect(a1.version).toBe(3);
    const b = beat(setField(a1, 'status', 'normal'));
    expect(b.fields.get('status')).toEqual({ value: 'normal', version: 4 });
    expect(b.heartbeat).toBe(5);
    expect(b.version).toBe(5);
    expect(setField(b, 'status', 'normal')).toBe(b); // same value: no new version
  });

  it('a peer that saw version v gets exactly the newer fields and the heartbeat', () => {
    const s = beat(setField(beat(a1), 'tokens', formatTokens([5n, 7n])));
    const d = deltaOf(s, 4);
    expect(d.fields.map((f) => f.name)).toEqual(['tokens']);
    expect(d.heartbeat).toBe(s.heartbeat);
    expect(deltaOf(s, 0).fields).toHaveLength(3);
  });

  it('a newer generation replaces the state; an older one is ignored', () => {
    const restarted = initialState('a', 101, { addr: '127.0.0.1:7001' });
    const merged = mergeDelta(beat(setField(a1, 'status', 'normal')), deltaOf(restarted, 0));
    expect(merged.generation).toBe(101);
    expect(merged.fields.has('status')).toBe(false);
    expect(mergeDelta(merged, deltaOf(a1, 0))).toBe(merged);
  });

  it('merging is idempotent and order-free: any order of deltas gives the same state', () => {
    // Build a history of one node's states, then deliver random deltas of it in random order.
    let s: EndpointState = a1;
    const history: EndpointState[] = [s];
    for (let i = 0; i < 12; i++) {
      s =
        i % 3 === 0
          ? setField(s, 'load', String(i))
          : i % 3 === 1
            ? beat(s)
            : setField(s, 'status', i % 2 ? 'normal' : 'leaving');
      history.push(s);
    }
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(history.length - 1), fc.nat(14)), { minLength: 1, maxLength: 20 }),
        (picks) => {
          let a: EndpointState | undefined;
          let b: EndpointState | undefined;
          const deltas = picks.map(([h, seen]) => deltaOf(history[h]!, Math.min(seen, history[h]!.version)));
          for (const d of deltas) a = mergeDelta(a, d);
          for (const d of [...deltas].reverse()) b = mergeDelta(mergeDelta(b, d), d);
          expect(b).toEqual(a);
        },
      ),
    );
  });

  it('refuses malformed deltas with a reason instead of throwing', () => {
    const ok = deltaOf(a1, 0);
    expect(checkDelta(ok)).toBeUndefined();
    const bad: unknown[] = [
      null,
      { ...ok, id: '' },
      { ...ok, generation: -1 },
      { ...ok, heartbeat: 1.5 },
      { ...ok, fields: 'x' },
      { ...ok, fields: [null] },
      { ...ok, fields: [{ name: 'addr', value: 'no-port', version: 1 }] },
      { ...ok, fields: [{ name: 'status', value: 'dancing', version: 1 }] },
      { ...ok, fields: [{ name: 'tokens', value: '12,zz', version: 1 }] },
      { ...ok, fields: [{ name: 'weight', value: '-1', version: 1 }] },
      { ...ok, fields: [{ name: 'replicas', value: '0', version: 1 }] },
      { ...ok, fields: [{ name: 'replicas', value: '17', version: 1 }] },
      { ...ok, fields: [{ name: 'hints', value: '-3', version: 1 }] },
      { ...ok, fields: [{ name: 'x', value: 'y'.repeat(70_000), version: 1 }] },
      { ...ok, fields: Array.from({ length: 40 }, (_, i) => ({ name: `f${i}`, value: '', version: 1 })) },
    ];
    for (const d of bad) expect(typeof checkDelta(d as never), JSON.stringify(d)?.slice(0, 80)).toBe('string');
  });

  it('takes fields named like Object.prototype members as plain names (this threw before)', () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const d = { id: 'x', generation: 1, heartbeat: 1, fields: [{ name, value: 'v', version: 1 }] };
      expect(checkDelta(d)).toBeUndefined();
      expect(mergeDelta(undefined, d).fields.get(name)).toEqual({ value: 'v', version: 1 });
    }
  });

  it('tokens round-trip through their gossip form', () => {
    const t = [0n, 1n, 0xffffffffffffffffn, 0x0123456789abcdefn];
    expect(parseTokens(formatTokens(t))).toEqual(t);
    expect(parseTokens('')).toBeUndefined();
    expect(parseTokens('123')).toBeUndefined();
  });
});
