/**
 * The Gossip service (proto/ringkv/internal/v1/gossip.proto) on both sides: messages
 * between their protobuf form and the gossiper's, the client side that sends them (one
 * channel per peer, reused; fire and forget with a deadline), and the server handler
 * that takes a peer's message.
 *
 * Owns: the mapping, the channels, the statuses of refusals. Must not: interpret
 * messages (the gossiper does).
 */

import * as grpc from '@grpc/grpc-js';
import type { GossipMessage } from '../membership/gossiper.js';
import type { Field } from './generated/ringkv/internal/v1/Field.js';
import type { GossipMessage as WireMessage, GossipMessage__Output as WireMessageIn } from './generated/ringkv/internal/v1/GossipMessage.js';
import type { NodeDelta } from './generated/ringkv/internal/v1/NodeDelta.js';
import { PeerChannels } from './peer-channels.js';
import { serviceClient, type ServiceHandlers } from './protos.js';

const WIRE_KINDS = { syn: 'SYN', ack: 'ACK', ack2: 'ACK2' } as const;

/** The gossiper's form of a decoded message; the gossiper checks every value. */
export function fromWire(w: WireMessageIn): GossipMessage {
  const base = { cluster: w.cluster, from: w.from, fromAddr: w.fromAddr };
  switch (w.kind) {
    case 'SYN':
      return { ...base, kind: 'syn', digests: w.digests, deltas: w.deltas };
    case 'ACK':
      return { ...base, kind: 'ack', deltas: w.deltas, requests: w.requests };
    case 'ACK2':
      return { ...base, kind: 'ack2', deltas: w.deltas };
    default:
      // KIND_UNSPECIFIED, or a number this version has no name for: not a message the
      // gossiper's type can hold, passed on for it to refuse as it refuses every malformed
      // message (after the cluster name and the sender, with its event).
      return { ...base, kind: w.kind } as unknown as GossipMessage;
  }
}

export function toWire(m: GossipMessage): WireMessage {
  return {
    cluster: m.cluster,
    from: m.from,
    fromAddr: m.fromAddr,
    kind: WIRE_KINDS[m.kind],
    digests: m.kind === 'syn' ? [...m.digests] : [],
    deltas: (m.deltas ?? []).map((d): NodeDelta => ({ id: d.id, generation: d.generation, heartbeat: d.heartbeat, fields: d.fields.map((f): Field => ({ name: f.name, value: f.value, version: f.version })) })),
    requests: m.kind === 'ack' ? [...m.requests] : [],
  };
}

export class GossipSender {
  readonly #channels: PeerChannels<'ringkv.internal.v1.Gossip'>;

  constructor(
    private readonly deadlineMs: number,
    private readonly onError: (to: string, err: grpc.ServiceError) => void,
    credentials: grpc.ChannelCredentials,
  ) {
    this.#channels = new PeerChannels('ringkv.internal.v1.Gossip', credentials);
  }

  /** Send one message; the promise (never rejected) settles once it was delivered or failed. */
  send(to: string, message: GossipMessage): Promise<void> {
    const c = this.#channels.get(to);
    const deadline = Date.now() + this.deadlineMs;
    return new Promise((resolve) =>
      c.exchange(toWire(message), { deadline }, (err) => {
        if (err) this.onError(to, err);
        resolve();
      }),
    );
  }

  /** Close the channels to every address not in `keep` (peers that left, answers to strangers). */
  retain(keep: ReadonlySet<string>): void {
    this.#channels.retain(keep);
  }

  get channels(): number {
    return this.#channels.size;
  }

  close(): void {
    this.#channels.close();
  }
}

export interface GossipHandler {
  /** Why this node takes no gossip now (stopping), or undefined. */
  refuse(): string | undefined;
  /** Take a peer's message; why it was refused (another cluster, malformed), if it was. */
  receive(message: GossipMessage): string | undefined;
}

/** The Gossip service's definition and handler: a refusal for another cluster is FAILED_PRECONDITION, any other INVALID_ARGUMENT. */
export function gossipService(h: GossipHandler): [grpc.ServiceDefinition, ServiceHandlers<'ringkv.internal.v1.Gossip'>] {
  return [
    serviceClient('ringkv.internal.v1.Gossip').service,
    {
      Exchange: (call, cb) => {
        const stopping = h.refuse();
        if (stopping !== undefined) return cb({ code: grpc.status.UNAVAILABLE, details: stopping });
        const refused = h.receive(fromWire(call.request));
        if (refused !== undefined) {
          const code = refused.startsWith('cluster name') ? grpc.status.FAILED_PRECONDITION : grpc.status.INVALID_ARGUMENT;
          return cb({ code, details: refused });
        }
        cb(null, {});
      },
    },
  ];
}
