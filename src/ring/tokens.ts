/**
 * The 64-bit token space: constants and conversions shared by the ring's modules.
 *
 * A token is an unsigned integer in [0, 2^64). A token t owns the keys whose hash h lies in
 * (predecessor(t), t], wrapping past 2^64 - 1. Public APIs speak bigint; the lookup path
 * keeps each token as two uint32 halves; allocation and ownership arithmetic use
 * fractions of the whole ring (a double in [0, 1)), exact enough for shares down to 2^-52.
 */

/** Number of points on the ring: 2^64. */
export const RING_SIZE = 1n << 64n;
/** The largest token, 2^64 - 1. */
export const MAX_TOKEN = RING_SIZE - 1n;

const TWO_64 = 2 ** 64;

/** Whether a value is a usable token: a bigint in [0, 2^64). */
export function isToken(t: unknown): t is bigint {
  return typeof t === 'bigint' && t >= 0n && t <= MAX_TOKEN;
}

/** High 32 bits of a token. */
export function tokenHi(t: bigint): number {
  return Number(t >> 32n);
}

/** Low 32 bits of a token. */
export function tokenLo(t: bigint): number {
  return Number(t & 0xffffffffn);
}

/** Length of the arc (from, to] as a fraction of the ring; a full circle when from === to. */
export function arcFraction(from: bigint, to: bigint): number {
  const d = (to - from + RING_SIZE) % RING_SIZE;
  return d === 0n ? 1 : Number(d) / TWO_64;
}

/** The token `fraction` of the ring clockwise from `from` (fraction in [0, 1)). */
export function advance(from: bigint, fraction: number): bigint {
  return (from + BigInt(Math.floor(fraction * TWO_64))) % RING_SIZE;
}

/** Order of two tokens, for sort. */
export function compareTokens(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Merge two lists of [token, owner] sorted by token into one sorted list. */
export function mergeByToken<T extends readonly [bigint, number]>(a: readonly T[], b: readonly T[]): T[] {
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    out.push(j >= b.length || (i < a.length && a[i]![0] < b[j]![0]) ? a[i++]! : b[j++]!);
  }
  return out;
}

/** Fixed-width hex of a token, for logs and tables (16 digits, sorts like the number). */
export function tokenHex(t: bigint): string {
  return t.toString(16).padStart(16, '0');
}

/** A token range (start, end] with the replicas that hold it, for N class `n` (undefined: every key, one class in use): what repair and a removal's repair step work by. */
export interface RangeUnit {
  readonly start: bigint;
  readonly end: bigint;
  readonly replicas: readonly string[];
  readonly n?: number;
}

/** A unit's key in progress records and logs: its bounds in hex, and its class when it has one (`/n5`). */
export function unitKey(u: { readonly start: bigint; readonly end: bigint; readonly n?: number }): string {
  return `${tokenHex(u.start)}-${tokenHex(u.end)}${u.n === undefined ? '' : `/n${u.n}`}`;
}
