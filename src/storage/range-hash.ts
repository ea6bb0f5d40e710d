/**
 * An order-independent 64-bit digest of a set of (key, versions) entries, for Merkle-tree
 * anti-entropy: each entry hashes to a leaf (xxHash64 of the key, XOR xxHash64 of its
 * canonical versions rotated by one bit) and the digest is the sum of the leaves modulo
 * 2^64. So it does not depend on the order entries are added in (replicas scan their own
 * layouts), it changes when any version of any key changes, and two digests of disjoint
 * sets add up to the digest of their union (`plus`), which is how tree nodes combine.
 *
 * Must not: read anything; callers feed it entries.
 */
import { hashInto } from '../ring/index.js';

const a = new Uint32Array(2);
const b = new Uint32Array(2);

/**
 * One entry's leaf hash, as [high, low] 32-bit halves, into `out`: xxHash64 of its
 * storage key XOR xxHash64 of its canonical versions rotated by one bit.
 */
export function entryHash(key: Uint8Array, versions: Uint8Array, out: Uint32Array): void {
  hashInto(key, a);
  entryHashOf(a, versions, out);
}

/** entryHash given the key's xxHash64 (`keyHash`, [high, low]): a key hashed once for two versions. */
export function entryHashOf(keyHash: Uint32Array, versions: Uint8Array, out: Uint32Array): void {
  hashInto(versions, b);
  out[0] = (keyHash[0]! ^ ((b[0]! << 1) | (b[1]! >>> 31))) >>> 0;
  out[1] = (keyHash[1]! ^ ((b[1]! << 1) | (b[0]! >>> 31))) >>> 0;
}

const leaf = new Uint32Array(2);

/** An entry's hash as 16 hex digits (what replicas compare key by key). */
export function entryHex(key: Uint8Array, versions: Uint8Array): string {
  entryHash(key, versions, leaf);
  return leaf[0]!.toString(16).padStart(8, '0') + leaf[1]!.toString(16).padStart(8, '0');
}

export class RangeHash {
  #hi = 0;
  #lo = 0;
  count = 0;

  /** Add one entry: its storage key and its canonical versions bytes. */
  add(key: Uint8Array, versions: Uint8Array): void {
    entryHash(key, versions, leaf);
    this.#addHalves(leaf[0]!, leaf[1]!);
    this.count++;
  }

  /** Add another digest (of a disjoint set of entries). */
  plus(other: RangeHash): void {
    this.#addHalves(other.#hi, other.#lo);
    this.count += other.count;
  }

  #addHalves(hi: number, lo: number): void {
    const sum = this.#lo + lo;
    this.#lo = sum >>> 0;
    this.#hi = (this.#hi + hi + (sum > 0xffffffff ? 1 : 0)) >>> 0;
  }

  /** 16 hex digits. */
  get hex(): string {
    return this.#hi.toString(16).padStart(8, '0') + this.#lo.toString(16).padStart(8, '0');
  }
}
