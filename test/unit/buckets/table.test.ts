import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BucketError, BucketTable, DEFAULT_BUCKET, MAX_BUCKETS, type BucketEntry } from '../../../src/buckets/index.js';

const code = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    return (e as BucketError).code;
  }
  return 'none';
};
const props = { n: 5, r: 0, w: 2, ttlMs: 0, siblings: 'siblings' as const, type: 'kv' as const };

describe('BucketTable', () => {
  it("keeps a bucket's type from its creation and refuses to change it (BK_TYPE_FIXED)", () => {
    const t = new BucketTable(3);
    t.create('hits', { ...props, type: 'counter' }, 1000, 'a');
    t.create('tags', { ...props, type: 'set' }, 1000, 'a');
    expect(t.props('hits')!.type).toBe('counter');
    expect(t.props('tags')!.type).toBe('set');
    expect(code(() => t.set('hits', { type: 'set' }, 2000, 'a'))).toBe('BK_TYPE_FIXED');
    expect(code(() => t.set('hits', { type: 'kv' }, 2000, 'a'))).toBe('BK_TYPE_FIXED');
    expect(code(() => t.set(DEFAULT_BUCKET, { type: 'counter' }, 2000, 'a'))).toBe('BK_TYPE_FIXED');
    expect(code(() => t.set('tags', { type: 'map' }, 2000, 'a'))).toBe('BK_TYPE_FIXED');
    expect(code(() => t.set('tags', { type: 'hll' }, 2000, 'a'))).toBe('BK_BAD_PROPERTY');
    // Setting the type it has is no change, and the other properties still change.
    expect(t.set('hits', { type: 'counter', r: '2' }, 2000, 'a').props).toEqual({ ...props, r: 2, type: 'counter' });
    // A counter or set keeps nothing that expires: a TTL is refused, at creation and after.
    expect(code(() => t.set('tags', { ttl_ms: '1000' }, 3000, 'a'))).toBe('BK_BAD_PROPERTY');
    expect(code(() => t.create('more', { ...props, type: 'set', ttlMs: 1000 }, 3000, 'a'))).toBe('BK_BAD_PROPERTY');
    expect(code(() => t.create('maps', { ...props, type: 'map', ttlMs: 1000 }, 3000, 'a'))).toBe('BK_BAD_PROPERTY');
    expect(t.create('maps', { ...props, type: 'map' }, 3000, 'a').props.type).toBe('map');
    // A peer's table carries the type.
    const u = new BucketTable(3, t.entries());
    expect(u.props('hits')!.type).toBe('counter');
    expect(u.digest()).toBe(t.digest());
  });

  it('reads a bucket created by a release without types (no type written) as kv, and the default bucket as kv whatever is written', () => {
    const old: BucketEntry = {
      name: 'carts',
      props: Object.fromEntries(
        ['created', 'n', 'r', 'w', 'ttl_ms', 'siblings'].map((p) => [
          p,
          {
            value: ({ created: '1', n: '3', r: '0', w: '0', ttl_ms: '0', siblings: 'lww' } as Record<string, string>)[
              p
            ]!,
            at: 1000,
            by: 'a',
          },
        ]),
      ),
    };
    const t = new BucketTable(3, [
      old,
      { name: DEFAULT_BUCKET, props: { type: { value: 'counter', at: 5000, by: 'z' } } },
    ]);
    expect(t.props('carts')).toEqual({ n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'lww', type: 'kv' });
    expect(t.props(DEFAULT_BUCKET)!.type).toBe('kv');
    // And its type cannot be set afterwards either: its keys are kv keys.
    expect(code(() => t.set('carts', { type: 'set' }, 2000, 'a'))).toBe('BK_TYPE_FIXED');
  });

  it('always has the default bucket with the cluster N', () => {
    const t = new BucketTable(3);
    expect(t.props(DEFAULT_BUCKET)).toEqual({ n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'siblings', type: 'kv' });
    expect(t.list().map((b) => b.name)).toEqual([DEFAULT_BUCKET]);
    expect(t.digest()).toBe('0');
  });

  it("locates a request's key, refusing an empty one in any bucket (a named bucket's stored key of none would read as the default bucket's), after the bucket itself", () => {
    const t = new BucketTable(3);
    t.create('carts', { n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'siblings', type: 'kv' }, 1000, 'a');
    expect(t.locate('carts', Buffer.from('k')).bucket.n).toBe(3);
    expect(t.bucket('carts')).toEqual(t.locate('carts', Buffer.from('k')).bucket);
    expect(code(() => t.locate('', Buffer.alloc(0)))).toBe('BK_EMPTY_KEY');
    expect(code(() => t.locate('carts', Buffer.alloc(0)))).toBe('BK_EMPTY_KEY');
    expect(code(() => t.locate('nope', Buffer.alloc(0)))).toBe('BK_UNKNOWN');
    expect(code(() => t.bucket('nope'))).toBe('BK_UNKNOWN');
  });

  it('creates, refuses a second create, and changes what set names only', () => {
    const t = new BucketTable(3);
    t.create('carts', props, 1000, 'a');
    expect(code(() => t.create('carts', props, 2000, 'b'))).toBe('BK_EXISTS');
    const after = t.set('carts', { ttl_ms: '60000' }, 1500, 'b');
    expect(after.props).toEqual({ ...props, ttlMs: 60_000 });
    expect(after.changedBy).toBe('b');
    expect(t.nValues()).toEqual([3, 5]);
  });

  it('deletes a bucket: gone from lookups and lists, its deletion and n kept; created again, a new bucket', () => {
    const t = new BucketTable(3);
    t.create('carts', props, 1000, 'a');
    const d = t.delete('carts', 2000, 'b');
    expect(d).toEqual({ name: 'carts', at: 2000, n: 5 });
    expect(t.props('carts')).toBeUndefined();
    expect(t.info('carts')).toBeUndefined();
    expect(t.list().map((b) => b.name)).toEqual([DEFAULT_BUCKET]);
    expect(t.nValues()).toEqual([3]);
    expect(code(() => t.locate('carts', Buffer.from('k')))).toBe('BK_UNKNOWN');
    expect(t.deletions()).toEqual([d]);
    expect(code(() => t.delete('carts', 3000, 'a'))).toBe('BK_UNKNOWN');
    expect(code(() => t.delete(DEFAULT_BUCKET, 3000, 'a'))).toBe('BK_BAD_NAME');
    expect(code(() => t.delete('nope', 3000, 'a'))).toBe('BK_UNKNOWN');
    expect(code(() => t.set('carts', { r: '1' }, 3000, 'a'))).toBe('BK_UNKNOWN');
    // A peer that merges the deletion after changing a property it had not seen deleted: still deleted.
    const peer = new BucketTable(3);
    peer.create('carts', props, 1000, 'a');
    peer.set('carts', { r: '2' }, 2500, 'c');
    peer.merge(t.entries());
    expect(peer.props('carts')).toBeUndefined();
    // Created again (with another n) once the tables agree (a name is reused only after every
    // member reclaimed the deleted keys): a new bucket, whatever the old one's properties were.
    t.merge(peer.entries());
    const again = t.create('carts', { ...props, n: 2, w: 0 }, 1500, 'a'); // a clock behind the deletion still comes after it
    expect(again.props).toEqual({ ...props, n: 2, w: 0 });
    expect(t.deletion('carts')).toBeUndefined();
    peer.merge(t.entries());
    expect(peer.props('carts')).toEqual({ ...props, n: 2, w: 0 });
    expect(peer.digest()).toBe(t.digest());
  });

  it('refuses a change of n, an unknown bucket, a bad value', () => {
    const t = new BucketTable(3);
    t.create('carts', props, 1000, 'a');
    expect(code(() => t.set('carts', { n: '3' }, 2000, 'a'))).toBe('BK_N_FIXED');
    expect(code(() => t.set(DEFAULT_BUCKET, { n: '5' }, 2000, 'a'))).toBe('BK_N_FIXED');
    expect(code(() => t.set('nope', { r: '1' }, 2000, 'a'))).toBe('BK_UNKNOWN');
    expect(code(() => t.set('carts', { r: '6' }, 2000, 'a'))).toBe('BK_BAD_PROPERTY');
    expect(t.set(DEFAULT_BUCKET, { ttl_ms: '5' }, 2000, 'a').props.ttlMs).toBe(5);
  });

  it('refuses the bucket past the limit', () => {
    const t = new BucketTable(3);
    for (let i = 1; i < MAX_BUCKETS; i++) t.create(`b${i}`, props, i, 'a');
    expect(code(() => t.create('one-more', props, 9999, 'a'))).toBe('BK_TOO_MANY');
  });

  it('a later change on one node wins even when its clock went back', () => {
    const t = new BucketTable(3);
    t.create('carts', props, 5000, 'a');
    t.set('carts', { w: '3' }, 1000, 'a');
    const other = new BucketTable(3, t.entries());
    expect(other.props('carts')!.w).toBe(3);
  });

  it('of two creates at once the later wins whole; different properties set at once both stay', () => {
    const a = new BucketTable(3),
      b = new BucketTable(3);
    a.create('x', { ...props, n: 2, w: 2 }, 100, 'a');
    b.create('x', { ...props, n: 4, w: 1 }, 101, 'b');
    a.merge(b.entries());
    b.merge(a.entries());
    expect(a.props('x')).toEqual({ ...props, n: 4, w: 1 });
    expect(a.digest()).toBe(b.digest());
    a.set('x', { r: '2' }, 200, 'a');
    b.set('x', { ttl_ms: '7' }, 200, 'b');
    a.merge(b.entries());
    expect(a.props('x')).toEqual({ ...props, n: 4, w: 1, r: 2, ttlMs: 7 });
  });

  it('merging is commutative, associative and idempotent (a join-semilattice)', () => {
    const write = fc.record({
      value: fc.constantFrom('0', '1', '2', '3', 'lww', 'siblings'),
      at: fc.integer({ min: 0, max: 20 }),
      by: fc.constantFrom('a', 'b', 'c'),
    });
    const entry = fc.record({
      name: fc.constantFrom('default', 'x', 'y'),
      props: fc.dictionary(fc.constantFrom('created', 'n', 'r', 'w', 'ttl_ms', 'siblings'), write),
    });
    const tables = fc.array(fc.array(entry, { maxLength: 4 }), { minLength: 3, maxLength: 3 });
    fc.assert(
      fc.property(tables, ([x, y, z]: BucketEntry[][]) => {
        const of = (...parts: BucketEntry[][]): string => {
          const t = new BucketTable(3);
          for (const p of parts) t.merge(p);
          return JSON.stringify(t.entries());
        };
        expect(of(x!, y!)).toBe(of(y!, x!));
        expect(of(x!, y!, z!)).toBe(of(z!, y!, x!));
        expect(of(x!, x!)).toBe(of(x!));
        const t = new BucketTable(3, x);
        expect(t.merge(x!)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
