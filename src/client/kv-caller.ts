/**
 * The path every call of the public Client (kv.ts) takes once its options are checked:
 * a deadline, the ring looked at again when stale, the candidates in order
 * (client-routing.ts), the attempts at them (call-attempts.ts) on the channels and
 * streams (kv-channels.ts); and a request id for each write, the same on every attempt.
 *
 * Owns: the client's settings and parts as its options made them, the request ids, and
 * the counts of what it did (ClientStats). Must not: check a call's options or shape its
 * request (the Client's methods do), or coordinate (the node that takes a call does).
 */
import { randomBytes } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import { callMetadata, channelCredentials, type ClientSecurity } from '../security/credentials.js';
import type { ServiceClient } from '../transport/protos.js';
import type { KvReply } from '../transport/kv-codec.js';
import { casAttempts, runAttempts, type AttemptContext } from './call-attempts.js';
import { ClientRouting } from './client-routing.js';
import type { CallOptions, ClientOptions, ClientStats, PutIfResult } from './client-types.js';
import { NodeHealth } from './health.js';
import { HedgeDelay, RetryBudget } from './hedging.js';
import { KvChannels } from './kv-channels.js';
import { routingKey, type Request } from './kv-requests.js';
import { bytes } from './wire-values.js';

/** The path of one Client's calls: its parts as its options made them, its request ids and its counts. */
export class KvCaller {
  /** The deadline of a call that sets none, ms. */
  readonly deadlineMs: number;
  /** What every call carries: the client's token, if any. */
  readonly metadata: grpc.Metadata | undefined;
  /** Which nodes a call tries, and the ring they come from. */
  readonly routing: ClientRouting;
  readonly #hedge: HedgeDelay | undefined;
  readonly #channels: KvChannels;
  readonly #attempts: AttemptContext;
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

  /** The parts `options` (checked by the Client) make; a RangeError for a hedge, budget or stallMs out of range. */
  constructor(options: ClientOptions) {
    const nodes = [...options.nodes];
    this.deadlineMs = options.deadlineMs ?? 5000;
    const tokenAware = options.tokenAware ?? true;
    const ringRefreshMs = options.ringRefreshMs ?? 5000;
    const streaming = options.streaming ?? true;
    const adaptive = options.adaptive ?? true;
    this.#hedge = options.hedge === false ? undefined : new HedgeDelay(options.hedge ?? {});
    const budget = new RetryBudget(options.budget ?? {});
    const stallMs = options.stallMs ?? 250;
    if (!(stallMs > 0)) throw new RangeError(`stallMs must be positive, got ${options.stallMs}`);
    const health = new NodeHealth({ stallMs, now: () => performance.now() });
    const credentials = channelCredentials(options);
    this.metadata = callMetadata(options);
    // What the ring fetches present: the same credentials.
    const security: ClientSecurity = { credentials, token: options.token };
    const routing = new ClientRouting({
      nodes,
      tokenAware,
      ringRefreshMs,
      adaptive,
      deadlineMs: this.deadlineMs,
      health,
      security,
    });
    this.routing = routing;
    this.#channels = new KvChannels(streaming, credentials, this.metadata);
    this.#attempts = {
      stats: this.#stats,
      budget,
      health,
      adaptive,
      stallMs,
      ringMayHaveMoved: () => routing.ringMayHaveMoved(),
    };
  }

  /** A write's request id: the caller's (1 to 64 bytes: checkOptions saw to it), else this client's prefix and a counter. */
  requestId(o: { readonly requestId?: Uint8Array }): Buffer {
    if (o.requestId !== undefined) return bytes(o.requestId, 'requestId');
    const id = Buffer.allocUnsafe(16);
    this.#idPrefix.copy(id, 0);
    id.writeDoubleBE(this.#idCounter++, 8);
    return id;
  }

  /**
   * One call with one deadline, as a set of attempts (runAttempts): at the key's
   * candidates, hedged, each on the node's stream or as its unary call.
   */
  call(req: Request, o: CallOptions): Promise<KvReply> {
    const deadline = Date.now() + (o.deadlineMs ?? this.deadlineMs);
    this.routing.refreshIfStale();
    // A counter update goes to its issuer first (ClientRouting.candidates).
    const candidates = this.routing.candidates(routingKey(req.bucket, req.key), req.op === 'counterUpdate');
    return runAttempts(
      this.#attempts,
      candidates,
      req.op === 'get' ? 'read' : 'write',
      deadline,
      this.#hedge,
      (address) => this.#channels.send(address, req, deadline),
    );
  }

  /**
   * One unary call of a key, with everything call() gives a put or get: the key's
   * replicas first, failover, hedges and moves, one deadline. The data types' calls take
   * this path (they are not on the stream); a write's request id is in `send`'s request,
   * so every attempt carries the same one.
   */
  typedCall<T>(
    bucket: string,
    key: Buffer,
    kind: 'read' | 'write',
    o: CallOptions,
    send: (c: ServiceClient<'ringkv.v1.KeyValue'>, options: grpc.CallOptions) => Promise<T>,
  ): Promise<T> {
    return this.#unary(() => this.routing.candidates(routingKey(bucket, key)), kind, o, this.#hedge, send, true);
  }

  /**
   * One batch call (unary) of `keys`' routing keys, with failover and moves as a single
   * call has, but no hedges: a batch is many calls' work, and its latency is not a single
   * call's, which the hedge delay is measured on.
   */
  batch<T>(
    keys: readonly Buffer[],
    o: CallOptions,
    kind: 'read' | 'write',
    send: (c: ServiceClient<'ringkv.v1.KeyValue'>, options: grpc.CallOptions) => Promise<T>,
  ): Promise<T> {
    return this.#unary(() => this.routing.batchCandidates(keys), kind, o, undefined, send, false);
  }
  /**
   * Attempts of one unary call, one deadline for all: the ring refreshed if stale, then
   * `candidates` (in that order: a refresh moves the turn); `timed`: its latency feeds the hedge delay.
   */
  #unary<T>(
    candidates: () => string[],
    kind: 'read' | 'write',
    o: CallOptions,
    hedge: HedgeDelay | undefined,
    send: (c: ServiceClient<'ringkv.v1.KeyValue'>, options: grpc.CallOptions) => Promise<T>,
    timed: boolean,
  ): Promise<T> {
    const deadline = Date.now() + (o.deadlineMs ?? this.deadlineMs);
    this.routing.refreshIfStale();
    return runAttempts(
      this.#attempts,
      candidates(),
      kind,
      deadline,
      hedge,
      (address) => send(this.#channels.channel(address), { deadline }),
      timed,
    );
  }

  /** A compare-and-set (casAttempts): at the key's candidates one at a time, never hedged or moved. */
  async casCall(req: Extract<Request, { op: 'putIf' | 'deleteIf' }>, o: CallOptions): Promise<PutIfResult> {
    const deadline = Date.now() + (o.deadlineMs ?? this.deadlineMs);
    this.routing.refreshIfStale();
    return casAttempts(
      this.#attempts,
      () => this.routing.candidates(routingKey(req.bucket, req.key)),
      deadline,
      req,
      (address) => this.#channels.send(address, req, deadline),
    );
  }

  /** What the client did since it was made (ClientStats). */
  stats(): ClientStats {
    return { ...this.#stats, extraCalls: this.#stats.attempts - this.#stats.calls };
  }

  /** No more ring fetches; every stream and channel closed. */
  close(): void {
    this.routing.close();
    this.#channels.close();
  }
}
