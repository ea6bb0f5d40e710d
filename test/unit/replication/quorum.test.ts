import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  QuorumFailed,
  awaitQuorum,
  awaitsPrimary,
  confirmsOf,
  firstSuccess,
  unmetConfirms,
  type NodeFacts,
} from '../../../src/replication/quorum.js';

const later = <T>(ms: number, value: T): Promise<T> => new Promise((r) => setTimeout(() => r(value), ms));
const failLater = (ms: number): Promise<never> =>
  new Promise((_, reject) => setTimeout(() => reject(new Error('down')), ms));

describe('awaitQuorum', () => {
  it('answers as soon as `needed` succeed, and still reports every outcome', async () => {
    const q = awaitQuorum(
      [
        { node: 'a', promise: later(1, 'A') },
        { node: 'b', promise: later(5, 'B') },
        { node: 'c', promise: later(60, 'C') },
      ],
      2,
      Date.now() + 1000,
    );
    const t0 = Date.now();
    const reached = await q.reached;
    expect(Date.now() - t0).toBeLessThan(50);
    expect(reached.map((o) => o.node)).toEqual(['a', 'b']);
    expect((await q.all).map((o) => o.node).sort()).toEqual(['a', 'b', 'c']);
  });

  it('fails as soon as the quorum cannot be met, naming the failures', async () => {
    const q = awaitQuorum(
      [
        { node: 'a', promise: later(1, 'A') },
        { node: 'b', promise: failLater(2) },
        { node: 'c', promise: failLater(3) },
        { node: 'd', promise: later(500, 'D') },
      ],
      3,
      Date.now() + 1000,
    );
    const t0 = Date.now();
    const e = (await q.reached.catch((x: unknown) => x)) as QuorumFailed;
    expect(e).toBeInstanceOf(QuorumFailed);
    expect(e.timedOut).toBe(false);
    expect(e.succeeded).toBe(1);
    expect(e.outcomes.filter((o) => !o.ok).map((o) => o.node)).toEqual(['b', 'c']);
    expect(Date.now() - t0).toBeLessThan(100);
  });

  it('times out at the deadline with what arrived by then', async () => {
    const q = awaitQuorum(
      [
        { node: 'a', promise: later(1, 'A') },
        { node: 'b', promise: later(300, 'B') },
      ],
      2,
      Date.now() + 30,
    );
    const e = (await q.reached.catch((x: unknown) => x)) as QuorumFailed;
    expect(e.timedOut).toBe(true);
    expect(e.succeeded).toBe(1);
  });

  it('needs nothing when needed is 0, and fails at once with fewer calls than needed', async () => {
    await expect(awaitQuorum([], 0, Date.now() + 1000).reached).resolves.toEqual([]);
    const e = (await awaitQuorum([{ node: 'a', promise: later(1, 'A') }], 2, Date.now() + 1000).reached.catch(
      (x: unknown) => x,
    )) as QuorumFailed;
    expect(e).toBeInstanceOf(QuorumFailed);
    expect(e.timedOut).toBe(false);
  });
});

describe('awaitQuorum with confirmations', () => {
  // a, b primaries in zone x; c a fallback in zone x; d a fallback in zone y.
  const facts: NodeFacts = { zoneOf: (id) => (id === 'd' ? 'y' : 'x'), isPrimary: (id) => id === 'a' || id === 'b' };

  it('counts each node once (the issuer, then a call from it again), its zone once, and primaries only', () => {
    expect(confirmsOf(['a', 'a', 'c', 'd'], facts)).toEqual({ nodes: 3, zones: 2, primaries: 1 });
    expect(unmetConfirms({ nodes: 3, zones: 3, primaries: 2 }, confirmsOf(['a', 'c', 'd'], facts))).toEqual([
      'primaries',
      'zones',
    ]);
    expect(unmetConfirms({ nodes: 0, zones: 0, primaries: 0 }, confirmsOf([], facts))).toEqual([]);
  });

  it('waits past the count until the rules are met', async () => {
    const rules = { nodes: 0, zones: 2, primaries: 0 };
    const q = awaitQuorum(
      [
        { node: 'c', promise: later(1, true) },
        { node: 'd', promise: later(30, true) },
      ],
      1,
      Date.now() + 1000,
      { rules, facts, acked: ['a'] },
    );
    expect((await q.reached).map((o) => o.node)).toEqual(['c', 'd']);
  });

  it('fails as soon as the nodes left cannot meet a rule, though the count is met', async () => {
    const rules = { nodes: 0, zones: 0, primaries: 2 };
    const q = awaitQuorum(
      [
        { node: 'c', promise: later(1, true) },
        { node: 'b', promise: failLater(5) },
        { node: 'd', promise: later(500, true) },
      ],
      1,
      Date.now() + 1000,
      { rules, facts, acked: ['a'] },
    );
    const t0 = Date.now();
    const e = (await q.reached.catch((x: unknown) => x)) as QuorumFailed;
    expect(e).toBeInstanceOf(QuorumFailed);
    expect(e.timedOut).toBe(false);
    expect(Date.now() - t0).toBeLessThan(100);
  });

  it('fails at once when the calls could never meet a rule, and times out when the rule is still open at the deadline', async () => {
    const never = awaitQuorum([{ node: 'c', promise: later(1, true) }], 0, Date.now() + 1000, {
      rules: { nodes: 0, zones: 2, primaries: 0 },
      facts,
      acked: ['a'],
    });
    expect(((await never.reached.catch((x: unknown) => x)) as QuorumFailed).outcomes).toEqual([]);
    const late = awaitQuorum([{ node: 'd', promise: later(300, true) }], 0, Date.now() + 30, {
      rules: { nodes: 2, zones: 0, primaries: 0 },
      facts,
      acked: ['a'],
    });
    expect(((await late.reached.catch((x: unknown) => x)) as QuorumFailed).timedOut).toBe(true);
  });

  it('property: reached resolves exactly when the successes (with the issuer) meet the count and every rule', async () => {
    const ids = ['p1', 'p2', 'p3', 'f1', 'f2', 'f3'];
    const zoneOf = (id: string): string => `z${Number(id.slice(1)) % 3}`;
    const f: NodeFacts = { zoneOf, isPrimary: (id) => id.startsWith('p') };
    const arb = fc.record({
      issuer: fc.constantFrom('p1', 'p2', 'p3'),
      // Each other node: whether it is called, succeeds, and when it answers.
      calls: fc.array(fc.record({ called: fc.boolean(), ok: fc.boolean(), ms: fc.integer({ min: 0, max: 5 }) }), {
        minLength: 6,
        maxLength: 6,
      }),
      w: fc.integer({ min: 0, max: 4 }),
      rules: fc.record({
        nodes: fc.integer({ min: 0, max: 4 }),
        zones: fc.integer({ min: 0, max: 3 }),
        primaries: fc.integer({ min: 0, max: 3 }),
      }),
    });
    await fc.assert(
      fc.asyncProperty(arb, async ({ issuer, calls, w, rules }) => {
        const made = ids.flatMap((node, i) => (node !== issuer && calls[i]!.called ? [{ node, ...calls[i]! }] : []));
        const q = awaitQuorum(
          made.map((c) => ({ node: c.node, promise: c.ok ? later(c.ms, true) : failLater(c.ms) })),
          w,
          Date.now() + 5000,
          { rules, facts: f, acked: [issuer] },
        );
        const succeeded = made.filter((c) => c.ok).map((c) => c.node);
        const expected =
          succeeded.length >= w && unmetConfirms(rules, confirmsOf([issuer, ...succeeded], f)).length === 0;
        const got = await q.reached.then(
          () => true,
          (e: unknown) => {
            expect((e as QuorumFailed).timedOut).toBe(false);
            return false;
          },
        );
        expect(got).toBe(expected);
        await q.all;
      }),
      { numRuns: 150 },
    );
  });
});

describe("a stand-in's not-found", () => {
  it('settles a read only when no primary can still answer', () => {
    expect(awaitsPrimary(['n4'], new Set(['n4']), 2)).toBe(true); // the stand-in's empty reply first, two primaries to come
    expect(awaitsPrimary(['n4'], new Set(['n4']), 0)).toBe(false); // every primary answered or failed: it is all there is
    expect(awaitsPrimary(['n4'], new Set(), 2)).toBe(false); // the stand-in holds a hint of the key: that is data
    expect(awaitsPrimary(['n1', 'n4'], new Set(['n4']), 1)).toBe(true);
    expect(awaitsPrimary(['n1'], new Set(), 1)).toBe(false);
  });

  it('firstSuccess answers the first success, undefined when all fail, and times out at the deadline', async () => {
    const fail = Promise.reject(new Error('down'));
    fail.catch(() => undefined);
    const slow = new Promise<string>((r) => setTimeout(() => r('late'), 50));
    expect(
      await firstSuccess(
        [
          { node: 'a', promise: fail },
          { node: 'b', promise: slow },
        ],
        Date.now() + 5000,
      ),
    ).toEqual({ node: 'b', ok: true, value: 'late' });
    expect(await firstSuccess([{ node: 'a', promise: fail }], Date.now() + 5000)).toBeUndefined();
    expect(await firstSuccess([], Date.now() + 5000)).toBeUndefined();
    await expect(
      firstSuccess([{ node: 'b', promise: new Promise<string>(() => undefined) }], Date.now() + 10),
    ).rejects.toMatchObject({ timedOut: true });
  });
});
