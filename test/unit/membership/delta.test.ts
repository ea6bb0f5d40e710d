import { describe, expect, it } from 'vitest';
import {
  Broadcasts,
  HashSum,
  fullExchangeRounds,
  retransmitLimit,
  writeHeartbeats,
  NO_HEARTBEAT,
} from '../../../src/membership/delta.js';
import { deltaOf, initialState, setField, type EndpointState } from '../../../src/membership/endpoint.js';
import { Gossiper, type GossipMessage, type Outbound } from '../../../src/membership/gossiper.js';
import { mulberry32 } from '../../../src/ring/allocate-tokens.js';

describe('delta gossip: parts', () => {
  it('a hash sum is the same whatever the order terms come in, and taking a term out undoes it', () => {
    const a = new HashSum();
    const b = new HashSum();
    for (const k of ['x', 'y', 'z']) a.add(k, 1);
    for (const k of ['z', 'x', 'y']) b.add(k, 1);
    expect(a.hex()).toBe(b.hex());
    expect(a.hex()).toMatch(/^[0-9a-f]{16}$/);
    b.add('w', 1);
    expect(b.hex()).not.toBe(a.hex());
    expect(b.hexWithout('w')).toBe(a.hex());
    b.add('w', -1);
    expect(b.hex()).toBe(a.hex());
  });

  it('writes heartbeats as little-endian u32, one beyond u32 as the no-heartbeat mark', () => {
    const bytes = writeHeartbeats([1, 0x01020304, 2 ** 40], 3);
    expect([...bytes]).toEqual([1, 0, 0, 0, 4, 3, 2, 1, 0xff, 0xff, 0xff, 0xff]);
    expect(new DataView(bytes.buffer).getUint32(8, true)).toBe(NO_HEARTBEAT);
  });

  it("writes member i's heartbeat from its slot when given the roster's slots", () => {
    const bytes = writeHeartbeats(new Float64Array([7, 5, 9]), 3, Int32Array.from([2, 0, 1]));
    expect([...bytes]).toEqual([9, 0, 0, 0, 7, 0, 0, 0, 5, 0, 0, 0]);
  });

  it('scales the retransmit limit and the full-exchange interval with the cluster', () => {
    expect(retransmitLimit(2, 1)).toBe(2);
    expect(retransmitLimit(2, 1000)).toBe(20);
    expect(fullExchangeRounds(30, 32)).toBe(30);
    expect(fullExchangeRounds(30, 1000)).toBe(180);
  });

  it('queues one entry per member, merges newer changes, sends each a limited number of times, least sent first', () => {
    let a: EndpointState = initialState('a', 1, { addr: 'a:1', zone: 'z1' });
    let b: EndpointState = initialState('b', 1, { addr: 'b:1' });
    const table = new Map<string, EndpointState>([
      ['a', a],
      ['b', b],
    ]);
    const q = new Broadcasts();
    const before = a.version;
    a = setField(a, 'zone', 'z2');
    table.set('a', a);
    q.enqueue('a', 1, before);
    expect(q.take(2, 1 << 14, (id) => table.get(id))).toEqual([
      {
        id: 'a',
        generation: 1,
        heartbeat: a.heartbeat,
        fields: [{ name: 'zone', value: 'z2', version: a.version }],
        since: before,
      },
    ]);
    // A second change of a's fields merges into the one entry, from the older `since`.
    a = setField(a, 'rack', 'r1');
    table.set('a', a);
    q.enqueue('a', 1, a.version - 1);
    expect(q.size).toBe(1);
    // a carries both its changes since `before`, and counts from 0 again (news).
    const merged = q.take(2, 1 << 14, (id) => table.get(id));
    expect(merged.map((d) => [d.id, d.since, d.fields.map((f) => f.name).sort()])).toEqual([
      ['a', before, ['rack', 'zone']],
    ]);
    // b, never sent, goes before a, sent once; the next take sends a for the second and last time.
    b = setField(b, 'zone', 'zb');
    table.set('b', b);
    q.enqueue('b', 1, b.version - 1);
    expect(q.take(2, 1 << 14, (id) => table.get(id)).map((d) => d.id)).toEqual(['b', 'a']);
    expect(q.size).toBe(1);
    q.take(2, 1 << 14, (id) => table.get(id));
    expect(q.size).toBe(0);
    // A budget smaller than one entry still sends one; a member gone or restarted leaves the queue.
    q.enqueue('a', 1, 0);
    q.enqueue('b', 1, 0);
    expect(q.take(5, 1, (id) => table.get(id))).toHaveLength(1);
    expect(q.take(5, 1 << 14, () => undefined)).toEqual([]);
    expect(q.size).toBe(0);
  });
});

function make(id: string, port: number, delta = true): Gossiper {
  return new Gossiper({
    id,
    clusterName: 'c',
    generation: 1,
    fields: { addr: `127.0.0.1:${port}`, status: 'normal' },
    seeds: [],
    random: mulberry32(port),
    now: 0,
    delta,
  });
}

/** Deliver until quiet; returns every message delivered. */
function deliver(now: number, out: Outbound[], by: Map<string, Gossiper>): GossipMessage[] {
  const seen: GossipMessage[] = [];
  const queue = [...out];
  while (queue.length > 0) {
    const o = queue.shift()!;
    seen.push(o.message);
    const g = by.get(o.to);
    if (g) queue.push(...g.receive(now, o.message));
  }
  return seen;
}

const shape = (m: GossipMessage): string => {
  if (m.kind === 'syn')
    return m.delta === undefined ? 'syn' : m.delta.tableHash === undefined ? 'full-syn' : 'light-syn';
  return m.kind === 'ack2' && m.delta !== undefined ? 'ack2+vector' : m.kind;
};

describe('delta gossip between gossipers', () => {
  function pair(bDelta = true): { a: Gossiper; b: Gossiper; by: Map<string, Gossiper> } {
    const a = make('a', 1);
    const b = make('b', 2, bDelta);
    const by = new Map([
      [a.address, a],
      [b.address, b],
    ]);
    a.set('zone', 'z');
    // Introduce them (full exchanges), then one round each so that each holds the other up.
    deliver(
      0,
      [{ to: b.address, message: { cluster: 'c', from: 'x', fromAddr: '127.0.0.1:9', kind: 'ack2', deltas: [] } }],
      by,
    );
    deliver(0, a.announce([b.address]), by);
    deliver(0, b.announce([a.address]), by);
    return { a, b, by };
  }

  it("in step, a round is a light SYN answered by an ACK2 with the peer's heartbeats, both ways", () => {
    const { a, b, by } = pair();
    expect(a.isUp('b') && b.isUp('a')).toBe(true);
    const seen = deliver(1000, a.tick(1000), by);
    expect(seen.map(shape)).toEqual(['light-syn', 'ack2+vector']);
    expect(b.state('a')!.heartbeat).toBe(a.self.heartbeat);
    const out = b.tick(2000);
    expect(a.state('b')!.heartbeat).toBeLessThan(b.self.heartbeat);
    deliver(2000, out, by);
    expect(a.state('b')!.heartbeat).toBe(b.self.heartbeat);
  });

  it('heartbeats move in place, yet a state handed out never changes, and a merge starts from the newest heartbeat', () => {
    const { a, b, by } = pair();
    deliver(1000, a.tick(1000), by);
    const before = a.state('b')!;
    const beat = before.heartbeat;
    deliver(2000, b.tick(2000), by);
    deliver(3000, b.tick(3000), by);
    expect(before.heartbeat).toBe(beat); // the object we were given is as it was
    const after = a.state('b')!;
    expect(after.heartbeat).toBe(b.self.heartbeat);
    expect(after.heartbeat).toBeGreaterThan(beat);
    expect(after.version).toBeGreaterThanOrEqual(after.heartbeat);
    expect(a.state('b')).toBe(after); // read again: the same object, not a new one
    expect([...a.states()].find((s) => s.id === 'b')).toBe(after);
    // A field change after heartbeats moved in place keeps the newest heartbeat.
    b.set('zone', 'z9');
    deliver(4000, b.tick(4000), by);
    expect(a.state('b')!.fields.get('zone')?.value).toBe('z9');
    expect(a.state('b')!.heartbeat).toBe(b.self.heartbeat);
  });

  it('a field change rides the light SYN as a broadcast; a table the broadcast cannot fix gets a full exchange', () => {
    const { a, b, by } = pair();
    a.set('zone', 'z2');
    const seen = deliver(1000, a.tick(1000), by);
    expect(seen.map(shape)).toEqual(['light-syn', 'ack2+vector']);
    expect(b.state('a')!.fields.get('zone')!.value).toBe('z2');
    // b learns of a member a does not know: the hashes differ, b answers with a full SYN.
    b.receive(1500, {
      cluster: 'c',
      from: 'c',
      fromAddr: '127.0.0.1:3',
      kind: 'ack2',
      deltas: [{ id: 'c', generation: 1, heartbeat: 2, fields: [{ name: 'addr', value: '127.0.0.1:3', version: 1 }] }],
    });
    // Their rosters differ now (heartbeat vectors cannot be read across them): b answers
    // with a full SYN at once, though a's broadcast is still in flight.
    expect(deliver(2000, a.tick(2000), by).map(shape)).toEqual(['light-syn', 'full-syn', 'ack', 'ack2']);
    expect(a.state('c')?.fields.get('addr')?.value).toBe('127.0.0.1:3');
    // Same rosters, a field of c that b learnt: b passes it on as a broadcast in its light
    // answer, with no full exchange.
    b.receive(2500, {
      cluster: 'c',
      from: 'c',
      fromAddr: '127.0.0.1:3',
      kind: 'ack2',
      deltas: [{ id: 'c', generation: 1, heartbeat: 5, fields: [{ name: 'zone', value: 'zc', version: 4 }] }],
    });
    const shapes: string[] = [];
    for (let t = 3000; t < 30_000 && a.state('c')?.fields.get('zone') === undefined; t += 1000) {
      b.set('load', String(t)); // news in flight all along
      // (Probes of c, which has no gossiper here, are full Scuttlebutt SYNs: left out.)
      shapes.push(
        ...deliver(t, a.tick(t), by)
          .map(shape)
          .filter((x) => x !== 'syn'),
      );
    }
    expect(shapes).toEqual(['light-syn', 'ack2+vector']);
    expect(a.state('c')?.fields.get('zone')?.value).toBe('zc');
  });

  it('speaks full Scuttlebutt to a peer that does not gossip gossip=delta, and converges with it', () => {
    const { a, b, by } = pair(false);
    expect(b.self.fields.has('gossip')).toBe(false);
    expect(a.self.fields.get('gossip')!.value).toBe('delta');
    a.set('zone', 'z3');
    const seen = deliver(1000, a.tick(1000), by);
    expect(seen.map(shape)).toEqual(['syn', 'ack', 'ack2']);
    expect(b.state('a')!.fields.get('zone')!.value).toBe('z3');
    expect(deliver(2000, b.tick(2000), by).map(shape)).toEqual(['syn', 'ack', 'ack2']);
  });

  it('refuses a malformed delta SYN whole, with a reason', () => {
    const { b } = pair();
    const base = { cluster: 'c', from: 'a', fromAddr: '127.0.0.1:1', kind: 'syn' as const, digests: [] };
    const good = {
      generation: 1,
      roster: '0123456789abcdef',
      tableHash: '0123456789abcdef',
      heartbeats: new Uint8Array(8),
      broadcasts: [],
    };
    const cases: [unknown, RegExp][] = [
      [{ ...good, generation: 0 }, /delta.generation/],
      [{ ...good, roster: 'xyz' }, /delta.roster/],
      [{ ...good, tableHash: 'ABCDEF0123456789' }, /delta.tableHash/],
      [{ ...good, heartbeats: new Uint8Array(6) }, /delta.heartbeats/],
      [{ ...good, heartbeats: [1, 2, 3, 4] }, /delta.heartbeats/],
      [{ ...good, broadcasts: 'x' }, /delta.broadcasts/],
      [null, /delta must be an object/],
    ];
    for (const [delta, why] of cases) {
      b.takeEvents();
      expect(b.receive(1000, { ...base, delta } as unknown as GossipMessage)).toEqual([]);
      const refused = b.takeEvents().filter((e) => e.type === 'refused');
      expect(refused).toHaveLength(1);
      expect((refused[0] as { reason: string }).reason).toMatch(why);
    }
    // A bad broadcast is skipped, the rest taken.
    b.takeEvents();
    b.receive(1000, {
      ...base,
      delta: {
        ...good,
        broadcasts: [
          { id: 'a', generation: 1, heartbeat: 1, fields: [{ name: 'addr', value: 'nope', version: 99 }], since: 1 },
        ],
      },
    });
    expect(b.takeEvents().some((e) => e.type === 'refused' && /skipped/.test(e.reason))).toBe(true);
    expect(b.state('a')!.fields.get('addr')!.value).toBe('127.0.0.1:1');
  });

  it('tells a peer on full Scuttlebutt no heartbeat beyond the fields it holds (a mixed cluster kept an old field for ever)', () => {
    const d = make('d', 2);
    const o = make('o', 3, false);
    const x = make('x', 4);
    const by = new Map([
      [d.address, d],
      [o.address, o],
    ]);
    // d (delta gossip) and o (full Scuttlebutt) hear x as it is now, and each other.
    for (const g of [d, o])
      g.receive(0, { cluster: 'c', from: 'x', fromAddr: x.address, kind: 'ack2', deltas: [deltaOf(x.self, 0)] });
    deliver(0, d.announce([o.address]), by);
    const heard = d.state('x')!;
    // x changes a field neither hears of, and beats on; d hears its heartbeat alone, from a
    // digest of a peer on delta gossip (as a heartbeat vector brings it).
    x.set('zone', 'zx');
    for (let t = 1000; t <= 5000; t += 1000) x.tick(t);
    const fv = Math.max(...[...heard.fields.values()].map((f) => f.version));
    d.receive(6000, {
      cluster: 'c',
      from: 'p',
      fromAddr: '127.0.0.1:5',
      kind: 'syn',
      digests: [{ id: 'x', generation: 1, version: fv, heartbeat: x.self.heartbeat }],
      delta: { generation: 1, roster: '0000000000000000', broadcasts: [] },
    });
    expect(d.state('x')!.heartbeat).toBe(x.self.heartbeat);
    expect(d.state('x')!.fields.get('zone')).toEqual(heard.fields.get('zone'));
    // o and d gossip: d must not tell o it has seen x up to that heartbeat, which o would
    // take as holding every field up to it, and never ask for x's zone again.
    deliver(7000, o.tick(7000), by);
    deliver(7000, d.tick(7000), by);
    expect(o.state('x')!.version).toBeLessThan(x.self.fields.get('zone')!.version);
    // So o's next exchange with x brings the zone.
    x.tick(8000);
    by.set(x.address, x);
    deliver(9000, o.tick(9000), by);
    expect(o.state('x')!.fields.get('zone')!.value).toBe('zx');
  });

  it('takes a partial delta only for a member it holds at that generation, seen up to `since`', () => {
    const { b } = pair();
    const env = { cluster: 'c', from: 'x', fromAddr: '127.0.0.1:9', kind: 'ack2' as const };
    // A late answer meant for an earlier incarnation: fields after version 50 of a member b never saw.
    b.receive(1000, {
      ...env,
      deltas: [
        { id: 'q', generation: 1, heartbeat: 60, fields: [{ name: 'zone', value: 'zq', version: 55 }], since: 50 },
      ],
    });
    expect(b.state('q')).toBeUndefined();
    // Of a member it holds, but from beyond what it has seen: skipped; from within: taken.
    const fv = Math.max(...[...b.state('a')!.fields.values()].map((f) => f.version));
    b.receive(1000, {
      ...env,
      deltas: [
        {
          id: 'a',
          generation: 1,
          heartbeat: 90,
          fields: [{ name: 'zone', value: 'late', version: 80 }],
          since: fv + 5,
        },
      ],
    });
    expect(b.state('a')!.fields.get('zone')!.value).toBe('z');
    b.receive(1000, {
      ...env,
      deltas: [
        { id: 'a', generation: 1, heartbeat: 90, fields: [{ name: 'zone', value: 'next', version: 80 }], since: fv },
      ],
    });
    expect(b.state('a')!.fields.get('zone')!.value).toBe('next');
  });
});
