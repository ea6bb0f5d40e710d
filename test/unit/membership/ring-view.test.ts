import { describe, expect, it } from 'vitest';
import { checkDelta, formatHeirs, formatTokens, initialState, parseHeirs } from '../../../src/membership/endpoint.js';
import { disagreeing, ringFromStates, settledHeirs } from '../../../src/membership/ring-view.js';
import { decideTokens, nextJoinStep, tokenClash } from '../../../src/cluster/join.js';

function st(id: string, status: string, tokens?: bigint[], extra: Record<string, string> = {}) {
  const fields: Record<string, string> = { addr: '127.0.0.1:1', status, ...extra };
  if (tokens) fields.tokens = formatTokens(tokens);
  return initialState(id, 1, fields);
}

describe('ring view', () => {
  it('owners are normal and leaving members; joiners are not', () => {
    const v = ringFromStates([
      st('a', 'normal', [10n]),
      st('b', 'leaving', [20n]),
      st('c', 'joining', [30n]),
      st('d', 'left', [40n]),
    ]);
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

describe('movements and the target ring', () => {
  it('a joiner with tokens is a join: the target ring has it, the current one does not', () => {
    const v = ringFromStates([
      st('a', 'normal', [10n]),
      st('b', 'normal', [20n]),
      st('c', 'joining', [30n]),
      st('d', 'joining'),
    ]);
    expect(v.movements).toEqual([{ kind: 'join', node: 'c', driver: 'c' }]);
    expect(v.ring!.members.map((m) => m.id)).toEqual(['a', 'b']);
    expect(v.target!.members.map((m) => m.id)).toEqual(['a', 'b', 'c']);
  });

  it('a withdrawn claim (tokens "") is no movement; nothing moving means target === ring', () => {
    const v = ringFromStates([st('a', 'normal', [10n]), st('c', 'joining', undefined, { tokens: '' })]);
    expect(v.movements).toEqual([]);
    expect(v.target).toBe(v.ring);
  });

  it('a leaving owner stays in the ring and leaves the target; a removing member takes its node out', () => {
    const v = ringFromStates([
      st('a', 'normal', [10n]),
      st('b', 'leaving', [20n]),
      st('c', 'normal', [30n], { removing: 'a' }),
    ]);
    expect(v.movements.map((m) => `${m.kind}:${m.node}:${m.driver}`)).toEqual(['remove:a:c', 'leave:b:b']);
    expect(v.ring!.members.map((m) => m.id)).toEqual(['a', 'b', 'c']);
    expect(v.target!.members.map((m) => m.id)).toEqual(['c']);
  });

  it("a replacer takes its dead owner's tokens; once normal, the old one is removed", () => {
    const pending = ringFromStates([
      st('a', 'normal', [10n]),
      st('b', 'normal', [20n]),
      st('x', 'joining', [20n], { replaces: 'b' }),
    ]);
    expect(pending.movements).toEqual([{ kind: 'replace', node: 'x', driver: 'x', replaces: 'b' }]);
    expect(pending.conflicts).toEqual([]);
    expect(pending.target!.members.map((m) => m.id)).toEqual(['a', 'x']);
    const done = ringFromStates([
      st('a', 'normal', [10n]),
      st('b', 'normal', [20n]),
      st('x', 'normal', [20n], { replaces: 'b' }),
    ]);
    expect(done.removed.has('b')).toBe(true);
    expect(done.ring!.members.map((m) => m.id)).toEqual(['a', 'x']);
  });

  it('ids in a removed list are not members, and operator movements go before joins', () => {
    const v = ringFromStates([
      st('a', 'normal', [10n], { removed: 'z' }),
      st('z', 'normal', [5n]),
      st('b', 'joining', [20n]),
      st('c', 'leaving', [30n]),
    ]);
    expect(v.ring!.members.map((m) => m.id)).toEqual(['a', 'c']);
    expect(v.movements.map((m) => m.node)).toEqual(['c', 'b']);
  });

  it('the hash changes with a claim; disagreeing names a live coordinator that gossips another hash', () => {
    const a = st('a', 'normal', [10n]);
    const before = ringFromStates([a]);
    const after = ringFromStates([a, st('c', 'joining', [30n])]);
    expect(after.hash).not.toBe(before.hash);
    const states = [
      st('a', 'normal', [10n], { topo: before.hash }),
      st('c', 'joining', [30n], { topo: after.hash }),
      st('d', 'joining', undefined, { topo: before.hash }),
    ];
    expect(disagreeing(states, 'c', after.hash, new Set(), () => true)).toBe('a');
    expect(disagreeing(states, 'c', after.hash, new Set(), (id) => id !== 'a')).toBeUndefined(); // a is down: it coordinates nothing
    expect(
      disagreeing([st('a', 'normal', [10n], { topo: after.hash })], 'c', after.hash, new Set(), () => true),
    ).toBeUndefined();
  });
});

describe('the join state machine', () => {
  const owner = st('n1', 'normal', [5n]);
  const gossip = (over: object = {}) => ({
    shadow: false,
    formerSelf: undefined,
    states: () => [owner],
    isUp: () => true,
    ...over,
  });
  const base = {
    self: { id: 'n3', zone: '', rack: '', weight: 1 },
    clusterName: 'c',
    tokensPerNode: 4,
    replicas: 3,
    intervalMs: 1000,
    quietMs: 60_000,
    streamed: false,
  };
  const viewOf = (states: ReturnType<typeof st>[]) => ringFromStates(states);

  it('shadow round, show, claim, settle, wait for every coordinator to see the claim, stream, then normal', () => {
    const empty = viewOf([owner]);
    expect(
      nextJoinStep({
        ...base,
        waitedMs: 500,
        tokens: undefined,
        tokensAgeMs: 0,
        gossip: gossip({ shadow: true }),
        view: empty,
      }),
    ).toMatchObject({ kind: 'wait', reason: /shadow round/ });
    expect(
      nextJoinStep({
        ...base,
        waitedMs: 2000,
        tokens: undefined,
        tokensAgeMs: 0,
        gossip: gossip({ shadow: true }),
        view: empty,
      }),
    ).toEqual({ kind: 'show' });
    const claim = nextJoinStep({
      ...base,
      waitedMs: 4000,
      tokens: undefined,
      tokensAgeMs: 0,
      gossip: gossip(),
      view: empty,
    });
    expect(claim).toMatchObject({ kind: 'claim', alone: false, clash: undefined });
    const tokens = claim.kind === 'claim' ? claim.tokens : [];
    const me = st('n3', 'joining', tokens);
    const view = viewOf([owner, me]);
    expect(nextJoinStep({ ...base, waitedMs: 4000, tokens, tokensAgeMs: 0, gossip: gossip(), view })).toMatchObject({
      kind: 'wait',
      reason: /settle/,
    });
    expect(nextJoinStep({ ...base, waitedMs: 7000, tokens, tokensAgeMs: 3000, gossip: gossip(), view })).toMatchObject({
      kind: 'wait',
      reason: /waiting for n1 to see our claim/,
    });
    const agreed = gossip({ states: () => [st('n1', 'normal', [5n], { topo: view.hash }), me] });
    expect(nextJoinStep({ ...base, waitedMs: 7000, tokens, tokensAgeMs: 3000, gossip: agreed, view })).toEqual({
      kind: 'stream',
    });
    expect(
      nextJoinStep({ ...base, waitedMs: 7000, tokens, tokensAgeMs: 3000, gossip: agreed, view, streamed: true }),
    ).toMatchObject({ kind: 'normal' });
  });

  it('does not claim while another node moves, and withdraws a claim that loses to one', () => {
    const leaving = st('n2', 'leaving', [9n]);
    const view = viewOf([owner, leaving]);
    const states = () => [owner, leaving];
    expect(
      nextJoinStep({ ...base, waitedMs: 9000, tokens: undefined, tokensAgeMs: 0, gossip: gossip({ states }), view }),
    ).toMatchObject({ kind: 'wait', reason: /n2 is leaving: one topology change at a time/ });
    const both = viewOf([owner, leaving, st('n3', 'joining', [7n])]);
    expect(
      nextJoinStep({
        ...base,
        waitedMs: 9000,
        tokens: [7n],
        tokensAgeMs: 5000,
        gossip: gossip({ states }),
        view: both,
      }),
    ).toMatchObject({ kind: 'withdraw', first: { kind: 'leave', node: 'n2' } });
    // A claim that clashes while another moves is withdrawn too, not kept waiting (this deadlocked the simulator).
    const clashing = () => [owner, st('n2', 'joining', [7n])];
    expect(
      nextJoinStep({
        ...base,
        waitedMs: 9000,
        tokens: [7n],
        tokensAgeMs: 5000,
        gossip: gossip({ states: clashing }),
        view: viewOf(clashing()),
      }),
    ).toMatchObject({ kind: 'withdraw' });
  });

  it('picks again when an owner claimed one of our tokens', () => {
    const step = nextJoinStep({
      ...base,
      waitedMs: 9000,
      tokens: [5n, 9n],
      tokensAgeMs: 5000,
      gossip: gossip(),
      view: viewOf([owner]),
    });
    expect(step).toMatchObject({ kind: 'claim', clash: 'n1' });
  });

  it('refuses an id an earlier incarnation still holds', () => {
    const former = st('n3', 'normal', [7n]);
    const view = viewOf([owner]);
    expect(
      nextJoinStep({
        ...base,
        waitedMs: 2000,
        tokens: undefined,
        tokensAgeMs: 0,
        gossip: gossip({ shadow: true, formerSelf: former }),
        view,
      }),
    ).toMatchObject({ kind: 'fail', message: /node id n3 is already a member of cluster c \(status normal, 1 tokens/ });
    expect(
      nextJoinStep({
        ...base,
        waitedMs: 2000,
        tokens: undefined,
        tokensAgeMs: 0,
        gossip: gossip({ shadow: true, formerSelf: st('n3', 'left', [7n]) }),
        view,
      }),
    ).toEqual({ kind: 'show' });
  });
});

describe('join decisions', () => {
  const self = { id: 'n3', zone: '', rack: '', weight: 1 };
  const base = { self, tokensPerNode: 8, replicas: 3, settleMs: 3000, maxWaitMs: 30_000, quietMs: 60_000 };

  it('listens first, then forms a cluster alone when no one answered', () => {
    expect(decideTokens({ ...base, states: [], waitedMs: 1000 }).kind).toBe('wait');
    const d = decideTokens({ ...base, states: [], waitedMs: 3000 });
    expect(d).toMatchObject({ kind: 'claim', alone: true });
    expect(d.kind === 'claim' && d.tokens.length).toBe(8);
  });

  it('lets a joiner with a smaller id pick first, but not forever (counted from the last movement seen)', () => {
    const states = [st('n1', 'joining'), st('n5', 'joining')];
    expect(decideTokens({ ...base, states, waitedMs: 5000, quietMs: 5000 })).toEqual({
      kind: 'wait',
      reason: 'n1 picks tokens first',
    });
    expect(decideTokens({ ...base, states, waitedMs: 90_000, quietMs: 5000 })).toEqual({
      kind: 'wait',
      reason: 'n1 picks tokens first',
    });
    expect(decideTokens({ ...base, states, waitedMs: 31_000, quietMs: 31_000 }).kind).toBe('claim');
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
});

describe("heirs: a leaver's tokens go to the members it names", () => {
  const heirs = (entries: [string, [bigint, string][]][]) =>
    formatHeirs(new Map(entries.map(([s, pairs]) => [s, new Map(pairs)])));

  it('a leave gives its tokens to its heirs in the target ring, and in the ring once it has left', () => {
    const field = heirs([
      [
        'b',
        [
          [20n, 'c'],
          [40n, 'a'],
        ],
      ],
    ]);
    const base = [st('a', 'normal', [10n]), st('c', 'normal', [30n])];
    const leaving = ringFromStates([...base, st('b', 'leaving', [20n, 40n], { heirs: field })]);
    expect(leaving.ring!.member('b')!.tokens).toEqual([20n, 40n]);
    expect(leaving.target!.members.map((m) => [m.id, m.tokens])).toEqual([
      ['a', [10n, 40n]],
      ['c', [20n, 30n]],
    ]);
    const left = ringFromStates([...base, st('b', 'left', [20n, 40n], { heirs: field })]);
    expect(left.ring!.members.map((m) => [m.id, m.tokens])).toEqual([
      ['a', [10n, 40n]],
      ['c', [20n, 30n]],
    ]);
    expect(left.movements).toEqual([]);
    // Without heirs (a node that left before heirs existed) its tokens are dropped.
    expect(ringFromStates([...base, st('b', 'left', [20n, 40n])]).ring!.members.map((m) => m.tokens)).toEqual([
      [10n],
      [30n],
    ]);
  });

  it("a removal applies the remover's heirs, during it and after; a cancelled leave's stale entry is not used", () => {
    const remover = st('a', 'normal', [10n], { removing: 'b', heirs: heirs([['b', [[20n, 'c']]]]) });
    const v = ringFromStates([remover, st('b', 'normal', [20n]), st('c', 'normal', [30n])]);
    expect(v.target!.member('c')!.tokens).toEqual([20n, 30n]);
    const done = ringFromStates([
      st('a', 'normal', [10n], { removed: 'b', heirs: heirs([['b', [[20n, 'c']]]]) }),
      st('b', 'normal', [20n]),
      st('c', 'normal', [30n]),
    ]);
    expect(done.ring!.members.map((m) => [m.id, m.tokens])).toEqual([
      ['a', [10n]],
      ['c', [20n, 30n]],
    ]);
    // b's own entry from a leave it gave up is not a leave: the remover's entry counts.
    const stale = ringFromStates([
      { ...remover },
      st('b', 'normal', [20n], { heirs: heirs([['b', [[20n, 'a']]]]) }),
      st('c', 'normal', [30n]),
    ]);
    expect(stale.target!.member('c')!.tokens).toEqual([20n, 30n]);
  });

  it("the leaver's own entry wins over a remover's (a node that died while leaving keeps its heirs)", () => {
    const v = ringFromStates([
      st('a', 'normal', [10n], { removing: 'b', heirs: heirs([['b', [[20n, 'a']]]]) }),
      st('b', 'leaving', [20n], { heirs: heirs([['b', [[20n, 'c']]]]) }),
      st('c', 'normal', [30n]),
    ]);
    expect(v.movements.map((m) => m.kind)).toEqual(['remove']);
    expect(v.target!.member('c')!.tokens).toEqual([20n, 30n]);
  });

  it('a heir that is not an owner inherits nothing: the token is dropped; a token someone holds is not inherited', () => {
    const v = ringFromStates([
      st('a', 'normal', [10n]),
      st('b', 'left', [20n, 30n], {
        heirs: heirs([
          [
            'b',
            [
              [20n, 'gone'],
              [30n, 'a'],
            ],
          ],
        ]),
      }),
      st('c', 'normal', [30n]),
    ]);
    expect(v.ring!.members.map((m) => [m.id, m.tokens])).toEqual([
      ['a', [10n]],
      ['c', [30n]],
    ]);
    expect(v.conflicts).toEqual([]);
  });

  it('the field round-trips, and gossip refuses a malformed one with what it must look like', () => {
    const map = new Map([
      [
        'n2',
        new Map([
          [2n ** 63n, 'n1'],
          [5n, 'n3'],
        ]),
      ],
    ]);
    expect(parseHeirs(formatHeirs(map))).toEqual(map);
    expect(parseHeirs('')).toEqual(new Map());
    for (const bad of [
      'n2',
      'n2=',
      '=0000000000000005:n1',
      'n2=5:n1',
      'n2=0000000000000005:n1;n2=0000000000000006:n1',
    ]) {
      expect(parseHeirs(bad)).toBeUndefined();
      expect(
        checkDelta({ id: 'a', generation: 1, heartbeat: 1, fields: [{ name: 'heirs', value: bad, version: 1 }] }),
      ).toMatch(/heirs must be NODE=token:heir/);
    }
  });

  it("an entry is settled once its subject is gone and every token is in an owner's own tokens (or its heir is gone)", () => {
    const entries = new Map([
      [
        'b',
        new Map([
          [20n, 'c'],
          [40n, 'a'],
        ]),
      ],
    ]);
    const field = formatHeirs(entries);
    const leaving = [
      st('a', 'normal', [10n]),
      st('b', 'leaving', [20n, 40n], { heirs: field }),
      st('c', 'normal', [30n]),
    ];
    expect(settledHeirs(leaving, entries)).toEqual([]);
    const left = [
      st('a', 'normal', [10n]),
      st('b', 'left', [20n, 40n], { heirs: field }),
      st('c', 'normal', [20n, 30n]),
    ];
    expect(settledHeirs(left, entries)).toEqual([]); // a has not taken 40 yet
    expect(settledHeirs([st('a', 'normal', [10n, 40n]), ...left.slice(1)], entries)).toEqual(['b']);
    expect(settledHeirs([st('a', 'left', [10n]), ...left.slice(1)], entries)).toEqual(['b']);
  });
});
