/**
 * The placement schemes ringkv's ring is measured against in bench:ring (the seed
 * write-ups' alternatives), each over the same 64-bit key hash ringkv uses (xxHash64,
 * src/ring/hash.ts), so that only the scheme differs:
 *
 * - modulo: hash mod N, the scheme consistent hashing exists to replace;
 * - rendezvous (highest random weight): every node scores every key, the top score wins;
 * - jump consistent hash (Lamping and Veach): buckets 0..N-1 drawn by jumps, with a
 *   32-bit PRNG seeded by the key in place of the paper's 64-bit LCG (the same law);
 * - Maglev (Eisenbud et al.): a prime-sized table filled by each node's permutation;
 * - consistent hashing with bounded loads (Mirrokni, Thorup, Zadimoghaddam): a vnode
 *   ring where a key passes a node already holding (1 + ε) × the mean and goes on.
 *
 * Each answers `owner(key)`, and `replicas(key, n)` where the scheme has a natural
 * notion of n distinct nodes. Bench code: no checks of its inputs.
 */
import { hashInto } from '../src/ring/index.js';

const h = new Uint32Array(2);

/** The key's 64-bit hash as [high 32, low 32]. */
function hash(key: string): [number, number] {
  hashInto(key, h);
  return [h[0]!, h[1]!];
}

/** (hi · 2^32 + lo) mod m, exact for m < 2^20. */
function mod64(hi: number, lo: number, m: number): number {
  return ((hi % m) * (2 ** 32 % m) + lo) % m;
}

/** A 32-bit finaliser (murmur3's fmix32): spreads a combination of two hashes. */
function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

export interface Placement {
  readonly name: string;
  owner(key: string): string;
  /** n distinct nodes for the key, or undefined where the scheme has no such notion. */
  replicas?(key: string, n: number): string[];
}

export class Modulo implements Placement {
  readonly name = 'modulo';
  constructor(private readonly nodes: readonly string[]) {}
  owner(key: string): string {
    const [hi, lo] = hash(key);
    return this.nodes[mod64(hi, lo, this.nodes.length)]!;
  }
  /** The owner and the next n - 1 by index, as a replicated modulo scheme would do. */
  replicas(key: string, n: number): string[] {
    const [hi, lo] = hash(key);
    const first = mod64(hi, lo, this.nodes.length);
    return Array.from(
      { length: Math.min(n, this.nodes.length) },
      (_, i) => this.nodes[(first + i) % this.nodes.length]!,
    );
  }
}

export class Rendezvous implements Placement {
  readonly name = 'rendezvous';
  readonly #seeds: Uint32Array;
  constructor(private readonly nodes: readonly string[]) {
    this.#seeds = Uint32Array.from(nodes, (n) => hash(n)[1]);
  }
  owner(key: string): string {
    const k = hash(key)[1];
    let best = -1;
    let at = 0;
    for (let i = 0; i < this.#seeds.length; i++) {
      const s = mix32(k ^ this.#seeds[i]!);
      if (s > best) {
        best = s;
        at = i;
      }
    }
    return this.nodes[at]!;
  }
  /** The n highest scores. */
  replicas(key: string, n: number): string[] {
    const k = hash(key)[1];
    const top: { s: number; i: number }[] = [];
    for (let i = 0; i < this.#seeds.length; i++) {
      const s = mix32(k ^ this.#seeds[i]!);
      if (top.length < n || s > top[top.length - 1]!.s) {
        top.push({ s, i });
        top.sort((a, b) => b.s - a.s);
        if (top.length > n) top.pop();
      }
    }
    return top.map((t) => this.nodes[t.i]!);
  }
}

export class Jump implements Placement {
  readonly name = 'jump';
  /** Buckets are positions: only the last node can leave without renumbering the others. */
  constructor(private readonly nodes: readonly string[]) {}
  owner(key: string): string {
    let [, state] = hash(key);
    const n = this.nodes.length;
    let b = -1;
    let j = 0;
    while (j < n) {
      b = j;
      // mulberry32 step: a uniform r in (0, 1].
      state = (state + 0x6d2b79f5) | 0;
      let t = Math.imul(state ^ (state >>> 15), 1 | state);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      const r = (((t ^ (t >>> 14)) >>> 0) + 1) / 2 ** 32;
      j = Math.floor((b + 1) / r);
    }
    return this.nodes[b]!;
  }
}

export class Maglev implements Placement {
  readonly name = 'maglev';
  readonly #table: Uint16Array;
  readonly #m: number;
  constructor(private readonly nodes: readonly string[]) {
    const m = (this.#m = nextPrime(Math.max(65_537, 100 * nodes.length)));
    const table = (this.#table = new Uint16Array(m).fill(0xffff));
    const offset = nodes.map((n) => mod64(...hash(`${n}#offset`), m));
    const skip = nodes.map((n) => mod64(...hash(`${n}#skip`), m - 1) + 1);
    const next = new Array<number>(nodes.length).fill(0);
    let filled = 0;
    while (filled < m) {
      for (let i = 0; i < nodes.length && filled < m; i++) {
        let slot = (offset[i]! + next[i]! * skip[i]!) % m;
        while (table[slot] !== 0xffff) slot = (offset[i]! + ++next[i]! * skip[i]!) % m;
        table[slot] = i;
        next[i]!++;
        filled++;
      }
    }
  }
  owner(key: string): string {
    const [hi, lo] = hash(key);
    return this.nodes[this.#table[mod64(hi, lo, this.#m)]!]!;
  }
  get tableSize(): number {
    return this.#m;
  }
}

function nextPrime(x: number): number {
  const prime = (p: number): boolean => {
    for (let d = 2; d * d <= p; d++) if (p % d === 0) return false;
    return p > 1;
  };
  while (!prime(x)) x++;
  return x;
}

/**
 * Bounded loads: not a function of the key alone but an assignment of a key set, made
 * in the set's order; a key goes to the first node clockwise (64 points per node) whose
 * load is under ⌈(1 + ε) · keys / nodes⌉.
 */
export class BoundedLoads implements Placement {
  readonly name: string;
  readonly #assigned = new Map<string, string>();
  constructor(nodes: readonly string[], keys: readonly string[], epsilon: number, pointsPerNode = 64) {
    this.name = `bounded loads, ε = ${epsilon}`;
    const points = nodes.flatMap((n) =>
      Array.from({ length: pointsPerNode }, (_, i) => ({ at: hash(`${n}#${i}`)[0], n })),
    );
    points.sort((a, b) => a.at - b.at);
    const cap = Math.ceil(((1 + epsilon) * keys.length) / nodes.length);
    const load = new Map<string, number>();
    for (const key of keys) {
      const k = hash(key)[0];
      let lo = 0;
      let hi = points.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (points[mid]!.at < k) lo = mid + 1;
        else hi = mid;
      }
      for (let s = 0; ; s++) {
        const p = points[(lo + s) % points.length]!;
        if ((load.get(p.n) ?? 0) < cap) {
          load.set(p.n, (load.get(p.n) ?? 0) + 1);
          this.#assigned.set(key, p.n);
          break;
        }
      }
    }
  }
  owner(key: string): string {
    return this.#assigned.get(key)!;
  }
}
