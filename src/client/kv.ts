/**
 * The typed client of ringkv's KeyValue service (proto/ringkv/v1/kv.proto): put, get and
 * delete against any node, with a deadline on every call and failover to the next node
 * when one answers UNAVAILABLE (down, shutting down, not yet joined, or too few of the
 * key's replicas up as it sees them).
 *
 * Owns: channels (one per node), deadlines, failover. Must not: know about replicas;
 * the node that takes a call coordinates it.
 */
import * as grpc from '@grpc/grpc-js';
import { CLIENT_MAX_SEND_BYTES, NODE_MAX_MESSAGE_BYTES, callUnary, serviceClient } from '../transport/protos.js';

export interface ClientOptions {
  /** host:port of nodes to send to; any node takes any request. */
  readonly nodes: readonly string[];
  /** Deadline of each call unless the call sets its own, ms (default 5,000). */
  readonly deadlineMs?: number;
}

export interface CallOptions {
  /** This call's deadline, ms from now. */
  readonly deadlineMs?: number;
}

export interface PutOptions extends CallOptions {
  /** The context of a get of this key: the put replaces exactly what that get saw. */
  readonly context?: Uint8Array;
  /** Replicas that must hold the write before it is acknowledged (1..N; 0 or unset: a majority). */
  readonly w?: number;
}

export interface GetOptions extends CallOptions {
  /** Replicas whose replies are merged before answering (1..N; 0 or unset: a majority). */
  readonly r?: number;
}

export interface GetResult {
  /** Every sibling: more than one after concurrent writes. */
  readonly values: Buffer[];
  /** Pass it to the next put or delete of this key. */
  readonly context: Buffer;
  readonly found: boolean;
}

/** The DEADLINE_EXCEEDED details of a call whose deadline passed before it reached any node. */
export const NO_NODE_TRIED = 'deadline passed before any node was tried';

/** A node's value limit (the store's default, storage/options.ts). */
export const MAX_VALUE_BYTES = 1 << 20;

/**
 * The INVALID_ARGUMENT a node gives for a value of `size` bytes over the limit, made here:
 * refused before sending rather than by gRPC's bare "message larger than max".
 */
export function valueTooLarge(size: number, what = `value of ${size} bytes`): grpc.ServiceError {
  const details = `${what} is over the limit of ${MAX_VALUE_BYTES} bytes; split it into several keys`;
  return Object.assign(new Error(`${grpc.status.INVALID_ARGUMENT} INVALID_ARGUMENT: ${details}`), { code: grpc.status.INVALID_ARGUMENT, details, metadata: new grpc.Metadata() });
}

function bytes(x: string | Uint8Array, what: string): Buffer {
  if (typeof x === 'string') return Buffer.from(x, 'utf8');
  if (x instanceof Uint8Array) return Buffer.from(x.buffer, x.byteOffset, x.byteLength);
  throw new TypeError(`${what} must be a string or a Uint8Array, got ${typeof x}`);
}

export class Client {
  readonly #clients: { address: string; client: grpc.Client }[];
  readonly #deadlineMs: number;
  #next = 0;

  constructor(options: ClientOptions) {
    if (!Array.isArray(options?.nodes) || options.nodes.length === 0) throw new TypeError('Client needs nodes: at least one host:port, like ["127.0.0.1:7001"]');
    const KeyValue = serviceClient('ringkv.v1.KeyValue');
    this.#clients = options.nodes.map((address) => ({
      address,
      client: new KeyValue(address, grpc.credentials.createInsecure(), {
        // A get answers up to a key's whole versions; a put sends one value.
        'grpc.max_receive_message_length': NODE_MAX_MESSAGE_BYTES,
        'grpc.max_send_message_length': CLIENT_MAX_SEND_BYTES,
      }),
    }));
    this.#deadlineMs = options.deadlineMs ?? 5000;
  }

  async put(key: string | Uint8Array, value: string | Uint8Array, o: PutOptions = {}): Promise<{ context: Buffer }> {
    const req = { key: bytes(key, 'key'), value: bytes(value, 'value'), context: o.context ?? Buffer.alloc(0), w: o.w ?? 0 };
    if (req.value.length > MAX_VALUE_BYTES) throw valueTooLarge(req.value.length);
    return (await this.#call('put', req, o)) as { context: Buffer };
  }

  async get(key: string | Uint8Array, o: GetOptions = {}): Promise<GetResult> {
    return (await this.#call('get', { key: bytes(key, 'key'), r: o.r ?? 0 }, o)) as GetResult;
  }

  async delete(key: string | Uint8Array, o: PutOptions = {}): Promise<void> {
    await this.#call('delete', { key: bytes(key, 'key'), context: o.context ?? Buffer.alloc(0), w: o.w ?? 0 }, o);
  }

  close(): void {
    for (const c of this.#clients) c.client.close();
  }

  /**
   * One call with one deadline: the nodes in turn (starting from a rotating one, so load
   * spreads) while they answer UNAVAILABLE and time is left. Any other error is final.
   */
  async #call(method: string, req: unknown, o: CallOptions): Promise<unknown> {
    const deadline = Date.now() + (o.deadlineMs ?? this.#deadlineMs);
    const start = this.#next++ % this.#clients.length;
    let last: grpc.ServiceError | undefined;
    for (let i = 0; i < this.#clients.length && Date.now() < deadline; i++) {
      const { client } = this.#clients[(start + i) % this.#clients.length]!;
      try {
        return await callUnary(client, method, req, { deadline });
      } catch (e) {
        last = e as grpc.ServiceError;
        if (last.code !== grpc.status.UNAVAILABLE) throw last;
      }
    }
    throw last ?? Object.assign(new Error(NO_NODE_TRIED), { code: grpc.status.DEADLINE_EXCEEDED, details: NO_NODE_TRIED });
  }
}
