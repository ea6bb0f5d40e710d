/**
 * Key hashing: xxHash64 (seed 0) of the key's UTF-8 bytes, in plain JavaScript.
 *
 * Owns: the one function that maps a key to its 64-bit ring position (its token).
 * Must not: allocate or touch BigInt on the lookup path. 64-bit arithmetic is done on
 * pairs of uint32 halves (`hi`, `lo`), which V8 keeps in registers; BigInt would cost
 * an allocation per operation. `tokenOf` is the BigInt convenience for the public API.
 *
 * Why xxHash64: well distributed (passes SMHasher), specified with published test
 * vectors, and fast in pure JS on short keys. A WebAssembly build (xxhash-wasm) is no
 * faster for 10–30 byte keys because every call must copy the key into wasm memory and
 * returns a BigInt; bench/ring.ts measures both. A string key hashes exactly like its
 * UTF-8 encoding, so clients may send either.
 */

const P1H = 0x9e3779b1, P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d, P2L = 0x27d4eb4f;
const P3H = 0x165667b1, P3L = 0x9e3779f9;
const P4H = 0x85ebca77, P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f, P5L = 0x165667c5;

// Result registers of the 64-bit helpers below: R[0] = high 32 bits, R[1] = low 32 bits.
// A typed array, not two module-level `let`s: V8 boxes a uint32 above 2^30 stored in a
// module variable as a heap number (an allocation per store, 2.5x slower here).
const R = new Uint32Array(2);

/** (ah:al) * (bh:bl) mod 2^64 → R (hi, lo). */
function mul(ah: number, al: number, bh: number, bl: number): void {
  const a0 = al & 0xffff, a1 = al >>> 16, b0 = bl & 0xffff, b1 = bl >>> 16;
  const p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  R[1] = (((mid & 0xffff) << 16) | (p00 & 0xffff)) >>> 0;
  const carry = p11 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16);
  R[0] = (carry + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
}

/** (ah:al) + (bh:bl) mod 2^64 → R (hi, lo). */
function add(ah: number, al: number, bh: number, bl: number): void {
  const lo = al + bl;
  R[1] = lo >>> 0;
  R[0] = (ah + bh + (lo > 0xffffffff ? 1 : 0)) >>> 0;
}

/** Rotate (h:l) left by r bits, 0 < r < 32 → R (hi, lo). */
function rotl(h: number, l: number, r: number): void {
  R[0] = ((h << r) | (l >>> (32 - r))) >>> 0;
  R[1] = ((l << r) | (h >>> (32 - r))) >>> 0;
}

function u32(b: Uint8Array, i: number): number {
  return (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0;
}

/** round(acc, lane) = rotl(acc + lane * P2, 31) * P1 → R (hi, lo). */
function round(ah: number, al: number, ih: number, il: number): void {
  mul(ih, il, P2H, P2L);
  add(ah, al, R[0]!, R[1]!);
  rotl(R[0]!, R[1]!, 31);
  mul(R[0]!, R[1]!, P1H, P1L);
}

/** h = h * P1 + P4 after h ^= round(0, val) (xxh64's merge of an accumulator) → R (hi, lo). */
function mergeRound(hh: number, hl: number, vh: number, vl: number): void {
  round(0, 0, vh, vl);
  mul((hh ^ R[0]!) >>> 0, (hl ^ R[1]!) >>> 0, P1H, P1L);
  add(R[0]!, R[1]!, P4H, P4L);
}

/** xxHash64 (seed 0) of bytes[0, len) → R (hi, lo). */
function xxh64(b: Uint8Array, len: number): void {
  let i = 0;
  let hh: number, hl: number;
  if (len >= 32) {
    // v1 = P1 + P2, v2 = P2, v3 = 0, v4 = -P1 (mod 2^64)
    add(P1H, P1L, P2H, P2L);
    let v1h = R[0]!, v1l = R[1]!;
    let v2h = P2H, v2l = P2L;
    let v3h = 0, v3l = 0;
    let v4h = ~P1H >>> 0, v4l = -P1L >>> 0; // P1L ≠ 0, so no carry into the high half
    for (; i + 32 <= len; i += 32) {
      round(v1h, v1l, u32(b, i + 4), u32(b, i)); v1h = R[0]!; v1l = R[1]!;
      round(v2h, v2l, u32(b, i + 12), u32(b, i + 8)); v2h = R[0]!; v2l = R[1]!;
      round(v3h, v3l, u32(b, i + 20), u32(b, i + 16)); v3h = R[0]!; v3l = R[1]!;
      round(v4h, v4l, u32(b, i + 28), u32(b, i + 24)); v4h = R[0]!; v4l = R[1]!;
    }
    rotl(v1h, v1l, 1); hh = R[0]!; hl = R[1]!;
    rotl(v2h, v2l, 7); add(hh, hl, R[0]!, R[1]!); hh = R[0]!; hl = R[1]!;
    rotl(v3h, v3l, 12); add(hh, hl, R[0]!, R[1]!); hh = R[0]!; hl = R[1]!;
    rotl(v4h, v4l, 18); add(hh, hl, R[0]!, R[1]!); hh = R[0]!; hl = R[1]!;
    mergeRound(hh, hl, v1h, v1l); mergeRound(R[0]!, R[1]!, v2h, v2l);
    mergeRound(R[0]!, R[1]!, v3h, v3l); mergeRound(R[0]!, R[1]!, v4h, v4l);
    hh = R[0]!; hl = R[1]!;
  } else {
    hh = P5H; hl = P5L;
  }
  add(hh, hl, Math.floor(len / 0x100000000), len >>> 0);
  hh = R[0]!; hl = R[1]!;
  for (; i + 8 <= len; i += 8) {
    round(0, 0, u32(b, i + 4), u32(b, i));
    rotl((hh ^ R[0]!) >>> 0, (hl ^ R[1]!) >>> 0, 27);
    mul(R[0]!, R[1]!, P1H, P1L);
    add(R[0]!, R[1]!, P4H, P4L);
    hh = R[0]!; hl = R[1]!;
  }
  if (i + 4 <= len) {
    mul(0, u32(b, i), P1H, P1L);
    rotl((hh ^ R[0]!) >>> 0, (hl ^ R[1]!) >>> 0, 23);
    mul(R[0]!, R[1]!, P2H, P2L);
    add(R[0]!, R[1]!, P3H, P3L);
    hh = R[0]!; hl = R[1]!;
    i += 4;
  }
  for (; i < len; i++) {
    mul(0, b[i]!, P5H, P5L);
    rotl((hh ^ R[0]!) >>> 0, (hl ^ R[1]!) >>> 0, 11);
    mul(R[0]!, R[1]!, P1H, P1L);
    hh = R[0]!; hl = R[1]!;
  }
  // avalanche
  hl = (hl ^ (hh >>> 1)) >>> 0;
  mul(hh, hl, P2H, P2L); hh = R[0]!; hl = R[1]!;
  hl = (hl ^ ((hl >>> 29) | (hh << 3))) >>> 0;
  hh = (hh ^ (hh >>> 29)) >>> 0;
  mul(hh, hl, P3H, P3L); hh = R[0]!; hl = R[1]!;
  R[0] = hh;
  R[1] = (hl ^ hh) >>> 0;
}

const encoder = new TextEncoder();
let scratch = new Uint8Array(256);

/** Copy a string's UTF-8 bytes into `scratch`, returning the byte length. */
function encode(key: string): number {
  const n = key.length;
  if (n <= scratch.length) {
    let i = 0;
    for (; i < n; i++) {
      const c = key.charCodeAt(i);
      if (c >= 0x80) break;
      scratch[i] = c;
    }
    if (i === n) return n; // ASCII: the code units are the UTF-8 bytes
  }
  if (scratch.length < n * 3) scratch = new Uint8Array(n * 3);
  return encoder.encodeInto(key, scratch).written;
}

/**
 * Hash a key to its 64-bit ring position and write it to out[0] (high 32 bits) and
 * out[1] (low 32 bits). The allocation-free form used on the lookup path.
 */
export function hashInto(key: string | Uint8Array, out: Uint32Array): void {
  if (typeof key === 'string') {
    const len = encode(key); // may replace `scratch`: read it only afterwards
    xxh64(scratch, len);
  } else {
    xxh64(key, key.length);
  }
  out[0] = R[0]!;
  out[1] = R[1]!;
}

const pair = new Uint32Array(2);

/** The 64-bit token of a key (xxHash64 of its UTF-8 bytes, seed 0), in [0, 2^64). */
export function tokenOf(key: string | Uint8Array): bigint {
  hashInto(key, pair);
  return (BigInt(pair[0]!) << 32n) | BigInt(pair[1]!);
}
