/**
 * The options a ring is built with: how its members' tokens are claimed. The ring only
 * carries them (so that a claim on it, claim.ts, uses the same); the claim functions act
 * on them.
 *
 * Owns: their defaults and checks. Must not: allocate (the claim functions do).
 */

import { RingError } from './ring-errors.js';

/** 'balanced' (default): tokens chosen to even out ownership. 'random': hash-derived. */
export type Allocation = 'balanced' | 'random';

export interface RingOptions {
  /**
   * Tokens for a node of weight 1 (a node of weight w gets round(w × this), at least 1).
   * Default 64: with it the balanced allocator keeps the busiest node within 5% of its
   * fair share, primary and replicated, from 12 to 999 nodes and through joins
   * (npm run bench:ring); 32 does not, and more costs join time (which grows with its
   * square) for little gain.
   */
  readonly tokensPerNode?: number | undefined;
  /** 'balanced' (default): tokens chosen to even out ownership. 'random': hash-derived. */
  readonly allocation?: Allocation | undefined;
  /** Seed for the allocators' deterministic choices (default 'ringkv'). */
  readonly seed?: string | undefined;
}

export const DEFAULT_TOKENS_PER_NODE = 64;
const MAX_TOKENS_PER_NODE = 4096;

/** The options with defaults filled in; throws RING_BAD_OPTION for a bad one. */
export function resolveOptions(options: RingOptions): Required<RingOptions> {
  const { tokensPerNode = DEFAULT_TOKENS_PER_NODE, allocation = 'balanced', seed = 'ringkv' } = options ?? {};
  if (!Number.isInteger(tokensPerNode) || tokensPerNode < 1 || tokensPerNode > MAX_TOKENS_PER_NODE) {
    throw new RingError(
      'RING_BAD_OPTION',
      `tokensPerNode must be an integer in 1..${MAX_TOKENS_PER_NODE}, got ${String(tokensPerNode)}`,
    );
  }
  if (allocation !== 'balanced' && allocation !== 'random') {
    throw new RingError('RING_BAD_OPTION', `allocation must be 'balanced' or 'random', got ${String(allocation)}`);
  }
  if (typeof seed !== 'string') throw new RingError('RING_BAD_OPTION', `seed must be a string, got ${typeof seed}`);
  return { tokensPerNode, allocation, seed };
}
