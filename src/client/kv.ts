/**
 * The typed client of ringkv's KeyValue service (proto/ringkv/v1/kv.proto): put, get and
 * delete, with a deadline on every call and failover to the next node when one answers
 * UNAVAILABLE (down, shutting down, not yet joined, or too few of the key's replicas up
 * as it sees them) or refuses the call with retry advice (RESOURCE_EXHAUSTED at one of
 * its limits: it did none of the call). A node that gave retry advice goes to the back of
 * the order for as long as it asked.
 *
 * Token-aware (the default): the client fetches the ring from a node and sends each
 * request to one of the key's replicas (in turn, to spread the load), which then
 * coordinates it with one network hop fewer. It fetches the ring again every
 * `ringRefreshMs` while in use, and at once after a replica it picked failed; until it
 * has a ring, and after the key's replicas, it tries the `nodes` it was given.
 *
 * Owns: channels (one per address), the ring as last fetched, deadlines, failover, the
 * nodes that asked to be left alone for a while. Must
 * not: coordinate (the node that takes a call does).
 */
import * as grpc from '@grpc/grpc-js';
import { callMetadata, channelCredentials, type ClientSecurity } from './credentials.js';
import { CLIENT_MAX_SEND_BYTES, NODE_MAX_MESSAGE_BYTES, callUnary, serviceClient } from '../transport/protos.js';
import { BatchedStream, type ClientCodec } from '../transport/batched-stream.js';
import { decodeKvReplies, encodeKvCalls, kvCallSize, type KvCall, type KvReply } from '../transport/kv-codec.js';
import { retryAdvice } from '../transport/status.js';
import { AdminClient } from './admin.js';
import { KeyRouter } from './key-router.js';

export interface ClientOptions extends ClientSecurity {
  /** host:port of nodes to send to; any node takes any request. */
  readonly nodes: readonly string[];
  /** Deadline of each call unless the call sets its own, ms (default 5,000). */
  readonly deadlineMs?: number;
  /**
   * Send each request to one of the key's replicas, as the ring says (default true).
   * Turn it off when the addresses nodes advertise cannot be reached from the client
   * (behind NAT, say): then only `nodes` are used.
   */
  readonly tokenAware?: boolean;
  /** How often a token-aware client fetches the ring again while in use, ms (default 5,000). */
  readonly ringRefreshMs?: number;
  /**
   * Send calls batched on one stream per node (KeyValue/Stream, default true), rather than
   * one unary call each: the same answers and errors, for far less work per call on both
   * sides. Turn it off to talk to a node that predates the stream.
   */
  readonly streaming?: boolean;
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

const EMPTY = Buffer.alloc(0);

/** A call as the client makes it, before it has an id and a deadline. */
type Request = KvCall extends infer T ? (T extends unknown ? Omit<T, 'id' | 'deadline'> : never) : never;

function bytes(x: string | Uint8Array, what: string): Buffer {
  if (typeof x === 'string') return Buffer.from(x, 'utf8');
  if (x instanceof Uint8Array) return Buffer.from(x.buffer, x.byteOffset, x.byteLength);
  throw new TypeError(`${what} must be a string or a Uint8Array, got ${typeof x}`);
}

/** A ServiceError as grpc-js makes them, for failures the stream reports itself. */
function serviceError(code: grpc.status, details: string, metadata = new grpc.Metadata()): grpc.ServiceError {
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata });
}

/**
 * How long a node that refused a call asked to be left alone, ms, or undefined when the
 * refusal is no reason to try another node. Only a node's limits answer RESOURCE_EXHAUSTED
 * with retry advice (`grpc-retry-pushback-ms`), before doing any of the call, so sending
 * it elsewhere cannot apply it twice. Without the advice (a message over gRPC's size cap),
 * or with advice that is not a count of ms (gRPC: do not retry), another node would refuse
 * it too.
 */
export function pushbackMs(e: grpc.ServiceError): number | undefined {
  if (e.code !== grpc.status.RESOURCE_EXHAUSTED) return undefined;
  const v = e.metadata?.get('grpc-retry-pushback-ms')[0];
  return typeof v === 'string' && /^\d{1,9}$/.test(v) ? Number(v) : undefined;
}

/** Statuses a stream can end with that are the node's answer, not a failure to reach it. */
const ANSWERS = new Set([grpc.status.UNIMPLEMENTED, grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED]);

function kvCodec(): ClientCodec<KvCall, KvReply> {
  return {
    path: '/ringkv.v1.KeyValue/Stream',
    encode: encodeKvCalls,
    decode: decodeKvReplies,
    size: kvCallSize,
    // A call refused on the stream carries no trailers: a node's RESOURCE_EXHAUSTED there
    // comes from the same limits as its unary one, whose advice it is given.
    failure: (r) => (r.op === 'error' ? serviceError(r.code, r.details, r.code === grpc.status.RESOURCE_EXHAUSTED ? retryAdvice() : undefined) : undefined),
    // A stream that could not open or broke: the call never got an answer, as a unary call
    // to that node would have failed (UNAVAILABLE: the next node is tried). A refusal
    // (no such method, missing credentials) is the node's answer, and is given as it is.
    unreachable: (why, status) => serviceError(ANSWERS.has(status) ? status : grpc.status.UNAVAILABLE, why),
    timeout: () => serviceError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'),
    tooLarge: (size) => valueTooLarge(size, `a request of ${size} bytes`),
  };
}

export class Client {
  readonly #nodes: readonly string[];
  readonly #channels = new Map<string, grpc.Client>();
  readonly #streams = new Map<string, BatchedStream<KvCall, KvReply>>();
  readonly #streaming: boolean;
  readonly #deadlineMs: number;
  readonly #tokenAware: boolean;
  readonly #ringRefreshMs: number;
  #router: KeyRouter | undefined;
  #ringFetchedAt = -Infinity;
  #fetching: Promise<void> | undefined;
  #closed = false;
  #next = 0;
  /** Nodes that refused a call with retry advice, and until when (performance.now()) they asked to be left alone. */
  readonly #busyUntil = new Map<string, number>();
  readonly #credentials: grpc.ChannelCredentials;
  readonly #metadata: grpc.Metadata | undefined;
  /** What the ring fetches present: the same credentials. */
  readonly #security: ClientSecurity;

  constructor(options: ClientOptions) {
    if (!Array.isArray(options?.nodes) || options.nodes.length === 0) throw new TypeError('Client needs nodes: at least one host:port, like ["127.0.0.1:7001"]');
    this.#nodes = [...options.nodes];
    this.#deadlineMs = options.deadlineMs ?? 5000;
    this.#tokenAware = options.tokenAware ?? true;
    this.#ringRefreshMs = options.ringRefreshMs ?? 5000;
    this.#streaming = options.streaming ?? true;
    this.#credentials = channelCredentials(options);
    this.#metadata = callMetadata(options);
    this.#security = { credentials: this.#credentials, token: options.token };
  }

  async put(key: string | Uint8Array, value: string | Uint8Array, o: PutOptions = {}): Promise<{ context: Buffer }> {
    const req = { op: 'put' as const, key: bytes(key, 'key'), value: bytes(value, 'value'), context: o.context ? bytes(o.context, 'context') : EMPTY, w: o.w ?? 0 };
    if (req.value.length > MAX_VALUE_BYTES) throw valueTooLarge(req.value.length);
    const r = (await this.#call(req, o)) as { context: Buffer };
    return { context: r.context };
  }

  async get(key: string | Uint8Array, o: GetOptions = {}): Promise<GetResult> {
    const r = (await this.#call({ op: 'get', key: bytes(key, 'key'), r: o.r ?? 0 }, o)) as GetResult;
    return { values: r.values, context: r.context, found: r.found };
  }

  async delete(key: string | Uint8Array, o: PutOptions = {}): Promise<void> {
    await this.#call({ op: 'delete', key: bytes(key, 'key'), context: o.context ? bytes(o.context, 'context') : EMPTY, w: o.w ?? 0 }, o);
  }

  /** The addresses a request for `key` would try, in order (the key's replicas first when the ring is known). */
  candidates(key: string | Uint8Array): string[] {
    return this.#candidates(bytes(key, 'key'));
  }

  /** Fetch the ring now (a token-aware client does so by itself; this waits for it). */
  async refreshRing(): Promise<void> {
    this.#ringFetchedAt = -Infinity;
    this.#refreshIfStale();
    await this.#fetching;
  }

  close(): void {
    this.#closed = true;
    for (const s of this.#streams.values()) s.close();
    this.#streams.clear();
    for (const c of this.#channels.values()) c.close();
    this.#channels.clear();
  }

  #channel(address: string): grpc.Client {
    let c = this.#channels.get(address);
    if (c === undefined) {
      const KeyValue = serviceClient('ringkv.v1.KeyValue');
      c = new KeyValue(address, this.#credentials, {
        // A get answers up to a key's whole versions; a put sends one value.
        'grpc.max_receive_message_length': NODE_MAX_MESSAGE_BYTES,
        'grpc.max_send_message_length': CLIENT_MAX_SEND_BYTES,
      });
      this.#channels.set(address, c);
    }
    return c;
  }

  /** One attempt at `address`: on its stream, or as a unary call. */
  #send(address: string, req: Request, deadline: number): Promise<unknown> {
    if (!this.#streaming) {
      const { op, ...fields } = req;
      return callUnary(this.#channel(address), op, fields, { deadline }, this.#metadata);
    }
    let s = this.#streams.get(address);
    if (s === undefined) {
      s = new BatchedStream(this.#channel(address), kvCodec(), this.#metadata);
      this.#streams.set(address, s);
    }
    return s.call({ ...req, deadline });
  }

  /**
   * The key's replicas in turn (so load spreads over them), then the given nodes in turn;
   * nodes still within the time they asked to be left alone go last, in the same order.
   */
  #candidates(key: Buffer): string[] {
    const turn = this.#next++;
    const out: string[] = [];
    const replicas = this.#router?.replicasOf(key) ?? [];
    for (let i = 0; i < replicas.length; i++) out.push(replicas[(turn + i) % replicas.length]!);
    for (let i = 0; i < this.#nodes.length; i++) {
      const a = this.#nodes[(turn + i) % this.#nodes.length]!;
      if (!out.includes(a)) out.push(a);
    }
    if (this.#busyUntil.size === 0) return out;
    const now = performance.now();
    for (const [a, until] of this.#busyUntil) if (until <= now) this.#busyUntil.delete(a);
    const busy = (a: string): boolean => this.#busyUntil.has(a);
    return [...out.filter((a) => !busy(a)), ...out.filter(busy)];
  }

  /** Start fetching the ring when the last fetch is older than ringRefreshMs; requests do not wait for it. */
  #refreshIfStale(): void {
    if (!this.#tokenAware || this.#closed || this.#fetching !== undefined || performance.now() - this.#ringFetchedAt < this.#ringRefreshMs) return;
    this.#fetching = this.#fetchRing().finally(() => {
      this.#fetching = undefined;
      this.#ringFetchedAt = performance.now();
    });
  }

  /** The ring and members from the first node that answers both; the old ring stays if none does. */
  async #fetchRing(): Promise<void> {
    const start = this.#next++;
    for (let i = 0; i < this.#nodes.length; i++) {
      const admin = new AdminClient(this.#nodes[(start + i) % this.#nodes.length]!, Math.min(this.#deadlineMs, 2000), this.#security);
      try {
        const [ring, status] = await Promise.all([admin.ring(), admin.status()]);
        if (!this.#closed) this.#router = new KeyRouter(ring, status);
        return;
      } catch {
        // The next node; a cluster still forming has no ring yet.
      } finally {
        admin.close();
      }
    }
  }

  /**
   * One call with one deadline: the candidates in turn while they answer UNAVAILABLE, or
   * RESOURCE_EXHAUSTED with retry advice, and time is left; each is tried once. Any other
   * error is final, and so is the last one's when every candidate refused.
   */
  async #call(req: Request, o: CallOptions): Promise<unknown> {
    const deadline = Date.now() + (o.deadlineMs ?? this.#deadlineMs);
    this.#refreshIfStale();
    const candidates = this.#candidates(req.key);
    let last: grpc.ServiceError | undefined;
    for (let i = 0; i < candidates.length && Date.now() < deadline; i++) {
      try {
        return await this.#send(candidates[i]!, req, deadline);
      } catch (e) {
        last = e as grpc.ServiceError;
        const pushback = pushbackMs(last);
        if (pushback !== undefined) {
          this.#busyUntil.set(candidates[i]!, performance.now() + pushback);
          continue;
        }
        if (last.code !== grpc.status.UNAVAILABLE) throw last;
        // A node that cannot take it now may have left, or the ring moved: look again soon.
        if (this.#router !== undefined) this.#ringFetchedAt = -Infinity;
      }
    }
    throw last ?? Object.assign(new Error(NO_NODE_TRIED), { code: grpc.status.DEADLINE_EXCEEDED, details: NO_NODE_TRIED });
  }
}
