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
import type { Delta, Digest } from '../membership/endpoint.js';
import type { DeltaSyn, GossipMessage } from '../membership/gossiper.js';
import type { DeltaSyn__Output } from './generated/ringkv/internal/v1/DeltaSyn.js';
import type { Digest__Output } from './generated/ringkv/internal/v1/Digest.js';
import type { Field } from './generated/ringkv/internal/v1/Field.js';
import type {
  GossipMessage as WireMessage,
  GossipMessage__Output as WireMessageIn,
} from './generated/ringkv/internal/v1/GossipMessage.js';
import type { NodeDelta, NodeDelta__Output } from './generated/ringkv/internal/v1/NodeDelta.js';
import { PeerChannels } from './peer-channels.js';
import { serviceClient, type ServiceHandlers } from './protos.js';

const WIRE_KINDS = { syn: 'SYN', ack: 'ACK', ack2: 'ACK2' } as const;

/** The gossiper's form of a decoded message; the gossiper checks every value. */
export function fromWire(w: WireMessageIn): GossipMessage {
  const base = { cluster: w.cluster, from: w.from, fromAddr: w.fromAddr };
  switch (w.kind) {
    case 'SYN': {
      const delta = deltaSynFromWire(w.delta);
      if (delta === undefined)
        return { ...base, kind: 'syn', digests: w.digests.map(legacyDigest), deltas: w.deltas.map(deltaFromWire) };
      return { ...base, kind: 'syn', digests: w.digests, deltas: w.deltas.map(deltaFromWire), delta };
    }
    case 'ACK':
      return { ...base, kind: 'ack', deltas: w.deltas.map(deltaFromWire), requests: w.requests.map(legacyDigest) };
    case 'ACK2': {
      const delta = deltaSynFromWire(w.delta);
      return { ...base, kind: 'ack2', deltas: w.deltas.map(deltaFromWire), ...(delta && { delta }) };
    }
    default:
      // KIND_UNSPECIFIED, or a number this version has no name for: not a message the
      // gossiper's type can hold, passed on for it to refuse as it refuses every malformed
      // message (after the cluster name and the sender, with its event).
      return { ...base, kind: w.kind } as unknown as GossipMessage;
  }
}

function deltaSynFromWire(d: DeltaSyn__Output | null): DeltaSyn | undefined {
  if (d === null) return undefined;
  return {
    generation: d.generation,
    roster: d.roster,
    ...(d.tableHash !== '' && { tableHash: d.tableHash }),
    ...(d.heartbeats.length > 0 && { heartbeats: d.heartbeats }),
    broadcasts: d.broadcasts.map(deltaFromWire),
  };
}

/** A digest outside a delta SYN has no heartbeat of its own. */
function legacyDigest(d: Digest__Output): Digest {
  return { id: d.id, generation: d.generation, version: d.version };
}

/** A delta as the gossiper has it (`since` 0, a whole state, is left out). */
function deltaFromWire(d: NodeDelta__Output): Delta {
  const out = { id: d.id, generation: d.generation, heartbeat: d.heartbeat, fields: d.fields };
  return d.since > 0 ? { ...out, since: d.since } : out;
}

function deltaToWire(d: Delta): NodeDelta {
  return {
    id: d.id,
    generation: d.generation,
    heartbeat: d.heartbeat,
    fields: d.fields.map((f): Field => ({ name: f.name, value: f.value, version: f.version })),
    since: d.since ?? 0,
  };
}

export function toWire(m: GossipMessage): WireMessage {
  const d = m.kind === 'syn' || m.kind === 'ack2' ? m.delta : undefined;
  return {
    cluster: m.cluster,
    from: m.from,
    fromAddr: m.fromAddr,
    kind: WIRE_KINDS[m.kind],
    digests: m.kind === 'syn' ? [...m.digests] : [],
    deltas: (m.deltas ?? []).map(deltaToWire),
    requests: m.kind === 'ack' ? [...m.requests] : [],
    ...(d !== undefined && {
      delta: {
        generation: d.generation,
        roster: d.roster,
        tableHash: d.tableHash ?? '',
        heartbeats: d.heartbeats ?? new Uint8Array(0),
        broadcasts: d.broadcasts.map(deltaToWire),
      },
    }),
  };
}

/** Bytes of `m` on the wire (its protobuf encoding), for the simulator's meters. */
export function encodedSize(m: GossipMessage): number {
  return serviceClient('ringkv.internal.v1.Gossip').service.Exchange.requestSerialize(toWire(m)).length;
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
export function gossipService(
  h: GossipHandler,
): [grpc.ServiceDefinition, ServiceHandlers<'ringkv.internal.v1.Gossip'>] {
  return [
    serviceClient('ringkv.internal.v1.Gossip').service,
    {
      Exchange: (call, cb) => {
        const stopping = h.refuse();
        if (stopping !== undefined) return cb({ code: grpc.status.UNAVAILABLE, details: stopping });
        const refused = h.receive(fromWire(call.request));
        if (refused !== undefined) {
          const code = refused.startsWith('cluster name')
            ? grpc.status.FAILED_PRECONDITION
            : grpc.status.INVALID_ARGUMENT;
          return cb({ code, details: refused });
        }
        cb(null, {});
      },
    },
  ];
}
