/**
 * Gossip messages between their protobuf form and the gossiper's, and the client side
 * that sends them: one channel per peer, reused; fire and forget with a deadline.
 *
 * Owns: the mapping and the channels. Must not: interpret messages (the gossiper does).
 */

import * as grpc from '@grpc/grpc-js';
import type { GossipMessage } from '../membership/gossiper.js';
import { NODE_MAX_MESSAGE_BYTES, serviceClient } from './protos.js';

interface WireMessage {
  cluster: string;
  from: string;
  fromAddr: string;
  kind: string;
  digests: { id: string; generation: number; version: number }[];
  deltas: { id: string; generation: number; heartbeat: number; fields: { name: string; value: string; version: number }[] }[];
  requests: { id: string; generation: number; version: number }[];
}

const KINDS: Record<string, GossipMessage['kind']> = { SYN: 'syn', ACK: 'ack', ACK2: 'ack2' };

/** The gossiper's form of a decoded message; the gossiper checks every value. */
export function fromWire(w: WireMessage): GossipMessage {
  const base = { cluster: w.cluster, from: w.from, fromAddr: w.fromAddr };
  const kind = KINDS[w.kind];
  if (kind === 'syn') return { ...base, kind, digests: w.digests, deltas: w.deltas };
  if (kind === 'ack') return { ...base, kind, deltas: w.deltas, requests: w.requests };
  if (kind === 'ack2') return { ...base, kind, deltas: w.deltas };
  return { ...base, kind: w.kind } as unknown as GossipMessage;
}

export function toWire(m: GossipMessage): WireMessage {
  return {
    cluster: m.cluster,
    from: m.from,
    fromAddr: m.fromAddr,
    kind: m.kind.toUpperCase(),
    digests: m.kind === 'syn' ? [...m.digests] : [],
    deltas: (m.deltas ?? []).map((d) => ({ ...d, fields: [...d.fields] })),
    requests: m.kind === 'ack' ? [...m.requests] : [],
  };
}

export const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': NODE_MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': NODE_MAX_MESSAGE_BYTES,
  // Peers come and go: retry a dead address at most about once a gossip round (not in a
  // tight loop), and not much less often either, so a restarted peer is reached again soon.
  'grpc.initial_reconnect_backoff_ms': 500,
  'grpc.max_reconnect_backoff_ms': 1000,
};

export class GossipSender {
  readonly #clients = new Map<string, grpc.Client>();
  readonly #Client = serviceClient('ringkv.internal.v1.Gossip');

  constructor(
    private readonly deadlineMs: number,
    private readonly onError: (to: string, err: grpc.ServiceError) => void,
  ) {}

  /** Send one message; the promise (never rejected) settles once it was delivered or failed. */
  send(to: string, message: GossipMessage): Promise<void> {
    let c = this.#clients.get(to);
    if (c === undefined) {
      c = new this.#Client(to, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
      this.#clients.set(to, c);
    }
    const deadline = Date.now() + this.deadlineMs;
    return new Promise((resolve) =>
      (c as unknown as Record<string, (r: unknown, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null) => void) => void>).exchange!(
        toWire(message),
        { deadline },
        (err) => {
          if (err) this.onError(to, err);
          resolve();
        },
      ),
    );
  }

  /** Close the channels to every address not in `keep` (peers that left, answers to strangers). */
  retain(keep: ReadonlySet<string>): void {
    for (const [addr, c] of this.#clients) {
      if (keep.has(addr)) continue;
      c.close();
      this.#clients.delete(addr);
    }
  }

  get channels(): number {
    return this.#clients.size;
  }

  close(): void {
    for (const c of this.#clients.values()) c.close();
    this.#clients.clear();
  }
}
