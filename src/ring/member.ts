/**
 * Ring members: what a caller passes in, and its validated, normalized form.
 *
 * Owns: every check on member input, so that the rest of src/ring can trust its data.
 * Must not: allocate tokens (the claim functions do, claim.ts) or know about the network.
 */

import { RingError } from './ring-errors.js';
import { compareTokens, isToken, tokenHex } from './tokens.js';

/** A physical node as the ring sees it. */
export interface Member {
  /** Unique, non-empty node id. */
  readonly id: string;
  /** Failure domain (availability zone). Replicas of a key go to distinct zones first. */
  readonly zone?: string | undefined;
  /** Failure domain inside a zone. Replicas in one zone go to distinct racks first. */
  readonly rack?: string | undefined;
  /** Relative capacity (default 1): ownership and token count are proportional to it. */
  readonly weight?: number | undefined;
  /** The node's tokens. Omit them to have the ring allocate tokens for the node. */
  readonly tokens?: readonly bigint[] | undefined;
}

/** A validated member with defaults filled in. `tokens` may still be absent. */
export interface NormalizedMember {
  readonly id: string;
  readonly zone: string;
  readonly rack: string;
  readonly weight: number;
  readonly tokens: readonly bigint[] | undefined;
}

/** A member with its tokens, sorted ascending: a member of a built ring. */
export type TokenedMember = NormalizedMember & { readonly tokens: readonly bigint[] };

/** Largest weight accepted: keeps token counts (weight × tokensPerNode) bounded. */
export const MAX_WEIGHT = 1000;

function bad(message: string): never {
  throw new RingError('RING_BAD_MEMBER', message);
}

/** Validate one member and fill in defaults (zone '', rack '', weight 1). */
export function normalizeMember(m: Member): NormalizedMember {
  if (m === null || typeof m !== 'object') bad(`a member must be an object like { id: 'n1' }, got ${String(m)}`);
  const { id, zone, rack, weight, tokens } = m;
  if (typeof id !== 'string' || id.length === 0) bad(`member id must be a non-empty string, got ${JSON.stringify(id)}`);
  if (zone !== undefined && typeof zone !== 'string') bad(`member ${id}: zone must be a string, got ${typeof zone}`);
  if (rack !== undefined && typeof rack !== 'string') bad(`member ${id}: rack must be a string, got ${typeof rack}`);
  const w = weight ?? 1;
  if (typeof w !== 'number' || !Number.isFinite(w) || w <= 0 || w > MAX_WEIGHT) {
    bad(`member ${id}: weight must be a number in (0, ${MAX_WEIGHT}], got ${String(weight)}`);
  }
  let copy: bigint[] | undefined;
  if (tokens !== undefined) {
    if (!Array.isArray(tokens)) bad(`member ${id}: tokens must be an array of bigint, got ${typeof tokens}`);
    if (tokens.length === 0) {
      throw new RingError('RING_BAD_TOKEN', `member ${id}: tokens is empty; omit tokens to have them allocated`);
    }
    copy = [...(tokens as readonly unknown[])].map((t, i) => {
      if (!isToken(t)) {
        throw new RingError(
          'RING_BAD_TOKEN',
          `member ${id}: token #${i} (${String(t)}) must be a bigint in [0, 2^64 - 1]`,
        );
      }
      return t;
    });
    copy.sort(compareTokens);
    for (let i = 1; i < copy.length; i++) {
      if (copy[i] === copy[i - 1]) {
        throw new RingError('RING_BAD_TOKEN', `member ${id}: token ${tokenHex(copy[i]!)} is listed twice`);
      }
    }
    Object.freeze(copy);
  }
  return Object.freeze({ id, zone: zone ?? '', rack: rack ?? '', weight: w, tokens: copy });
}

/** Order of members by id, for sort. */
export function byId(a: { readonly id: string }, b: { readonly id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Validate a member list: each member, then that ids are unique. Sorted by id. */
export function normalizeMembers(members: readonly Member[]): NormalizedMember[] {
  if (!Array.isArray(members)) bad(`members must be an array, got ${typeof members}`);
  const out = members.map(normalizeMember).sort(byId);
  for (let i = 1; i < out.length; i++) {
    if (out[i]!.id === out[i - 1]!.id) {
      throw new RingError('RING_DUPLICATE_MEMBER', `member id ${out[i]!.id} appears twice; node ids must be unique`);
    }
  }
  return out;
}
