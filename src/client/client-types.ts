/**
 * The shapes the public `Client` (kv.ts) takes and gives: its options, each call's
 * options and results, the batch and data-type operations, its stats, and the limits a
 * node holds requests to (batch sizes, set pages). Exported from index.ts as they are.
 *
 * Owns: those types and limits. Must not: check them (options.ts does) or call a node.
 */
import type * as grpc from '@grpc/grpc-js';
import type { ClientSecurity } from '../security/credentials.js';
import type { BudgetOptions, HedgeOptions } from './hedging.js';

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

/** Most keys (getMany) or items (putMany) in one batch, and most bytes of values in one putMany, as a node takes them. */
export { MAX_BATCH_KEYS, MAX_BATCH_VALUE_BYTES } from '../common/batch-limits.js';
