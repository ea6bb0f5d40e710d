/**
 * The client's tail tolerance against nodes that stop answering: hedged calls, moves off
 * a stalled node, the budget, and the request id every attempt of a write carries. Two
 * in-process KeyValue servers with the node's own service code in front of a scripted
 * coordinator; one of them can be made to hold every call without answering (as a
 * paused process does).
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, type ClientOptions } from '../../src/client/index.js';
import type { RequestOptions } from '../../src/replication/coordinator.js';
import { fakeKvServer } from '../../testkit/fake-kv-node.js';

class FakeNode {
  hang = false;
  /** Answer after this long, ms. */
  delayMs = 0;
  calls = 0;
  readonly requestIds: string[] = [];
  server: grpc.Server | undefined;
  address = '';

  async start(): Promise<void> {
    const run = <T>(value: T, o?: RequestOptions): Promise<T> => {
      this.calls++;
      if (o?.requestId?.length) this.requestIds.push(o.requestId.toString('hex'));
      if (this.hang) return new Promise<T>(() => undefined);
      return this.delayMs > 0
        ? new Promise<T>((r) => setTimeout(() => r(value), this.delayMs))
        : Promise.resolve(value);
    };
    ({ server: this.server, address: this.address } = await fakeKvServer(run));
  }
}

const a = new FakeNode();
const b = new FakeNode();

beforeAll(async () => {
  await a.start();
  await b.start();
});

afterAll(() => {
  a.server?.forceShutdown();
  b.server?.forceShutdown();
});

/**
 * A client to a then b, connected to both (so that set-up does not count), then a holds
 * every call. While warming up, b answers slower (60 ms): a health-aware client prefers a,
 * so that its calls start at the node that then stalls.
 */
async function clientWithAHanging(extra: Partial<ClientOptions>): Promise<Client> {
  const c = new Client({ nodes: [a.address, b.address], tokenAware: false, deadlineMs: 3000, ...extra });
  a.hang = b.hang = false;
  b.delayMs = 60;
  // Both nodes answer: health and hedge delay learn. On a loaded machine a's own answer
  // times are noisy too; more rounds of samples, a few at most, settle which is faster.
  for (let round = 0; round < 5 && (round === 0 || c.candidates('k')[0] !== a.address); round++)
    for (let i = 0; i < 40; i++) await c.get('warm');
  b.delayMs = 0;
  if (extra.adaptive !== false) expect(c.candidates('k')[0]).toBe(a.address); // the test's premise
  a.hang = true;
  a.calls = b.calls = 0;
  a.requestIds.length = b.requestIds.length = 0;
  return c;
}

const timed = async <T>(p: Promise<T>): Promise<{ ms: number; value: T }> => {
  const t = performance.now();
  const value = await p;
  return { ms: performance.now() - t, value };
};

describe.each([
  ['on its stream', true],
  ['as unary calls', false],
])('the client, %s, with one node holding every call', (_name, streaming) => {
  it('answers every call through the other node long before the deadline (hedges, then the stalled node goes last)', async () => {
    const c = await clientWithAHanging({ streaming });
    try {
      for (let i = 0; i < 20; i++) {
        const { ms } = await timed(i % 2 === 0 ? c.get(`k${i}`) : c.put(`k${i}`, 'v'));
        expect(ms).toBeLessThan(2000); // the deadline is 3 s: no call waited for it
      }
      const s = c.stats();
      expect(s.hedges + s.moved, JSON.stringify(s)).toBeGreaterThan(0);
      expect(s.hedgesWon).toBeGreaterThan(0);
      // Once a counts as stopped, calls start at b: far fewer than half reached a.
      expect(a.calls).toBeLessThan(10);
      expect(s.extraCalls).toBe(s.attempts - s.calls);
    } finally {
      c.close();
    }
  });

  it('sends the same request id on every attempt of a write', async () => {
    const c = await clientWithAHanging({ streaming, adaptive: false }); // in turn: each call starts at a or b
    try {
      for (let i = 0; i < 6; i++) await c.put(`r${i}`, 'v');
      expect(a.requestIds.length).toBeGreaterThan(0);
      for (const id of a.requestIds) expect(b.requestIds).toContain(id);
      expect(new Set(b.requestIds).size).toBe(b.requestIds.length); // and a new one per write
    } finally {
      c.close();
    }
  });

  it('without hedging and health (a plain client), a call that starts at the stalled node waits for its deadline', async () => {
    const c = await clientWithAHanging({ streaming, hedge: false, adaptive: false, deadlineMs: 400 });
    try {
      const outcomes = await Promise.allSettled([c.get('x'), c.get('y')]); // in turn: one starts at a
      expect(
        outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.code),
      ).toEqual([grpc.status.DEADLINE_EXCEEDED]);
    } finally {
      c.close();
    }
  });
});

describe('the budget of extra calls', () => {
  it('refuses hedges once spent, and a call on a stalled node is still moved once it counts as stopped', async () => {
    const c = await clientWithAHanging({ adaptive: true, budget: { ratio: 0.001, maxTokens: 1 } });
    try {
      // The warm-up spent nothing; the first hedge takes the one token.
      for (let i = 0; i < 4; i++) expect((await timed(c.get(`b${i}`))).ms).toBeLessThan(2000);
      const s = c.stats();
      expect(s.hedges).toBeLessThanOrEqual(1);
      expect(s.hedgesRefused + s.hedges).toBeGreaterThan(0);
    } finally {
      c.close();
    }
  });

  it('a call whose hedge the budget refused waits a hedge delay before it looks again, rather than spinning', async () => {
    const c = await clientWithAHanging({ adaptive: false, budget: { ratio: 0.001, maxTokens: 1 }, deadlineMs: 1500 });
    try {
      await Promise.allSettled([c.get('s0'), c.get('s1')]); // the token is spent by now (here or in the warm-up)
      const refused = c.stats().hedgesRefused;
      const timers = vi.spyOn(globalThis, 'setTimeout');
      await Promise.allSettled([c.get('s2'), c.get('s3')]); // the one at a: refused, then waits out its 1.5 s
      expect(c.stats().hedgesRefused).toBe(refused + 1);
      expect(timers.mock.calls.length).toBeLessThan(60); // a 1 ms re-check would be over a thousand
      timers.mockRestore();
    } finally {
      c.close();
    }
  });

  it('without health, a spent budget leaves the call on the stalled node', async () => {
    const c = await clientWithAHanging({ adaptive: false, budget: { ratio: 0.001, maxTokens: 1 }, deadlineMs: 1500 });
    try {
      // In turn, half the calls start at a. The one token goes to the first hedge (perhaps
      // already in the warm-up); a call at a whose hedge is refused waits for its deadline.
      // Refusals are counted from here: one in the warm-up (b answering slowly) refuses a
      // hedge too, but that call is answered.
      const before = c.stats();
      const outcomes = await Promise.allSettled([0, 1, 2, 3, 4, 5].map((i) => c.get(`n${i}`)));
      const s = c.stats();
      const refused = s.hedgesRefused - before.hedgesRefused;
      expect(s.hedges).toBeLessThanOrEqual(1);
      expect(refused).toBeGreaterThanOrEqual(2);
      expect(outcomes.filter((o) => o.status === 'rejected')).toHaveLength(refused);
    } finally {
      c.close();
    }
  });
});
