/**
 * One client (channel) per peer address for one internal service, reused by every call,
 * and closed for addresses no longer in use: what the gossip, replica and handoff wires
 * share.
 *
 * Owns: the map of clients. Must not: make calls (each wire does).
 */
import * as grpc from '@grpc/grpc-js';
import {
  NODE_MAX_MESSAGE_BYTES,
  serviceClient,
  type ServiceClient,
  type ServiceConstructor,
  type ServiceName,
} from './protos.js';

export const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': NODE_MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': NODE_MAX_MESSAGE_BYTES,
  // Peers come and go: retry a dead address at most about once a gossip round (not in a
  // tight loop), and not much less often either, so a restarted peer is reached again soon.
  'grpc.initial_reconnect_backoff_ms': 500,
  'grpc.max_reconnect_backoff_ms': 1000,
};

export class PeerChannels<S extends ServiceName> {
  readonly #clients = new Map<string, ServiceClient<S>>();
  readonly Client: ServiceConstructor<S>;

  constructor(
    service: S,
    /** How peers are dialled: insecure, or TLS with this node's certificate (security/node-security.ts). */
    private readonly credentials: grpc.ChannelCredentials,
  ) {
    this.Client = serviceClient(service);
  }

  /** The client for node `id` at the address `addressOf` knows; UNAVAILABLE (as a call would fail) when none is known. */
  forNode(id: string, addressOf: (id: string) => string | undefined): ServiceClient<S> {
    const addr = addressOf(id);
    if (addr === undefined)
      throw Object.assign(new Error(`no address known for node ${id}`), {
        code: grpc.status.UNAVAILABLE,
        details: `no address known for node ${id}`,
      });
    return this.get(addr);
  }

  /** The client for `address`, made on first use. */
  get(address: string): ServiceClient<S> {
    let c = this.#clients.get(address);
    if (c === undefined) {
      c = new this.Client(address, this.credentials, CHANNEL_OPTIONS);
      this.#clients.set(address, c);
    }
    return c;
  }

  /** Close the clients of every address not in `keep`. */
  retain(keep: ReadonlySet<string>): void {
    for (const [addr, c] of this.#clients) {
      if (keep.has(addr)) continue;
      c.close();
      this.#clients.delete(addr);
    }
  }

  get size(): number {
    return this.#clients.size;
  }

  close(): void {
    for (const c of this.#clients.values()) c.close();
    this.#clients.clear();
  }
}
