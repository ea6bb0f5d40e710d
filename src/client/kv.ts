/**
 * The typed client of ringkv's KeyValue service (proto/ringkv/v1/kv.proto): put, get and
 * delete, and the batches getMany and putMany (unary GetMany/PutMany, per-key results),
 * with a deadline on every call, and the tail tolerance of docs/client.md:
 *
 * - Token-aware (the default): the client fetches the ring from a node and sends each
 *   request to one of the key's replicas, which then coordinates it with one network hop
 *   fewer. It fetches the ring again every `ringRefreshMs` while in use, and at once after
 *   a node it picked failed; until it has a ring, and after the key's replicas, it tries
 *   the `nodes` it was given.
 * - Adaptive (the default): among the candidates, healthy and less busy nodes first
 *   (health.ts: calls in flight, recent answer times); a node that stopped answering, or
 *   refused lately, or that the cluster shows down, goes to the back.
 * - Hedged (the default): a call not answered within a delay derived from recent latency
 *   (hedging.ts: p99, clamped) is sent to the next candidate as well, and the first answer
 *   wins; extra calls come out of a token budget. A call whose every node stopped
 *   answering is moved to the next candidate once, budget or not. Writes carry a request
 *   id, the same on every attempt, so that a write reaching two coordinators is applied
 *   once (docs/causality.md#safe-to-send-twice).
 * - Failover: the next candidate when a node answers UNAVAILABLE (down, shutting down, not
 *   yet joined, or too few of the key's replicas up as it sees them) or RESOURCE_EXHAUSTED
 *   with retry advice (it did none of the call); such a node is left alone a while.
 *
 * Owns: channels (one per address), the ring as last fetched, deadlines, each call's
 * attempts, the nodes' health as seen from here, the budget, counters. Must not:
 * coordinate (the node that takes a call does).
 */
import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { callMetadata, channelCredentials, type ClientSecurity } from '../security/credentials.js';
import { NODE_MAX_MESSAGE_BYTES, callUnary, serviceClient, type ServiceClient } from '../transport/protos.js';
import { BatchedStream, brokeOnUndecodable, type ClientCodec } from '../transport/batched-stream.js';
import {
  decodeKvReplies,
  encodeKvCalls,
  kvCallSize,
  type Confirms,
  type KvCall,
  type KvReply,
} from '../transport/kv-codec.js';
import { CAS_OUTCOME, retryAdvice } from '../transport/status.js';
import { bucketName, storedKey } from '../buckets/index.js';
import { AdminClient } from './admin.js';
import { NodeHealth, type Ending } from './health.js';
import { HedgeDelay, RetryBudget, type BudgetOptions, type HedgeOptions } from './hedging.js';
import { KeyRouter } from './key-router.js';
import {
  assemble,
  entryOf,
  removeOf,
  updateBatches,
  wireMapOps,
  type MapOp,
  type MapPage,
  type MapValue,
} from './maps.js';
import { amountOf, bytes, serviceError } from './wire-values.js';
import { RULES, checkOptions } from './options.js';

export type { BudgetOptions, HedgeOptions } from './hedging.js';

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
  /**
   * Order candidates by the health the client sees (default true): healthy, less busy
   * nodes first; a node that stopped answering, refused lately or is shown down, last.
   * Off: the candidates in turn, as a plain round-robin client.
   */
  readonly adaptive?: boolean;
  /** Hedge calls not answered in time (default `{ percentile: 0.99, minMs: 5, maxMs: 1000 }`); false: never. */
  readonly hedge?: HedgeOptions | false;
  /** The budget of extra calls, hedges and moves (default `{ ratio: 0.1, maxTokens: 100 }`). */
  readonly budget?: BudgetOptions;
  /** A node with calls in flight that answers none of them for this long is taken as stopped, ms (default 250). */
  readonly stallMs?: number;
}

/** What the client did, since it was made (stats()). */
export interface ClientStats {
  /** Calls made (put, get, delete). */
  calls: number;
  /** Calls sent to a node: each call's first attempt, hedges, moves and failovers. */
  attempts: number;
  /** attempts − calls: what tail tolerance and failover cost. */
  extraCalls: number;
  /** Second (or later) attempts sent because the first was slow. */
  hedges: number;
  /** Calls answered first by a hedge or a move. */
  hedgesWon: number;
  /** Hedges not sent: the budget had no token. */
  hedgesRefused: number;
  /** Calls moved off a node that stopped answering. */
  moved: number;
  /** Attempts sent because a node refused (UNAVAILABLE, or retry advice). */
  failovers: number;
}

export interface CallOptions {
  /** This call's deadline, ms from now. */
  readonly deadlineMs?: number;
  /** The key's bucket (docs/reads-and-writes.md#buckets); unset: the default bucket. */
  readonly bucket?: string;
}

export interface PutOptions extends CallOptions {
  /** The context of a get of this key: the put replaces exactly what that get saw. */
  readonly context?: Uint8Array;
  /** Replicas that must hold the write before it is acknowledged (1..N; 0 or unset: a majority). */
  readonly w?: number;
  /**
   * The write's request id, 1 to 64 bytes (default: a new one per call). Pass the same id
   * to retry a write whose outcome you do not know, from this client or another: it is
   * applied once.
   */
  readonly requestId?: Uint8Array;
  /** A put's time to live: ms, or a duration with its unit ("90s", "7d"); the value expires then (unset or 0: the bucket's default TTL, if any). */
  readonly ttlMs?: number | string;
  /** Acknowledgements must come from at least this many distinct nodes, fallbacks included (unset: no rule). */
  readonly nodeConfirms?: number;
  /** Acknowledgements must come from at least this many distinct zones (unset: no rule). */
  readonly zoneConfirms?: number;
  /** Acknowledgements from primary replicas, not fallbacks, among the W (Riak's pw; unset: none). */
  readonly pw?: number;
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

export interface PutIfOptions extends CallOptions {
  /**
   * The context of the version the write replaces, from get or a putIf of this key; unset:
   * write only if the key is absent.
   */
  readonly context?: Uint8Array;
  /** The write's request id, 1 to 64 bytes (default: a new one); see putIf on retrying. */
  readonly requestId?: Uint8Array;
}

/** A compare-and-set's answer: applied, or not, with the key's current value and context. */
export interface PutIfResult {
  readonly applied: boolean;
  /** Applied: the new version's context. Not applied: the current version's (empty: the key is absent). */
  readonly context: Buffer;
  /**
   * Whether the key holds a value now. Applied: true after a putIf, false after a
   * deleteIf. Not applied: whether it holds one at its current version (the context returned).
   */
  readonly found: boolean;
  /** When found: the key's value (applied: the value written; not applied: the current one). */
  readonly value: Buffer | undefined;
}

/**
 * Whether a failed putIf or deleteIf certainly did not apply: the node said so (a refusal
 * before it ran, or a round no replica could have accepted). Any other error leaves the
 * outcome unknown (a timeout, a node lost mid-call): get the key to learn it.
 */
export function casNotApplied(e: unknown): boolean {
  const m = (e as { metadata?: unknown })?.metadata;
  return m instanceof grpc.Metadata && m.get(CAS_OUTCOME)[0] === 'not-applied';
}

/** One key's outcome in a batch: its result, or the error a call of that key alone would have ended with. */
export type KeyResult<T> =
  | { readonly key: Buffer; readonly ok: true; readonly value: T }
  | { readonly key: Buffer; readonly ok: false; readonly error: grpc.ServiceError };

/** One put of a putMany: as put()'s key, value and context, with its own request id (default: a new one) and TTL. */
export interface PutItem {
  readonly key: string | Uint8Array;
  readonly value: string | Uint8Array;
  readonly context?: Uint8Array;
  readonly requestId?: Uint8Array;
  readonly ttlMs?: number | string;
}

/** What every item of a putMany shares: W, the confirmations, the bucket, the deadline. */
export type PutManyOptions = Omit<PutOptions, 'context' | 'requestId' | 'ttlMs'>;

/** A counterUpdate's options: a write's, but no context or TTL (a counter has neither). */
export type CounterUpdateOptions = Omit<PutOptions, 'context' | 'ttlMs'>;
/** A setDrop's or mapDrop's options: each page is read at `r` and its removes written at `w` (default: a majority). */
export interface DropOptions extends CallOptions {
  readonly r?: number;
  readonly w?: number;
}

/** A counter reset's options: its read merges `r` replicas, and `w` acknowledge the reset (each default: a majority). */
export interface CounterResetOptions extends CallOptions {
  readonly r?: number;
  readonly w?: number;
}

/** A setUpdate's (setAdd's, setRemove's) options: as a counter update's. */
export type SetUpdateOptions = CounterUpdateOptions;

/** One operation of a setUpdate: an add, or a remove with the context a read of that element gave. */
export type SetOp =
  | { readonly op: 'add'; readonly element: string | Uint8Array }
  | { readonly op: 'remove'; readonly element: string | Uint8Array; readonly context: Uint8Array };

/** A set's element as a read gives it, with the context a remove of it needs. */
export interface SetElement {
  readonly element: Buffer;
  readonly context: Buffer;
}

export interface SetReadOptions extends GetOptions {
  /** Elements after this one (a page's `next`); unset: from the first. */
  readonly after?: Uint8Array;
  /** Elements per page, 1 to MAX_SET_PAGE (unset: MAX_SET_PAGE). */
  readonly limit?: number;
}

/** One page of a set: its elements in byte order, and the `after` of the next page (undefined after the last). */
export interface SetPage {
  readonly elements: SetElement[];
  readonly next: Buffer | undefined;
}

/** Most elements a set page holds, and most operations one setUpdate carries, as a node takes them. */
export const MAX_SET_PAGE = 1000;
export const MAX_SET_OPS = 1000;

/** Most keys (getMany) or items (putMany) in one batch, as a node takes them. */
export const MAX_BATCH_KEYS = 100;
/** Most bytes of values in one putMany, all items together. */
export const MAX_BATCH_VALUE_BYTES = 4 * 1024 * 1024;

/** The bytes the ring hashes for `key` of `bucket`: its stored key, or the key itself when the bucket name is bad (the node will say so). */
function routingKey(bucket: string, key: Buffer): Buffer {
  try {
    return storedKey(bucketName(bucket), key);
  } catch {
    return key;
  }
}

function confirmsOf(o: PutOptions): Confirms {
  return { nodeConfirms: o.nodeConfirms ?? 0, zoneConfirms: o.zoneConfirms ?? 0, pw: o.pw ?? 0 };
}

/** A counter's value as a node sends it (decimal); a node's bug otherwise (INTERNAL). */
function decimal(text: string): bigint {
  if (!/^-?\d{1,20}$/.test(text))
    throw serviceError(
      grpc.status.INTERNAL,
      `the node answered a counter value that is not a whole number: ${JSON.stringify(text.slice(0, 40))}`,
    );
  return BigInt(text);
}

/** The DEADLINE_EXCEEDED details of a call whose deadline passed before it reached any node. */
export const NO_NODE_TRIED = 'deadline passed before any node was tried';

/** The most bytes one request to a node may carry (its message limit); a node's value limit is lower, and the node checks it. */
export const MAX_REQUEST_BYTES = NODE_MAX_MESSAGE_BYTES;

/**
 * INVALID_ARGUMENT for `what` (a request, a value) of `size` bytes, more than one request
 * to a node may carry: refused before sending rather than by gRPC's bare "message larger
 * than max".
 */
export function requestTooLarge(size: number, what = `a request of ${size} bytes`): grpc.ServiceError {
  const details = `${what} is over the ${MAX_REQUEST_BYTES} bytes one request to a node may carry; split it into several keys`;
  return Object.assign(new Error(`${grpc.status.INVALID_ARGUMENT} INVALID_ARGUMENT: ${details}`), {
    code: grpc.status.INVALID_ARGUMENT,
    details,
    metadata: new grpc.Metadata(),
  });
}

const EMPTY = Buffer.alloc(0);

/** A batch's entries as `convert` makes them, or INVALID_ARGUMENT when there are none or more than MAX_BATCH_KEYS (as a node would refuse it). */
function checkBatch<X, Y>(list: readonly X[], convert: (x: X) => Y): Y[] {
  if (!Array.isArray(list)) throw new TypeError(`a batch must be an array, got ${typeof list}`);
  if (list.length === 0) throw serviceError(grpc.status.INVALID_ARGUMENT, 'a batch needs at least one key');
  if (list.length > MAX_BATCH_KEYS)
    throw serviceError(
      grpc.status.INVALID_ARGUMENT,
      `a batch of ${list.length} keys is over the limit of ${MAX_BATCH_KEYS}; split it into batches of ${MAX_BATCH_KEYS}`,
    );
  return list.map(convert);
}

/** A node's per-key results as KeyResults, one per key asked, in order; `value` takes a result's value, undefined when it holds none. */
function results<R extends { readonly error?: { readonly code: number; readonly details: string } | null }, T>(
  keys: readonly Buffer[],
  got: readonly R[],
  value: (r: R) => T | undefined | null,
): KeyResult<T>[] {
  if (got.length !== keys.length)
    throw serviceError(
      grpc.status.INTERNAL,
      `the node answered a batch of ${keys.length} keys with ${got.length} results`,
    );
  return got.map((r, i) => {
    const key = keys[i]!;
    const v = value(r);
    if (v !== undefined && v !== null) return { key, ok: true, value: v };
    if (r.error) return { key, ok: false, error: serviceError(r.error.code, r.error.details) };
    return {
      key,
      ok: false,
      error: serviceError(
        grpc.status.INTERNAL,
        `the node's result for key ${i + 1} of the batch holds neither a value nor an error`,
      ),
    };
  });
}

/** A call as the client makes it, before it has an id and a deadline. */
type Request = KvCall extends infer T ? (T extends unknown ? Omit<T, 'id' | 'deadline'> : never) : never;

/** A node's answer to a call, on the stream or unary: the reply of the call's op. */
type Answer = Exclude<KvReply, { op: 'error' }>;

/** `a` as the answer to a call of `op`; another kind (a node's bug) is INTERNAL. */
function answerOf<O extends Answer['op']>(a: KvReply, op: O): Extract<Answer, { op: O }> {
  const is = (x: KvReply): x is Extract<Answer, { op: O }> => x.op === op;
  if (!is(a)) throw serviceError(grpc.status.INTERNAL, `the node answered a ${op} with a ${a.op} reply`);
  return a;
}

/** How long a node that answered UNAVAILABLE goes to the back of the order, ms. */
const AVOID_UNAVAILABLE_MS = 1000;

/**
 * Statuses any node would answer the same: a call that got one ends with it at once,
 * even while another attempt is out. Others (DEADLINE_EXCEEDED, INTERNAL, ...) end it only
 * once no attempt is left.
 */
const FINAL = new Set([
  grpc.status.INVALID_ARGUMENT,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.NOT_FOUND,
  grpc.status.ALREADY_EXISTS,
  grpc.status.OUT_OF_RANGE,
  grpc.status.UNAUTHENTICATED,
  grpc.status.PERMISSION_DENIED,
  grpc.status.UNIMPLEMENTED,
  grpc.status.RESOURCE_EXHAUSTED,
]);

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

/** A streamed call's error's trailers, as its unary call would have had them: retry advice, the compare-and-set outcome. */
function errorMetadata(r: Extract<KvReply, { op: 'error' }>): grpc.Metadata | undefined {
  if (r.code !== grpc.status.RESOURCE_EXHAUSTED && r.casNotApplied !== true) return undefined;
  const m = r.code === grpc.status.RESOURCE_EXHAUSTED ? retryAdvice() : new grpc.Metadata();
  if (r.casNotApplied === true) m.set(CAS_OUTCOME, 'not-applied');
  return m;
}

/** Statuses a stream can end with that are the node's answer, not a failure to reach it. */
const ANSWERS = new Set([grpc.status.UNIMPLEMENTED, grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED]);

/**
 * A node's stream codec; `typed`: the stream of counter updates and compare-and-sets, which
 * a node of an earlier release breaks (brokeOnUndecodable: its decoder knows no such call).
 * On a stream of their own that fails only them, each answered UNIMPLEMENTED, as the unary
 * call on such a node is. A compare-and-set's error that proves it did not apply carries
 * the unary call's trailer (casNotApplied).
 */
function kvCodec(address: string, typed: boolean): ClientCodec<KvCall, KvReply> {
  return {
    path: '/ringkv.v1.KeyValue/Stream',
    encode: encodeKvCalls,
    decode: decodeKvReplies,
    size: kvCallSize,
    // A call refused on the stream carries no trailers: a node's RESOURCE_EXHAUSTED there
    // comes from the same limits as its unary one, whose advice it is given.
    failure: (r) => (r.op === 'error' ? serviceError(r.code, r.details, errorMetadata(r)) : undefined),
    // A stream that could not open or broke: the call never got an answer, as a unary call
    // to that node would have failed (UNAVAILABLE: the next node is tried). A refusal
    // (no such method, missing credentials) is the node's answer, and is given as it is.
    unreachable: (why, status) =>
      typed && brokeOnUndecodable(status, why)
        ? serviceError(
            grpc.status.UNIMPLEMENTED,
            `the node at ${address} runs a release without counter updates or compare-and-set on its stream; upgrade it (${why})`,
          )
        : serviceError(ANSWERS.has(status) ? status : grpc.status.UNAVAILABLE, why),
    timeout: () => serviceError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded'),
    tooLarge: (size) => requestTooLarge(size),
  };
}

export class Client {
  readonly #nodes: readonly string[];
  readonly #channels = new Map<string, ServiceClient<'ringkv.v1.KeyValue'>>();
  readonly #streams = new Map<string, BatchedStream<KvCall, KvReply>>();
  /** Counter updates' streams, by address (kvCodec). */
  readonly #typedStreams = new Map<string, BatchedStream<KvCall, KvReply>>();
  readonly #streaming: boolean;
  readonly #deadlineMs: number;
  readonly #tokenAware: boolean;
  readonly #ringRefreshMs: number;
  readonly #adaptive: boolean;
  readonly #hedge: HedgeDelay | undefined;
  readonly #budget: RetryBudget;
  readonly #health: NodeHealth;
  readonly #stallMs: number;
  #router: KeyRouter | undefined;
  #ringFetchedAt = -Infinity;
  #fetching: Promise<void> | undefined;
  #closed = false;
  #next = 0;
  readonly #stats: ClientStats = {
    calls: 0,
    attempts: 0,
    extraCalls: 0,
    hedges: 0,
    hedgesWon: 0,
    hedgesRefused: 0,
    moved: 0,
    failovers: 0,
  };
  /** Request ids: 8 random bytes of this client, then a counter. */
  readonly #idPrefix = randomBytes(8);
  #idCounter = 0;
  readonly #credentials: grpc.ChannelCredentials;
  readonly #metadata: grpc.Metadata | undefined;
  /** What the ring fetches present: the same credentials. */
  readonly #security: ClientSecurity;

  constructor(options: ClientOptions) {
    if (!Array.isArray(options?.nodes) || options.nodes.length === 0)
      throw new TypeError('Client needs nodes: at least one host:port, like ["127.0.0.1:7001"]');
    checkOptions('Client', options, RULES.client);
    this.#nodes = [...options.nodes];
    this.#deadlineMs = options.deadlineMs ?? 5000;
    this.#tokenAware = options.tokenAware ?? true;
    this.#ringRefreshMs = options.ringRefreshMs ?? 5000;
    this.#streaming = options.streaming ?? true;
    this.#adaptive = options.adaptive ?? true;
    this.#hedge = options.hedge === false ? undefined : new HedgeDelay(options.hedge ?? {});
    this.#budget = new RetryBudget(options.budget ?? {});
    this.#stallMs = options.stallMs ?? 250;
    if (!(this.#stallMs > 0)) throw new RangeError(`stallMs must be positive, got ${options.stallMs}`);
    this.#health = new NodeHealth({ stallMs: this.#stallMs, now: () => performance.now() });
    this.#credentials = channelCredentials(options);
    this.#metadata = callMetadata(options);
    this.#security = { credentials: this.#credentials, token: options.token };
  }

  async put(key: string | Uint8Array, value: string | Uint8Array, options?: PutOptions): Promise<{ context: Buffer }> {
    const o = checkOptions('put', options, RULES.put);
    const req = {
      op: 'put' as const,
      key: bytes(key, 'key'),
      value: bytes(value, 'value'),
      context: o.context ? bytes(o.context, 'context') : EMPTY,
      w: o.w ?? 0,
      requestId: this.#requestId(o),
      bucket: o.bucket ?? '',
      ttlMs: o.ttlMs ?? 0,
      ...confirmsOf(o),
    };
    return { context: answerOf(await this.#call(req, o), 'put').context };
  }

  async get(key: string | Uint8Array, options?: GetOptions): Promise<GetResult> {
    const o = checkOptions('get', options, RULES.get);
    const r = answerOf(
      await this.#call({ op: 'get', key: bytes(key, 'key'), r: o.r ?? 0, bucket: o.bucket ?? '' }, o),
      'get',
    );
    return { values: r.values, context: r.context, found: r.found };
  }

  async delete(key: string | Uint8Array, options?: Omit<PutOptions, 'ttlMs'>): Promise<void> {
    const o = checkOptions('delete', options, RULES.delete);
    const req = {
      op: 'delete' as const,
      key: bytes(key, 'key'),
      context: o.context ? bytes(o.context, 'context') : EMPTY,
      w: o.w ?? 0,
      requestId: this.#requestId(o),
      bucket: o.bucket ?? '',
      ...confirmsOf(o),
    };
    answerOf(await this.#call(req, o), 'delete');
  }

  /**
   * Compare-and-set `key` of a bucket of type consistent to `value`: it applies only if the
   * key's version is still the one `o.context` names (unset: only if the key is absent),
   * linearizably (docs/reads-and-writes.md#compare-and-set). Not applied, it answers the
   * key's current value and context. An error leaves the write not applied when
   * casNotApplied(error) says so, else its outcome is unknown: get the key to learn it.
   * The call goes to one node; to another only when the first refused it before it ran
   * (never hedged: two rounds of one write could answer differently).
   */
  putIf(key: string | Uint8Array, value: string | Uint8Array, options?: PutIfOptions): Promise<PutIfResult> {
    const o = checkOptions('putIf', options, RULES.putIf);
    const v = bytes(value, 'value');
    const k = bytes(key, 'key');
    const bucket = o.bucket ?? '';
    return this.#casCall(
      {
        op: 'putIf',
        key: k,
        value: v,
        context: o.context ? bytes(o.context, 'context') : EMPTY,
        bucket,
        requestId: this.#requestId(o),
      },
      o,
    );
  }

  /** Delete `key` of a bucket of type consistent if its version is still the one `context` (from get or putIf) names; as putIf otherwise. */
  deleteIf(
    key: string | Uint8Array,
    context: Uint8Array,
    options?: Omit<PutIfOptions, 'context'>,
  ): Promise<PutIfResult> {
    const o = checkOptions('deleteIf', options, RULES.deleteIf);
    const k = bytes(key, 'key');
    const bucket = o.bucket ?? '';
    return this.#casCall(
      { op: 'deleteIf', key: k, context: bytes(context, 'context'), bucket, requestId: this.#requestId(o) },
      o,
    );
  }

  /**
   * Add `amount` (a safe integer, not 0; negative subtracts) to the counter `key` of a
   * bucket of type counter: the counter's value on the node that applied it, right after.
   * The update carries a request id (default: a new one, as a put's), the same on every
   * attempt, hedge and failover, so it counts once however many nodes it reaches. To retry
   * an update whose outcome you do not know, pass the same `requestId` again.
   */
  async counterUpdate(
    key: string | Uint8Array,
    amount: number | bigint,
    options?: CounterUpdateOptions,
  ): Promise<{ value: bigint }> {
    const o = checkOptions('counterUpdate', options, RULES.update);
    const n = amountOf(amount);
    const k = bytes(key, 'key');
    const bucket = o.bucket ?? '';
    const req = {
      op: 'counterUpdate' as const,
      bucket,
      key: k,
      amount: BigInt(n),
      requestId: this.#requestId(o),
      w: o.w ?? 0,
      ...confirmsOf(o),
    };
    return { value: decimal(answerOf(await this.#call(req, o), 'counterUpdate').value) };
  }

  /** counterUpdate by `amount` (default 1). */
  counterIncrement(
    key: string | Uint8Array,
    amount: number | bigint = 1,
    o: CounterUpdateOptions = {},
  ): Promise<{ value: bigint }> {
    return this.counterUpdate(key, amount, o);
  }

  /** A counter's value, merged from R replicas; found false (and 0) when it was never updated. */
  async counterGet(key: string | Uint8Array, options?: GetOptions): Promise<{ value: bigint; found: boolean }> {
    const o = checkOptions('counterGet', options, RULES.get);
    const k = bytes(key, 'key');
    const bucket = o.bucket ?? '';
    const r = await this.#typedCall(bucket, k, 'read', o, (c, options) =>
      callUnary(c, 'CounterGet', { bucket, key: k, r: o.r ?? 0 }, options, this.#metadata),
    );
    return { value: decimal(r.value), found: r.found };
  }

  /**
   * Reset the counter `key` (a bucket of type counter) to count from 0: a read at R (a
   * counterGet), then a reset of what that read saw, written at W. An increment concurrent
   * with it (one the read did not see) still counts. The reset carries the read's context,
   * so a hedge, a failover or a retry of it takes out that read's increments again and no
   * others. Answers the value taken out; found false (and 0, nothing written) when no
   * replica held the counter.
   */
  async counterReset(
    key: string | Uint8Array,
    options?: CounterResetOptions,
  ): Promise<{ value: bigint; found: boolean }> {
    const o = checkOptions('counterReset', options, RULES.reset);
    const k = bytes(key, 'key');
    const bucket = o.bucket ?? '';
    const deadlineMs = o.deadlineMs ?? this.#deadlineMs;
    const started = Date.now();
    const seen = await this.#typedCall(bucket, k, 'read', { bucket, deadlineMs }, (c, options) =>
      callUnary(c, 'CounterGet', { bucket, key: k, r: o.r ?? 0, withContext: true }, options, this.#metadata),
    );
    if (!seen.found) return { value: 0n, found: false };
    const left = Math.max(1, deadlineMs - (Date.now() - started));
    const r = await this.#typedCall(bucket, k, 'write', { bucket, deadlineMs: left }, (c, options) =>
      callUnary(c, 'CounterReset', { bucket, key: k, w: o.w ?? 0, context: seen.context }, options, this.#metadata),
    );
    return { value: decimal(r.value), found: r.found };
  }

  /**
   * Add and remove elements of the set `key` (a bucket of type set) in one request: 1 to
   * MAX_SET_OPS operations, each element at most once. A remove needs the context a read
   * of that element gave (setContains, setRead): it removes the adds that read saw, not an
   * add made concurrently. With a request id (default: a new one), sent again it is applied once.
   */
  async setUpdate(key: string | Uint8Array, ops: readonly SetOp[], options?: SetUpdateOptions): Promise<void> {
    const o = checkOptions('setUpdate', options, RULES.update);
    if (!Array.isArray(ops) || ops.length === 0 || ops.length > MAX_SET_OPS)
      throw serviceError(
        grpc.status.INVALID_ARGUMENT,
        `a set update carries 1 to ${MAX_SET_OPS} operations, got ${Array.isArray(ops) ? ops.length : typeof ops}; split it into several updates`,
      );
    const wire = ops.map((x) => {
      if (x?.op === 'add') return { add: bytes(x.element, 'element') };
      if (x?.op === 'remove')
        return { remove: { element: bytes(x.element, 'element'), context: bytes(x.context, 'context') } };
      throw new TypeError(
        `a set operation is { op: 'add', element } or { op: 'remove', element, context }, got ${JSON.stringify(x)}`,
      );
    });
    const k = bytes(key, 'key');
    const bucket = o.bucket ?? '';
    const req = { bucket, key: k, ops: wire, requestId: this.#requestId(o), w: o.w ?? 0, ...confirmsOf(o) };
    await this.#typedCall(bucket, k, 'write', o, (c, options) =>
      callUnary(c, 'SetUpdate', req, options, this.#metadata),
    );
  }

  /** Add `elements` (1 to MAX_SET_OPS, distinct) to the set `key`. */
  setAdd(
    key: string | Uint8Array,
    elements: readonly (string | Uint8Array)[],
    o: SetUpdateOptions = {},
  ): Promise<void> {
    return this.setUpdate(
      key,
      elements.map((element) => ({ op: 'add', element })),
      o,
    );
  }

  /** Remove elements of the set `key`, each with its context from a read (setContains, setRead). */
  setRemove(
    key: string | Uint8Array,
    elements: readonly { readonly element: string | Uint8Array; readonly context: Uint8Array }[],
    o: SetUpdateOptions = {},
  ): Promise<void> {
    return this.setUpdate(
      key,
      elements.map(({ element, context }) => ({ op: 'remove', element, context })),
      o,
    );
  }

  /** One page of the set `key`: up to `limit` elements after `after`, in byte order, and the next page's `after`. */
  async setRead(key: string | Uint8Array, options?: SetReadOptions): Promise<SetPage> {
    const o = checkOptions('setRead', options, RULES.page);
    const k = bytes(key, 'key');
    const bucket = o.bucket ?? '';
    const req = {
      bucket,
      key: k,
      after: o.after !== undefined ? bytes(o.after, 'after') : EMPTY,
      limit: o.limit ?? 0,
      r: o.r ?? 0,
    };
    const r = await this.#typedCall(bucket, k, 'read', o, (c, options) =>
      callUnary(c, 'SetRead', req, options, this.#metadata),
    );
    return {
      elements: r.elements.map((e) => ({ element: e.element, context: e.context })),
      next: r.next.length > 0 ? r.next : undefined,
    };
  }

  /**
   * Every element of the set `key`, page by page (setRead; `limit` per page). Not a
   * snapshot: each page is a read of its own, so an element added or removed meanwhile
   * may or may not be seen; none is seen twice.
   */
  async *setElements(
    key: string | Uint8Array,
    options?: Omit<SetReadOptions, 'after'>,
  ): AsyncGenerator<SetElement, void, undefined> {
    const o = checkOptions('setElements', options, RULES.pages);
    let after: Buffer | undefined;
    do {
      const page = await this.setRead(key, { ...o, after });
      yield* page.elements;
      after = page.next;
    } while (after !== undefined);
  }

  /**
   * Drop the set `key`: read it page by page (at R) and remove each page's elements with
   * the contexts that read gave, one update per page. Observed-remove, as setRemove: an add
   * a page's read did not see (one concurrent with the drop) survives it. Not atomic: a
   * reader meanwhile may see part of the set gone. Answers how many elements it removed.
   */
  async setDrop(key: string | Uint8Array, options?: DropOptions): Promise<{ removed: number }> {
    const o = checkOptions('setDrop', options, RULES.drop);
    return dropPages(
      (after) =>
        this.setRead(key, { bucket: o.bucket, deadlineMs: o.deadlineMs, r: o.r, after }).then((p) => ({
          items: p.elements,
          next: p.next,
        })),
      (elements) => this.setRemove(key, elements, { bucket: o.bucket, deadlineMs: o.deadlineMs, w: o.w }),
    );
  }

  /** Whether `element` is in the set `key`, and its context (what a remove of it needs). */
  async setContains(
    key: string | Uint8Array,
    element: string | Uint8Array,
    options?: GetOptions,
  ): Promise<{ present: boolean; context: Buffer }> {
    const o = checkOptions('setContains', options, RULES.get);
    const k = bytes(key, 'key');
    const bucket = o.bucket ?? '';
    const req = { bucket, key: k, element: bytes(element, 'element'), r: o.r ?? 0 };
    const r = await this.#typedCall(bucket, k, 'read', o, (c, options) =>
      callUnary(c, 'SetContains', req, options, this.#metadata),
    );
    return { present: r.present, context: r.context };
  }

  /**
   * Apply field ops to the map `key` (a bucket of type map) in one request: 1 to
   * MAX_MAP_OPS ops (maps.ts MapOp), each field, or element of a set field, at most once,
   * applied together on one replica. With a request id (default: a new one), sent again it
   * is applied once: an increment counts once.
   */
  async mapUpdate(key: string | Uint8Array, ops: readonly MapOp[], options?: SetUpdateOptions): Promise<void> {
    const o = checkOptions('mapUpdate', options, RULES.update);
    const wire = wireMapOps(ops);
    const k = bytes(key, 'key');
    const bucket = o.bucket ?? '';
    const req = { bucket, key: k, ops: wire, requestId: this.#requestId(o), w: o.w ?? 0, ...confirmsOf(o) };
    await this.#typedCall(bucket, k, 'write', o, (c, options) =>
      callUnary(c, 'MapUpdate', req, options, this.#metadata),
    );
  }

  /** One page of the map `key`: up to `limit` live entries after `after` (a page's `next`), in the order of their paths. */
  async mapRead(key: string | Uint8Array, options?: SetReadOptions): Promise<MapPage> {
    const o = checkOptions('mapRead', options, RULES.page);
    const k = bytes(key, 'key');
    const bucket = o.bucket ?? '';
    const req = {
      bucket,
      key: k,
      after: o.after !== undefined ? bytes(o.after, 'after') : EMPTY,
      limit: o.limit ?? 0,
      r: o.r ?? 0,
    };
    const r = await this.#typedCall(bucket, k, 'read', o, (c, options) =>
      callUnary(c, 'MapRead', req, options, this.#metadata),
    );
    return { entries: r.entries.map(entryOf), next: r.next.length > 0 ? r.next : undefined };
  }

  /** Every entry of the map `key`, page by page (mapRead). Not a snapshot, as setElements is not. */
  async *mapEntries(
    key: string | Uint8Array,
    options?: Omit<SetReadOptions, 'after'>,
  ): AsyncGenerator<MapPage['entries'][number], void, undefined> {
    const o = checkOptions('mapEntries', options, RULES.pages);
    let after: Buffer | undefined;
    do {
      const page = await this.mapRead(key, { ...o, after });
      yield* page.entries;
      after = page.next;
    } while (after !== undefined);
  }

  /** The whole map `key` as one nested value (maps.ts MapValue): every page of mapEntries. */
  async mapGet(key: string | Uint8Array, options?: Omit<SetReadOptions, 'after'>): Promise<MapValue> {
    const o = checkOptions('mapGet', options, RULES.pages);
    const entries = [];
    for await (const e of this.mapEntries(key, o)) entries.push(e);
    return assemble(entries);
  }

  /**
   * Drop the map `key`: read it page by page (at R) and remove every entry each page shows
   * (a register cleared, a flag disabled, a counter reset, a set field's element removed),
   * in updates of up to 1,000. Observed-remove, as a remove is: a write a page's read did not see
   * (concurrent with the drop) survives it. Not atomic, as setDrop is not. Answers how many
   * entries it removed.
   */
  async mapDrop(key: string | Uint8Array, options?: DropOptions): Promise<{ removed: number }> {
    const o = checkOptions('mapDrop', options, RULES.drop);
    return dropPages(
      (after) =>
        this.mapRead(key, { bucket: o.bucket, deadlineMs: o.deadlineMs, r: o.r, after }).then((p) => ({
          items: p.entries,
          next: p.next,
        })),
      async (entries) => {
        for (const batch of updateBatches(entries.map(removeOf)))
          await this.mapUpdate(key, batch, { bucket: o.bucket, deadlineMs: o.deadlineMs, w: o.w });
      },
    );
  }

  /**
   * Get up to MAX_BATCH_KEYS keys of one bucket in one call (GetMany): each key's result
   * or error, in the order asked. Not atomic: each key is read as get() would read it, and
   * one failing leaves the others. A malformed batch (no keys, too many, a bad R or
   * bucket) is refused whole; a bad or repeated key gets its own INVALID_ARGUMENT.
   */
  async getMany(keys: readonly (string | Uint8Array)[], options?: GetOptions): Promise<KeyResult<GetResult>[]> {
    const o = checkOptions('getMany', options, RULES.get);
    const ks = checkBatch(keys, (k) => bytes(k, 'key'));
    const bucket = o.bucket ?? '';
    const req = { bucket, keys: ks, r: o.r ?? 0 };
    const res = await this.#batch(
      ks.map((k) => routingKey(bucket, k)),
      o,
      'read',
      (c, options) => callUnary(c, 'GetMany', req, options, this.#metadata),
    );
    return results(
      ks,
      res.results,
      (r) => r.get && { values: r.get.values, context: r.get.context, found: r.get.found },
    );
  }

  /**
   * Put up to MAX_BATCH_KEYS items of one bucket, MAX_BATCH_VALUE_BYTES of values in all,
   * in one call (PutMany): each item's new context or error, in order. Not atomic: each
   * item is a put of its own (with its own request id, so a batch the client sends again
   * to another node is applied once); some may succeed where others fail.
   */
  async putMany(items: readonly PutItem[], options?: PutManyOptions): Promise<KeyResult<{ context: Buffer }>[]> {
    const o = checkOptions('putMany', options, RULES.putMany);
    const its = checkBatch(items, (item) => {
      const it = checkOptions('putMany item', item, RULES.putItem);
      return {
        key: bytes(it.key, 'key'),
        value: bytes(it.value, 'value'),
        context: it.context ? bytes(it.context, 'context') : EMPTY,
        requestId: this.#requestId(it),
        ttlMs: it.ttlMs ?? 0,
      };
    });
    const total = its.reduce((sum, it) => sum + it.value.length, 0);
    if (total > MAX_BATCH_VALUE_BYTES)
      throw serviceError(
        grpc.status.INVALID_ARGUMENT,
        `the items' values add up to ${total} bytes, over the limit of ${MAX_BATCH_VALUE_BYTES} bytes per batch; send them in several batches`,
      );
    const bucket = o.bucket ?? '';
    const req = { bucket, items: its, w: o.w ?? 0, ...confirmsOf(o) };
    const res = await this.#batch(
      its.map((it) => routingKey(bucket, it.key)),
      o,
      'write',
      (c, options) => callUnary(c, 'PutMany', req, options, this.#metadata),
    );
    return results(
      its.map((it) => it.key),
      res.results,
      (r) => r.put && { context: r.put.context },
    );
  }

  /** The addresses a request for `key` (of `bucket`, default the default one) would try, in order (the key's replicas first when the ring is known). */
  candidates(key: string | Uint8Array, bucket = ''): string[] {
    return this.#candidates(routingKey(bucket, bytes(key, 'key')));
  }

  /** The addresses a batch of `keys` (of `bucket`) would try, in order: the nodes that are replicas of the most of them first. */
  batchCandidates(keys: readonly (string | Uint8Array)[], bucket = ''): string[] {
    return this.#batchCandidates(keys.map((k) => routingKey(bucket, bytes(k, 'key'))));
  }

  /** What the client did since it was made: calls, attempts, hedges and the rest (ClientStats). */
  stats(): ClientStats {
    return { ...this.#stats, extraCalls: this.#stats.attempts - this.#stats.calls };
  }

  /** Fetch the ring now (a token-aware client does so by itself; this waits for it). */
  async refreshRing(): Promise<void> {
    this.#ringFetchedAt = -Infinity;
    this.#refreshIfStale();
    await this.#fetching;
  }

  close(): void {
    this.#closed = true;
    for (const streams of [this.#streams, this.#typedStreams]) {
      for (const s of streams.values()) s.close();
      streams.clear();
    }
    for (const c of this.#channels.values()) c.close();
    this.#channels.clear();
  }

  #requestId(o: { readonly requestId?: Uint8Array }): Buffer {
    if (o.requestId !== undefined) return bytes(o.requestId, 'requestId'); // 1 to 64 bytes: checkOptions saw to it
    const id = Buffer.allocUnsafe(16);
    this.#idPrefix.copy(id, 0);
    id.writeDoubleBE(this.#idCounter++, 8);
    return id;
  }

  #channel(address: string): ServiceClient<'ringkv.v1.KeyValue'> {
    let c = this.#channels.get(address);
    if (c === undefined) {
      const KeyValue = serviceClient('ringkv.v1.KeyValue');
      c = new KeyValue(address, this.#credentials, {
        // A get answers up to a key's whole versions (a getMany as much); a put sends one
        // value, a putMany up to MAX_BATCH_VALUE_BYTES with its keys and contexts.
        'grpc.max_receive_message_length': NODE_MAX_MESSAGE_BYTES,
        'grpc.max_send_message_length': NODE_MAX_MESSAGE_BYTES,
      });
      this.#channels.set(address, c);
    }
    return c;
  }

  /** One attempt at `address`: on its stream, or as a unary call. */
  #send(address: string, req: Request, deadline: number): Promise<KvReply> {
    if (!this.#streaming) return this.#unary(address, req, deadline);
    // Counter updates and compare-and-sets on a stream of their own: see kvCodec.
    const typed = req.op === 'counterUpdate' || req.op === 'putIf' || req.op === 'deleteIf';
    const streams = typed ? this.#typedStreams : this.#streams;
    let s = streams.get(address);
    if (s === undefined) {
      s = new BatchedStream(this.#channel(address), kvCodec(address, typed), this.#metadata);
      streams.set(address, s);
    }
    return s.call({ ...req, deadline });
  }

  /** One call as a unary call (Put, Get, Delete), its response as the stream's reply of the same op. */
  async #unary(address: string, req: Request, deadline: number): Promise<KvReply> {
    const c = this.#channel(address);
    const options = { deadline };
    switch (req.op) {
      case 'put': {
        const { op, ...put } = req;
        return { id: 0, op, context: (await callUnary(c, 'put', put, options, this.#metadata)).context };
      }
      case 'get': {
        const { op, ...get } = req;
        const r = await callUnary(c, 'get', get, options, this.#metadata);
        return { id: 0, op, values: r.values, context: r.context, found: r.found };
      }
      case 'delete': {
        const { op, ...del } = req;
        await callUnary(c, 'delete', del, options, this.#metadata);
        return { id: 0, op };
      }
      case 'counterUpdate': {
        const { op, amount, ...update } = req;
        return {
          id: 0,
          op,
          value: (await callUnary(c, 'CounterUpdate', { ...update, amount: Number(amount) }, options, this.#metadata))
            .value,
        };
      }
      case 'putIf': {
        const { op, ...putIf } = req;
        return { id: 0, op, ...(await callUnary(c, 'PutIf', putIf, options, this.#metadata)) };
      }
      case 'deleteIf': {
        const { op, ...deleteIf } = req;
        return { id: 0, op: 'putIf', ...(await callUnary(c, 'DeleteIf', deleteIf, options, this.#metadata)) };
      }
    }
  }

  /**
   * One unary call of a key, with everything #call gives a put or get: the key's
   * replicas first, failover, hedges and moves, one deadline. The data types' calls take
   * this path (they are not on the stream); a write's request id is in `send`'s request,
   * so every attempt carries the same one.
   */
  #typedCall<T>(
    bucket: string,
    key: Buffer,
    kind: 'read' | 'write',
    o: CallOptions,
    send: (c: ServiceClient<'ringkv.v1.KeyValue'>, options: grpc.CallOptions) => Promise<T>,
  ): Promise<T> {
    const deadline = Date.now() + (o.deadlineMs ?? this.#deadlineMs);
    this.#refreshIfStale();
    return this.#attempts(this.#candidates(routingKey(bucket, key)), kind, deadline, this.#hedge, (address) =>
      send(this.#channel(address), { deadline }),
    );
  }

  /**
   * A compare-and-set on the key's candidates one at a time: the next only when a node
   * refused it before it ran (casNotApplied, and UNAVAILABLE or RESOURCE_EXHAUSTED: another
   * node may take it); never hedged or moved, since a second round of one write could
   * answer "not applied" after the first applied it.
   */
  async #casCall(req: Extract<Request, { op: 'putIf' | 'deleteIf' }>, o: CallOptions): Promise<PutIfResult> {
    const deadline = Date.now() + (o.deadlineMs ?? this.#deadlineMs);
    this.#refreshIfStale();
    this.#stats.calls++;
    let last: unknown;
    for (const address of this.#candidates(routingKey(req.bucket, req.key))) {
      if (Date.now() >= deadline) break;
      this.#stats.attempts++;
      if (last !== undefined) this.#stats.failovers++;
      this.#health.sent(address);
      const sentAt = performance.now();
      try {
        const r = answerOf(await this.#send(address, req, deadline), 'putIf');
        this.#health.ended(address, 'answered', performance.now() - sentAt);
        // Applied, the key holds what was written: the value of a putIf, nothing after a deleteIf.
        if (r.applied)
          return {
            applied: true,
            context: r.context,
            found: req.op === 'putIf',
            value: req.op === 'putIf' ? req.value : undefined,
          };
        return { applied: false, context: r.context, found: r.found, value: r.found ? r.value : undefined };
      } catch (e) {
        const err = e as grpc.ServiceError;
        const retry =
          casNotApplied(err) && (err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.RESOURCE_EXHAUSTED);
        this.#health.ended(
          address,
          err.code === grpc.status.DEADLINE_EXCEEDED ? 'timeout' : retry ? 'refused' : 'answered',
          performance.now() - sentAt,
        );
        if (!retry) throw err;
        this.#health.avoid(address, pushbackMs(err) ?? AVOID_UNAVAILABLE_MS);
        last = err;
      }
    }
    if (last !== undefined) throw last;
    const metadata = new grpc.Metadata();
    metadata.set(CAS_OUTCOME, 'not-applied'); // sent nowhere
    throw Object.assign(new Error(NO_NODE_TRIED), {
      code: grpc.status.DEADLINE_EXCEEDED,
      details: NO_NODE_TRIED,
      metadata,
    });
  }

  /**
   * The key's replicas in turn (so load spreads over them), then the given nodes in turn;
   * adaptive, each group ordered by health (NodeHealth.order), else nodes left alone
   * for a while go last. With `leader`, the replicas in preference order instead (those
   * down or unhealthy last): a counter update taken by its issuer makes no extra hop.
   */
  #candidates(key: Buffer, leader = false): string[] {
    const turn = this.#next++;
    const replicas = this.#router?.replicasOf(key) ?? [];
    const down = (a: string): boolean => this.#router?.isDown(a) ?? false;
    let mine: string[] = [];
    if (leader) {
      const up = (a: string): boolean => this.#health.healthy(a) && !down(a);
      mine = [...replicas.filter(up), ...replicas.filter((a) => !up(a))];
    } else for (let i = 0; i < replicas.length; i++) mine.push(replicas[(turn + i) % replicas.length]!);
    const others: string[] = [];
    for (let i = 0; i < this.#nodes.length; i++) {
      const a = this.#nodes[(turn + i) % this.#nodes.length]!;
      if (!mine.includes(a)) others.push(a);
    }
    if (this.#adaptive) {
      return [...(leader ? mine : this.#health.order(mine, down)), ...this.#health.order(others, down)];
    }
    const out = [...mine, ...others];
    const left = (a: string): boolean => !this.#health.healthy(a);
    return [...out.filter((a) => !left(a)), ...out.filter(left)];
  }

  /**
   * A batch's candidates: the nodes that are replicas of the most of its keys first (each
   * of those keys is then read or written on the node that takes the call, one hop fewer),
   * then the rest; within each, in turn and by health as for one key.
   */
  #batchCandidates(keys: readonly Buffer[]): string[] {
    const turn = this.#next++;
    const count = new Map<string, number>();
    for (const k of keys) for (const a of this.#router?.replicasOf(k) ?? []) count.set(a, (count.get(a) ?? 0) + 1);
    const most = Math.max(0, ...count.values());
    const inTurn = (list: readonly string[]): string[] => list.map((_, i) => list[(turn + i) % list.length]!);
    const best = inTurn([...count.keys()].filter((a) => count.get(a) === most));
    const rest = inTurn(
      [...new Set([...[...count.keys()].sort((a, b) => count.get(b)! - count.get(a)!), ...this.#nodes])].filter(
        (a) => !best.includes(a),
      ),
    );
    if (!this.#adaptive) return [...best, ...rest];
    const down = (a: string): boolean => this.#router?.isDown(a) ?? false;
    return [...this.#health.order(best, down), ...this.#health.order(rest, down)];
  }

  /**
   * One batch call (unary) with failover and moves as a single call has, but no hedges: a
   * batch is many calls' work, and its latency is not a single call's, which the hedge
   * delay is measured on.
   */
  #batch<T>(
    keys: readonly Buffer[],
    o: CallOptions,
    kind: 'read' | 'write',
    send: (c: ServiceClient<'ringkv.v1.KeyValue'>, options: grpc.CallOptions) => Promise<T>,
  ): Promise<T> {
    const deadline = Date.now() + (o.deadlineMs ?? this.#deadlineMs);
    this.#refreshIfStale();
    return this.#attempts(
      this.#batchCandidates(keys),
      kind,
      deadline,
      undefined,
      (address) => send(this.#channel(address), { deadline }),
      false,
    );
  }

  /** Start fetching the ring when the last fetch is older than ringRefreshMs; requests do not wait for it. */
  #refreshIfStale(): void {
    if (
      !this.#tokenAware ||
      this.#closed ||
      this.#fetching !== undefined ||
      performance.now() - this.#ringFetchedAt < this.#ringRefreshMs
    )
      return;
    this.#fetching = this.#fetchRing().finally(() => {
      this.#fetching = undefined;
      this.#ringFetchedAt = performance.now();
    });
  }

  /** The ring and members from the first node that answers both (healthy ones first); the old ring stays if none does. */
  async #fetchRing(): Promise<void> {
    const start = this.#next++;
    const inTurn = this.#nodes.map((_, i) => this.#nodes[(start + i) % this.#nodes.length]!);
    for (const address of this.#adaptive ? this.#health.order(inTurn) : inTurn) {
      const admin = new AdminClient(address, Math.min(this.#deadlineMs, 2000), this.#security);
      try {
        const [ring, status] = await Promise.all([admin.ring(), admin.status()]);
        if (!this.#closed) {
          this.#router = new KeyRouter(ring, status);
          this.#health.retain(new Set([...this.#nodes, ...this.#router.addresses()]));
        }
        return;
      } catch {
        // The next node; a cluster still forming has no ring yet.
      } finally {
        admin.close();
      }
    }
  }

  /**
   * One call with one deadline, as a set of attempts: the first to the first candidate;
   * the next candidate when an attempt's node refuses (UNAVAILABLE, retry advice) and no
   * other attempt is out; a hedge to the next candidate once the hedge delay passes with
   * no answer (a token from the budget each); a move to the next candidate when every
   * attempt out is on a node that stopped answering (once). The first answer wins. An
   * error any node would give ends the call at once; others end it when no attempt is
   * left and no candidate, or the deadline passed.
   */
  #call(req: Request, o: CallOptions): Promise<KvReply> {
    const deadline = Date.now() + (o.deadlineMs ?? this.#deadlineMs);
    this.#refreshIfStale();
    // A counter update goes to its issuer first (#candidates).
    const candidates = this.#candidates(routingKey(req.bucket, req.key), req.op === 'counterUpdate');
    return this.#attempts(candidates, req.op === 'get' ? 'read' : 'write', deadline, this.#hedge, (address) =>
      this.#send(address, req, deadline),
    );
  }

  /**
   * The attempts of one call (see #call) at `candidates`, each sent by `send`; hedged after
   * `hedge`'s delay, if any. `timed` false: the answer's time is not the node's latency (a
   * batch's is many calls'), and does not go into its health figures.
   */
  #attempts<T>(
    candidates: readonly string[],
    kind: 'read' | 'write',
    deadline: number,
    hedge: HedgeDelay | undefined,
    send: (address: string) => Promise<T>,
    timed = true,
  ): Promise<T> {
    const stats = this.#stats;
    stats.calls++;
    this.#budget.earn();
    return new Promise((resolve, reject) => {
      let next = 0;
      let done = false;
      let moved = false;
      let timer: NodeJS.Timeout | undefined;
      let last: grpc.ServiceError | undefined;
      const out = new Set<string>();
      /** When the last attempt was sent: a hedge waits its delay from there. */
      let lastLaunch = 0;
      const finish = (e?: grpc.ServiceError, value?: T): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (e !== undefined) reject(e);
        else if (value !== undefined) resolve(value);
      };
      const fail = (): void =>
        finish(
          last ??
            (Object.assign(new Error(NO_NODE_TRIED), {
              code: grpc.status.DEADLINE_EXCEEDED,
              details: NO_NODE_TRIED,
              metadata: new grpc.Metadata(),
            }) as grpc.ServiceError),
        );
      const launch = (why: 'first' | 'hedge' | 'move' | 'failover'): boolean => {
        if (next >= candidates.length || Date.now() >= deadline) return false;
        const address = candidates[next++]!;
        out.add(address);
        stats.attempts++;
        if (why === 'hedge') stats.hedges++;
        else if (why === 'move') stats.moved++;
        else if (why === 'failover') stats.failovers++;
        this.#health.sent(address);
        const sentAt = performance.now();
        lastLaunch = sentAt;
        const ended = (ending: Ending): number => {
          out.delete(address);
          const ms = performance.now() - sentAt;
          this.#health.ended(address, ending, timed ? ms : NaN);
          return ms;
        };
        send(address).then(
          (value) => {
            const ms = ended('answered');
            if (done) return;
            hedge?.add(kind, ms);
            if (why === 'hedge' || why === 'move') stats.hedgesWon++;
            finish(undefined, value);
          },
          (e: grpc.ServiceError) => {
            const pushback = pushbackMs(e);
            const refused = pushback !== undefined || e.code === grpc.status.UNAVAILABLE;
            ended(e.code === grpc.status.DEADLINE_EXCEEDED ? 'timeout' : refused ? 'refused' : 'answered');
            if (refused) {
              this.#health.avoid(address, pushback ?? AVOID_UNAVAILABLE_MS);
              // A node that cannot take it now may have left, or the ring moved: look again soon.
              if (pushback === undefined && this.#router !== undefined) this.#ringFetchedAt = -Infinity;
            }
            if (done) return;
            last = e;
            if (!refused && FINAL.has(e.code)) return finish(e);
            if (out.size > 0) return; // another attempt may still answer
            if (!refused || !launch('failover')) fail();
          },
        );
        return true;
      };
      // Hedges and moves, while no answer came and candidates are left.
      let refusedOnce = false;
      let expectAt = 0;
      const watch = (): void => {
        if (done || next >= candidates.length) return;
        const now = performance.now();
        this.#health.late(now - expectAt);
        if (this.#adaptive && !moved && out.size > 0 && [...out].every((a) => this.#health.unresponsive(a))) {
          moved = true;
          launch('move');
        } else if (hedge !== undefined && now - lastLaunch >= hedge.delay(kind) - 1) {
          if (this.#budget.take()) launch('hedge');
          else if (!refusedOnce) {
            refusedOnce = true;
            stats.hedgesRefused++;
          }
        }
        arm();
      };
      const arm = (): void => {
        if (done || next >= candidates.length) return;
        // Until the hedge is due; when it is overdue (the budget refused it), one delay more.
        const delay = hedge?.delay(kind) ?? Infinity;
        const due = lastLaunch + delay - performance.now();
        const wait = Math.max(1, Math.min(this.#stallMs, due > 0 ? due : delay));
        if (deadline - Date.now() <= wait) return;
        expectAt = performance.now() + wait;
        timer = setTimeout(watch, wait);
      };
      if (!launch('first')) return fail();
      if (hedge !== undefined || this.#adaptive) arm();
    });
  }
}

/** A drop's loop (setDrop, mapDrop): each page read (from the first) has what it showed removed, until the last page; how many were. */
async function dropPages<T>(
  read: (after: Buffer | undefined) => Promise<{ items: readonly T[]; next: Buffer | undefined }>,
  remove: (items: readonly T[]) => Promise<void>,
): Promise<{ removed: number }> {
  let removed = 0;
  let after: Buffer | undefined;
  do {
    const page = await read(after);
    if (page.items.length > 0) await remove(page.items);
    removed += page.items.length;
    after = page.next;
  } while (after !== undefined);
  return { removed };
}
