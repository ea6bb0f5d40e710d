import { describe, expect, it } from 'vitest';
import { QuorumFailed, awaitQuorum } from '../../../src/replication/quorum.js';

const later = <T>(ms: number, value: T): Promise<T> => new Promise((r) => setTimeout(() => r(value), ms));
const failLater = (ms: number): Promise<never> => new Promise((_, reject) => setTimeout(() => reject(new Error('down')), ms));

describe('awaitQuorum', () => {
  it('answers as soon as `needed` succeed, and still reports every outcome', async () => {
    const q = awaitQuorum([{ node: 'a', promise: later(1, 'A') }, { node: 'b', promise: later(5, 'B') }, { node: 'c', promise: later(60, 'C') }], 2, Date.now() + 1000);
    const t0 = Date.now();
    const reached = await q.reached;
    expect(Date.now() - t0).toBeLessThan(50);
    expect(reached.map((o) => o.node)).toEqual(['a', 'b']);
    expect((await q.all).map((o) => o.node).sort()).toEqual(['a', 'b', 'c']);
  });

  it('fails as soon as the quorum cannot be met, naming the failures', async () => {
    const q = awaitQuorum([{ node: 'a', promise: later(1, 'A') }, { node: 'b', promise: failLater(2) }, { node: 'c', promise: failLater(3) }, { node: 'd', promise: later(500, 'D') }], 3, Date.now() + 1000);
    const t0 = Date.now();
    const e = (await q.reached.catch((x: unknown) => x)) as QuorumFailed;
    expect(e).toBeInstanceOf(QuorumFailed);
    expect(e.timedOut).toBe(false);
    expect(e.succeeded).toBe(1);
    expect(e.outcomes.filter((o) => !o.ok).map((o) => o.node)).toEqual(['b', 'c']);
    expect(Date.now() - t0).toBeLessThan(100);
  });

  it('times out at the deadline with what arrived by then', async () => {
    const q = awaitQuorum([{ node: 'a', promise: later(1, 'A') }, { node: 'b', promise: later(300, 'B') }], 2, Date.now() + 30);
    const e = (await q.reached.catch((x: unknown) => x)) as QuorumFailed;
    expect(e.timedOut).toBe(true);
    expect(e.succeeded).toBe(1);
  });

  it('needs nothing when needed is 0, and fails at once with fewer calls than needed', async () => {
    await expect(awaitQuorum([], 0, Date.now() + 1000).reached).resolves.toEqual([]);
    const e = (await awaitQuorum([{ node: 'a', promise: later(1, 'A') }], 2, Date.now() + 1000).reached.catch((x: unknown) => x)) as QuorumFailed;
    expect(e).toBeInstanceOf(QuorumFailed);
    expect(e.timedOut).toBe(false);
  });
});
