import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RangeHash } from '../../../src/storage/range-hash.js';

const entry = fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 24 }), fc.uint8Array({ maxLength: 40 }));

function digest(entries: ReadonlyArray<readonly [Uint8Array, Uint8Array]>): RangeHash {
  const h = new RangeHash();
  for (const [k, v] of entries) h.add(k, v);
  return h;
}

describe('RangeHash', () => {
  it('does not depend on the order entries are added in', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 30 }), fc.nat(), (entries, seed) => {
        const shuffled = [...entries].sort((x, y) => ((x[0][0]! ^ seed) & 0xff) - ((y[0][0]! ^ seed) & 0xff));
        expect(digest(shuffled).hex).toBe(digest(entries).hex);
      }),
    );
  });

  it('adds up: the digest of a union is the sum of the parts', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 20 }), fc.array(entry, { maxLength: 20 }), (left, right) => {
        const sum = digest(left);
        sum.plus(digest(right));
        expect(sum.hex).toBe(digest([...left, ...right]).hex);
        expect(sum.count).toBe(left.length + right.length);
      }),
    );
  });

  it('changes when any version changes', () => {
    fc.assert(
      fc.property(
        fc.array(entry, { minLength: 1, maxLength: 20 }),
        fc.nat(),
        fc.uint8Array({ minLength: 1, maxLength: 40 }),
        (entries, i, other) => {
          const at = i % entries.length;
          fc.pre(!Buffer.from(other).equals(Buffer.from(entries[at]![1])));
          const changed = entries.map((e, j) => (j === at ? ([e[0], other] as const) : e));
          expect(digest(changed).hex).not.toBe(digest(entries).hex);
        },
      ),
    );
  });

  it('is all zeros for nothing, and 16 hex digits always', () => {
    expect(new RangeHash().hex).toBe('0000000000000000');
    expect(digest([[Buffer.from('k'), Buffer.from('v')]]).hex).toMatch(/^[0-9a-f]{16}$/);
  });
});
