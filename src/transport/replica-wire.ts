/**
 * The Replica service (proto/ringkv/internal/v1/replica.proto) on both sides: the client
 * that implements ReplicaApi over one long-lived stream per peer, carrying many calls and
 * replies per message; and the server that runs a peer's calls on this node's LocalReplica.
 *
 * Batching: a call joins its peer's queue, which is sent when the current turn of the
 * event loop ends (setImmediate), or at once when it holds FLUSH_BYTES. Replies are
 * batched the same way on the server. Under load, one message carries the calls of every
 * request the node took in one turn; idle, a call waits for nothing.
 *
 * Failures are ReplicaFailures (replication/replica-api.ts), as a unary call's would have
 * been: a stream that breaks fails its calls in flight as unreachable; a call past its
 * deadline times out here and is skipped there; a replica's refusal carries its code.
 *
 * Owns: the streams, batching, ids and deadlines of calls in flight, the mapping of
 * gRPC and replica errors to ReplicaFailures. Must not: interpret the calls
 * (replication/ does).
 */
import * as grpc from '@grpc/grpc-js';
import { ReplicaFailure, asReplicaFailure, type ApplyResult, type ReplicaApi } from '../replication/replica-api.js';
import type { LocalReplica } from '../replication/local-replica.js';
import { PeerChannels } from './peer-channels.js';
import { NODE_MAX_MESSAGE_BYTES, serviceClient } from './protos.js';
import { callSize, decodeCalls, decodeReplies, encodeCalls, encodeReplies, replySize, type WireCall, type WireReply } from './replica-codec.js';
import { codeName, toStatus } from './status.js';

const SERVICE = 'ringkv.internal.v1.Replica';
const STREAM_PATH = `/${SERVICE}/Stream`;
/** A batch is sent once it holds this much, without waiting for the turn to end. */
export const FLUSH_BYTES = 256 * 1024;
/** How often calls in flight are checked against their deadlines, ms. */
const SWEEP_MS = 20;

const identity = (b: Buffer): Buffer => b;

type Distribute<T> = T extends unknown ? Omit<T, 'id'> : never;
type CallOf = Distribute<WireCall>;

interface Pending {
  readonly deadline: number;
  readonly resolve: (r: WireReply) => void;
  readonly reject: (e: ReplicaFailure) => void;
}

/** The calls to one peer address: its stream (opened on first use, again after it ends), the queue, the calls in flight. */
class PeerStream {
  #stream: grpc.ClientDuplexStream<Buffer, Buffer> | undefined;
  readonly #pending = new Map<number, Pending>();
  #queue: WireCall[] = [];
  #queuedBytes = 0;
  #flushing = false;
  #nextId = 1;
  #sweep: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: grpc.Client,
    private readonly address: string,
  ) {}

  call(c: CallOf): Promise<WireReply> {
    const call = { ...c, id: this.#nextId } as WireCall;
    this.#nextId = this.#nextId >= 0xffffffff ? 1 : this.#nextId + 1;
    const size = callSize(call);
    if (size > NODE_MAX_MESSAGE_BYTES) return Promise.reject(new ReplicaFailure('refused', 'KV_RECORD_TOO_LARGE', `a replica call of ${size} bytes is over the node's message limit of ${NODE_MAX_MESSAGE_BYTES} bytes`));
    if (call.deadline <= Date.now()) return Promise.reject(new ReplicaFailure('timeout', 'RK_TIMEOUT', 'the deadline passed before the call was sent'));
    return new Promise<WireReply>((resolve, reject) => {
      this.#pending.set(call.id, { deadline: call.deadline, resolve, reject });
      this.#sweep ??= setInterval(() => this.#expire(), SWEEP_MS).unref();
      if (this.#queuedBytes + size > FLUSH_BYTES) this.#flush();
      this.#queue.push(call);
      this.#queuedBytes += size;
      if (this.#queuedBytes >= FLUSH_BYTES) this.#flush();
      else if (!this.#flushing) {
        this.#flushing = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#flushing = false;
    if (this.#queue.length === 0) return;
    const calls = this.#queue;
    this.#queue = [];
    this.#queuedBytes = 0;
    const stream = this.#open();
    stream.write(encodeCalls(calls));
  }

  #open(): grpc.ClientDuplexStream<Buffer, Buffer> {
    if (this.#stream !== undefined) return this.#stream;
    const stream = this.client.makeBidiStreamRequest(STREAM_PATH, identity, identity);
    this.#stream = stream;
    stream.on('data', (buf: Buffer) => {
      let replies: WireReply[];
      try {
        replies = decodeReplies(buf);
      } catch (e) {
        stream.cancel();
        return this.#broken(stream, `the peer sent a reply that does not decode (${(e as Error).message})`);
      }
      for (const r of replies) {
        const p = this.#pending.get(r.id);
        if (p === undefined) continue; // timed out here already
        this.#pending.delete(r.id);
        if (r.op === 'error') p.reject(asReplicaFailure({ code: r.code, message: r.message }));
        else p.resolve(r);
      }
    });
    stream.on('error', (e: grpc.ServiceError) => this.#broken(stream, e.details || e.message));
    stream.on('status', (s: grpc.StatusObject) => this.#broken(stream, s.code === grpc.status.OK ? 'the peer closed the stream (stopping)' : s.details));
    stream.on('end', () => this.#broken(stream, 'the peer closed the stream'));
    return stream;
  }

  /** The stream ended or failed: its calls in flight never got an answer. The next call opens a new one. */
  #broken(stream: grpc.ClientDuplexStream<Buffer, Buffer>, why: string): void {
    if (this.#stream !== stream) return;
    this.#stream = undefined;
    stream.end();
    this.#failAll(new ReplicaFailure('unreachable', 'RK_UNAVAILABLE', `no answer from ${this.address}: ${why}`));
  }

  #failAll(f: ReplicaFailure): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    this.#queue = [];
    this.#queuedBytes = 0;
    for (const p of pending) p.reject(f);
    this.#stopSweep();
  }

  #expire(): void {
    const now = Date.now();
    for (const [id, p] of this.#pending) {
      if (p.deadline > now) continue;
      this.#pending.delete(id);
      p.reject(new ReplicaFailure('timeout', 'RK_TIMEOUT', `${this.address} did not answer before the deadline`));
    }
    if (this.#pending.size === 0) this.#stopSweep();
  }

  #stopSweep(): void {
    if (this.#sweep !== undefined) clearInterval(this.#sweep);
    this.#sweep = undefined;
  }

  close(): void {
    const s = this.#stream;
    this.#stream = undefined;
    s?.cancel();
    this.#failAll(new ReplicaFailure('unreachable', 'RK_UNAVAILABLE', `the connection to ${this.address} was closed here`));
  }
}

export class GrpcReplicas implements ReplicaApi {
  readonly #channels = new PeerChannels(SERVICE);
  readonly #streams = new Map<string, PeerStream>();

  constructor(
    /** A node's address as gossip knows it. */
    private readonly addressOf: (id: string) => string | undefined,
  ) {}

  async apply(node: string, key: Buffer, value: Buffer | null, context: Buffer, deadline: number): Promise<ApplyResult> {
    const r = await this.#call(node, { op: 'apply', deadline, key, value, context });
    return r as ApplyResult;
  }

  async merge(node: string, key: Buffer, record: Buffer, hintFor: string | undefined, deadline: number): Promise<boolean> {
    const r = await this.#call(node, { op: 'merge', deadline, key, record, hintFor: hintFor ?? '' });
    return (r as { changed: boolean }).changed;
  }

  async read(node: string, key: Buffer, hintFor: string | undefined, deadline: number): Promise<Buffer | undefined> {
    const r = await this.#call(node, { op: 'read', deadline, key, hintFor: hintFor ?? '' });
    return (r as { record: Buffer | undefined }).record;
  }

  async digest(node: string, key: Buffer, deadline: number): Promise<Buffer> {
    const r = await this.#call(node, { op: 'digest', deadline, key });
    return (r as { digest: Buffer }).digest;
  }

  #call(node: string, c: CallOf): Promise<WireReply> {
    const address = this.addressOf(node);
    if (address === undefined) return Promise.reject(new ReplicaFailure('unreachable', 'RK_UNAVAILABLE', `no address known for node ${node}`));
    let s = this.#streams.get(address);
    if (s === undefined) {
      s = new PeerStream(this.#channels.get(address), address);
      this.#streams.set(address, s);
    }
    return s.call(c);
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

/**
 * The server side: each peer's stream, its calls run on `local` as they arrive (in
 * parallel; the store serialises per key), replies batched back.
 */
export class ReplicaServer {
  #inFlight = 0;
  readonly #streams = new Set<{ drain(): void }>();
  #draining = false;

  constructor(
    private readonly local: LocalReplica,
    private readonly options: ReplicaServerOptions,
  ) {}

  /** The service definition, with the stream's messages passed through as bytes (replica-codec.ts encodes them). */
  definition(): grpc.ServiceDefinition {
    const def = serviceClient(SERVICE).service;
    const stream = def['Stream'] as grpc.MethodDefinition<unknown, unknown>;
    return { Stream: { ...stream, requestDeserialize: identity, responseSerialize: identity } } as grpc.ServiceDefinition;
  }

  implementation(): grpc.UntypedServiceImplementation {
    return { Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => this.#serve(call) };
  }

  /**
   * Stop taking calls and close each stream once its calls are answered, so that the
   * server's graceful shutdown is not held up by peers' long-lived streams.
   */
  drain(): void {
    this.#draining = true;
    for (const s of this.#streams) s.drain();
  }

  #serve(call: grpc.ServerDuplexStream<Buffer, Buffer>): void {
    let out: WireReply[] = [];
    let outBytes = 0;
    let flushing = false;
    let running = 0;
    let peerEnded = false;
    let closed = false;
    const flush = (): void => {
      flushing = false;
      if (out.length === 0 || closed) return;
      const replies = out;
      out = [];
      outBytes = 0;
      call.write(encodeReplies(replies));
    };
    const send = (r: WireReply): void => {
      out.push(r);
      outBytes += replySize(r);
      if (outBytes >= FLUSH_BYTES) flush();
      else if (!flushing) {
        flushing = true;
        setImmediate(flush);
      }
    };
    const forget = (): void => {
      closed = true;
      this.#streams.delete(handle);
    };
    // Once the peer is done sending, or this node is stopping, and every call is answered: end the stream.
    const endIfDone = (): void => {
      if (closed || running > 0 || !(peerEnded || this.#draining)) return;
      flush();
      forget();
      call.end();
    };
    const handle = { drain: endIfDone };
    this.#streams.add(handle);
    call.on('data', (buf: Buffer) => {
      let calls: WireCall[];
      try {
        calls = decodeCalls(buf);
      } catch (e) {
        forget();
        call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: `a replica batch does not decode (${(e as Error).message})` });
        return;
      }
      for (const c of calls) {
        const refused = this.#refusal(c);
        if (refused !== undefined) {
          send(refused);
          continue;
        }
        running++;
        this.#inFlight++;
        const started = performance.now();
        void this.#run(c)
          .then(
            (r) => {
              this.options.observe?.(c.op, 'OK', (performance.now() - started) / 1000);
              return r;
            },
            (e: unknown): WireReply => {
              const f = asReplicaFailure(e);
              this.options.observe?.(c.op, codeName(toStatus(f).code), (performance.now() - started) / 1000);
              return { id: c.id, op: 'error', code: f.code, message: f.message };
            },
          )
          .then((r) => {
            running--;
            this.#inFlight--;
            send(r);
            endIfDone();
          });
      }
    });
    call.on('end', () => {
      peerEnded = true;
      endIfDone();
    });
    call.on('error', forget);
    call.on('cancelled', forget);
  }

  /** The reply that refuses `c` without running it, if it must be. */
  #refusal(c: WireCall): WireReply | undefined {
    const error = (code: string, message: string): WireReply => {
      this.options.observe?.(c.op, codeName(toStatus({ code, message }).code), 0);
      return { id: c.id, op: 'error', code, message };
    };
    const why = this.#draining ? 'this node is shutting down' : this.options.refuse();
    if (why !== undefined) return error('RK_NOT_READY', why);
    if (c.deadline !== 0 && c.deadline <= Date.now()) return error('RK_TIMEOUT', 'the deadline passed before the replica got the call');
    if (this.#inFlight >= this.options.maxInFlight) return error('RK_OVERLOADED', `this replica already runs ${this.#inFlight} calls (the limit); the coordinator should back off`);
    return undefined;
  }

  async #run(c: WireCall): Promise<WireReply> {
    switch (c.op) {
      case 'apply': {
        const r = await this.local.apply(c.key, c.value, c.context);
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
