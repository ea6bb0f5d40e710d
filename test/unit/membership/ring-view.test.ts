import { describe, expect, it } from 'vitest';
import { formatTokens, initialState } from '../../../src/membership/endpoint.js';
import { ringFromStates } from '../../../src/membership/ring-view.js';
import { decideTokens, mayBecomeNormal, nextJoinStep, tokenClash } from '../../../src/membership/join.js';

function st(id: string, status: string, tokens?: bigint[], extra: Record<string, string> = {}) {
  const fields: Record<string, string> = { addr: '127.0.0.1:1', status, ...extra };
  if (tokens) fields.tokens = formatTokens(tokens);
  return initialState(id, 1, fields);
}

describe('ring view', () => {
  it('owners are normal and leaving members; joiners are not', () => {
    const v = ringFromStates([st('a', 'normal', [10n]), st('b', 'leaving', [20n]), st('c', 'joining', [30n]), st('d', 'left', [40n])]);
    expect(v.ring?.members.map((m) => m.id)).toEqual(['a', 'b']);
    expect(ringFromStates([st('c', 'joining', [30n])]).ring).toBeUndefined();
  });

  it('is the same whatever the table order, and leaves out the later claimant of a token', () => {
    const states = [st('b', 'normal', [10n, 50n]), st('a', 'normal', [10n, 20n]), st('c', 'normal', [30n])];
    const v1 = ringFromStates(states);
    const v2 = ringFromStates([...states].reverse());
    expect(v1.fingerprint).toBe(v2.fingerprint);
    expect(v1.ring?.members.map((m) => m.id)).toEqual(['a', 'c']);
    expect(v1.conflicts).toEqual([{ id: 'b', token: 10n, owner: 'a' }]);
    expect(v2.ring?.ranges(1)).toEqual(v1.ring?.ranges(1));
  });

  it('the fingerprint ignores heartbeats and load, and changes with ownership', () => {
    const a = st('a', 'normal', [10n]);
    const f = ringFromStates([a]).fingerprint;
    expect(ringFromStates([{ ...a, heartbeat: 99, version: 99 }]).fingerprint).toBe(f);
    expect(ringFromStates([st('a', 'leaving', [10n])]).fingerprint).not.toBe(f);
  });
});

describe('the join state machine', () => {
  const gossip = (over: object = {}) => ({ shadow: false, formerSelf: undefined, states: () => [st('n1', 'normal', [5n], { empty: 'true' })], ...over });
  const base = { self: { id: 'n3', zone: '', rack: '', weight: 1 }, clusterName: 'c', tokensPerNode: 4, intervalMs: 1000, empty: true };

  it('shadow round, then show, claim, let the claim settle, then normal', () => {
    expect(nextJoinStep({ ...base, waitedMs: 500, tokens: undefined, tokensAgeMs: 0, gossip: gossip({ shadow: true }) })).toMatchObject({ kind: 'wait', reason: /shadow round/ });
    expect(nextJoinStep({ ...base, waitedMs: 2000, tokens: undefined, tokensAgeMs: 0, gossip: gossip({ shadow: true }) })).toEqual({ kind: 'show' });
    const claim = nextJoinStep({ ...base, waitedMs: 4000, tokens: undefined, tokensAgeMs: 0, gossip: gossip() });
    expect(claim).toMatchObject({ kind: 'claim', alone: false, clash: undefined });
    const tokens = claim.kind === 'claim' ? claim.tokens : [];
    expect(nextJoinStep({ ...base, waitedMs: 4000, tokens, tokensAgeMs: 0, gossip: gossip() })).toMatchObject({ kind: 'wait', reason: /settle/ });
    expect(nextJoinStep({ ...base, waitedMs: 7000, tokens, tokensAgeMs: 3000, gossip: gossip() })).toMatchObject({ kind: 'normal' });
  });

  it('picks again when an owner or a smaller-id joiner claimed one of our tokens', () => {
    const step = nextJoinStep({ ...base, waitedMs: 9000, tokens: [5n, 9n], tokensAgeMs: 5000, gossip: gossip() });
    expect(step).toMatchObject({ kind: 'claim', clash: 'n1' });
  });

  it('refuses an id an earlier incarnation still holds', () => {
    const former = st('n3', 'normal', [7n]);
    expect(nextJoinStep({ ...base, waitedMs: 2000, tokens: undefined, tokensAgeMs: 0, gossip: gossip({ shadow: true, formerSelf: former }) })).toMatchObject({ kind: 'fail', message: /node id n3 is already a member of cluster c \(status normal, 1 tokens/ });
    expect(nextJoinStep({ ...base, waitedMs: 2000, tokens: undefined, tokensAgeMs: 0, gossip: gossip({ shadow: true, formerSelf: st('n3', 'left', [7n]) }) })).toEqual({ kind: 'show' });
  });
});

describe('join decisions', () => {
  const self = { id: 'n3', zone: '', rack: '', weight: 1 };
  const base = { self, tokensPerNode: 8, settleMs: 3000, maxWaitMs: 30_000 };

  it('listens first, then forms a cluster alone when no one answered', () => {
    expect(decideTokens({ ...base, states: [], waitedMs: 1000 }).kind).toBe('wait');
    const d = decideTokens({ ...base, states: [], waitedMs: 3000 });
    expect(d).toMatchObject({ kind: 'claim', alone: true });
    expect(d.kind === 'claim' && d.tokens.length).toBe(8);
  });

  it('lets a joiner with a smaller id pick first, but not forever', () => {
    const states = [st('n1', 'joining'), st('n5', 'joining')];
    expect(decideTokens({ ...base, states, waitedMs: 5000 })).toEqual({ kind: 'wait', reason: 'n1 picks tokens first' });
    expect(decideTokens({ ...base, states, waitedMs: 31_000 }).kind).toBe('claim');
  });

  it('picks around claims that clash with each other instead of failing (this threw before)', () => {
    const a = decideTokens({ ...base, self: { ...self, id: 'n1' }, states: [], waitedMs: 3000 });
    if (a.kind !== 'claim') throw new Error('expected a claim');
    const states = [st('n1', 'joining', a.tokens), st('n2', 'joining', a.tokens)];
    const d = decideTokens({ ...base, states, waitedMs: 3000 });
    expect(d.kind).toBe('claim');
    expect(d.kind === 'claim' && d.tokens.some((t) => a.tokens.includes(t))).toBe(false);
  });

  it('picks tokens that no placed member holds, from the ring they make', () => {
    const placed = decideTokens({ ...base, self: { ...self, id: 'n1' }, states: [], waitedMs: 3000 });
    if (placed.kind !== 'claim') throw new Error('expected a claim');
    const d = decideTokens({ ...base, states: [st('n1', 'normal', placed.tokens)], waitedMs: 3000 });
    if (d.kind !== 'claim') throw new Error('expected a claim');
    expect(d.alone).toBe(false);
    expect(d.tokens.some((t) => placed.tokens.includes(t))).toBe(false);
    expect(tokenClash('n3', d.tokens, [st('n1', 'normal', placed.tokens)])).toBeUndefined();
    expect(tokenClash('n3', placed.tokens, [st('n1', 'normal', placed.tokens)])).toBe('n1');
    // A joiner with a larger id gives way to us, not the other way round.
    expect(tokenClash('n3', placed.tokens, [st('n4', 'joining', placed.tokens)])).toBeUndefined();
  });

  it('becomes normal only when no owner holds data', () => {
    expect(mayBecomeNormal(true, 'n3', [st('n1', 'normal', [1n], { empty: 'true' })]).ok).toBe(true);
    expect(mayBecomeNormal(true, 'n3', [st('n1', 'normal', [1n], { empty: 'false' })])).toMatchObject({ ok: false, reason: expect.stringMatching(/n1 holds data/) });
    expect(mayBecomeNormal(true, 'n3', [st('n1', 'normal', [1n])]).ok).toBe(false); // not heard yet: assume data
    expect(mayBecomeNormal(false, 'n3', []).ok).toBe(false);
  });
});
