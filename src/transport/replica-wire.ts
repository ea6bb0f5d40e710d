/**
 * The Replica service (proto/ringkv/internal/v1/replica.proto) on both sides: the client
 * that implements ReplicaApi over one long-lived stream per peer, carrying many calls and
 * replies per message (batched-stream.ts); and the server that runs a peer's calls on
 * this node's LocalReplica.
 *
 * Failures are ReplicaFailures (replication/replica-api.ts), as a unary call's would have
 * been: a stream that breaks fails its calls in flight as unreachable; a call past its
 * deadline times out here and is skipped there; a replica's refusal carries its code.
 *
 * Owns: the mapping between ReplicaApi and the stream's calls, and of gRPC and replica
 * errors to ReplicaFailures. Must not: interpret the calls (replication/ does).
 */
import * as grpc from '@grpc/grpc-js';
import { ReplicaFailure, asReplicaFailure, type ApplyResult, type ReplicaApi } from '../replication/replica-api.js';
import type { LocalReplica } from '../replication/local-replica.js';
import { BatchedServer, BatchedStream, passThrough, type ClientCodec, type ServerCodec, type WithoutId } from './batched-stream.js';
import { PeerChannels } from './peer-channels.js';
import { NODE_MAX_MESSAGE_BYTES, serviceClient } from './protos.js';
import { callSize, decodeCalls, decodeReplies, encodeCalls, encodeReplies, replySize, type WireCall, type WireReply } from './replica-codec.js';
import { codeName, toStatus } from './status.js';

const EMPTY = Buffer.alloc(0);

const SERVICE = 'ringkv.internal.v1.Replica' as const;

type CallOf = WithoutId<WireCall>;

function codecFor(address: string): ClientCodec<WireCall, WireReply> {
  return {
    path: `/${SERVICE}/Stream`,
    encode: encodeCalls,
    decode: decodeReplies,
    size: callSize,
    failure: (r) => (r.op === 'error' ? asReplicaFailure({ code: r.code, message: r.message }) : undefined),
    unreachable: (why) => new ReplicaFailure('unreachable', 'RK_UNAVAILABLE', `no answer from ${address}: ${why}`),
    timeout: () => new ReplicaFailure('timeout', 'RK_TIMEOUT', `${address} did not answer before the deadline`),
    tooLarge: (size) => new ReplicaFailure('refused', 'KV_RECORD_TOO_LARGE', `a replica call of ${size} bytes is over the node's message limit of ${NODE_MAX_MESSAGE_BYTES} bytes`),
  };
}

/** `r` as the reply to a call of `op`; a reply of another kind (a peer's bug) fails the call as refused. */
function answer<O extends CallOf['op']>(r: WireReply, op: O, node: string): Extract<WireReply, { op: O }> {
  const is = (x: WireReply): x is Extract<WireReply, { op: O }> => x.op === op;
  if (!is(r)) throw new ReplicaFailure('refused', 'RK_INTERNAL', `${node} answered a ${op} call with a ${r.op} reply`);
  return r;
}

export class GrpcReplicas implements ReplicaApi {
  readonly #channels: PeerChannels<typeof SERVICE>;
  readonly #streams = new Map<string, BatchedStream<WireCall, WireReply>>();

  constructor(
    /** A node's address as gossip knows it. */
    private readonly addressOf: (id: string) => string | undefined,
    credentials: grpc.ChannelCredentials,
  ) {
    this.#channels = new PeerChannels(SERVICE, credentials);
  }

  async apply(node: string, key: Buffer, value: Buffer | null, context: Buffer, deadline: number, requestId?: Buffer, expiresAt?: number): Promise<ApplyResult> {
    const r = await this.#call(node, { op: 'apply', deadline, key, value, context, requestId: requestId ?? EMPTY, expiresAt: expiresAt ?? 0 });
    return answer(r, 'apply', node);
  }

  async merge(node: string, key: Buffer, record: Buffer, hintFor: string | undefined, deadline: number): Promise<boolean> {
    const r = await this.#call(node, { op: 'merge', deadline, key, record, hintFor: hintFor ?? '' });
    return answer(r, 'merge', node).changed;
  }

  async read(node: string, key: Buffer, hintFor: string | undefined, deadline: number): Promise<Buffer | undefined> {
    const r = await this.#call(node, { op: 'read', deadline, key, hintFor: hintFor ?? '' });
    return answer(r, 'read', node).record;
  }

  async digest(node: string, key: Buffer, deadline: number): Promise<Buffer> {
    const r = await this.#call(node, { op: 'digest', deadline, key });
    return answer(r, 'digest', node).digest;
  }

  #call(node: string, c: CallOf): Promise<WireReply> {
    const address = this.addressOf(node);
    if (address === undefined) return Promise.reject(new ReplicaFailure('unreachable', 'RK_UNAVAILABLE', `no address known for node ${node}`));
    let s = this.#streams.get(address);
    if (s === undefined) {
      s = new BatchedStream(this.#channels.get(address), codecFor(address));
      this.#streams.set(address, s);
    }
    return s.call(c);
  }

  /** How long `node` has had calls in flight from this node and answered none, ms (batched-stream.ts). */
  silentMs(node: string): number {
    const address = this.addressOf(node);
    return address === undefined ? 0 : (this.#streams.get(address)?.silentMs() ?? 0);
  }

  /** Close the streams and channels to every address not in `keep`. */
  retain(keep: ReadonlySet<string>): void {
    for (const [address, s] of this.#streams) {
      if (keep.has(address)) continue;
      s.close();
      this.#streams.delete(address);
    }
    this.#channels.retain(keep);
  }

  close(): void {
    for (const s of this.#streams.values()) s.close();
    this.#streams.clear();
    this.#channels.close();
  }
}

export interface ReplicaServerOptions {
  /** Why not to run calls now (stopping), if so: they are answered RK_NOT_READY, which the caller takes as unreachable. */
  readonly refuse: () => string | undefined;
  /** Calls run at once, over every stream; more are refused RK_OVERLOADED, so a flood from peers cannot queue without bound. */
  readonly maxInFlight: number;
  /** Told of each call done: its operation, the gRPC code name its outcome maps to ('OK' when done), seconds taken. */
  readonly observe?: (operation: string, code: string, seconds: number) => void;
}

/** The server side: each peer's stream, its calls run on `local` (in parallel; the store serialises per key). */
export class ReplicaServer {
  #inFlight = 0;
  readonly #server = new BatchedServer();

  /** Peers' calls running here now. */
  get inFlight(): number {
    return this.#inFlight;
  }
  readonly #codec: ServerCodec<WireCall, WireReply>;

  constructor(
    private readonly local: LocalReplica,
    private readonly options: ReplicaServerOptions,
  ) {
    this.#codec = {
      decode: decodeCalls,
      encode: encodeReplies,
      size: replySize,
      refuse: (c, draining) => this.#refusal(c, draining),
      run: async (c) => {
        this.#inFlight++;
        const started = performance.now();
        try {
          const r = await this.#run(c);
          options.observe?.(c.op, 'OK', (performance.now() - started) / 1000);
          return r;
        } catch (e) {
          const f = asReplicaFailure(e);
          options.observe?.(c.op, codeName(toStatus(f).code), (performance.now() - started) / 1000);
          return { id: c.id, op: 'error', code: f.code, message: f.message };
        } finally {
          this.#inFlight--;
        }
      },
    };
  }

  /** The service definition, with the stream's messages passed through as bytes (replica-codec.ts encodes them). */
  definition(): grpc.ServiceDefinition {
    const stream = serviceClient(SERVICE).service.Stream;
    return { Stream: { ...stream, requestDeserialize: passThrough, responseSerialize: passThrough } };
  }

  implementation(): grpc.UntypedServiceImplementation {
    return { Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => this.#server.serve(call, this.#codec) };
  }

  /** Stop taking calls; answer the running ones, then end every peer's stream (the server's graceful shutdown waits for them). */
  drain(): void {
    this.#server.drain();
  }

  /** The reply that refuses `c` without running it, if it must be. */
  #refusal(c: WireCall, draining: boolean): WireReply | undefined {
    const error = (code: string, message: string): WireReply => {
      this.options.observe?.(c.op, codeName(toStatus({ code, message }).code), 0);
      return { id: c.id, op: 'error', code, message };
    };
    const why = draining ? 'this node is shutting down' : this.options.refuse();
    if (why !== undefined) return error('RK_NOT_READY', why);
    if (c.deadline <= Date.now()) return error('RK_TIMEOUT', 'the deadline passed before the replica got the call');
    if (this.#inFlight >= this.options.maxInFlight) return error('RK_OVERLOADED', `this replica already runs ${this.#inFlight} calls (the limit); the coordinator should back off`);
    return undefined;
  }

  async #run(c: WireCall): Promise<WireReply> {
    switch (c.op) {
      case 'apply': {
        const r = await this.local.apply(c.key, c.value, c.context, c.requestId, c.expiresAt);
        return { id: c.id, op: 'apply', record: r.record, context: r.context };
      }
      case 'merge':
        return { id: c.id, op: 'merge', changed: await this.local.merge(c.key, c.record, c.hintFor === '' ? undefined : c.hintFor) };
      case 'read':
        return { id: c.id, op: 'read', record: await this.local.read(c.key, c.hintFor === '' ? undefined : c.hintFor) };
      case 'digest':
        return { id: c.id, op: 'digest', digest: await this.local.digest(c.key) };
    }
  }
}
