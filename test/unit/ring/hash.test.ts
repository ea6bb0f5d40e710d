import fc from 'fast-check';
import xxhash from 'xxhash-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashInto, tokenOf } from '../../../src/ring/hash.js';

let h64Raw: (input: Uint8Array) => bigint;
beforeAll(async () => {
  ({ h64Raw } = await xxhash());
});

describe('tokenOf (xxHash64, seed 0)', () => {
  it('matches the published xxHash64 test vectors', () => {
    expect(tokenOf('')).toBe(0xef46db3751d8e999n);
    expect(tokenOf('a')).toBe(0xd24ec4f1a98c6e5bn);
    expect(tokenOf('abc')).toBe(0x44bc2cf5ad770999n);
  });

  it('agrees with the reference implementation (xxhash-wasm) on any bytes', () => {
    // Lengths past 32 exercise the four-lane stripe loop, shorter ones the tail paths.
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(tokenOf(bytes)).toBe(h64Raw(bytes));
      }),
      { numRuns: 2000 },
    );
  });

  it('hashes a string exactly like its UTF-8 bytes', () => {
    const enc = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        expect(tokenOf(s)).toBe(tokenOf(enc.encode(s)));
      }),
      { numRuns: 1000 },
    );
    for (const s of ['héllo wörld ✓ 𝄞', 'x'.repeat(1000), 'é'.repeat(300), `${'a'.repeat(255)}é`]) {
      expect(tokenOf(s)).toBe(h64Raw(enc.encode(s)));
    }
  });

  it('writes the two 32-bit halves for the allocation-free path', () => {
    const out = new Uint32Array(2);
    hashInto('user:123456', out);
    const t = tokenOf('user:123456');
    expect(out[0]).toBe(Number(t >> 32n));
    expect(out[1]).toBe(Number(t & 0xffffffffn));
  });
});
