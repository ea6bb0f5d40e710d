/**
 * The coordinator: any node runs put, get and delete for any key against the key's N
 * replicas (Dynamo §4.5, docs/architecture.md).
 *
 * - Targets come from the current ring snapshot and this node's failure detector: every
 *   primary that is up, and for each one down a fallback that keeps a hint for it
 *   (sloppy quorum, ring/fallbacks.ts).
 * - A write issues its new version on one primary (the dot needs a node that holds the
 *   key's versions: docs/architecture.md), this node when it is one; that primary's record
 *   then goes to every other target in parallel. W acknowledgements answer the client
 *   (once they also show the distinct nodes, zones and primaries the write asks for, if
 *   any: node_confirms, zone_confirms, pw); the rest finish in the background, and a
 *   primary that fails gets a hint here (as Cassandra's coordinator writes hints for
 *   replicas that time out).
 * - A read asks every target and answers after R replies, merged (siblings + one context).
 *   Once all have answered (or the deadline passed), every stale primary is sent the
 *   merged record: read repair. (Fallbacks answer from their hints but are not repaired.)
 *
 * Batches (getMany, putMany) run each key as its own call, all issued in one turn.
 *
 * Owns: the quorum logic, deadlines, the in-flight bound, counters. Must not: touch
 * LevelDB (replicas do, through ReplicaApi) or know the wire (transport/ does).
 */
import { batchBytesProblem, batchCountProblem } from '../common/batch-limits.js';
import { randomBytes } from 'node:crypto';
import {
  DataTypeError,
  MAX_TTL_MS,
  parseSubKey,
  subKey,
  subKeySpan,
  typeOf,
  type BucketProps,
} from '../buckets/index.js';
import type { Ring, Target } from '../ring/index.js';
import {
  MAX_RANGE_BYTES,
  MAX_RANGE_KEYS,
  MAX_SUB_OPS,
  checkAmount,
  checkRequestId,
  checkSubOp,
  checkValueSize,
  userKey,
  counterContext,
  counterReset,
  recordDigest,
  resolveCounterReplies,
  resolvePage,
  resolveReplies,
  type ResolvedSubKey,
  type SubOp,
} from '../storage/index.js';
import { showKey } from '../kinds/kv-errors.js';
import { ReplicationError } from './replication-errors.js';
import { LatencyWindow, RecentLatency } from '../common/latency-window.js';
import type { MapEntry, MapPage } from '../common/map-entries.js';
import {
  CONFIRM_RULES,
  QuorumFailed,
  awaitQuorum,
  awaitsPrimary,
  confirmsOf,
  firstSuccess,
  unmetConfirms,
  type ConfirmWait,
  type Confirms,
  type NodeFacts,
  type Outcome,
  type QuorumCall,
  type QuorumResult,
} from './quorum.js';
import { ReplicaFailure, type ApplyResult, type ReplicaApi, type SubKeyPage } from './replica-api.js';
import { CasProposer, type CasOutcome } from './cas.js';
import { contextVersion } from './paxos.js';

export interface CoordinatorOptions {
  /** This node's id. */
  readonly self: string;
  /** Replicas per key (N), a cluster setting. */
  readonly replicas: number;
  /** Longest a request may take when the client sets no (shorter) deadline, ms. */
  readonly timeoutMs: number;
  /** Client requests this node coordinates at once; more get RK_OVERLOADED. */
  readonly maxInFlight: number;
  readonly maxKeyBytes: number;
  readonly maxValueBytes: number;
  /**
   * A replica down longer than this, ms, gets no more hints from this coordinator
   * (Cassandra's max_hint_window, 3 h): what it misses is left to anti-entropy, and
   * counted. Bounds the hints a long outage piles up. Default 3 h.
   */
  readonly maxHintWindowMs?: number;
  /** Ask every replica of a read for its record, not only R of them (the others for a digest). Default false. */
  readonly fullReads?: boolean;
}

/**
 * Where keys live now (`ring`) and once the topology change in progress is done
 * (`target`; the same Ring when nothing moves). Both immutable snapshots.
 */
export interface Placement {
  readonly ring: Ring;
  readonly target: Ring;
}

export interface CoordinatorDeps {
  /** The current placement, or undefined while no member owns tokens. */
  placement(): Placement | undefined;
  /** This node's failure detector's opinion of a node (itself: true). */
  isUp(id: string): boolean;
  /** How long this node has thought `id` down, ms; 0 when it is up (or, in tests, unknown). */
  downForMs?(id: string): number;
  /** Why this node cannot coordinate now (joining, stopping), or undefined. */
  notServing(): string | undefined;
  /** This node's wall clock, ms since the epoch (default Date.now): a put's expiry is its TTL past it, and a read leaves out what expired by it. */
  now?(): number;
  readonly replicas: ReplicaApi;
  readonly log: {
    debug(o: object, m: string): void;
    info(o: object, m: string): void;
    warn(o: object, m: string): void;
  };
}

export interface CoordinatorCounters {
  puts: number;
  gets: number;
  deletes: number;
  /** Counter increments and decrements (reads of counters and sets count as gets). */
  counterUpdates: number;
  /** Set updates (one request of adds and removes). */
  setUpdates: number;
  /** Map updates (one request of field ops). */
  mapUpdates: number;
  /** Compare-and-set writes (PutIf, DeleteIf); consistent reads count as gets. */
  casWrites: number;
  /** Compare-and-set rounds started again: refused by a higher ballot (contention), or too few answers. */
  casRetries: number;
  /** Compare-and-set writes whose condition failed. */
  casNotApplied: number;
  /** Compare-and-set writes answered with an unknown outcome. */
  casUnknown: number;
  /** Counter deltas a replica could not apply in order (it missed an earlier one): sent the full state instead. */
  counterGaps: number;
  /** Replies a read found stale, and sent the merged record. */
  readRepairs: number;
  readRepairFailures: number;
  /** Digest replies to reads that differed from the data replies: the replica was read in full. */
  digestMismatches: number;
  /** Reads that a stand-in's not-found would have settled, which waited for a primary's reply instead. */
  readsAwaitingPrimary: number;
  /** Writes to a fallback: a hint kept for a down primary. */
  sloppyWrites: number;
  /** Writes to a key whose range is moving: also sent to its future replicas. */
  pendingWrites: number;
  /** Hints this node kept for a primary that failed a write. */
  hintsOnFailure: number;
  /** Writes whose version was also issued on the next primary, the first not answering in time. */
  speculativeApplies: number;
  /** Fallbacks sent a write (with a hint) because a replica was slow to answer and W was not met. */
  speculativeWrites: number;
  /** Writes a replica missed with no hint kept for it: down past the hint window. Left to anti-entropy. */
  missedPastHintWindow: number;
  /** Writes a replica missed with no hint kept for it: the hint store was full, or the hint could not be written. */
  missedNoHint: number;
  unavailable: number;
  timeouts: number;
  overloaded: number;
}

/** A write issued on one replica (#issue): its result, where it was issued, and how the other targets get it. */
interface Issued<T> {
  readonly result: T;
  readonly on: string;
  /** Send the write to `node` (as a hint for `hintFor` when set): true when it changed something there. */
  send(node: string, hintFor: string | undefined, deadline: number): Promise<boolean>;
}

/** What a read's join gives (storage/replies.ts resolves): the joined record, and which replies lacked part of it. */
interface Joined {
  readonly record: Buffer | undefined;
  readonly stale: readonly boolean[];
}
type Join<J extends Joined> = (replies: readonly (Buffer | undefined)[]) => J;

/** A read's reply: the record (undefined where the replica holds none), or only its digest. */
type ReadReply = { readonly record: Buffer | undefined } | { readonly digest: Buffer };

export interface RequestOptions {
  /** Quorum for this request, 1..N; 0 or undefined: a majority of N. */
  readonly quorum?: number;
  /** Absolute deadline (ms since the epoch) the client set, if any. */
  readonly deadline?: number;
  /**
   * A write's request id (empty or undefined: none), the same on every attempt: the write
   * is applied once whatever reaches which coordinator (kinds/versions/versions.ts).
   */
  readonly requestId?: Buffer;
  /**
   * The properties of the key's bucket (the key is its stored key, buckets/bucket.ts):
   * its N, and the R and W of requests that set none. Undefined: the default bucket of a
   * cluster of N = `replicas`.
   */
  readonly bucket?: BucketProps;
  /** A put's time to live, ms; 0 or undefined: its bucket's default TTL (none when 0). */
  readonly ttlMs?: number;
  /** A write's acknowledgements must come from this many distinct nodes (fallbacks included); 0 or undefined: no rule. */
  readonly nodeConfirms?: number;
  /** A write's acknowledgements must come from this many distinct zones; 0 or undefined: no rule. */
  readonly zoneConfirms?: number;
  /** Acknowledgements from primaries (not fallbacks) a write needs among its W (Riak's pw); 0 or undefined: none. */
  readonly pw?: number;
}

/**
 * One op of a set update: add an element, or remove one as a read of it saw it (the
 * context a read returned with the element: a remove supersedes only the adds it saw,
 * so a concurrent add elsewhere survives it: observed-remove).
 */
export type SetOp =
  | { readonly op: 'add'; readonly element: Buffer }
  | { readonly op: 'remove'; readonly element: Buffer; readonly context: Buffer };

/** A page of a set: its elements in byte order, each with the context a remove of it needs. */
export interface SetPage {
  readonly elements: { readonly element: Buffer; readonly context: Buffer }[];
  /** Pass as `after` for the next page; undefined when the set is read to its end. */
  readonly next: Buffer | undefined;
}

/** Most elements one set read returns (storage's page size). */
export const MAX_SET_PAGE = MAX_RANGE_KEYS;

/** A page of a parent's sub-keys as R replicas joined them: the live ones, at most the page's limit. */
interface LivePage {
  readonly entries: ResolvedSubKey[];
  /** The sub-key the next page starts after; undefined at the span's end. */
  readonly next: Buffer | undefined;
}

/** A get's answer: every sibling, one context covering them, and whether the key was found. */
export interface GetResult {
  readonly values: Buffer[];
  readonly context: Buffer;
  readonly found: boolean;
}

/** A key's outcome in a batch: its result, or the error a call of that key alone would have ended with. */
export type KeyOutcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/** One put of a PutMany: its stored key, value, context, and its own request id and TTL. */
export interface BatchItem {
  readonly key: Buffer;
  readonly value: Buffer;
  readonly context: Buffer;
  readonly requestId?: Buffer;
  readonly ttlMs?: number;
}

/**
 * A batch of `count` keys or items, or RK_BAD_ARGUMENT: none, or more than MAX_BATCH_KEYS
 * (the service checks it before locating the keys).
 */
export function checkBatchSize(count: number, what: 'key' | 'item'): void {
  const problem = batchCountProblem(count, what);
  if (problem !== undefined) throw new ReplicationError('RK_BAD_ARGUMENT', problem);
}

/** A speculative call waits at least this long, ms, and this long before replica calls have a p99. */
const SPECULATE_MIN_MS = 10;
const SPECULATE_DEFAULT_MS = 100;

/**
 * A request still waiting after this long, ms, whose pending replica calls are all to
 * peers now down or silent (reachability), gives up then rather than at its deadline;
 * and again every SILENCE_RECHECK_MS.
 */
const SILENCE_CHECK_MS = 1000;
const SILENCE_RECHECK_MS = 250;

/** Cassandra's max_hint_window default: 3 hours. */
export const DEFAULT_HINT_WINDOW_MS = 3 * 60 * 60 * 1000;

export class Coordinator {
  readonly counters: CoordinatorCounters = {
    puts: 0,
    gets: 0,
    deletes: 0,
    counterUpdates: 0,
    setUpdates: 0,
    mapUpdates: 0,
    casWrites: 0,
    casRetries: 0,
    casNotApplied: 0,
    casUnknown: 0,
    counterGaps: 0,
    readRepairs: 0,
    readRepairFailures: 0,
    digestMismatches: 0,
    readsAwaitingPrimary: 0,
    sloppyWrites: 0,
    pendingWrites: 0,
    hintsOnFailure: 0,
    speculativeApplies: 0,
    speculativeWrites: 0,
    missedPastHintWindow: 0,
    missedNoHint: 0,
    unavailable: 0,
    timeouts: 0,
    overloaded: 0,
  };
  /** The p99 of replica calls to peers that answered lately, per call: when to speculate. */
  readonly #replicaLatency = new RecentLatency(0.99);
  /** Each peer's recent answer time, ms (exponentially weighted): which replicas a read asks for data. */
  readonly #peerLatency = new Map<string, number>();
  #inFlight = 0;
  /** How long the requests this node coordinated took, ms (the governor reads it). */
  readonly latencies = new LatencyWindow();

  readonly #cas: CasProposer;

  constructor(
    readonly options: CoordinatorOptions,
    private readonly deps: CoordinatorDeps,
  ) {
    const log = deps.log;
    this.#cas = new CasProposer(
      {
        self: options.self,
        replicas: deps.replicas,
        isUp: (id) => deps.isUp(id),
        now: () => this.#now(),
        random: Math.random,
        commitTimeoutMs: options.timeoutMs,
        log,
      },
      this.counters,
    );
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Compare-and-set commits still out after their writes were answered. */
  get casCommitsInFlight(): number {
    return this.#cas.commitsInFlight;
  }

  async put(key: Buffer, value: Buffer, context: Buffer, o: RequestOptions = {}): Promise<ApplyResult> {
    this.#checkPut(key, value, o.requestId, o.ttlMs);
    return this.#bounded('puts', () => this.#write('put', key, value, context, o));
  }

  async delete(key: Buffer, context: Buffer, o: RequestOptions = {}): Promise<ApplyResult> {
    this.#checkKey(key);
    this.#checkRequestId(o.requestId);
    return this.#bounded('deletes', () => this.#write('delete', key, null, context, o));
  }

  /** A key's siblings after R replies, merged; on a consistent bucket, a linearizable read (consistentGet). */
  async get(key: Buffer, o: RequestOptions = {}): Promise<{ values: Buffer[]; context: Buffer; found: boolean }> {
    this.#checkKey(key);
    if (o.bucket !== undefined && typeOf(o.bucket) === 'consistent') {
      const { value, context } = await this.consistentGet(key, o);
      return { values: value === null ? [] : [value], context, found: value !== null };
    }
    return this.#bounded('gets', () => this.#get(key, o));
  }

  /**
   * Write `value` (null: delete) to the key of a consistent bucket if its version is the
   * one `context` names (empty: if absent), linearizably (replication/cas.ts): applied
   * with the new version's context, or not applied with the current value and context;
   * RK_CAS_UNKNOWN when it may or may not have applied. The request id (one is made when
   * the client sends none) names the write: a retry of one that applied answers applied.
   */
  async putIf(key: Buffer, value: Buffer | null, context: Buffer, o: RequestOptions = {}): Promise<CasOutcome> {
    if (value === null) this.#checkKey(key);
    else this.#checkPut(key, value, o.requestId, undefined);
    if (o.ttlMs) throw new ReplicationError('RK_BAD_ARGUMENT', 'a consistent key does not expire: send no ttl_ms');
    this.#checkConsistentQuorum(o);
    const version = contextVersion(context);
    if (version === undefined)
      throw new ReplicationError(
        'RK_BAD_ARGUMENT',
        `the context of ${context.length} bytes is not a consistent key's: pass the context a Get or PutIf of this key returned, or none to write only if the key is absent`,
      );
    if (value === null && version === null)
      throw new ReplicationError(
        'RK_BAD_ARGUMENT',
        'a conditional delete needs the context of the version it deletes: Get the key and pass its context',
      );
    const id = this.#requestIdOf(o).toString('latin1');
    return this.#bounded('casWrites', () =>
      this.#cas.write(key, this.#casGroups(key, o), { version, value }, id, this.#deadline(o)),
    );
  }

  /** The key of a consistent bucket, linearizably: a Paxos round among a majority of its replicas, finishing any write in progress (replication/cas.ts). */
  async consistentGet(key: Buffer, o: RequestOptions = {}): Promise<{ value: Buffer | null; context: Buffer }> {
    this.#checkKey(key);
    this.#checkConsistentQuorum(o);
    return this.#bounded('gets', () => this.#cas.read(key, this.#casGroups(key, o), this.#deadline(o)));
  }

  #checkConsistentQuorum(o: RequestOptions): void {
    if (o.quorum)
      throw new ReplicationError(
        'RK_BAD_ARGUMENT',
        `a consistent key is read and written by a majority of its replicas always (Paxos quorums must meet); send r and w as 0, not ${o.quorum}`,
      );
  }

  /** A consistent key's replica groups: its primaries now, and those after the move in progress when its range moves (each needs a majority: cas.ts). */
  #casGroups(key: Buffer, o: RequestOptions): string[][] {
    const n = this.#n(o);
    const { ring, target } = this.#placement();
    const before = ring.preferenceList(key, Math.min(n, ring.size));
    if (target === ring) return [before];
    const after = target.preferenceList(key, Math.min(n, target.size));
    if (after.length === before.length && after.every((x) => before.includes(x))) return [before];
    this.counters.pendingWrites++;
    return [before, after];
  }

  /**
   * Get every key of `keys` (stored keys of one bucket, 1 to MAX_BATCH_KEYS) at once: each
   * key's read runs as a get of its own would, and has its own outcome, in the order of
   * `keys` — a key that fails (bad, repeated, unavailable, timed out) leaves the others as
   * they are. Every key's replica calls are issued in the same turn of the event loop, so
   * the replica stream carries them in one message per replica (batched-stream.ts).
   * Refused whole (a ReplicationError) only when the call itself is bad (no keys, too
   * many, a bad R) or the node takes no requests (see #boundedBatch).
   */
  async getMany(keys: readonly Buffer[], o: RequestOptions = {}): Promise<KeyOutcome<GetResult>[]> {
    checkBatchSize(keys.length, 'key');
    this.#quorum(o, 'R');
    return this.#boundedBatch(
      'gets',
      keys.map((key) => () => this.#get(key, o)),
      keys,
      (key) => this.#checkKey(key),
    );
  }

  /**
   * Put every item of `items` (stored keys of one bucket, 1 to MAX_BATCH_KEYS items and
   * MAX_BATCH_VALUE_BYTES of values) at once, each as a put of its own with its own
   * outcome, in the order of `items`: not atomic. `o` holds what every item shares (W,
   * confirmations, deadline, bucket); an item's request id and TTL are its own. As
   * getMany, every item's replica calls leave in one turn: one message per replica for
   * the versions issued, and one per replica for the records sent on.
   */
  async putMany(items: readonly BatchItem[], o: RequestOptions = {}): Promise<KeyOutcome<ApplyResult>[]> {
    checkBatchSize(items.length, 'item');
    const tooLarge = batchBytesProblem(items.reduce((sum, it) => sum + it.value.length, 0));
    if (tooLarge !== undefined) throw new ReplicationError('RK_BAD_ARGUMENT', tooLarge);
    this.#quorum(o, 'W');
    return this.#boundedBatch(
      'puts',
      items.map(
        (it) => () =>
          this.#write('put', it.key, it.value, it.context, {
            ...o,
            requestId: it.requestId,
            ttlMs: it.ttlMs || o.ttlMs,
          }),
      ),
      items.map((it) => it.key),
      (key, i) => this.#checkPut(key, items[i]!.value, items[i]!.requestId, items[i]!.ttlMs || o.ttlMs),
    );
  }

  /**
   * Increment (a negative amount: decrement) the counter at `key` (a counter bucket's
   * stored key). The increment is issued on the key's first primary up, in preference
   * order, so one replica issues a key's increments while it is up and the others take
   * its deltas in order; a replica that missed one refuses the next (KV_COUNTER_GAP) and
   * is sent the full state. The request id (one is made when the client sends none) makes
   * a retry, a hedge or a speculative second issue the same increment: counted once.
   * Answers with the issuing replica's value after the increment.
   */
  async counterUpdate(key: Buffer, amount: number, o: RequestOptions = {}): Promise<{ value: bigint }> {
    this.#checkKey(key);
    const requestId = this.#requestIdOf(o);
    checkAmount(amount);
    return this.#bounded('counterUpdates', () =>
      this.#replicate('counter update', key, o, 'preference', async (primaries, deadline) => {
        const { result, on } = await this.#issue('update', 'counter update', key, primaries, deadline, (node) =>
          this.deps.replicas.call(node, { op: 'counterUpdate', key, amount, requestId }, deadline),
        );
        const send = (node: string, hintFor: string | undefined, dl: number): Promise<boolean> =>
          this.#sendCounter(node, key, result, hintFor, dl);
        return { result: { value: result.value }, on, send };
      }),
    );
  }

  /**
   * The counter at `key`: the join of R replicas' states (0 and not found when none holds
   * it); stale replicas are repaired. `withContext`: with the context a reset of what this
   * read saw needs (empty when not found).
   */
  async counterGet(
    key: Buffer,
    o: RequestOptions = {},
    withContext = false,
  ): Promise<{ value: bigint; found: boolean; context?: Buffer }> {
    this.#checkKey(key);
    return this.#bounded('gets', async () => {
      const r = await this.#read('counter get', key, o, resolveCounterReplies);
      if (!withContext) return { value: r.value, found: r.found };
      return {
        value: r.value,
        found: r.found,
        context: r.record === undefined ? Buffer.alloc(0) : counterContext(key, r.record),
      };
    });
  }

  /**
   * Reset the counter at `key`: take out what a read saw (counter.ts `reset`), written to
   * its replicas as a full state, merged as any counter state is, acknowledged at W. The
   * read is the one `context` came from (a counterGet's, withContext): then the reset is
   * the same however often it is sent. Without one, this node reads the counter at W
   * first (so that, with 2W > N, every increment acknowledged before the reset began is
   * seen), and a reset sent again is one of its own. An increment the read did not see
   * (concurrent with it) survives. Answers with the value taken out (0 and not found,
   * nothing written, when no replica held the counter).
   */
  async counterReset(
    key: Buffer,
    context: Buffer | undefined,
    o: RequestOptions = {},
  ): Promise<{ value: bigint; found: boolean }> {
    this.#checkKey(key);
    const fromContext = context !== undefined && context.length > 0 ? counterReset(key, { context }) : undefined;
    return this.#bounded('counterUpdates', async () => {
      let reset = fromContext;
      if (reset === undefined) {
        const read = await this.#read(
          'counter reset',
          key,
          { ...o, quorum: this.#quorum(o, 'W') },
          resolveCounterReplies,
        );
        if (read.record === undefined) return { value: 0n, found: false };
        reset = counterReset(key, { record: read.record });
      }
      const { record, value } = reset;
      return this.#replicate('counter reset', key, o, 'self', async (primaries, deadline) => {
        const send = (node: string, hintFor: string | undefined, dl: number): Promise<boolean> =>
          this.deps.replicas.call(node, { op: 'merge', key, record, hintFor }, dl);
        const { on } = await this.#issue('update', 'counter reset', key, primaries, deadline, (node) =>
          send(node, undefined, deadline),
        );
        return { result: { value, found: true }, on, send };
      });
    });
  }

  /**
   * Send a counter's increment to replica `node`: its delta, or the full state when the
   * replica missed an earlier delta of the issuer (KV_COUNTER_GAP) or is a fallback (a
   * hint holds the full state: its replica may have missed deltas before this one).
   */
  async #sendCounter(
    node: string,
    key: Buffer,
    written: { readonly record: Buffer; readonly delta: Buffer },
    hintFor: string | undefined,
    dl: number,
  ): Promise<boolean> {
    if (hintFor !== undefined)
      return this.deps.replicas.call(node, { op: 'merge', key, record: written.record, hintFor }, dl);
    try {
      return await this.deps.replicas.call(node, { op: 'merge', key, record: written.delta }, dl);
    } catch (e) {
      if (!(e instanceof ReplicaFailure) || e.code !== 'KV_COUNTER_GAP') throw e;
      this.counters.counterGaps++;
      return this.deps.replicas.call(node, { op: 'merge', key, record: written.record }, dl);
    }
  }

  /**
   * Apply one request's adds and removes to the set at `key` (a set bucket's stored key):
   * each element is a record of its own (a sub-key placed by the set's key), so an update
   * reads and sends only the elements it names, whatever the set's size. A remove needs
   * its element's context (a read's): DT_NO_CONTEXT without one.
   */
  async setUpdate(key: Buffer, ops: readonly SetOp[], o: RequestOptions = {}): Promise<void> {
    const subOp = (op: SetOp): SubOp =>
      op.op === 'add'
        ? { op: 'add', path: { element: op.element } }
        : { op: 'remove', path: { element: op.element }, context: op.context };
    // Anything but an array goes on as it is, for #updateSubKeys to refuse.
    await this.#updateSubKeys(
      'set update',
      'setUpdates',
      key,
      Array.isArray(ops) ? ops.map(subOp) : (ops as unknown as readonly SubOp[]),
      o,
    );
  }

  /**
   * Apply one request's field ops to the map at `key` (a map bucket's stored key): each
   * register, flag and counter field and each element of a set field is a record of its
   * own (a sub-key placed by the map's key), so an update reads and sends only the fields
   * it names. storage's SubOp says what each op does to which field.
   */
  async mapUpdate(key: Buffer, ops: readonly SubOp[], o: RequestOptions = {}): Promise<void> {
    // A path of no fields would name a set's element, which no map holds.
    if (Array.isArray(ops))
      ops.forEach((sub, at) => {
        if ((sub?.path?.fields ?? []).length === 0)
          throw new DataTypeError(
            'DT_BAD_PATH',
            `op ${at} names no field: a map op's path names the field, from the map's top (every step but the last a map)`,
          );
      });
    await this.#updateSubKeys('map update', 'mapUpdates', key, ops, o);
  }

  /**
   * The ops of one request on sub-keys of `key`, issued on one primary in one write batch
   * (all or none there), each written sub-key's record then sent to the other targets (a
   * counter field's as its delta). Each op is checked before any replica call. A request
   * with an increment is issued on the key's first primary up, in preference order, as a
   * counter's is (one replica issues while it is up, so the others take its deltas in
   * order); any other on this node when it is a primary.
   */
  async #updateSubKeys(
    op: string,
    kind: 'setUpdates' | 'mapUpdates',
    key: Buffer,
    ops: readonly SubOp[],
    o: RequestOptions,
  ): Promise<void> {
    this.#checkKey(key);
    const requestId = this.#requestIdOf(o);
    if (!Array.isArray(ops) || ops.length === 0 || ops.length > MAX_SUB_OPS)
      throw new ReplicationError(
        'RK_BAD_ARGUMENT',
        `a ${op} carries 1 to ${MAX_SUB_OPS} ops, got ${Array.isArray(ops) ? ops.length : typeof ops}; split a larger one into several requests`,
      );
    ops.forEach((sub, at) => {
      checkSubOp(sub, at, this.options.maxValueBytes);
      subKey(key, sub.path); // the path's grammar and limits, and a parent that can have sub-keys
    });
    const order = ops.some((sub) => sub.op === 'increment') ? 'preference' : 'self';
    await this.#bounded(kind, () =>
      this.#replicate(op, key, o, order, async (primaries, deadline) => {
        const { result: written, on } = await this.#issue('update', op, key, primaries, deadline, (node) =>
          this.deps.replicas.call(node, { op: 'writeMany', parent: key, ops, requestId }, deadline),
        );
        const send = async (node: string, hintFor: string | undefined, dl: number): Promise<boolean> =>
          (
            await Promise.all(
              written.map((w) =>
                w.delta === undefined
                  ? this.deps.replicas.call(node, { op: 'merge', key: w.key, record: w.record, hintFor }, dl)
                  : this.#sendCounter(node, w.key, { record: w.record, delta: w.delta }, hintFor, dl),
              ),
            )
          ).some(Boolean);
        return { result: undefined, on, send };
      }),
    );
  }

  /**
   * A page of the set at `key`: up to `limit` elements (1 to MAX_SET_PAGE) after the
   * element `after`, each with its context. Read from R primaries (a fallback holds hints
   * of single writes, not a set's span), joined per element; the page ends where the
   * shortest reply's does, so every element up to there is judged on every reply. Stale
   * primaries are sent the join of each element they lacked.
   */
  async setRead(
    key: Buffer,
    page: { readonly after?: Buffer; readonly limit?: number } = {},
    o: RequestOptions = {},
  ): Promise<SetPage> {
    this.#checkKey(key);
    const limit = pageLimit('set', page.limit);
    const after =
      page.after === undefined || page.after.length === 0 ? undefined : subKey(key, { element: page.after });
    if (after === undefined) subKeySpan(key); // the parent's checks (a named bucket's key, its length) without an element
    const read = await this.#bounded('gets', () => this.#readPage('set read', key, after, limit, o));
    const elementOf = (sub: Buffer): Buffer => Buffer.from(parseSubKey(sub).element!);
    return {
      elements: read.entries.flatMap((e) =>
        e.kind === 'versions' ? [{ element: elementOf(e.key), context: e.read.context }] : [],
      ),
      next: read.next === undefined ? undefined : elementOf(read.next),
    };
  }

  /**
   * A page of the map at `key`: up to `limit` live entries (1 to MAX_SET_PAGE) after the
   * token `after` (the previous page's `next`), in the order of their paths; read and
   * joined as a set's page is (setRead), a register last writer wins.
   */
  async mapRead(
    key: Buffer,
    page: { readonly after?: Buffer; readonly limit?: number } = {},
    o: RequestOptions = {},
  ): Promise<MapPage> {
    this.#checkKey(key);
    const limit = pageLimit('map', page.limit);
    const prefix = subKeySpan(key).gte; // also the parent's checks
    let after: Buffer | undefined;
    if (page.after !== undefined && page.after.length > 0) {
      after = Buffer.concat([prefix, page.after]);
      try {
        parseSubKey(after);
      } catch (e) {
        if (!(e instanceof DataTypeError)) throw e;
        throw new ReplicationError(
          'RK_BAD_ARGUMENT',
          `a map read's after is no page token of this map (${e.message}); pass the previous page's next, or nothing for the first page`,
        );
      }
    }
    const read = await this.#bounded('gets', () => this.#readPage('map read', key, after, limit, o));
    // A counter's context is its whole state, as large as its record: a page of many busy
    // counters ends early rather than pass MAX_RANGE_BYTES with records and contexts both.
    const entries: MapEntry[] = [];
    let bytes = 0;
    for (const [i, e] of read.entries.entries()) {
      const entry = mapEntry(e);
      bytes +=
        e.key.length +
        entry.context.length +
        (entry.kind === 'register' ? entry.value.length : entry.kind === 'element' ? entry.element.length : 0);
      if (bytes > MAX_RANGE_BYTES && i > 0) return { entries, next: read.entries[i - 1]!.key.subarray(prefix.length) };
      entries.push(entry);
    }
    return { entries, next: read.next?.subarray(prefix.length) };
  }

  /** Whether `element` is in the set at `key`, with the context a remove of it needs. */
  async setContains(
    key: Buffer,
    element: Buffer,
    o: RequestOptions = {},
  ): Promise<{ present: boolean; context: Buffer }> {
    this.#checkKey(key);
    const sub = subKey(key, { element });
    return this.#bounded('gets', async () => {
      const r = await this.#read(
        'set contains',
        sub,
        o,
        (replies) => resolveReplies(sub, replies, { now: this.#now() }),
        key,
      );
      return { present: r.found, context: r.context };
    });
  }

  /**
   * A batch admitted as one request: refused (RK_OVERLOADED) only when this node already
   * coordinates `maxInFlight` requests, and then holding one place per key it runs until
   * it ends — so a batch is not refused for its size, and while it runs it takes the room
   * its keys take (a node may go over the limit by one batch). Each key is checked
   * (`check`: a ReplicationError) and refused when its stored key came before in the
   * batch; the rest run together, each counted as the single call it stands for.
   */
  async #boundedBatch<T>(
    kind: 'puts' | 'gets',
    runs: readonly (() => Promise<T>)[],
    keys: readonly Buffer[],
    check: (key: Buffer, i: number) => void,
  ): Promise<KeyOutcome<T>[]> {
    const why = this.deps.notServing();
    if (why !== undefined)
      throw new ReplicationError(
        'RK_NOT_READY',
        `this node is not serving requests (${why}); send the request to another node`,
      );
    if (this.#inFlight >= this.options.maxInFlight) {
      this.counters.overloaded++;
      throw new ReplicationError(
        'RK_OVERLOADED',
        `this node already coordinates ${this.#inFlight} requests (the limit); back off and retry the batch, or spread requests over more nodes`,
      );
    }
    this.#inFlight += keys.length;
    const started = performance.now();
    const first = new Map<string, number>();
    try {
      // Every key's replica calls are issued before the first await: one turn, one message per replica.
      const pending = keys.map(async (key, i): Promise<KeyOutcome<T>> => {
        try {
          const seen = first.get(key.toString('latin1'));
          if (seen !== undefined)
            throw new ReplicationError(
              'RK_BAD_ARGUMENT',
              `key ${showKey(key)} appears more than once in this batch: each key may appear once; its first appearance ran, this repeat did not`,
            );
          first.set(key.toString('latin1'), i);
          check(key, i);
        } catch (error) {
          return { ok: false, error };
        }
        this.counters[kind]++;
        try {
          return { ok: true, value: await runs[i]!() };
        } catch (error) {
          this.#countFailure(error);
          return { ok: false, error };
        }
      });
      return await Promise.all(pending);
    } finally {
      this.#inFlight -= keys.length;
      this.latencies.add(performance.now() - started);
    }
  }

  /** A request's failure in the counters: too few replicas, or out of time. */
  #countFailure(e: unknown): void {
    if (!(e instanceof ReplicationError)) return;
    if (e.code === 'RK_UNAVAILABLE') this.counters.unavailable++;
    if (e.code === 'RK_TIMEOUT') this.counters.timeouts++;
  }

  /** A put's checks, before it runs: its key, request id, TTL and value. */
  #checkPut(key: Buffer, value: Buffer, requestId: Buffer | undefined, ttlMs: number | undefined): void {
    this.#checkKey(key);
    this.#checkRequestId(requestId);
    this.#checkTtl(ttlMs);
    if (value.length === 0)
      throw new ReplicationError('RK_BAD_ARGUMENT', 'a value must have at least one byte; to remove a key, delete it');
    checkValueSize(value.length, this.options.maxValueBytes);
  }

  /** `key` is a stored key (buckets/bucket.ts): the store's limits on its user key (KV_KEY_EMPTY, KV_KEY_TOO_LARGE). */
  #checkKey(key: Buffer): void {
    userKey(key, this.options.maxKeyBytes);
  }

  #checkTtl(ttlMs: number | undefined): void {
    if (ttlMs !== undefined && ttlMs !== 0 && (!Number.isSafeInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TTL_MS))
      throw new ReplicationError(
        'RK_BAD_ARGUMENT',
        `ttl_ms must be 1 to ${MAX_TTL_MS} ms (10 years), or 0 for the bucket's default; got ${ttlMs}`,
      );
  }

  /** A put's expiry (ms since the epoch, this node's clock): its TTL, else its bucket's default, past now; undefined: none. */
  #expiresAt(o: RequestOptions): number | undefined {
    const ttl = o.ttlMs || o.bucket?.ttlMs || 0;
    return ttl > 0 ? this.#now() + ttl : undefined;
  }

  #now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  /** A client's request id, when it sent one (empty: none): the store's limits (KV_BAD_REQUEST_ID). */
  #checkRequestId(id: Buffer | undefined): void {
    if (id !== undefined && id.length > 0) checkRequestId(id);
  }

  /** The request's id, checked; a new one when it has none: the same on every issue of the request (a speculative second, the next primary), so it applies once. */
  #requestIdOf(o: RequestOptions): Buffer {
    this.#checkRequestId(o.requestId);
    return o.requestId !== undefined && o.requestId.length > 0 ? o.requestId : randomBytes(16);
  }

  /** The request's N: its bucket's, or the cluster's. */
  #n(o: RequestOptions): number {
    return o.bucket?.n ?? this.options.replicas;
  }

  #quorum(o: RequestOptions, letter: 'R' | 'W'): number {
    const n = this.#n(o);
    const q = o.quorum || (letter === 'R' ? o.bucket?.r : o.bucket?.w);
    if (q === undefined || q === 0) return Math.floor(n / 2) + 1;
    if (!Number.isInteger(q) || q < 1 || q > n)
      throw new ReplicationError(
        'RK_BAD_ARGUMENT',
        `${letter.toLowerCase()} must be 1 to N=${n} (or 0 for a majority, ${Math.floor(n / 2) + 1}), got ${q}`,
      );
    return q;
  }

  /** Run `fn` unless the node refuses it; `kind` counts only what it takes, not what it refuses (a joiner's, say). */
  async #bounded<T>(
    kind: 'puts' | 'gets' | 'deletes' | 'counterUpdates' | 'setUpdates' | 'mapUpdates' | 'casWrites',
    fn: () => Promise<T>,
  ): Promise<T> {
    const why = this.deps.notServing();
    if (why !== undefined)
      throw new ReplicationError(
        'RK_NOT_READY',
        `this node is not serving requests (${why}); send the request to another node`,
      );
    if (this.#inFlight >= this.options.maxInFlight) {
      this.counters.overloaded++;
      throw new ReplicationError(
        'RK_OVERLOADED',
        `this node already coordinates ${this.#inFlight} requests (the limit); back off and retry, or spread requests over more nodes`,
      );
    }
    this.counters[kind]++;
    this.#inFlight++;
    const started = performance.now();
    try {
      return await fn();
    } catch (e) {
      this.#countFailure(e);
      throw e;
    } finally {
      this.#inFlight--;
      this.latencies.add(performance.now() - started);
    }
  }

  /**
   * The request's deadline: the node's timeout, or the client's if sooner — less a margin
   * (10% of the time left, 20–250 ms) so that our answer, which says what happened, reaches
   * the client before its own deadline cuts the call off with a bare DEADLINE_EXCEEDED: a
   * loaded host fires timers and delivers replies tens of ms late.
   */
  #deadline(o: RequestOptions): number {
    const now = Date.now();
    const own = now + this.options.timeoutMs;
    if (o.deadline === undefined || o.deadline >= own) return own;
    const margin = Math.min(250, Math.max(20, (o.deadline - now) * 0.1));
    return Math.max(now, o.deadline - margin);
  }

  #placement(): Placement {
    const p = this.deps.placement();
    if (p === undefined)
      throw new ReplicationError(
        'RK_NOT_READY',
        'no member owns tokens yet: the cluster is still forming; retry shortly',
      );
    return p;
  }

  /** The key's targets now, or RK_UNAVAILABLE when fewer than `needed` are up. */
  #targets(
    op: string,
    key: Buffer,
    n: number,
    needed: number,
    letter: 'R' | 'W',
    { ring, target }: Placement,
  ): Target[] {
    // A ring of fewer members than N places each key on every member (Cassandra: RF > nodes).
    const placed = Math.min(n, ring.size);
    // A node leaving the ring (decommission, removal, replacement) stands in for no one:
    // a hint it took after handing its hints over would leave with it.
    const targets = ring.targets(
      key,
      placed,
      (id) => id === this.options.self || this.deps.isUp(id),
      (id) => target.has(id),
    );
    if (targets.length < needed) {
      const down = ring.preferenceList(key, placed).filter((id) => !targets.some((t) => t.id === id));
      const why =
        placed < n ? `the ring has only ${placed} member(s)` : `down: ${down.join(', ')}; no fallback is up for them`;
      throw new ReplicationError(
        'RK_UNAVAILABLE',
        `${op} of key ${showKey(key)} needs ${letter}=${needed} of N=${n} replicas, but only ${targets.length} ${targets.length === 1 ? 'is' : 'are'} up ` +
          `(${why}). Retry when nodes are back, or use a smaller ${letter.toLowerCase()}.`,
      );
    }
    return targets;
  }

  /**
   * A write's targets, and for a key whose range is moving (a join, leave, removal or
   * replacement in progress) its replica sets now and after the move. The future
   * replicas that are not replicas yet (pending) get the write too, and it must reach W
   * of the current replicas and W of the future ones: reads use the current replicas
   * until the move completes, and once it does, an acknowledged write is on W of the new
   * replica set however the streaming went (Cassandra raises blockFor by the pending
   * count to the same end; counting both sets asks no more than needed).
   */
  #writeTargets(
    op: string,
    key: Buffer,
    n: number,
    w: number,
  ): { targets: Target[]; before: readonly string[]; after: readonly string[] | undefined } {
    const placement = this.#placement();
    const { ring, target } = placement;
    const targets = this.#targets(op, key, n, w, 'W', placement);
    const before = ring.preferenceList(key, Math.min(n, ring.size));
    if (target === ring) return { targets, before, after: undefined };
    const after = target.preferenceList(key, Math.min(n, target.size));
    if (after.length === before.length && after.every((x) => before.includes(x)))
      return { targets, before, after: undefined };
    for (const id of after) {
      if (before.includes(id) || !(id === this.options.self || this.deps.isUp(id))) continue;
      const i = targets.findIndex((t) => t.id === id);
      // Already a fallback for a down replica: its own part in the future set comes first.
      if (i >= 0) targets[i] = { id };
      else targets.push({ id });
    }
    return { targets, before, after };
  }

  async #write(
    op: 'put' | 'delete',
    key: Buffer,
    value: Buffer | null,
    context: Buffer,
    o: RequestOptions,
  ): Promise<ApplyResult> {
    const expiresAt = value === null ? undefined : this.#expiresAt(o);
    return this.#replicate(op, key, o, 'self', async (primaries, deadline) => {
      const { result: applied, on } = await this.#issue('apply', op, key, primaries, deadline, (node) =>
        this.deps.replicas.call(
          node,
          { op: 'apply', key, value, context, requestId: o.requestId, expiresAt },
          deadline,
        ),
      );
      return {
        result: applied,
        on,
        send: (node, hintFor, dl) =>
          this.deps.replicas.call(node, { op: 'merge', key, record: applied.record, hintFor }, dl),
      };
    });
  }

  /**
   * A write to the replicas of `key` (a parent's for a set: its sub-keys are placed by it):
   * `issue` issues it on one of the primaries it is given (in `order`: this node first, or
   * the key's preference order), and its `send` takes it to every other target in
   * parallel. W acknowledgements (and the write's confirmations) answer; the rest finish
   * in the background, a hint kept here for each replica that failed or had no target.
   */
  async #replicate<T>(
    op: string,
    key: Buffer,
    o: RequestOptions,
    order: 'self' | 'preference',
    issue: (primaries: string[], deadline: number) => Promise<Issued<T>>,
  ): Promise<T> {
    const n = this.#n(o);
    const w = this.#quorum(o, 'W');
    const rules = this.#confirmRules(o, n);
    const deadline = this.#deadline(o);
    const { targets, before, after } = this.#writeTargets(op, key, n, w);
    const primaries = targets.filter((t) => t.for === undefined && before.includes(t.id)).map((t) => t.id);
    if (primaries.length === 0)
      throw new ReplicationError(
        'RK_UNAVAILABLE',
        `${op} of key ${showKey(key)}: none of its ${n} replicas is up to issue the new version; retry when one is back`,
      );
    const confirm = rules === undefined ? undefined : this.#confirmable(op, key, rules, targets, before);
    // This node first when it is a replica: one hop fewer.
    if (order === 'self') primaries.sort((a, b) => (a === this.options.self ? -1 : b === this.options.self ? 1 : 0));
    const { result, on, send } = await issue(primaries, deadline);
    const rest = targets.filter((t) => t.id !== on);
    // Which replica set an acknowledgement counts in: 0 now, 1 after the move.
    const groups = (owner: string): number[] =>
      after === undefined ? [0] : [...(before.includes(owner) ? [0] : []), ...(after.includes(owner) ? [1] : [])];
    const calls = rest.map((t) => ({
      node: t.id,
      promise: this.#timed('merge', t.id, send(t.id, t.for, deadline)),
      groups: groups(t.for ?? t.id),
    }));
    this.counters.sloppyWrites += rest.filter((t) => t.for !== undefined).length;
    if (after !== undefined) this.counters.pendingWrites++;
    const applyCounts = groups(on);
    const needed =
      after === undefined
        ? [w - 1]
        : [w - (applyCounts.includes(0) ? 1 : 0), Math.min(w, after.length) - (applyCounts.includes(1) ? 1 : 0)];
    const q = awaitQuorum(calls, needed, deadline, confirm && { ...confirm, acked: [on] });
    if (after === undefined) this.#speculateWrite(key, n, send, rest, calls, q, deadline);
    this.#giveUpOnSilence({ ...q, ended: q.reached });
    // Replicas with no target at all (down, and no fallback was up for them): hinted here too.
    const owners = new Set([on, ...targets.map((t) => t.for ?? t.id)]);
    const missed = [...new Set([...before, ...(after ?? [])])].filter((x) => !owners.has(x));
    void q.all.then((outcomes) => this.#afterWrite(send, rest, outcomes, missed));
    try {
      await q.reached;
    } catch (e) {
      if (!(e instanceof QuorumFailed)) throw e;
      const short =
        confirm &&
        this.#shortOf(confirm.rules, confirm.facts, [on, ...e.outcomes.filter((x) => x.ok).map((x) => x.node)]);
      const err = this.#quorumError(op, key, e, w, 'W', 1, short);
      if (after !== undefined)
        err.message += ` (The key's range is moving to ${after.filter((x) => !before.includes(x)).join(', ')}: a write needs W of its current replicas and W of its future ones.)`;
      throw err;
    }
    return result;
  }

  /**
   * A write's confirmation rules (node_confirms, zone_confirms, pw), checked against N and
   * the zones the cluster's nodes are in; undefined when it asks none.
   */
  #confirmRules(o: RequestOptions, n: number): Confirms | undefined {
    const rules: Confirms = { nodes: o.nodeConfirms ?? 0, zones: o.zoneConfirms ?? 0, primaries: o.pw ?? 0 };
    for (const { rule, name } of CONFIRM_RULES) {
      const v = rules[rule];
      if (!Number.isInteger(v) || v < 0 || v > n)
        throw new ReplicationError('RK_BAD_ARGUMENT', `${name} must be 0 (no rule) to N=${n}, got ${v}`);
    }
    if (rules.nodes === 0 && rules.zones === 0 && rules.primaries === 0) return undefined;
    if (rules.zones > 1) {
      const { ring, target } = this.#placement();
      const zones = [...new Set([...ring.members, ...target.members].map((m) => m.zone))];
      if (rules.zones > zones.length)
        throw new ReplicationError(
          'RK_BAD_ARGUMENT',
          `zone_confirms=${rules.zones} is more than the ${zones.length} zone(s) the cluster's nodes are in (${zones.map(showZone).join(', ')}); ` +
            `ask for at most ${zones.length}, or start nodes in more zones (ringkv node --zone)`,
        );
    }
    return rules;
  }

  /**
   * What the confirmation rules count of a write's targets (a primary: one of `before`,
   * the key's current replicas, acknowledging for itself; a zone: the ring's), or
   * RK_UNAVAILABLE at once, naming the rule, when even every target that is up
   * acknowledging would not meet it.
   */
  #confirmable(
    op: string,
    key: Buffer,
    rules: Confirms,
    targets: readonly Target[],
    before: readonly string[],
  ): Omit<ConfirmWait, 'acked'> {
    const { ring, target } = this.#placement();
    const facts: NodeFacts = {
      zoneOf: (id) => ring.member(id)?.zone ?? target.member(id)?.zone ?? '',
      isPrimary: (id) => before.includes(id) && targets.some((t) => t.id === id && t.for === undefined),
    };
    const ids = targets.map((t) => t.id);
    const short = this.#shortOf(rules, facts, ids, 'up');
    if (short !== undefined) {
      const down = before.filter((id) => !ids.includes(id));
      const stand = targets.filter((t) => t.for !== undefined).map((t) => `${t.id} for ${t.for}`);
      throw new ReplicationError(
        'RK_UNAVAILABLE',
        `${op} of key ${showKey(key)} cannot meet ${short}, even if every target that is up acknowledges. Up: ${describeTargets(targets, facts.zoneOf)}` +
          `${down.length > 0 ? `; primaries down: ${down.join(', ')}` : ''}${stand.length > 0 ? `; fallbacks (not primaries, so not counted by pw): ${stand.join(', ')}` : ''}. ` +
          `Retry when nodes are back, or ask for less${rules.primaries > 0 ? ' (node_confirms counts distinct nodes, fallbacks included)' : ''}.`,
      );
    }
    return { rules, facts };
  }

  /**
   * The rules `nodes` fall short of, as a message names them (`pw=2 (only 1 primary
   * acknowledged)`), or undefined when they meet all.
   */
  #shortOf(rules: Confirms, facts: NodeFacts, nodes: readonly string[], verb = 'acknowledged'): string | undefined {
    const got = confirmsOf(nodes, facts);
    const unmet = unmetConfirms(rules, got);
    if (unmet.length === 0) return undefined;
    const what = {
      primaries: ['primary', 'primaries'],
      nodes: ['distinct node', 'distinct nodes'],
      zones: ['zone', 'zones'],
    };
    return unmet
      .map(
        (r) =>
          `${CONFIRM_RULES.find((x) => x.rule === r)!.name}=${rules[r]} (only ${got[r]} ${what[r][got[r] === 1 ? 0 : 1]} ${verb})`,
      )
      .join(' and ');
  }

  /** How long a replica call to a peer may go unanswered before a speculative one, ms: its kind's recent p99, clamped. */
  #speculateAfter(kind: 'apply' | 'update' | 'merge'): number {
    return Math.min(
      this.options.timeoutMs / 4,
      Math.max(SPECULATE_MIN_MS, this.#replicaLatency.get(kind) ?? SPECULATE_DEFAULT_MS),
    );
  }

  /** `p`, a replica call to `node`; a peer's answer time counts toward its kind's p99 and the peer's own figure. */
  #timed<T>(kind: 'apply' | 'update' | 'merge' | 'read' | 'digest' | 'range', node: string, p: Promise<T>): Promise<T> {
    if (node === this.options.self) return p;
    const started = performance.now();
    return p.then((v) => {
      const ms = performance.now() - started;
      this.#replicaLatency.add(kind, ms);
      const was = this.#peerLatency.get(node);
      this.#peerLatency.set(node, was === undefined ? ms : was + 0.2 * (ms - was));
      return v;
    });
  }

  /**
   * The order a read asks its targets for data: this node first, then the peers that
   * answered fastest lately (Cassandra's dynamic snitch): a slow replica is asked only
   * for a 16-byte digest, which costs its link and its queue least.
   */
  #fastestFirst(targets: readonly Target[]): Target[] {
    const ms = (t: Target): number => (t.id === this.options.self ? -1 : (this.#peerLatency.get(t.id) ?? 0));
    return [...targets].sort((a, b) => ms(a) - ms(b));
  }

  /**
   * Issue the version on the first primary that takes it: the next one if a primary
   * cannot be reached, and the next one as well when a peer has not answered within its
   * p99 (the request id, if any, makes the second the same write; without one, the two
   * versions hold the same bytes, one value to a reader; a counter's update always has
   * one). The first answer wins. `call` issues it on one node.
   */
  #issue<T>(
    kind: 'apply' | 'update',
    op: string,
    key: Buffer,
    primaries: string[],
    deadline: number,
    call: (node: string) => Promise<T>,
  ): Promise<{ result: T; on: string }> {
    const waiting = new Set<string>();
    let done = false;
    let giveUp!: () => void;
    const issued = new Promise<{ result: T; on: string }>((resolve, reject) => {
      let next = 0,
        pending = 0,
        timedOutOnce = false;
      let last: unknown;
      let timer: NodeJS.Timeout | undefined;
      const end = (fn: () => void): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        fn();
      };
      giveUp = () =>
        end(() =>
          reject(
            new ReplicationError(
              'RK_UNAVAILABLE',
              `${op} of key ${showKey(key)}: ${[...waiting].join(', ')} stopped answering this node before issuing the new version, which may still be applied. Retry on another node.`,
            ),
          ),
        );
      const start = (): boolean => {
        if (next >= primaries.length) return false;
        const node = primaries[next++]!;
        pending++;
        waiting.add(node);
        this.#timed(kind, node, call(node)).then(
          (result) => {
            pending--;
            waiting.delete(node);
            end(() => resolve({ result, on: node }));
          },
          (e: unknown) => {
            pending--;
            waiting.delete(node);
            if (done) return;
            // A replica of an earlier release (RK_UNSUPPORTED) or without disk space (KV_DISK_FULL) cannot take the call, and wrote nothing: another may, as if it were unreachable.
            const next =
              unreachable(e) ||
              (e instanceof ReplicaFailure && (e.code === 'RK_UNSUPPORTED' || e.code === 'KV_DISK_FULL'));
            // The replica refused the write itself (bad context, too many siblings, ...): the client's to fix.
            if (!next && !timedOut(e)) return end(() => reject(e));
            last = e;
            timedOutOnce ||= timedOut(e);
            if (next)
              this.deps.log.debug(
                { peer: node, err: describe(e) },
                'replica could not issue the version; trying the next',
              );
            if (pending > 0 || (next && start())) return;
            end(() =>
              reject(
                timedOutOnce
                  ? this.#timeout(op, key, 0, 1)
                  : new ReplicationError(
                      'RK_UNAVAILABLE',
                      `${op} of key ${showKey(key)}: no replica could be reached to issue the new version (last: ${describe(last)}); retry`,
                      { cause: last },
                    ),
              ),
            );
          },
        );
        if (node !== this.options.self && next < primaries.length) {
          clearTimeout(timer);
          timer = setTimeout(() => {
            if (done || pending === 0) return;
            this.counters.speculativeApplies++;
            start();
          }, this.#speculateAfter(kind));
        }
        return true;
      };
      start();
    });
    this.#giveUpOnSilence({ settled: () => done, pending: () => [...waiting], giveUp, ended: issued });
    return issued;
  }

  /**
   * Sloppy quorum for slowness: once the merges have waited their p99 without reaching W
   * (or the write's confirmations), each replica still silent gets a fallback as if it
   * were down — the next node up that is not a target, which keeps the record as a hint
   * for it — and the fallback's acknowledgement counts toward W, node_confirms and
   * zone_confirms (never pw). (Only for keys whose range is not moving.)
   */
  #speculateWrite(
    key: Buffer,
    n: number,
    send: Issued<unknown>['send'],
    rest: Target[],
    calls: { node: string; promise: Promise<boolean> }[],
    q: QuorumResult<boolean>,
    deadline: number,
  ): void {
    const answered = new Set<string>();
    for (const c of calls)
      c.promise.then(
        () => answered.add(c.node),
        () => answered.add(c.node),
      );
    const timer = setTimeout(() => {
      if (q.settled()) return;
      const slow = new Set(rest.filter((t) => t.for === undefined && !answered.has(t.id)).map((t) => t.id));
      if (slow.size === 0) return;
      const { ring } = this.#placement();
      const busy = new Set(rest.map((t) => t.id));
      const up = (id: string): boolean =>
        !slow.has(id) && !busy.has(id) && (id === this.options.self || this.deps.isUp(id));
      for (const t of ring.targets(key, Math.min(n, ring.size), (id) => !slow.has(id) && (busy.has(id) || up(id)))) {
        if (t.for === undefined || !slow.has(t.for) || busy.has(t.id)) continue;
        this.counters.speculativeWrites++;
        rest.push(t);
        q.add({ node: t.id, promise: send(t.id, t.for, deadline) });
      }
    }, this.#speculateAfter('merge'));
    q.reached.then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
  }

  /**
   * Writes' background part: a hint here for every replica that failed the write, and for
   * every one that had no target (down with no fallback up), so that it converges when
   * back (as Cassandra's coordinator does).
   */
  async #afterWrite(
    send: Issued<unknown>['send'],
    rest: { id: string; for?: string }[],
    outcomes: Outcome<boolean>[],
    missed: readonly string[],
  ): Promise<void> {
    const owed: string[] = [...missed];
    for (const o of outcomes) {
      if (o.ok) continue;
      const t = rest.find((x) => x.id === o.node)!;
      this.deps.log.debug({ peer: o.node, err: describe(o.error) }, 'replica write failed');
      owed.push(t.for ?? t.id);
    }
    const window = this.options.maxHintWindowMs ?? DEFAULT_HINT_WINDOW_MS;
    for (const owner of owed) {
      if (owner === this.options.self) continue;
      if ((this.deps.downForMs?.(owner) ?? 0) > window) {
        this.counters.missedPastHintWindow++;
        continue;
      }
      try {
        await send(this.options.self, owner, Date.now() + this.options.timeoutMs);
        this.counters.hintsOnFailure++;
      } catch (e) {
        this.counters.missedNoHint++;
        this.deps.log.warn(
          { peer: owner, err: describe(e) },
          'could not keep a hint for a replica that failed a write; anti-entropy must repair it',
        );
      }
    }
  }

  /** A get: the versions of `key`, joined causally (or last-writer-wins, by its bucket's policy). */
  async #get(key: Buffer, o: RequestOptions): Promise<{ values: Buffer[]; context: Buffer; found: boolean }> {
    const policy = o.bucket?.siblings;
    const r = await this.#read('get', key, o, (replies) => resolveReplies(key, replies, { policy, now: this.#now() }));
    return { values: r.values, context: r.context, found: r.found };
  }

  /**
   * A read of `key` (placed by `placeBy`: a sub-key by its parent) from its targets,
   * answering after R replies joined by `join` (the versions' merge, or a counter's join).
   */
  async #read<J extends Joined>(op: string, key: Buffer, o: RequestOptions, join: Join<J>, placeBy = key): Promise<J> {
    const r = this.#quorum(o, 'R');
    const deadline = this.#deadline(o);
    // Reads use the current replicas until a move completes (see #writeTargets).
    const targets = this.#targets(op, placeBy, this.#n(o), r, 'R', this.#placement());
    // Data from R targets, this node first (no hop), then the fastest; a digest from every
    // other primary (Cassandra's digest reads). Fallbacks hold hints, not copies: always read in full.
    const dataFrom = new Set(
      this.options.fullReads
        ? targets.map((t) => t.id)
        : this.#fastestFirst(targets)
            .slice(0, r)
            .map((t) => t.id),
    );
    const calls = targets.map((t) => ({
      node: t.id,
      promise:
        dataFrom.has(t.id) || t.for !== undefined
          ? this.#timed(
              'read',
              t.id,
              this.deps.replicas.call(t.id, { op: 'read', key, hintFor: t.for }, deadline),
            ).then((record): ReadReply => ({ record }))
          : this.#timed('digest', t.id, this.deps.replicas.call(t.id, { op: 'digest', key }, deadline)).then(
              (digest): ReadReply => ({
                digest,
              }),
            ),
    }));
    const q = awaitQuorum(calls, r, deadline);
    this.#giveUpOnSilence({ ...q, ended: q.reached });
    void q.all.then((outcomes) => this.#repair(key, targets, outcomes, join));
    let replies: Outcome<Buffer | undefined>[];
    try {
      replies = await this.#withData(
        key,
        await this.#withPrimary(await q.reached, calls, targets, deadline),
        deadline,
        join,
      );
      const failed = replies.filter((x) => !x.ok);
      if (failed.length > 0) throw new QuorumFailed(replies, false);
    } catch (e) {
      if (!(e instanceof QuorumFailed)) throw e;
      throw this.#quorumError(op, key, e, r, 'R', 0);
    }
    return join(replies.map((x) => (x.ok ? x.value : undefined)));
  }

  /**
   * `reached`, and the first primary's reply to come when a stand-in's empty reply is
   * among them while a primary may still answer (awaitsPrimary): a stand-in's not-found
   * must not settle a read that a live primary can answer.
   */
  async #withPrimary(
    reached: Outcome<ReadReply>[],
    calls: readonly QuorumCall<ReadReply>[],
    targets: readonly { id: string; for?: string }[],
    deadline: number,
  ): Promise<Outcome<ReadReply>[]> {
    const primary = (node: string): boolean => targets.some((t) => t.id === node && t.for === undefined);
    const empty = new Set(
      reached.flatMap((x) =>
        x.ok && !primary(x.node) && 'record' in x.value && x.value.record === undefined ? [x.node] : [],
      ),
    );
    const pending = calls.filter((c) => primary(c.node) && !reached.some((x) => x.node === c.node));
    if (
      !awaitsPrimary(
        reached.map((x) => x.node),
        empty,
        pending.length,
      )
    )
      return reached;
    this.counters.readsAwaitingPrimary++;
    const first = await firstSuccess(pending, deadline);
    return first === undefined ? reached : [...reached, first];
  }

  /**
   * A page of the sub-keys of `key` from R primaries (a fallback holds hints of single
   * writes, not a parent's span), joined per sub-key; the page ends where the shortest
   * reply's does, so every sub-key up to there is judged on every reply. The live ones, at
   * most `limit`. Stale primaries are sent the join of each sub-key they lacked.
   */
  async #readPage(
    op: string,
    key: Buffer,
    after: Buffer | undefined,
    limit: number,
    o: RequestOptions,
  ): Promise<LivePage> {
    const r = this.#quorum(o, 'R');
    const deadline = this.#deadline(o);
    const targets = this.#targets(op, key, this.#n(o), r, 'R', this.#placement()).filter((t) => t.for === undefined);
    if (targets.length < r)
      throw new ReplicationError(
        'RK_UNAVAILABLE',
        `${op} of key ${showKey(key)} needs R=${r} of its replicas up, but only ${targets.length} ${targets.length === 1 ? 'is' : 'are'} (a stand-in holds hints, not the whole value). Retry when nodes are back, or use a smaller r.`,
      );
    const calls = targets.map((t) => ({
      node: t.id,
      promise: this.#timed(
        'range',
        t.id,
        this.deps.replicas.call(t.id, { op: 'readRange', parent: key, after, limit }, deadline),
      ),
    }));
    const q = awaitQuorum(calls, r, deadline);
    this.#giveUpOnSilence({ ...q, ended: q.reached });
    void q.all.then((outcomes) => this.#repairPage(outcomes));
    let pages: Outcome<SubKeyPage>[];
    try {
      pages = await q.reached;
    } catch (e) {
      if (!(e instanceof QuorumFailed)) throw e;
      throw this.#quorumError(op, key, e, r, 'R', 0);
    }
    const resolved = resolvePage(
      pages.flatMap((x) => (x.ok ? [x.value] : [])),
      { now: this.#now() },
    );
    const entries = resolved.entries.filter((e) => e.read.found);
    // Replicas that disagree may each hold `limit` different sub-keys before the page's end: the page keeps `limit`, and the next starts after them.
    if (entries.length > limit) return { entries: entries.slice(0, limit), next: entries[limit - 1]!.key };
    return { entries, next: resolved.next };
  }

  /** A page read's repair, once every primary answered: each sub-key a page lacked goes to its replica, joined. */
  async #repairPage(outcomes: Outcome<SubKeyPage>[]): Promise<void> {
    const ok = outcomes.flatMap((x) => (x.ok ? [x] : []));
    if (ok.length < 2) return;
    let resolved;
    try {
      resolved = resolvePage(
        ok.map((x) => x.value),
        { now: this.#now() },
      );
    } catch (e) {
      this.deps.log.warn({ err: describe(e) }, 'read repair skipped: a reply did not decode');
      return;
    }
    const sends: Promise<void>[] = [];
    for (const e of resolved.entries) {
      const record = e.read.record;
      if (record === undefined) continue;
      e.read.stale.forEach((stale, i) => stale && sends.push(this.#repairOne(ok[i]!.node, e.key, record)));
    }
    await Promise.all(sends);
  }

  /**
   * Read replies as records: a digest that matches the join of the data replies stands
   * for that join; one that does not (or comes with no data reply) is read in full, before
   * `deadline` (Cassandra's digest mismatch).
   */
  async #withData(
    key: Buffer,
    replies: readonly Outcome<ReadReply>[],
    deadline: number,
    join: Join<Joined>,
  ): Promise<Outcome<Buffer | undefined>[]> {
    const data = replies.flatMap((x) => (x.ok && 'record' in x.value ? [x.value.record] : []));
    const merged = data.length > 0 ? join(data).record : undefined;
    const digest = data.length > 0 ? recordDigest(merged) : undefined;
    return Promise.all(
      replies.map(async (x): Promise<Outcome<Buffer | undefined>> => {
        if (!x.ok) return x;
        if ('record' in x.value) return { node: x.node, ok: true, value: x.value.record };
        if (digest !== undefined && x.value.digest.equals(digest)) return { node: x.node, ok: true, value: merged };
        this.counters.digestMismatches++;
        try {
          return {
            node: x.node,
            ok: true,
            value: await this.deps.replicas.call(x.node, { op: 'read', key }, deadline),
          };
        } catch (error) {
          return { node: x.node, ok: false, error };
        }
      }),
    );
  }

  /**
   * Read repair, once every target answered: send the join of every reply to each replica
   * whose reply lacked part of it (a digest that differs is read in full first).
   */
  async #repair(
    key: Buffer,
    targets: { id: string; for?: string }[],
    outcomes: Outcome<ReadReply>[],
    join: Join<Joined>,
  ): Promise<void> {
    // A replica whose copy is corrupt on disk answered with an error: it is sent the join of the others (its store sets the bad bytes aside).
    const corrupt = outcomes.flatMap((x) =>
      !x.ok &&
      x.error instanceof ReplicaFailure &&
      x.error.code === 'KV_CORRUPT_RECORD' &&
      targets.find((t) => t.id === x.node)?.for === undefined
        ? [x.node]
        : [],
    );
    if (outcomes.filter((x) => x.ok).length < (corrupt.length > 0 ? 1 : 2)) return;
    let resolved, ok;
    try {
      ok = (await this.#withData(key, outcomes, Date.now() + this.options.timeoutMs, join)).filter((x) => x.ok);
      resolved = join(ok.map((x) => x.value));
    } catch (e) {
      this.deps.log.warn({ err: describe(e) }, 'read repair skipped: a reply did not decode');
      return;
    }
    const record = resolved.record;
    if (record === undefined) return;
    await Promise.all([
      ...ok.map(async (x, i) => {
        if (!resolved.stale[i]) return;
        const t = targets.find((y) => y.id === x.node)!;
        // A fallback holds hints of writes, not a replica's copy: repairing it would turn every
        // read during an outage into a hint, filling the hint store with what the replica has.
        if (t.for !== undefined) return;
        await this.#repairOne(t.id, key, record);
      }),
      ...corrupt.map((node) => this.#repairOne(node, key, record)),
    ]);
  }

  /** Send a stale replica the joined record of a key (read repair). */
  async #repairOne(node: string, key: Buffer, record: Buffer): Promise<void> {
    try {
      await this.deps.replicas.call(node, { op: 'merge', key, record }, Date.now() + this.options.timeoutMs);
      this.counters.readRepairs++;
      this.deps.log.debug({ peer: node, key: showKey(key) }, 'read repair: stale replica sent the joined record');
    } catch (e) {
      this.counters.readRepairFailures++;
      this.deps.log.debug({ peer: node, err: describe(e) }, 'read repair failed');
    }
  }

  /**
   * Stop waiting for replicas that stopped answering: once every call still pending is to
   * a peer this node now takes as down (silent, or convicted), no answer is coming before
   * the deadline, and the client is better told UNAVAILABLE now, which sends it to another
   * node, than DEADLINE_EXCEEDED later.
   */
  #giveUpOnSilence(q: {
    settled(): boolean;
    pending(): string[];
    giveUp(): void;
    readonly ended: Promise<unknown>;
  }): void {
    let timer: NodeJS.Timeout;
    const check = (): void => {
      if (q.settled()) return;
      const pending = q.pending();
      if (pending.length > 0 && pending.every((n) => n !== this.options.self && !this.deps.isUp(n))) return q.giveUp();
      timer = setTimeout(check, SILENCE_RECHECK_MS);
    };
    timer = setTimeout(check, SILENCE_CHECK_MS);
    q.ended.then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
  }

  /** `short`: the confirmation rules the acknowledgements fell short of (#shortOf), if any. */
  #quorumError(
    op: string,
    key: Buffer,
    e: QuorumFailed,
    needed: number,
    letter: 'R' | 'W',
    alreadyAcked: number,
    short?: string,
  ): ReplicationError {
    const got = e.succeeded + alreadyAcked;
    const unmet = short === undefined ? '' : `, and not ${short}`;
    if (e.silent.length > 0) {
      const applied =
        letter === 'W' ? ` The write was applied on ${got} replica(s) and may still appear in reads.` : '';
      return new ReplicationError(
        'RK_UNAVAILABLE',
        `${op} of key ${showKey(key)} got ${got} of ${letter}=${needed} replies${unmet}: ${e.silent.join(', ')} stopped answering this node.${applied} Retry on another node.`,
      );
    }
    const failed = e.outcomes.filter((x) => !x.ok) as { node: string; error: unknown }[];
    if (e.timedOut || failed.some((f) => timedOut(f.error))) return this.#timeout(op, key, got, needed, short);
    const why = failed.map((f) => `${f.node}: ${describe(f.error)}`).join('; ');
    const applied = letter === 'W' ? ` The write was applied on ${got} replica(s) and may still appear in reads.` : '';
    return new ReplicationError(
      'RK_UNAVAILABLE',
      `${op} of key ${showKey(key)} got ${got} of ${letter}=${needed} replies${unmet} (${why}).${applied} Retry.`,
    );
  }

  #timeout(op: string, key: Buffer, got: number, needed: number, short?: string): ReplicationError {
    const write = op !== 'get';
    return new ReplicationError(
      'RK_TIMEOUT',
      `${op} of key ${showKey(key)} reached ${got} of the ${needed} replicas it needs${short === undefined ? '' : `, and not ${short},`} before the deadline.` +
        (write
          ? ` The write may have been applied on some replicas and may still appear (as in Dynamo and Cassandra): read the key, then retry with its context.`
          : ' Retry, perhaps with a longer deadline.'),
    );
  }
}

/** A replica that could not be reached at all (as opposed to one that refused the request). */
function unreachable(e: unknown): boolean {
  return e instanceof ReplicaFailure && e.kind === 'unreachable';
}

function timedOut(e: unknown): boolean {
  return e instanceof ReplicaFailure && e.kind === 'timeout';
}

/** A zone as messages show it: the default zone of nodes started without --zone has no name. */
function showZone(zone: string): string {
  return zone === '' ? '(no zone)' : zone;
}

/** Targets with their zones and the primary a fallback stands in for: `n1 (a), n4 (b, for n2)`. */
function describeTargets(targets: readonly Target[], zoneOf: (id: string) => string): string {
  return targets.length === 0
    ? 'none'
    : targets
        .map((t) => `${t.id} (${showZone(zoneOf(t.id))}${t.for === undefined ? '' : `, for ${t.for}`})`)
        .join(', ');
}

function describe(e: unknown): string {
  return (e as Error)?.message ?? String(e);
}

/** A page read's limit (0 or unset: the most), or RK_BAD_ARGUMENT. */
function pageLimit(type: 'set' | 'map', asked: number | undefined): number {
  const limit = asked || MAX_SET_PAGE;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SET_PAGE)
    throw new ReplicationError(
      'RK_BAD_ARGUMENT',
      `a ${type} read's limit must be 1 to ${MAX_SET_PAGE} ${type === 'set' ? 'elements' : 'entries'} (0: ${MAX_SET_PAGE}), got ${limit}; read a larger ${type} in pages`,
    );
  return limit;
}

/** A live sub-key of a map's page as the entry it is, by its path's last field. */
function mapEntry(e: ResolvedSubKey): MapEntry {
  const { fields, element } = parseSubKey(e.key);
  const path = fields.map((f) => ({ name: Buffer.from(f.name), type: f.type }));
  if (e.kind === 'counter') return { kind: 'counter', path, value: e.read.value, context: e.read.context! };
  const { context } = e.read;
  if (element !== undefined) return { kind: 'element', path, element: Buffer.from(element), context };
  return fields.at(-1)!.type === 'register'
    ? { kind: 'register', path, value: e.read.values[0]!, context }
    : { kind: 'flag', path, context };
}
