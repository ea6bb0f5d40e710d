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
 * The data types' calls (counterUpdate, writeMany, readRange, and the kinds' steps, such as
 * compare-and-set's Paxos steps) go on a second stream to the
 * same peer. A node of the release before them cannot read such a call: its decoder fails
 * the whole batch, and it breaks the stream (INVALID_ARGUMENT, "... names no operation").
 * On a stream of their own, that fails only them, and each as a refusal (RK_UNSUPPORTED:
 * upgrade the peer), never the plain calls in flight beside them; the next call opens a
 * new stream, so a peer once upgraded is used at once. This release's server refuses a
 * call it cannot read alone (RK_UNSUPPORTED), and the stream carries on.
 *
 * Owns: the mapping between ReplicaApi and the stream's calls, and of gRPC and replica
 * errors to ReplicaFailures. Must not: interpret the calls (replication/ does).
 */
import * as grpc from '@grpc/grpc-js';
import { DataTypeError, type FieldType } from '../buckets/index.js';
import {
  ReplicaFailure,
  asReplicaFailure,
  callName,
  type ReplicaApi,
  type ReplicaCall,
  type ReplicaOp,
  type ReplicaReplies,
  type ReplyTo,
} from '../replication/replica-api.js';
import type { LocalReplica } from '../replication/local-replica.js';
import { ReplicationError } from '../replication/replication-errors.js';
import { KvError, MAX_RANGE_KEYS, type SubOp } from '../storage/index.js';
import {
  BatchedServer,
  BatchedStream,
  brokeOnUndecodable,
  passThrough,
  type ClientCodec,
  type ServerCodec,
  type WithoutId,
} from './batched-stream.js';
import { PeerChannels } from './peer-channels.js';
import { NODE_MAX_MESSAGE_BYTES, serviceClient } from './protos.js';
import {
  callSize,
  decodeCalls,
  decodeReplies,
  encodeCalls,
  encodeReplies,
  replySize,
  type DecodedCall,
  type WireCall,
  type WireReply,
  type WireSubOp,
} from './replica-codec.js';
import { codeName, toStatus } from './status.js';
import { paxosOfStep, paxosReplyOf, stepOfPaxos, stepReplyOfPaxos } from './paxos-legacy.js';

const EMPTY = Buffer.alloc(0);

const SERVICE = 'ringkv.internal.v1.Replica' as const;

type CallOf = WithoutId<WireCall>;

/** The data types' calls: on a stream of their own (see the header). */
const TYPED = new Set<WireCall['op']>(['counterUpdate', 'writeMany', 'readRange', 'paxos', 'step']);

/*
 * The release before the data types' server breaks the stream when a batch holds a call
 * whose operation it does not know (brokeOnUndecodable; its decoder may also have read
 * what follows an unknown field as anything). A server of this release decodes every call
 * this client encodes, so on the data types' stream that ending means the peer is older.
 */

/** The stream's codec; `node` is the id the stream was opened for (an address is one node's). */
function codecFor(
  address: string,
  typed: boolean,
  node: string,
  sent: (op: string, bytes: number) => void,
): ClientCodec<WireCall, WireReply> {
  return {
    path: `/${SERVICE}/Stream`,
    encode: encodeCalls,
    decode: decodeReplies,
    size: callSize,
    failure: (r) => (r.op === 'error' ? asReplicaFailure({ code: r.code, message: r.message }) : undefined),
    unreachable: (why, status) =>
      // Only data types' calls were on this stream, and the peer read none of them: each is refused, not lost.
      typed && brokeOnUndecodable(status, why)
        ? new ReplicaFailure(
            'refused',
            'RK_UNSUPPORTED',
            `peer ${node} at ${address} runs a release without data types (counters, sets, maps) and cannot take this call; upgrade it (${why})`,
          )
        : new ReplicaFailure('unreachable', 'RK_UNAVAILABLE', `no answer from ${address}: ${why}`),
    timeout: () => new ReplicaFailure('timeout', 'RK_TIMEOUT', `${address} did not answer before the deadline`),
    tooLarge: (size) =>
      new ReplicaFailure(
        'refused',
        'KV_RECORD_TOO_LARGE',
        `a replica call of ${size} bytes is over the node's message limit of ${NODE_MAX_MESSAGE_BYTES} bytes`,
      ),
    queued: (c, size) => sent(callName(c), size),
  };
}

const bytesOf = (b: string | Uint8Array): Buffer =>
  typeof b === 'string' ? Buffer.from(b, 'utf8') : Buffer.from(b.buffer, b.byteOffset, b.byteLength);

const badAmount = (amount: unknown): string =>
  `a counter increment must be a nonzero integer from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}; got ${String(amount)}. Send a whole, nonzero amount (negative to decrement)`;

/** An amount as the wire's sint64 carries it; one that is not a safe integer is refused before it is sent (it would not convert). */
function wireAmount(amount: number): bigint {
  if (!Number.isSafeInteger(amount)) throw new ReplicaFailure('refused', 'KV_BAD_AMOUNT', badAmount(amount));
  return BigInt(amount);
}

/** An amount as received: past the store's bound it would not convert exactly, so it is refused in the store's words. */
function receivedAmount(amount: bigint): number {
  if (amount < -BigInt(Number.MAX_SAFE_INTEGER) || amount > BigInt(Number.MAX_SAFE_INTEGER))
    throw new KvError('KV_BAD_AMOUNT', badAmount(amount));
  return Number(amount);
}

/** A sub-key write as the wire carries it (the replica checks it: the store's DT_* codes). */
function wireSubOp(o: SubOp): WireSubOp {
  return {
    op: o.op,
    fields: (o.path.fields ?? []).map((f) => ({ name: bytesOf(f.name), type: f.type })),
    element: o.path.element === undefined ? undefined : bytesOf(o.path.element),
    context: o.op === 'remove' && o.context !== undefined ? bytesOf(o.context) : EMPTY,
    value: o.op === 'assign' && o.value instanceof Uint8Array ? bytesOf(o.value) : EMPTY,
    amount: o.op === 'increment' ? wireAmount(o.amount) : 0n,
  };
}

/** A sub-key write as the store takes it; a kind this release does not know is refused here (the store's words for a bad op). */
function subOp(o: WireSubOp, at: number): SubOp {
  // A field type this release does not know stays its number: the store refuses it (DT_BAD_PATH, naming it).
  const path = { fields: o.fields.map((f) => ({ name: f.name, type: f.type as FieldType })), element: o.element };
  switch (o.op) {
    case 'add':
      return { op: 'add', path };
    case 'remove':
      return { op: 'remove', path, context: o.context };
    case 'assign':
      return { op: 'assign', path, value: o.value };
    case 'increment':
      return { op: 'increment', path, amount: receivedAmount(o.amount) };
  }
  throw new DataTypeError(
    'DT_BAD_OP',
    `op ${at}: op kind ${o.op} is unknown to this node; use ADD (1), REMOVE (2), ASSIGN (3) or INCREMENT (4)`,
  );
}

/** A counter's value as replica.proto carries it: a decimal integer, exact past 2^53. */
const DECIMAL = /^-?[0-9]+$/;

/** `r` as the reply to a call of `op`; a reply of another kind (a peer's bug) fails the call as refused. */
function answer<O extends CallOf['op']>(r: WireReply, op: O, node: string): Extract<WireReply, { op: O }> {
  const is = (x: WireReply): x is Extract<WireReply, { op: O }> => x.op === op;
  if (!is(r)) throw new ReplicaFailure('refused', 'RK_INTERNAL', `${node} answered a ${op} call with a ${r.op} reply`);
  return r;
}

/** A replica call as the stream carries it (less its id); an amount or limit the wire cannot carry is refused here. */
function wireCall(c: ReplicaCall, deadline: number): CallOf {
  switch (c.op) {
    case 'apply':
      return { ...c, deadline, requestId: c.requestId ?? EMPTY, expiresAt: c.expiresAt ?? 0 };
    case 'merge':
    case 'read':
      return { ...c, deadline, hintFor: c.hintFor ?? '' };
    case 'digest':
      return { ...c, deadline };
    case 'counterUpdate':
      // The wire's sint64 carries any safe integer exactly; anything else could not arrive as sent.
      return { ...c, deadline, amount: wireAmount(c.amount), requestId: c.requestId ?? EMPTY };
    case 'writeMany':
      return { ...c, deadline, ops: c.ops.map(wireSubOp), requestId: c.requestId ?? EMPTY };
    case 'readRange':
      // The wire's limit is a uint32; the replica checks the range itself (the store's words).
      if (!Number.isInteger(c.limit) || c.limit < 1 || c.limit > 0xffffffff)
        throw new ReplicaFailure(
          'refused',
          'KV_BAD_OPTION',
          `a range read's limit must be 1 to ${MAX_RANGE_KEYS} sub-keys, got ${String(c.limit)}; read a larger set in pages`,
        );
      return { ...c, deadline, after: c.after };
    case 'step':
      return { ...c, deadline };
  }
}

/** A received call as the replica runs it (a Paxos call of an earlier release as the register's step). */
function receivedCall(c: Exclude<DecodedCall, { op: 'unsupported' }>): ReplicaCall {
  const requestId = 'requestId' in c && c.requestId.length > 0 ? { requestId: c.requestId } : {};
  switch (c.op) {
    case 'apply':
      return {
        op: 'apply',
        key: c.key,
        value: c.value,
        context: c.context,
        ...requestId,
        ...(c.expiresAt === 0 ? {} : { expiresAt: c.expiresAt }),
      };
    case 'merge':
      return { op: 'merge', key: c.key, record: c.record, ...(c.hintFor === '' ? {} : { hintFor: c.hintFor }) };
    case 'read':
      return { op: 'read', key: c.key, ...(c.hintFor === '' ? {} : { hintFor: c.hintFor }) };
    case 'digest':
      return { op: 'digest', key: c.key };
    case 'counterUpdate':
      return { op: 'counterUpdate', key: c.key, amount: receivedAmount(c.amount), ...requestId };
    case 'writeMany':
      return { op: 'writeMany', parent: c.parent, ops: c.ops.map(subOp), ...requestId };
    case 'readRange':
      return { op: 'readRange', parent: c.parent, after: c.after, limit: c.limit };
    case 'paxos':
      return stepOfPaxos(c);
    case 'step':
      return { op: 'step', key: c.key, kind: c.kind, step: c.step, arg: c.arg };
  }
}

/** A replica's answer to `call` as the stream carries it. */
function wireReply(id: number, call: ReplicaCall, reply: ReplicaReplies[ReplicaOp]): WireReply {
  switch (call.op) {
    case 'apply': {
      const r = reply as ReplicaReplies['apply'];
      return { id, op: 'apply', record: r.record, context: r.context };
    }
    case 'merge':
      return { id, op: 'merge', changed: reply as boolean };
    case 'read':
      return { id, op: 'read', record: reply as Buffer | undefined };
    case 'digest':
      return { id, op: 'digest', digest: reply as Buffer };
    case 'counterUpdate': {
      const r = reply as ReplicaReplies['counterUpdate'];
      return { id, op: 'counterUpdate', record: r.record, delta: r.delta, value: r.value.toString() };
    }
    case 'writeMany':
      return { id, op: 'writeMany', records: reply as ReplicaReplies['writeMany'] };
    case 'readRange': {
      const r = reply as ReplicaReplies['readRange'];
      return { id, op: 'readRange', records: r.records, next: r.next };
    }
    case 'step':
      return { id, op: 'step', reply: reply as Buffer };
  }
}

export class GrpcReplicas implements ReplicaApi {
  readonly #channels: PeerChannels<typeof SERVICE>;
  readonly #streams = new Map<string, BatchedStream<WireCall, WireReply>>();
  /** The data types' calls' streams, by address (see the header). */
  readonly #typedStreams = new Map<string, BatchedStream<WireCall, WireReply>>();
  readonly #bytesSent = new Map<string, number>();
  readonly #sent = (op: string, bytes: number): void => {
    this.#bytesSent.set(op, (this.#bytesSent.get(op) ?? 0) + bytes);
  };

  constructor(
    /** A node's address as gossip knows it. */
    private readonly addressOf: (id: string) => string | undefined,
    credentials: grpc.ChannelCredentials,
  ) {
    this.#channels = new PeerChannels(SERVICE, credentials);
  }

  call<C extends ReplicaCall>(node: string, c: C, deadline: number): Promise<ReplyTo<C>> {
    return this.#send(node, c, deadline) as Promise<ReplyTo<C>>;
  }

  async #send(node: string, c: ReplicaCall, deadline: number): Promise<ReplicaReplies[ReplicaOp]> {
    if (c.op === 'step') return this.#step(node, c, deadline);
    const r = await this.#call(node, wireCall(c, deadline));
    switch (c.op) {
      case 'apply': {
        const a = answer(r, 'apply', node);
        return { record: a.record, context: a.context };
      }
      case 'merge':
        return answer(r, 'merge', node).changed;
      case 'read':
        return answer(r, 'read', node).record;
      case 'digest':
        return answer(r, 'digest', node).digest;
      case 'counterUpdate': {
        const a = answer(r, 'counterUpdate', node);
        if (!DECIMAL.test(a.value))
          throw new ReplicaFailure(
            'refused',
            'RK_INTERNAL',
            `${node} answered a counter value that is not a decimal integer: ${JSON.stringify(a.value.slice(0, 40))}`,
          );
        return { record: a.record, delta: a.delta, value: BigInt(a.value) };
      }
      case 'writeMany': {
        const a = answer(r, 'writeMany', node);
        // One record per op, in order: the coordinator pairs them by position.
        if (a.records.length !== c.ops.length)
          throw new ReplicaFailure(
            'refused',
            'RK_INTERNAL',
            `${node} answered ${a.records.length} records to a write of ${c.ops.length} ops`,
          );
        return [...a.records];
      }
      case 'readRange': {
        const a = answer(r, 'readRange', node);
        return { records: a.records, next: a.next };
      }
    }
  }

  /** A step call; one a node of an earlier release refuses (it knows no steps) goes again as its Paxos call, if it is one (paxos-legacy.ts). */
  async #step(node: string, c: Extract<ReplicaCall, { op: 'step' }>, deadline: number): Promise<Buffer> {
    try {
      return answer(await this.#call(node, wireCall(c, deadline)), 'step', node).reply;
    } catch (e) {
      const legacy = e instanceof ReplicaFailure && e.code === 'RK_UNSUPPORTED' ? paxosOfStep(c, deadline) : undefined;
      if (legacy === undefined) throw e;
      return stepReplyOfPaxos(c, answer(await this.#call(node, legacy), 'paxos', node), node);
    }
  }

  #call(node: string, c: CallOf): Promise<WireReply> {
    const address = this.addressOf(node);
    if (address === undefined)
      return Promise.reject(new ReplicaFailure('unreachable', 'RK_UNAVAILABLE', `no address known for node ${node}`));
    const typed = TYPED.has(c.op);
    const streams = typed ? this.#typedStreams : this.#streams;
    let s = streams.get(address);
    if (s === undefined) {
      s = new BatchedStream(this.#channels.get(address), codecFor(address, typed, node, this.#sent));
      streams.set(address, s);
    }
    return s.call(c);
  }

  /** Bytes of calls sent to peers since start, by operation (each call's encoded size in its batch). */
  get bytesSent(): ReadonlyMap<string, number> {
    return this.#bytesSent;
  }

  /** How long `node` has had calls in flight from this node and answered none, ms (batched-stream.ts): the longer of its two streams'. */
  silentMs(node: string): number {
    const address = this.addressOf(node);
    if (address === undefined) return 0;
    return Math.max(this.#streams.get(address)?.silentMs() ?? 0, this.#typedStreams.get(address)?.silentMs() ?? 0);
  }

  /** Close the streams and channels to every address not in `keep`. */
  retain(keep: ReadonlySet<string>): void {
    for (const streams of [this.#streams, this.#typedStreams])
      for (const [address, s] of streams) {
        if (keep.has(address)) continue;
        s.close();
        streams.delete(address);
      }
    this.#channels.retain(keep);
  }

  close(): void {
    for (const streams of [this.#streams, this.#typedStreams]) {
      for (const s of streams.values()) s.close();
      streams.clear();
    }
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
  readonly #codec: ServerCodec<DecodedCall, WireReply>;

  constructor(
    private readonly local: LocalReplica,
    private readonly options: ReplicaServerOptions,
  ) {
    this.#codec = {
      decode: decodeCalls,
      encode: encodeReplies,
      size: replySize,
      // A reply gRPC would refuse to send (over the message limit) would break the stream and every call on it: it is refused alone.
      tooLarge: (r, size) => ({
        id: r.id,
        op: 'error',
        code: 'KV_RECORD_TOO_LARGE',
        message: `the ${r.op} reply of ${size} bytes is over the node's message limit of ${NODE_MAX_MESSAGE_BYTES} bytes; a record this large cannot be sent between nodes (lower limits.maxRecordBytes)`,
      }),
      refuse: (c, draining) => this.#refusal(c, draining),
      run: async (c) => {
        this.#inFlight++;
        const started = performance.now();
        try {
          const r = await this.#run(c);
          options.observe?.(callName(c), 'OK', (performance.now() - started) / 1000);
          return r;
        } catch (e) {
          const f = asReplicaFailure(e);
          options.observe?.(callName(c), codeName(toStatus(f).code), (performance.now() - started) / 1000);
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
  #refusal(c: DecodedCall, draining: boolean): WireReply | undefined {
    const error = (code: string, message: string): WireReply => {
      this.options.observe?.(callName(c), codeName(toStatus({ code, message }).code), 0);
      return { id: c.id, op: 'error', code, message };
    };
    if (c.op === 'unsupported')
      return error(
        'RK_UNSUPPORTED',
        `call ${c.id} names no operation this node's release knows (none set, or one of a newer release); upgrade this node to the caller's release`,
      );
    const why = draining ? 'this node is shutting down' : this.options.refuse();
    if (why !== undefined) return error('RK_NOT_READY', why);
    if (c.deadline <= Date.now()) return error('RK_TIMEOUT', 'the deadline passed before the replica got the call');
    if (this.#inFlight >= this.options.maxInFlight)
      return error(
        'RK_OVERLOADED',
        `this replica already runs ${this.#inFlight} calls (the limit); the coordinator should back off`,
      );
    return undefined;
  }

  async #run(c: DecodedCall): Promise<WireReply> {
    if (c.op === 'unsupported')
      // refused before it runs (#refusal)
      throw new ReplicationError(
        'RK_UNSUPPORTED',
        `call ${c.id} names no operation this node's release knows; upgrade this node to the caller's release`,
      );
    const call = receivedCall(c);
    const reply = await this.local.call(call);
    // A node of an earlier release sent a Paxos call: it reads a Paxos reply.
    return c.op === 'paxos' ? paxosReplyOf(c.id, c, reply as Buffer) : wireReply(c.id, call, reply);
  }
}
