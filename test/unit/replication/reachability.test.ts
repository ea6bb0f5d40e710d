import { describe, expect, it } from 'vitest';
import { Reachability, observed } from '../../../src/replication/reachability.js';
import {
  ReplicaFailure,
  noAnswer,
  transient,
  type ReplicaApi,
  type ReplicaFailureKind,
} from '../../../src/replication/replica-api.js';

function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('Reachability', () => {
  it('makes a peer suspect after `threshold` failures in a row, for `holdMs` after the last', () => {
    const c = clock();
    const changes: string[] = [];
    const r = new Reachability({
      threshold: 2,
      holdMs: 1000,
      now: c.now,
      changed: (p, s) => changes.push(`${p}:${s}`),
    });
    r.failed('b');
    expect(r.suspect('b')).toBe(false);
    r.failed('b');
    expect(r.suspect('b')).toBe(true);
    expect(r.suspects()).toEqual(['b']);
    c.advance(999);
    expect(r.suspect('b')).toBe(true);
    c.advance(1);
    // The hold ran out: the next request tries it, and one more failure makes it suspect again.
    expect(r.suspect('b')).toBe(false);
    r.failed('b');
    expect(r.suspect('b')).toBe(true);
    r.succeeded('b');
    expect(r.suspect('b')).toBe(false);
    expect(changes).toEqual(['b:true', 'b:true', 'b:false']);
  });

  it('a peer silent past silenceMs (calls in flight, no answer) is suspect at once, and not once it answers', () => {
    const silent = new Map<string, number>();
    const r = new Reachability({
      threshold: 2,
      holdMs: 1000,
      now: () => 0,
      silentMs: (p) => silent.get(p) ?? 0,
      silenceMs: 500,
    });
    silent.set('b', 400);
    expect(r.suspect('b')).toBe(false);
    silent.set('b', 600);
    expect(r.suspect('b')).toBe(true);
    silent.set('b', 0);
    expect(r.suspect('b')).toBe(false);
  });

  it('a success in between resets the count', () => {
    const c = clock();
    const r = new Reachability({ threshold: 2, holdMs: 1000, now: c.now });
    r.failed('b');
    r.succeeded('b');
    r.failed('b');
    expect(r.suspect('b')).toBe(false);
  });
});

describe('observed replica calls', () => {
  const fails = (kind: ReplicaFailureKind): ReplicaApi => {
    const err = new ReplicaFailure(kind, kind === 'refused' ? 'KV_BAD_CONTEXT' : 'RK_UNAVAILABLE', `failed: ${kind}`);
    return {
      apply: () => Promise.reject(err),
      merge: () => Promise.reject(err),
      read: () => Promise.reject(err),
      digest: () => Promise.reject(err),
      counterUpdate: () => Promise.reject(err),
      writeMany: () => Promise.reject(err),
      readRange: () => Promise.reject(err),
      paxosPrepare: () => Promise.reject(err),
      paxosPropose: () => Promise.reject(err),
      paxosCommit: () => Promise.reject(err),
    };
  };
  const answers: ReplicaApi = {
    apply: () => Promise.resolve({ record: Buffer.alloc(0), context: Buffer.alloc(0) } as never),
    merge: () => Promise.resolve(true),
    read: () => Promise.resolve(undefined),
    digest: () => Promise.resolve(Buffer.alloc(0)),
    counterUpdate: () => Promise.resolve({ record: Buffer.alloc(0), delta: Buffer.alloc(0), value: 0n }),
    writeMany: () => Promise.resolve([]),
    readRange: () => Promise.resolve({ records: [], next: undefined }),
    paxosPrepare: () => Promise.resolve({ promised: false, higher: { n: 1, by: 'x' } }),
    paxosPropose: () => Promise.resolve({ accepted: true }),
    paxosCommit: () => Promise.resolve(),
  };

  it("passes every argument of every call on as given (a put's expiry included)", async () => {
    const seen: unknown[][] = [];
    const api = Object.fromEntries(
      Object.entries(answers).map(([name, fn]) => [
        name,
        (...args: unknown[]) => (seen.push([name, ...args]), (fn as (...a: unknown[]) => unknown)(...args)),
      ]),
    ) as unknown as ReplicaApi;
    const o = observed(api, new Reachability({ threshold: 2, holdMs: 1000, now: () => 0 }));
    const k = Buffer.from('k'),
      rid = Buffer.from('rid');
    await o.apply('b', k, Buffer.from('v'), Buffer.alloc(0), 9, rid, 1234);
    await o.merge('b', k, Buffer.from('r'), 'c', 9);
    const ops = [{ op: 'add' as const, path: { element: 'e' } }];
    await o.counterUpdate('b', k, -3, 9, rid);
    await o.writeMany('b', k, ops, 9, rid);
    await o.readRange('b', k, Buffer.from('a'), 7, 9);
    const ballot = { n: 5, by: 'p' },
      proposal = { ballot, id: 'r', value: null };
    await o.paxosPrepare('b', k, ballot, 9);
    await o.paxosPropose('b', k, proposal, 9);
    await o.paxosCommit('b', k, proposal, 9);
    expect(seen).toEqual([
      ['apply', 'b', k, Buffer.from('v'), Buffer.alloc(0), 9, rid, 1234],
      ['merge', 'b', k, Buffer.from('r'), 'c', 9],
      ['counterUpdate', 'b', k, -3, 9, rid],
      ['writeMany', 'b', k, ops, 9, rid],
      ['readRange', 'b', k, Buffer.from('a'), 7, 9],
      ['paxosPrepare', 'b', k, ballot, 9],
      ['paxosPropose', 'b', k, proposal, 9],
      ['paxosCommit', 'b', k, proposal, 9],
    ]);
  });

  it('counts calls that got no answer (unreachable, timed out) against the peer, and passes the error on', async () => {
    for (const kind of ['unreachable', 'timeout'] as const) {
      const r = new Reachability({ threshold: 2, holdMs: 1000, now: () => 0 });
      const api = observed(fails(kind), r);
      await expect(api.merge('b', Buffer.from('k'), Buffer.alloc(0), undefined, 0)).rejects.toThrow(`failed: ${kind}`);
      await expect(api.digest('b', Buffer.from('k'), 0)).rejects.toThrow();
      expect(r.suspect('b')).toBe(true);
    }
  });

  it('a refusal is an answer: it clears the count, as a success does', async () => {
    const r = new Reachability({ threshold: 2, holdMs: 1000, now: () => 0 });
    await expect(observed(fails('unreachable'), r).read('b', Buffer.from('k'), undefined, 0)).rejects.toThrow();
    await expect(observed(fails('refused'), r).read('b', Buffer.from('k'), undefined, 0)).rejects.toThrow();
    await expect(observed(fails('unreachable'), r).read('b', Buffer.from('k'), undefined, 0)).rejects.toThrow();
    expect(r.suspect('b')).toBe(false);
    await observed(answers, r).merge('b', Buffer.from('k'), Buffer.alloc(0), undefined, 0);
    expect(noAnswer(new ReplicaFailure('refused', 'KV_BAD_CONTEXT', 'x'))).toBe(false);
    // A gRPC-shaped error is not a replica failure: the coordinator never sees one.
    expect(noAnswer({ code: 14 })).toBe(false);
  });

  it('a refusal for being busy is worth retrying later; one for the request itself is not', () => {
    expect(transient(new ReplicaFailure('refused', 'RK_OVERLOADED', 'busy'))).toBe(true);
    expect(transient(new ReplicaFailure('refused', 'KV_HINTS_FULL', 'full'))).toBe(true);
    expect(transient(new ReplicaFailure('timeout', 'RK_TIMEOUT', 'late'))).toBe(true);
    expect(transient(new ReplicaFailure('refused', 'KV_TOO_MANY_SIBLINGS', 'no'))).toBe(false);
  });
});
