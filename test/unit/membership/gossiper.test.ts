import { describe, expect, it } from 'vitest';
import { Gossiper, type GossipMessage, type Outbound } from '../../../src/membership/gossiper.js';
import { mulberry32 } from '../../../src/ring/allocate-tokens.js';
import { checkDelta, deltaOf } from '../../../src/membership/endpoint.js';

function make(id: string, port: number, seeds: string[] = [], cluster = 'c'): Gossiper {
  return new Gossiper({
    id,
    clusterName: cluster,
    generation: 1,
    fields: { addr: `127.0.0.1:${port}`, status: 'normal' },
    seeds,
    random: mulberry32(port),
    now: 0,
  });
}

/** Deliver messages between gossipers by address until none are left. */
function deliver(now: number, out: Outbound[], by: Map<string, Gossiper>): void {
  const queue = [...out];
  while (queue.length > 0) {
    const o = queue.shift()!;
    const g = by.get(o.to);
    if (g) queue.push(...g.receive(now, o.message));
  }
}

describe('gossiper', () => {
  it('one SYN/ACK/ACK2 exchange leaves both sides with the newer of every entry', () => {
    const a = make('a', 1, ['127.0.0.1:2']);
    const b = make('b', 2);
    const by = new Map([
      [a.address, a],
      [b.address, b],
    ]);
    b.set('zone', 'z2');
    deliver(1000, a.announce(), by);
    expect(a.state('b')?.fields.get('zone')?.value).toBe('z2');
    expect(b.state('a')?.fields.get('addr')?.value).toBe('127.0.0.1:1');
    // Each heard the other directly, so each holds the other up.
    expect(a.isUp('b') && b.isUp('a')).toBe(true);
    // A later change travels with the next exchange, and only it (plus heartbeats).
    a.set('status', 'leaving');
    const syn = a.tick(2000);
    expect(syn.length).toBeGreaterThan(0);
    deliver(2000, syn, by);
    expect(b.state('a')?.fields.get('status')?.value).toBe('leaving');
  });

  it('its revision moves when a state is added or a field changes, not on heartbeats', () => {
    const a = make('a', 1, ['127.0.0.1:2']);
    const b = make('b', 2);
    const by = new Map([
      [a.address, a],
      [b.address, b],
    ]);
    const r0 = a.revision;
    deliver(1000, a.announce(), by);
    const r1 = a.revision;
    expect(r1).toBeGreaterThan(r0); // b's state arrived
    for (let t = 2000; t < 6000; t += 1000) deliver(t, [...a.tick(t), ...b.tick(t)], by);
    expect(a.state('b')!.heartbeat).toBeGreaterThan(0);
    expect(a.revision).toBe(r1); // heartbeats only
    a.set('zone', 'z1');
    expect(a.revision).toBe(r1 + 1);
    a.set('zone', 'z1'); // the same value: no change
    expect(a.revision).toBe(r1 + 1);
    b.set('rack', 'r2');
    deliver(7000, b.tick(7000), by);
    expect(a.revision).toBe(r1 + 2);
  });

  it('skips malformed entries but takes the rest of the message, and says why', () => {
    const a = make('a', 1);
    const good = { id: 'z', generation: 1, heartbeat: 1, fields: [{ name: 'addr', value: '127.0.0.1:5', version: 1 }] };
    const bad = { id: 'y', generation: 1, heartbeat: 1, fields: [{ name: 'status', value: 'moving', version: 1 }] };
    a.receive(1, { kind: 'ack2', cluster: 'c', from: 'x', fromAddr: '127.0.0.1:9', deltas: [bad, good] });
    expect([...a.states()].map((s) => s.id).sort()).toEqual(['a', 'z']);
    expect(a.takeEvents()).toContainEqual({
      type: 'refused',
      from: '127.0.0.1:9',
      reason: expect.stringMatching(/^1 entry skipped: y\.status must be one of/),
    });
    const replies = a.receive(1, {
      kind: 'syn',
      cluster: 'c',
      from: 'x',
      fromAddr: '127.0.0.1:9',
      digests: [{ id: 'q', generation: 'one', version: 1 } as never],
    });
    expect(replies).toHaveLength(1); // the ACK still goes out
    expect(() => a.set('status', 'dancing')).toThrow(/cannot set a\.status must be one of/);
  });

  it('refuses gossip from another cluster and malformed envelopes, and says why', () => {
    const a = make('a', 1);
    const bad: unknown[] = [
      { kind: 'syn', cluster: 'other', from: 'x', fromAddr: '127.0.0.1:9', digests: [] },
      { kind: 'syn', cluster: 'c', from: '', fromAddr: '127.0.0.1:9', digests: [] },
      { kind: 'syn', cluster: 'c', from: 'x', fromAddr: 'nowhere', digests: [] },
      { kind: 'syn', cluster: 'c', from: 'x', fromAddr: '127.0.0.1:9', digests: 'no' },
      { kind: 'nope', cluster: 'c', from: 'x', fromAddr: '127.0.0.1:9' },
      null,
      // Values whose String() throws (this threw out of receive before).
      { kind: 'syn', cluster: Object.create(null), from: 'x', fromAddr: '127.0.0.1:9', digests: [] },
    ];
    for (const m of bad) expect(a.receive(1, m as GossipMessage)).toEqual([]);
    const events = a.takeEvents();
    expect(events).toHaveLength(bad.length);
    expect(events.every((e) => e.type === 'refused')).toBe(true);
    expect((events[0] as { reason: string }).reason).toMatch(/cluster name "other" is not ours/);
    expect([...a.states()].map((s) => s.id)).toEqual(['a']); // nothing taken from a refused message
  });

  it('marks a node up when it speaks to us; news of it from others only makes us ask it', () => {
    const a = make('a', 1);
    const delta = (hb: number) => ({
      id: 'z',
      generation: 5,
      heartbeat: hb,
      fields: [{ name: 'addr', value: '127.0.0.1:9', version: 1 }],
    });
    a.receive(0, { kind: 'ack2', cluster: 'c', from: 'b', fromAddr: '127.0.0.1:2', deltas: [delta(2)] });
    expect(a.downSince('z')).toBe(0); // never heard from since we started (at 0)
    a.receive(500, { kind: 'ack2', cluster: 'c', from: 'b', fromAddr: '127.0.0.1:2', deltas: [delta(3)] });
    a.receive(900, { kind: 'ack2', cluster: 'c', from: 'b', fromAddr: '127.0.0.1:2', deltas: [delta(4)] });
    // Heartbeats moving second-hand (stale tables after a full restart look the same) are not enough...
    expect(a.isUp('z')).toBe(false);
    // ...they make the next round ask z itself.
    expect(a.tick(1000).map((o) => o.to)).toContain('127.0.0.1:9');
    // A SYN from z that shows a generation we have not seen is not enough either: we ask for its state.
    const syn = (gen: number) => ({
      kind: 'syn' as const,
      cluster: 'c',
      from: 'z',
      fromAddr: '127.0.0.1:9',
      digests: [{ id: 'z', generation: gen, version: 1 }],
    });
    a.receive(1100, syn(6));
    expect(a.isUp('z')).toBe(false);
    a.receive(1200, syn(5));
    expect(a.isUp('z')).toBe(true);
    // Silence convicts it at a later round.
    a.tick(1000);
    a.tick(30_000 - 1);
    expect(a.takeEvents().some((e) => e.type === 'down' && e.id === 'z')).toBe(false); // the pause guard absorbed our own 29 s gap
    a.tick(31_000);
    a.tick(32_000);
    a.tick(33_000);
    a.tick(34_000);
    a.tick(35_000);
    expect(a.isUp('z')).toBe(false);
    const convicted = a.downSince('z')!;
    expect(convicted).toBeGreaterThan(30_000);
    expect(convicted).toBeLessThanOrEqual(35_000);
    expect(a.downSince('a')).toBeUndefined(); // ourselves
    // Up again once it answers: an ACK from it.
    a.receive(36_000, { kind: 'ack', cluster: 'c', from: 'z', fromAddr: '127.0.0.1:9', deltas: [], requests: [] });
    expect(a.isUp('z')).toBe(true);
    expect(a.downSince('z')).toBeUndefined();
  });

  it('reports another process gossiping under our id with a newer generation', () => {
    const a = make('a', 1);
    a.receive(0, {
      kind: 'ack2',
      cluster: 'c',
      from: 'b',
      fromAddr: '127.0.0.1:2',
      deltas: [{ id: 'a', generation: 9, heartbeat: 1, fields: [] }],
    });
    expect(a.takeEvents()).toEqual([{ type: 'impostor', generation: 9 }]);
    expect(a.self.generation).toBe(1);
  });

  it('in a shadow round learns the cluster, and what it knew of our id, without showing itself', () => {
    const a = make('a', 1);
    const b = make('b', 2, ['127.0.0.1:1']);
    const by = new Map([
      [a.address, a],
      [b.address, b],
    ]);
    deliver(0, b.announce(), by); // b (generation 1) is now known to a
    const b2 = new Gossiper({
      id: 'b',
      clusterName: 'c',
      generation: 2,
      fields: { addr: '127.0.0.1:2', status: 'joining' },
      seeds: ['127.0.0.1:1'],
      random: mulberry32(3),
      now: 0,
      shadow: true,
    });
    by.set(b2.address, b2);
    deliver(1000, b2.announce(), by);
    deliver(
      1000,
      a.tick(1000).filter((o) => o.to === b2.address),
      by,
    );
    expect(b2.state('a')).toBeDefined();
    expect(b2.formerSelf).toMatchObject({ id: 'b', generation: 1 });
    expect(a.state('b')?.generation).toBe(1); // a never saw the new incarnation
    b2.endShadow();
    deliver(2000, b2.announce(), by);
    expect(a.state('b')?.generation).toBe(2);
  });

  it('a restarted node announces its state in the SYN itself: peers see the restart even if their answer is lost', () => {
    const a = make('a', 1);
    const b = make('b', 2, ['127.0.0.1:1']);
    deliver(
      0,
      b.announce(),
      new Map([
        [a.address, a],
        [b.address, b],
      ]),
    );
    a.takeEvents();
    const b2 = new Gossiper({
      id: 'b',
      clusterName: 'c',
      generation: 2,
      fields: { addr: '127.0.0.1:2', status: 'normal' },
      seeds: ['127.0.0.1:1'],
      random: mulberry32(3),
      now: 0,
    });
    for (const o of b2.announce()) a.receive(5000, o.message); // a's ACK goes nowhere
    expect(a.state('b')?.generation).toBe(2);
    expect(a.takeEvents()).toEqual(expect.arrayContaining([{ type: 'restarted', id: 'b', generation: 2 }]));
    expect(a.isUp('b')).toBe(true);
  });

  it('a node that announces it is stopping is down to its peers at once, whatever its heartbeats say, until its next generation', () => {
    const a = make('a', 1);
    const b = make('b', 2, ['127.0.0.1:1']);
    const by = new Map([
      [a.address, a],
      [b.address, b],
    ]);
    deliver(0, b.announce(), by);
    expect(a.isUp('b')).toBe(true);
    a.takeEvents();
    b.set('stopping', 'true');
    deliver(100, b.announce(), by); // no round, no conviction: the announcement itself
    expect(a.isUp('b')).toBe(false);
    expect(a.downSince('b')).toBe(100);
    expect(a.takeEvents()).toEqual(expect.arrayContaining([{ type: 'down', id: 'b' }]));
    // It still gossips while it drains: heard from directly, it stays down.
    for (let t = 1000; t < 4000; t += 1000) deliver(t, b.tick(t), by);
    expect(a.isUp('b')).toBe(false);
    // Restarted: a new generation, without the flag, is up at once.
    const b2 = new Gossiper({
      id: 'b',
      clusterName: 'c',
      generation: 2,
      fields: { addr: '127.0.0.1:2', status: 'normal' },
      seeds: ['127.0.0.1:1'],
      random: mulberry32(3),
      now: 5000,
    });
    by.set(b2.address, b2);
    deliver(5000, b2.announce(), by);
    expect(a.isUp('b')).toBe(true);
    expect(a.state('b')?.fields.get('stopping')).toBeUndefined();
  });
  it('tells a peer it remembered from before a restart from one gossip has brought news of since', () => {
    const a = make('a', 1);
    const b = make('b', 2, ['127.0.0.1:1']);
    const c = make('c', 3, ['127.0.0.1:1']);
    const by = new Map([
      [a.address, a],
      [b.address, b],
      [c.address, c],
    ]);
    deliver(0, b.announce(), by);
    deliver(0, c.announce(), by);
    for (let t = 1000; t < 3000; t += 1000) deliver(t, [...b.tick(t), ...c.tick(t)], by);
    // a restarts, remembering b and c as they were (their hinted fields included).
    const a2 = new Gossiper({
      id: 'a',
      clusterName: 'c',
      generation: 2,
      fields: { addr: '127.0.0.1:1', status: 'normal' },
      seeds: [],
      random: mulberry32(4),
      now: 5000,
      known: [a.state('b')!, a.state('c')!],
    });
    by.set(a2.address, a2);
    expect(a2.heardSinceStart('b')).toBe(false);
    expect(a2.heardSinceStart('c')).toBe(false);
    // Only b speaks: its heartbeat moved past what a2 remembered.
    deliver(
      6000,
      b.tick(6000).filter((o) => o.to === a2.address),
      by,
    );
    deliver(6000, b.announce(), by);
    expect(a2.heardSinceStart('b')).toBe(true);
    expect(a2.heardSinceStart('c')).toBe(false);
    expect(a2.heardSinceStart('nobody')).toBe(false);
  });

  it('does not gossip to itself when it is among its seeds, and goes to a seed when it knows no one', () => {
    const a = make('a', 1, ['127.0.0.1:1', '127.0.0.1:2']);
    expect(a.announce().map((o) => o.to)).toEqual(['127.0.0.1:2']);
    expect(a.tick(1000).map((o) => o.to)).toEqual(['127.0.0.1:2']);
    const alone = make('a', 1, ['127.0.0.1:1']);
    expect(alone.tick(1000)).toEqual([]);
  });
});

describe('gossiper under arbitrary input', () => {
  it('never throws on any message and takes only states that pass their checks', async () => {
    const fc = (await import('fast-check')).default;
    const digest = fc.record({
      id: fc.oneof(fc.string(), fc.constant('b')),
      generation: fc.oneof(fc.integer(), fc.double(), fc.constant(-1)),
      version: fc.anything(),
    });
    const field = fc.record({
      name: fc.oneof(
        fc.constantFrom('addr', 'status', 'tokens', 'weight', 'load', 'empty', 'zone', '__proto__', 'constructor'),
        fc.string(),
      ),
      value: fc.oneof(fc.string(), fc.anything()),
      version: fc.oneof(fc.nat(), fc.anything()),
    });
    const delta = fc.record({
      id: fc.oneof(fc.string(), fc.constant('b')),
      generation: fc.oneof(fc.nat(), fc.anything()),
      heartbeat: fc.oneof(fc.nat(), fc.anything()),
      fields: fc.oneof(fc.array(field), fc.anything()),
    });
    const message = fc.record(
      {
        kind: fc.oneof(fc.constantFrom('syn', 'ack', 'ack2'), fc.anything()),
        cluster: fc.oneof(fc.constant('c'), fc.anything()),
        from: fc.oneof(fc.constant('b'), fc.anything()),
        fromAddr: fc.oneof(fc.constant('127.0.0.1:2'), fc.anything()),
        digests: fc.oneof(fc.array(digest), fc.anything()),
        deltas: fc.oneof(fc.array(delta), fc.anything()),
        requests: fc.oneof(fc.array(digest), fc.anything()),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(message, fc.anything()), (m) => {
        const a = make('a', 1);
        a.receive(1, m as GossipMessage);
        for (const s of a.states()) expect(checkDelta(deltaOf(s, 0))).toBeUndefined();
        a.tick(1000); // and it still works afterwards
      }),
      { numRuns: 2000 },
    );
  });
});
