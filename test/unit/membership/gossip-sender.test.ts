import { describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { GossipSender, fromWire, toWire } from '../../../src/transport/gossip-wire.js';
import type { GossipMessage } from '../../../src/membership/gossiper.js';
import { serviceClient } from '../../../src/transport/protos.js';

describe('gossip over the wire', () => {
  it('maps each message kind to its protobuf form and back', () => {
    const env = { cluster: 'c', from: 'a', fromAddr: '127.0.0.1:1' };
    const delta = { id: 'a', generation: 2, heartbeat: 3, fields: [{ name: 'status', value: 'normal', version: 1 }] };
    const messages: GossipMessage[] = [
      { ...env, kind: 'syn', digests: [{ id: 'a', generation: 2, version: 3 }], deltas: [delta] },
      { ...env, kind: 'ack', deltas: [delta], requests: [{ id: 'b', generation: 1, version: 0 }] },
      { ...env, kind: 'ack2', deltas: [delta] },
    ];
    const exchange = serviceClient('ringkv.internal.v1.Gossip').service.Exchange;
    for (const m of messages)
      expect(fromWire(exchange.requestDeserialize(exchange.requestSerialize(toWire(m))))).toEqual(m);
    expect(toWire(messages[0]!).kind).toBe('SYN');
  });

  it('maps delta gossip (light and full SYNs, an ACK2 with a vector, partial deltas) and back', () => {
    const env = { cluster: 'c', from: 'a', fromAddr: '127.0.0.1:1' };
    const broadcast = {
      id: 'b',
      generation: 2,
      heartbeat: 9,
      fields: [{ name: 'zone', value: 'z', version: 8 }],
      since: 5,
    };
    const whole = {
      id: 'c',
      generation: 1,
      heartbeat: 3,
      fields: [{ name: 'addr', value: '127.0.0.1:3', version: 1 }],
    };
    const heartbeats = new Uint8Array([1, 0, 0, 0, 255, 255, 255, 255]);
    const messages: GossipMessage[] = [
      {
        ...env,
        kind: 'syn',
        digests: [],
        deltas: [],
        delta: {
          generation: 2,
          roster: '00000000000000ff',
          tableHash: '0123456789abcdef',
          heartbeats,
          broadcasts: [broadcast, whole],
        },
      },
      {
        ...env,
        kind: 'syn',
        digests: [{ id: 'a', generation: 2, version: 3, heartbeat: 7 }],
        deltas: [],
        delta: { generation: 2, roster: '00000000000000ff', broadcasts: [] },
      },
      { ...env, kind: 'ack', deltas: [broadcast], requests: [{ id: 'b', generation: 1, version: 4 }] },
      {
        ...env,
        kind: 'ack2',
        deltas: [],
        delta: { generation: 2, roster: '00000000000000ff', heartbeats, broadcasts: [] },
      },
    ];
    const exchange = serviceClient('ringkv.internal.v1.Gossip').service.Exchange;
    for (const m of messages) {
      const back = fromWire(exchange.requestDeserialize(exchange.requestSerialize(toWire(m))));
      const bytes = (x: GossipMessage): unknown =>
        x.kind === 'syn' || x.kind === 'ack2' ? x.delta?.heartbeats && [...x.delta.heartbeats] : undefined;
      expect(bytes(back)).toEqual(bytes(m));
      const strip = (x: GossipMessage): unknown =>
        (x.kind === 'syn' || x.kind === 'ack2') && x.delta ? { ...x, delta: { ...x.delta, heartbeats: undefined } } : x;
      expect(strip(back)).toEqual(strip(m));
    }
    // An old peer's message has no delta part: full Scuttlebutt, digests without heartbeats.
    const old = fromWire(
      exchange.requestDeserialize(
        exchange.requestSerialize({
          cluster: 'c',
          from: 'a',
          fromAddr: '127.0.0.1:1',
          kind: 'SYN',
          digests: [{ id: 'a', generation: 1, version: 2 }],
        }),
      ),
    );
    expect(old).toEqual({ ...env, kind: 'syn', digests: [{ id: 'a', generation: 1, version: 2 }], deltas: [] });
  });

  it('keeps one channel per peer and closes those it no longer gossips with', () => {
    const errors: string[] = [];
    const s = new GossipSender(200, (to) => errors.push(to), grpc.credentials.createInsecure());
    const m: GossipMessage = { cluster: 'c', from: 'a', fromAddr: '127.0.0.1:1', kind: 'ack2', deltas: [] };
    for (const to of ['127.0.0.1:1', '127.0.0.1:2', '127.0.0.1:3', '127.0.0.1:1']) s.send(to, m);
    expect(s.channels).toBe(3);
    s.retain(new Set(['127.0.0.1:2']));
    expect(s.channels).toBe(1);
    s.close();
    expect(s.channels).toBe(0);
  });
});
