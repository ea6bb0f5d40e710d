/**
 * Key hashing: xxHash64 (seed 0) of the key's UTF-8 bytes, in plain JavaScript.
 *
 * Owns: the one function that maps a key to its 64-bit ring position (its token).
 * Must not: allocate or touch BigInt on the lookup path. 64-bit values are pairs of
 * uint32 halves (hi, lo) held in locals; every 64-bit product is written out as
 *   hi = mulhi(al, bl) + al·bh + ah·bl,  lo = al·bl   (all mod 2^32)
 * so that V8 keeps everything in registers. (Not helpers that return both halves through a
 * shared buffer: each result then goes through memory; figures in
 * docs/benchmarks.md#tuning-the-hash-and-the-claims.)
 * `tokenOf` is the BigInt convenience for the public API.
 *
 * Why xxHash64: well distributed (passes SMHasher), specified with published test
 * vectors, and fast in pure JS on short keys, faster than the WebAssembly build
 * (xxhash-wasm), which must copy every key into wasm memory and returns a BigInt.
 * A string key hashes exactly like its UTF-8 encoding, so clients may send either.
 */

const P1H = 0x9e3779b1,
  P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d,
  P2L = 0x27d4eb4f;
const P3H = 0x165667b1,
  P3L = 0x9e3779f9;
const P4H = 0x85ebca77,
  P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f,
  P5L = 0x165667c5;
const TWO_32 = 0x100000000;

/** High 32 bits of the 64-bit product of two uint32. */
function mulhi(a: number, b: number): number {
  const a0 = a & 0xffff,
    a1 = a >>> 16,
    b0 = b & 0xffff,
    b1 = b >>> 16;
  const p01 = a0 * b1,
    p10 = a1 * b0;
  const mid = ((a0 * b0) >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  return (a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16)) >>> 0;
}

/**
 * High half of (ah:al) · (bh:bl) mod 2^64; the low half is Math.imul(al, bl) >>> 0.
 * Used by the stripe loop; `xxh64` writes the same expression out at each site, which
 * keeps it within V8's inlining budget (past it, V8 stops inlining the helper calls).
 */
function mul64hi(ah: number, al: number, bh: number, bl: number): number {
  return (mulhi(al, bl) + Math.imul(al, bh) + Math.imul(ah, bl)) >>> 0;
}

/** High / low half of (h:l) rotated left by r, 0 < r < 32. */
function rotlHi(h: number, l: number, r: number): number {
  return ((h << r) | (l >>> (32 - r))) >>> 0;
}
function rotlLo(h: number, l: number, r: number): number {
  return ((l << r) | (h >>> (32 - r))) >>> 0;
}

function u32(b: Uint8Array, i: number): number {
  return (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0;
}

/**
 * The four accumulators of the 32-byte stripe loop (inputs of 32 bytes or more), as
 * hi/lo pairs: acc[2k], acc[2k + 1]. Long keys are rare; this path favours clarity.
 */
const acc = new Uint32Array(8);

/** acc_k = rotl(acc_k + lane · P2, 31) · P1 (xxh64's round). */
function round(k: number, ih: number, il: number): void {
  // lane · P2
  const ph = mul64hi(ih, il, P2H, P2L),
    pl = Math.imul(il, P2L) >>> 0;
  // + acc
  const sl = acc[2 * k + 1]! + pl;
  const h = (acc[2 * k]! + ph + (sl >= TWO_32 ? 1 : 0)) >>> 0,
    l = sl >>> 0;
  const rh = rotlHi(h, l, 31),
    rl = rotlLo(h, l, 31);
  acc[2 * k] = mul64hi(rh, rl, P1H, P1L);
  acc[2 * k + 1] = Math.imul(rl, P1L);
}

/**
 * The 32-byte stripes of an input of 32 bytes or more (xxh64's four accumulators,
 * merged): leaves h in acc[0] (high) and acc[1] (low). Kept out of `xxh64` so that the
 * short-key path stays small enough for V8 to inline its helpers.
 */
function stripes(b: Uint8Array, len: number): void {
  // v1 = P1 + P2, v2 = P2, v3 = 0, v4 = −P1 (mod 2^64)
  const s = P1L + P2L;
  acc[0] = P1H + P2H + (s >= TWO_32 ? 1 : 0);
  acc[1] = s;
  acc[2] = P2H;
  acc[3] = P2L;
  acc[4] = 0;
  acc[5] = 0;
  acc[6] = ~P1H; // P1L ≠ 0, so no carry into the high half
  acc[7] = -P1L;
  for (let i = 0; i + 32 <= len; i += 32) {
    round(0, u32(b, i + 4), u32(b, i));
    round(1, u32(b, i + 12), u32(b, i + 8));
    round(2, u32(b, i + 20), u32(b, i + 16));
    round(3, u32(b, i + 28), u32(b, i + 24));
  }
  // h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)
  let hh = 0;
  let hl = 0;
  const rot = [1, 7, 12, 18];
  for (let k = 0; k < 4; k++) {
    const r = rot[k]!;
    const l = hl + rotlLo(acc[2 * k]!, acc[2 * k + 1]!, r);
    hh = (hh + rotlHi(acc[2 * k]!, acc[2 * k + 1]!, r) + (l >= TWO_32 ? 1 : 0)) >>> 0;
    hl = l >>> 0;
  }
  // merge each accumulator: h = (h ^ round(0, v)) · P1 + P4
  for (let k = 0; k < 4; k++) {
    const vh = acc[2 * k]!,
      vl = acc[2 * k + 1]!;
    acc[2 * k] = 0;
    acc[2 * k + 1] = 0;
    round(k, vh, vl);
    const xh = (hh ^ acc[2 * k]!) >>> 0,
      xl = (hl ^ acc[2 * k + 1]!) >>> 0;
    const mh = mul64hi(xh, xl, P1H, P1L),
      ml = Math.imul(xl, P1L) >>> 0;
    const l = ml + P4L;
    hh = (mh + P4H + (l >= TWO_32 ? 1 : 0)) >>> 0;
    hl = l >>> 0;
  }
  acc[0] = hh;
  acc[1] = hl;
}

/** xxHash64 (seed 0) of b[0, len) into out[0] (high half) and out[1] (low half). */
function xxh64(b: Uint8Array, len: number, out: Uint32Array): void {
  let i = 0;
  let hh = P5H;
  let hl = P5L;
  if (len >= 32) {
    stripes(b, len);
    hh = acc[0]!;
    hl = acc[1]!;
    i = len - (len % 32);
  }
  // h += len
  {
    const l = hl + (len >>> 0);
    const lenHi = len > 0xffffffff ? Math.floor(len / TWO_32) : 0; // no division per key
    hh = (hh + lenHi + (l >= TWO_32 ? 1 : 0)) >>> 0;
    hl = l >>> 0;
  }
  for (; i + 8 <= len; i += 8) {
    // k = rotl(lane · P2, 31) · P1; h = rotl(h ^ k, 27) · P1 + P4
    const ih = u32(b, i + 4),
      il = u32(b, i);
    let kh = (mulhi(il, P2L) + Math.imul(il, P2H) + Math.imul(ih, P2L)) >>> 0,
      kl = Math.imul(il, P2L) >>> 0;
    const rh = rotlHi(kh, kl, 31),
      rl = rotlLo(kh, kl, 31);
    kh = (mulhi(rl, P1L) + Math.imul(rl, P1H) + Math.imul(rh, P1L)) >>> 0;
    kl = Math.imul(rl, P1L) >>> 0;
    const xh = (hh ^ kh) >>> 0,
      xl = (hl ^ kl) >>> 0;
    const yh = rotlHi(xh, xl, 27),
      yl = rotlLo(xh, xl, 27);
    const mh = (mulhi(yl, P1L) + Math.imul(yl, P1H) + Math.imul(yh, P1L)) >>> 0,
      ml = Math.imul(yl, P1L) >>> 0;
    const l = ml + P4L;
    hh = (mh + P4H + (l >= TWO_32 ? 1 : 0)) >>> 0;
    hl = l >>> 0;
  }
  if (i + 4 <= len) {
    // h = rotl(h ^ (u32 · P1), 23) · P2 + P3
    const u = u32(b, i);
    const xh = (hh ^ (mulhi(u, P1L) + Math.imul(u, P1H))) >>> 0,
      xl = (hl ^ Math.imul(u, P1L)) >>> 0;
    const yh = rotlHi(xh, xl, 23),
      yl = rotlLo(xh, xl, 23);
    const mh = (mulhi(yl, P2L) + Math.imul(yl, P2H) + Math.imul(yh, P2L)) >>> 0,
      ml = Math.imul(yl, P2L) >>> 0;
    const l = ml + P3L;
    hh = (mh + P3H + (l >= TWO_32 ? 1 : 0)) >>> 0;
    hl = l >>> 0;
    i += 4;
  }
  for (; i < len; i++) {
    // h = rotl(h ^ (byte · P5), 11) · P1; byte · P5L < 2^40 is exact in a double
    const c = b[i]!;
    const full = c * P5L;
    const xh = (hh ^ (c * P5H + ((full / TWO_32) | 0))) >>> 0,
      xl = (hl ^ full) >>> 0;
    const yh = rotlHi(xh, xl, 11),
      yl = rotlLo(xh, xl, 11);
    hh = (mulhi(yl, P1L) + Math.imul(yl, P1H) + Math.imul(yh, P1L)) >>> 0;
    hl = Math.imul(yl, P1L) >>> 0;
  }
  // avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32
  hl = (hl ^ (hh >>> 1)) >>> 0;
  let mh = (mulhi(hl, P2L) + Math.imul(hl, P2H) + Math.imul(hh, P2L)) >>> 0;
  hl = Math.imul(hl, P2L) >>> 0;
  hh = mh;
  hl = (hl ^ ((hl >>> 29) | (hh << 3))) >>> 0;
  hh = (hh ^ (hh >>> 29)) >>> 0;
  mh = (mulhi(hl, P3L) + Math.imul(hl, P3H) + Math.imul(hh, P3L)) >>> 0;
  hl = Math.imul(hl, P3L) >>> 0;
  out[0] = mh;
  out[1] = (hl ^ mh) >>> 0;
}

const encoder = new TextEncoder();
/** ASCII keys up to 256 characters are copied here (a const, not a `let`: V8 knows the binding never changes). */
const small = new Uint8Array(256);
/** Longer or non-ASCII keys are UTF-8 encoded here, grown as needed. */
let big = new Uint8Array(0);

/**
 * Hash a key to its 64-bit ring position and write it to out[0] (high 32 bits) and
 * out[1] (low 32 bits). The allocation-free form used on the lookup path.
 */
export function hashInto(key: string | Uint8Array, out: Uint32Array): void {
  if (typeof key !== 'string') {
    xxh64(key, key.length, out);
    return;
  }
  const n = key.length;
  if (n <= small.length) {
    let i = 0;
    for (; i < n; i++) {
      const c = key.charCodeAt(i);
      if (c >= 0x80) break;
      small[i] = c;
    }
    if (i === n) {
      xxh64(small, n, out); // ASCII: the code units are the UTF-8 bytes
      return;
    }
  }
  if (big.length < n * 3) big = new Uint8Array(Math.max(n * 3, 1024)); // ≤ 3 bytes per code unit
  const len = encoder.encodeInto(key, big).written;
  xxh64(big, len, out);
}

const pair = new Uint32Array(2);

/** The 64-bit token of a key (xxHash64 of its UTF-8 bytes, seed 0), in [0, 2^64). */
export function tokenOf(key: string | Uint8Array): bigint {
  hashInto(key, pair);
  return (BigInt(pair[0]!) << 32n) | BigInt(pair[1]!);
}
