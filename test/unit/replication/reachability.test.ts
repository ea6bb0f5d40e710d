import { describe, expect, it } from 'vitest';
import { Reachability, observed } from '../../../src/replication/reachability.js';
import {
  ReplicaFailure,
  noAnswer,
  transient,
  type ReplicaApi,
  type ReplicaCall,
  type ReplicaFailureKind,
  type ReplicaReplies,
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
    return { call: () => Promise.reject(err) };
  };
  const replies: ReplicaReplies = {
    apply: { record: Buffer.alloc(0), context: Buffer.alloc(0) },
    merge: true,
    read: undefined,
    digest: Buffer.alloc(0),
    counterUpdate: { record: Buffer.alloc(0), delta: Buffer.alloc(0), value: 0n },
    writeMany: [],
    readRange: { records: [], next: undefined },
    step: Buffer.from([1]),
  };
  const answers: ReplicaApi = {
    call: <C extends ReplicaCall>(_node: string, c: C) => Promise.resolve(replies[c.op as C['op']]),
  };

  it("passes every argument of every call on as given (a put's expiry included)", async () => {
    const seen: unknown[][] = [];
    const api: ReplicaApi = {
      call: (node, c, deadline) => (seen.push([node, c, deadline]), answers.call(node, c, deadline)),
    };
    const o = observed(api, new Reachability({ threshold: 2, holdMs: 1000, now: () => 0 }));
    const k = Buffer.from('k'),
      rid = Buffer.from('rid');
    await o.call(
      'b',
      { op: 'apply', key: k, value: Buffer.from('v'), context: Buffer.alloc(0), requestId: rid, expiresAt: 1234 },
      9,
    );
    await o.call('b', { op: 'merge', key: k, record: Buffer.from('r'), hintFor: 'c' }, 9);
    const ops = [{ op: 'add' as const, path: { element: 'e' } }];
    await o.call('b', { op: 'counterUpdate', key: k, amount: -3, requestId: rid }, 9);
    await o.call('b', { op: 'writeMany', parent: k, ops, requestId: rid }, 9);
    await o.call('b', { op: 'readRange', parent: k, after: Buffer.from('a'), limit: 7 }, 9);
    await o.call('b', { op: 'step', key: k, kind: 5, step: 'paxosPrepare', arg: Buffer.from('a') }, 9);
    expect(seen).toEqual([
      [
        'b',
        { op: 'apply', key: k, value: Buffer.from('v'), context: Buffer.alloc(0), requestId: rid, expiresAt: 1234 },
        9,
      ],
      ['b', { op: 'merge', key: k, record: Buffer.from('r'), hintFor: 'c' }, 9],
      ['b', { op: 'counterUpdate', key: k, amount: -3, requestId: rid }, 9],
      ['b', { op: 'writeMany', parent: k, ops, requestId: rid }, 9],
      ['b', { op: 'readRange', parent: k, after: Buffer.from('a'), limit: 7 }, 9],
      ['b', { op: 'step', key: k, kind: 5, step: 'paxosPrepare', arg: Buffer.from('a') }, 9],
    ]);
  });

  it('counts calls that got no answer (unreachable, timed out) against the peer, and passes the error on', async () => {
    for (const kind of ['unreachable', 'timeout'] as const) {
      const r = new Reachability({ threshold: 2, holdMs: 1000, now: () => 0 });
      const api = observed(fails(kind), r);
      await expect(api.call('b', { op: 'merge', key: Buffer.from('k'), record: Buffer.alloc(0) }, 0)).rejects.toThrow(
        `failed: ${kind}`,
      );
      await expect(api.call('b', { op: 'digest', key: Buffer.from('k') }, 0)).rejects.toThrow();
      expect(r.suspect('b')).toBe(true);
    }
  });

  it('a refusal is an answer: it clears the count, as a success does', async () => {
    const r = new Reachability({ threshold: 2, holdMs: 1000, now: () => 0 });
    await expect(
      observed(fails('unreachable'), r).call('b', { op: 'read', key: Buffer.from('k') }, 0),
    ).rejects.toThrow();
    await expect(observed(fails('refused'), r).call('b', { op: 'read', key: Buffer.from('k') }, 0)).rejects.toThrow();
    await expect(
      observed(fails('unreachable'), r).call('b', { op: 'read', key: Buffer.from('k') }, 0),
    ).rejects.toThrow();
    expect(r.suspect('b')).toBe(false);
    await observed(answers, r).call('b', { op: 'merge', key: Buffer.from('k'), record: Buffer.alloc(0) }, 0);
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
