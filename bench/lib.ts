/**
 * Helpers shared by the benchmarks: cluster shapes, a seeded choice of nodes to remove,
 * plain-text tables, and latency histograms.
 */
import * as hdr from 'hdr-histogram-js';
import { mulberry32 } from '../src/ring/allocate-tokens.js';
import { Ring, arcFraction, balance } from '../src/ring/index.js';
import type { Member } from '../src/ring/index.js';

export const ZONES = ['a', 'b', 'c'];

/** `count` nodes spread round-robin over `zones` zones: n0000 (a), n0001 (b), ... */
export function cluster(count: number, zones = 3, prefix = 'n'): Member[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}${String(i).padStart(4, '0')}`,
    zone: ZONES[i % zones],
  }));
}

/** `count` ids to remove from the ring, chosen with a seeded PRNG. */
export function leavers(ring: Ring, count: number, seed: number): string[] {
  const random = mulberry32(seed);
  const ids = ring.members.map((m) => m.id);
  const out: string[] = [];
  while (out.length < count) out.push(...ids.splice(Math.floor(random() * ids.length), 1));
  return out;
}

/** Busiest node ÷ fair share for primary (n = 1) and replicated (n = N, default 3, or fewer nodes). */
export function busiest(ring: Ring, N = 3): { primary: number; replicated: number } {
  return { primary: balance(ring, 1).max, replicated: balance(ring, Math.min(N, ring.size)).max };
}

/** The shortest token range ÷ a fair token's share (1 / the ring's tokens): how thin the thinnest sliver is. */
export function shortestRange(ring: Ring): number {
  const t = ring.tokens;
  let min = Infinity;
  for (let i = 0; i < t.length; i++) min = Math.min(min, arcFraction(t[i === 0 ? t.length - 1 : i - 1]!, t[i]!));
  return min * t.length;
}

/** Fraction of the key space whose replica set (n replicas) differs between two rings. */
export function moved(before: Ring, after: Ring, n: number): number {
  return Ring.diff(before, after, n).reduce((s, c) => s + arcFraction(c.start, c.end), 0);
}

/** The value after `--name` in `args`, else `def`. */
export function argOf(args: readonly string[], name: string, def: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : def;
}

export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '))
    .join('\n');
}

export const f3 = (x: number): string => x.toFixed(3);
export const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;

/** A latency histogram of µs, 1 µs to 60 s at 3 significant digits: what the load benchmarks record into. */
export const histogram = (): hdr.Histogram =>
  hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3 });
