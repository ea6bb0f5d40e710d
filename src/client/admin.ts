/**
 * A typed client for a node's Admin service (proto/ringkv/v1/admin.proto), used by
 * `ringkv status` and `ringkv ring`, and by tests.
 *
 * Owns: the calls and their deadlines. Must not: format output (the CLI does).
 */

import * as grpc from '@grpc/grpc-js';
import { callUnary, serviceClient } from '../transport/protos.js';

export interface MemberStatus {
  readonly id: string;
  readonly address: string;
  readonly zone: string;
  readonly rack: string;
  readonly status: string;
  readonly up: boolean;
  readonly generation: number;
  readonly heartbeat: number;
  readonly tokens: number;
  readonly ownership: number;
  readonly loadBytes: number;
  readonly weight: number;
  readonly phi: number;
  /** Hints the member holds for other nodes (as it last gossiped it). */
  readonly hints: number;
}

export interface StatusReply {
  readonly clusterName: string;
  readonly nodeId: string;
  readonly replicas: number;
  readonly members: readonly MemberStatus[];
  /** The answering node's counters since it started (docs/reads-and-writes.md lists them). */
  readonly counters: Readonly<Record<string, number>>;
}

export interface RingReply {
  readonly replicas: number;
  readonly ranges: readonly { readonly start: string; readonly end: string; readonly replicas: readonly string[] }[];
}

export interface Endpoint {
  readonly id: string;
  readonly address: string;
  readonly zone: string;
  readonly up: boolean;
  /** Set on a fallback: the down replica it stands in for. */
  readonly hintFor: string;
}

export interface EndpointsReply {
  readonly token: string;
  readonly replicas: number;
  readonly preferenceList: readonly Endpoint[];
  readonly targets: readonly Endpoint[];
}

export class AdminClient {
  readonly #client: grpc.Client;

  /** `address`: host:port of any node. */
  constructor(
    readonly address: string,
    private readonly deadlineMs = 5000,
  ) {
    const Client = serviceClient('ringkv.v1.Admin');
    this.#client = new Client(address, grpc.credentials.createInsecure());
  }

  status(replicas = 0): Promise<StatusReply> {
    return this.#call('status', { replicas }) as Promise<StatusReply>;
  }

  ring(replicas = 0): Promise<RingReply> {
    return this.#call('ring', { replicas }) as Promise<RingReply>;
  }

  /** A key's token, replicas and current write targets. */
  endpoints(key: string | Uint8Array): Promise<EndpointsReply> {
    return this.#call('endpoints', { key: typeof key === 'string' ? Buffer.from(key) : key }) as Promise<EndpointsReply>;
  }

  close(): void {
    this.#client.close();
  }

  #call(method: string, req: unknown): Promise<unknown> {
    return callUnary(this.#client, method, req, { deadline: Date.now() + this.deadlineMs });
  }
}
