/**
 * Gives every member without tokens its tokens, by the allocation option, for N replicas.
 *
 * Owns: the choice of allocator (allocate-tokens.ts, join-tokens.ts) and the order in
 * which members get tokens, so that the result depends only on the members, the options
 * and N. Must not: validate members (member.ts), build rings (claim.ts) or know `Ring`.
 */

import { layoutTokens, randomTokens, tokenCount } from './allocate-tokens.js';
import { tokenOf } from './hash.js';
import { joinTokens } from './join-tokens.js';
import type { NormalizedMember, TokenedMember } from './member.js';
import type { RingOptions } from './ring-options.js';
import { compareTokens, mergeByToken } from './tokens.js';

/**
 * Members (sorted by id) with tokens for everyone, `replicas` being the cluster's N.
 * Members that have tokens keep them. Those without get them:
 * - random: hash-derived, each independently of the others;
 * - balanced, when nobody has tokens yet: all at once, laid out evenly (`layoutTokens`);
 * - balanced, otherwise: one at a time in id order, each joining the members that have
 *   tokens by then (`joinTokens`), exactly as if they had joined a running cluster.
 */
export function assignTokens(
  members: readonly NormalizedMember[],
  opts: Required<RingOptions>,
  replicas: number,
): TokenedMember[] {
  const has = (m: NormalizedMember): m is TokenedMember => m.tokens !== undefined;
  if (members.every(has)) return [...members];
  const count = (m: NormalizedMember) => tokenCount(m.weight, opts.tokensPerNode);
  const out = new Map<string, TokenedMember>();
  for (const m of members) if (has(m)) out.set(m.id, m);

  if (opts.allocation === 'random') {
    const taken = new Set<bigint>();
    for (const m of out.values()) for (const t of m.tokens) taken.add(t);
    for (const m of members) {
      if (has(m)) continue;
      const tokens = randomTokens(m.id, count(m), opts.seed, taken);
      for (const t of tokens) taken.add(t);
      out.set(m.id, { ...m, tokens });
    }
  } else if (out.size === 0) {
    const seed = Number(tokenOf(`${opts.seed}\n${members.map((m) => m.id).join('\n')}`) & 0xffffffffn);
    const laid = layoutTokens(
      members.map((m) => ({ zone: m.zone, count: count(m) })),
      seed,
    );
    members.forEach((m, i) => out.set(m.id, { ...m, tokens: laid[i]! })); // already ascending
  } else {
    // The ring so far as sorted tokens with owners (indices into `present`).
    const present = [...out.values()];
    let ring = present
      .flatMap((m, v) => m.tokens.map((t) => [t, v] as const))
      .sort((a, b) => compareTokens(a[0], b[0]));
    for (const m of members) {
      if (has(m)) continue;
      const tokens = joinTokens({
        tokens: ring.map((e) => e[0]),
        owners: ring.map((e) => e[1]),
        zoneOf: [...present.map((p) => p.zone), m.zone],
        rackOf: [...present.map((p) => p.rack), m.rack],
        weights: [...present.map((p) => p.weight), m.weight],
        newcomer: present.length,
        count: count(m),
        replicas,
      });
      const joined = { ...m, tokens };
      ring = mergeByToken(
        ring,
        tokens.map((t) => [t, present.length] as const),
      );
      present.push(joined);
      out.set(m.id, joined);
    }
  }
  return members.map((m) => out.get(m.id)!);
}
