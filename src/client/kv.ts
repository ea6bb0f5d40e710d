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
 * Owns: the public API: each call's options checked, its request shaped and its answer
 * given. The path a call then takes is kv-caller.ts's (the ring and candidates in
 * client-routing.ts, the attempts in call-attempts.ts, channels and streams in
 * kv-channels.ts); the data types' calls are datatype-calls.ts's, the request and answer
 * shapes kv-requests.ts's, the public types client-types.ts's. Must not: coordinate (the
 * node that takes a call does).
 */
import { batchBytesProblem } from '../common/batch-limits.js';
import * as grpc from '@grpc/grpc-js';
import { callUnary } from '../transport/protos.js';
import {
  type ClientOptions,
  type ClientStats,
  type CounterResetOptions,
  type CounterUpdateOptions,
  type DropOptions,
  type GetOptions,
  type GetResult,
  type KeyResult,
  type PutIfOptions,
  type PutIfResult,
  type PutItem,
  type PutManyOptions,
  type PutOptions,
  type SetElement,
  type SetOp,
  type SetPage,
  type SetReadOptions,
  type SetUpdateOptions,
} from './client-types.js';
import * as datatypes from './datatype-calls.js';
import { KvCaller } from './kv-caller.js';
import { EMPTY, answerOf, checkBatch, confirmsOf, results, routingKey } from './kv-requests.js';
import { assemble, removeOf, updateBatches, type MapOp, type MapPage, type MapValue } from './maps.js';
import { bytes, serviceError } from './wire-values.js';
import { RULES, checkOptions } from './options.js';

export type { BudgetOptions, HedgeOptions } from './hedging.js';
export type {
  ClientOptions,
  ClientStats,
  CallOptions,
  PutOptions,
  GetOptions,
  GetResult,
  PutIfOptions,
  PutIfResult,
  KeyResult,
  PutItem,
  PutManyOptions,
  CounterUpdateOptions,
  DropOptions,
  CounterResetOptions,
  SetUpdateOptions,
  SetOp,
  SetElement,
  SetReadOptions,
  SetPage,
} from './client-types.js';
export { MAX_BATCH_KEYS, MAX_BATCH_VALUE_BYTES, MAX_SET_OPS, MAX_SET_PAGE } from './client-types.js';
export { MAX_REQUEST_BYTES, NO_NODE_TRIED, casNotApplied, requestTooLarge } from './kv-requests.js';
export { pushbackMs } from './call-attempts.js';

export class Client {
  /** The path each call takes once checked: its deadline, candidates, attempts and channels. */
  readonly #caller: KvCaller;

  constructor(options: ClientOptions) {
    if (!Array.isArray(options?.nodes) || options.nodes.length === 0)
      throw new TypeError('Client needs nodes: at least one host:port, like ["127.0.0.1:7001"]');
    checkOptions('Client', options, RULES.client);
    this.#caller = new KvCaller(options);
  }

  async put(key: string | Uint8Array, value: string | Uint8Array, options?: PutOptions): Promise<{ context: Buffer }> {
    const o = checkOptions('put', options, RULES.put);
    const req = {
      op: 'put' as const,
      key: bytes(key, 'key'),
      value: bytes(value, 'value'),
      context: o.context ? bytes(o.context, 'context') : EMPTY,
      w: o.w ?? 0,
      requestId: this.#caller.requestId(o),
      bucket: o.bucket ?? '',
      ttlMs: o.ttlMs ?? 0,
      ...confirmsOf(o),
    };
    return { context: answerOf(await this.#caller.call(req, o), 'put').context };
  }

  async get(key: string | Uint8Array, options?: GetOptions): Promise<GetResult> {
    const o = checkOptions('get', options, RULES.get);
    const r = answerOf(
      await this.#caller.call({ op: 'get', key: bytes(key, 'key'), r: o.r ?? 0, bucket: o.bucket ?? '' }, o),
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
      requestId: this.#caller.requestId(o),
      bucket: o.bucket ?? '',
      ...confirmsOf(o),
    };
    answerOf(await this.#caller.call(req, o), 'delete');
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
    return this.#caller.casCall(
      {
        op: 'putIf',
        key: k,
        value: v,
        context: o.context ? bytes(o.context, 'context') : EMPTY,
        bucket,
        requestId: this.#caller.requestId(o),
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
    return this.#caller.casCall(
      { op: 'deleteIf', key: k, context: bytes(context, 'context'), bucket, requestId: this.#caller.requestId(o) },
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
    return datatypes.counterUpdate(this.#caller, key, amount, options);
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
    return datatypes.counterGet(this.#caller, key, options);
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
    return datatypes.counterReset(this.#caller, key, options);
  }

  /**
   * Add and remove elements of the set `key` (a bucket of type set) in one request: 1 to
   * MAX_SET_OPS operations, each element at most once. A remove needs the context a read
   * of that element gave (setContains, setRead): it removes the adds that read saw, not an
   * add made concurrently. With a request id (default: a new one), sent again it is applied once.
   */
  async setUpdate(key: string | Uint8Array, ops: readonly SetOp[], options?: SetUpdateOptions): Promise<void> {
    return datatypes.setUpdate(this.#caller, key, ops, options);
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
    return datatypes.setRead(this.#caller, key, options);
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
    return datatypes.setContains(this.#caller, key, element, options);
  }

  /**
   * Apply field ops to the map `key` (a bucket of type map) in one request: 1 to
   * MAX_MAP_OPS ops (maps.ts MapOp), each field, or element of a set field, at most once,
   * applied together on one replica. With a request id (default: a new one), sent again it
   * is applied once: an increment counts once.
   */
  async mapUpdate(key: string | Uint8Array, ops: readonly MapOp[], options?: SetUpdateOptions): Promise<void> {
    return datatypes.mapUpdate(this.#caller, key, ops, options);
  }

  /** One page of the map `key`: up to `limit` live entries after `after` (a page's `next`), in the order of their paths. */
  async mapRead(key: string | Uint8Array, options?: SetReadOptions): Promise<MapPage> {
    return datatypes.mapRead(this.#caller, key, options);
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
    const ks = checkBatch(keys, 'key', (k) => bytes(k, 'key'));
    const bucket = o.bucket ?? '';
    const req = { bucket, keys: ks, r: o.r ?? 0 };
    const res = await this.#caller.batch(
      ks.map((k) => routingKey(bucket, k)),
      o,
      'read',
      (c, options) => callUnary(c, 'GetMany', req, options, this.#caller.metadata),
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
    const its = checkBatch(items, 'item', (item) => {
      const it = checkOptions('putMany item', item, RULES.putItem);
      return {
        key: bytes(it.key, 'key'),
        value: bytes(it.value, 'value'),
        context: it.context ? bytes(it.context, 'context') : EMPTY,
        requestId: this.#caller.requestId(it),
        ttlMs: it.ttlMs ?? 0,
      };
    });
    const tooLarge = batchBytesProblem(its.reduce((sum, it) => sum + it.value.length, 0));
    if (tooLarge !== undefined) throw serviceError(grpc.status.INVALID_ARGUMENT, tooLarge);
    const bucket = o.bucket ?? '';
    const req = { bucket, items: its, w: o.w ?? 0, ...confirmsOf(o) };
    const res = await this.#caller.batch(
      its.map((it) => routingKey(bucket, it.key)),
      o,
      'write',
      (c, options) => callUnary(c, 'PutMany', req, options, this.#caller.metadata),
    );
    return results(
      its.map((it) => it.key),
      res.results,
      (r) => r.put && { context: r.put.context },
    );
  }

  /** The addresses a request for `key` (of `bucket`, default the default one) would try, in order (the key's replicas first when the ring is known). */
  candidates(key: string | Uint8Array, bucket = ''): string[] {
    return this.#caller.routing.candidates(routingKey(bucket, bytes(key, 'key')));
  }

  /** The addresses a batch of `keys` (of `bucket`) would try, in order: the nodes that are replicas of the most of them first. */
  batchCandidates(keys: readonly (string | Uint8Array)[], bucket = ''): string[] {
    return this.#caller.routing.batchCandidates(keys.map((k) => routingKey(bucket, bytes(k, 'key'))));
  }

  /** What the client did since it was made: calls, attempts, hedges and the rest (ClientStats). */
  stats(): ClientStats {
    return this.#caller.stats();
  }

  /** Fetch the ring now (a token-aware client does so by itself; this waits for it). */
  async refreshRing(): Promise<void> {
    await this.#caller.routing.refresh();
  }

  close(): void {
    this.#caller.close();
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
