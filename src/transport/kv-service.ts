/**
 * The client API (proto/ringkv/v1/kv.proto) on a node: each call goes to the coordinator
 * with the client's deadline; errors become statuses in one place (transport/status.ts).
 * Put, Get and Delete as unary calls, and Stream: the same calls batched on one
 * long-lived stream per client (batched-stream.ts, kv-codec.ts), each answered as its
 * unary call would be. GetMany and PutMany: the keys of one bucket, located here, run by
 * the coordinator as a batch; each key's outcome in its result, as its own call's would be.
 * The data types' calls (CounterUpdate, CounterGet, CounterReset, SetUpdate, SetRead, SetContains,
 * MapUpdate, MapRead; docs/data-types.md): unary, each on a bucket of its type; counter
 * updates also on the stream.
 *
 * Every call is checked against its bucket's type here (BK_WRONG_TYPE): the coordinator
 * and the store take a key's operation as asked, and a put on a counter's key, or a
 * counter update on a kv key, must not reach them.
 *
 * Owns: the request/response mapping. Must not: contain quorum logic (replication/ does)
 * or bucket-type policy (buckets/table.ts checkType says which calls a type takes).
 */
import * as grpc from '@grpc/grpc-js';
import {
  DataTypeError,
  FIELD_TYPES,
  bucketName,
  checkType,
  type BucketProps,
  type BucketTable,
  type BucketType,
  type FieldType,
} from '../buckets/index.js';
import type { MapEntry } from '../common/map-entries.js';
import type { CasOutcome } from '../replication/cas.js';
import {
  checkBatchSize,
  type Coordinator,
  type KeyOutcome,
  type RequestOptions,
  type SetOp,
} from '../replication/coordinator.js';
import type { SubOp } from '../storage/index.js';
import { BatchedServer, passThrough, type ServerCodec } from './batched-stream.js';
import {
  decodeKvCalls,
  encodeKvReplies,
  kvReplySize,
  type DecodedKvCall,
  type KvCall,
  type KvReply,
} from './kv-codec.js';
import type { PutManyRequest__Output } from './generated/ringkv/v1/PutManyRequest.js';
import type { SetOp__Output } from './generated/ringkv/v1/SetOp.js';
import type { MapOp__Output } from './generated/ringkv/v1/MapOp.js';
import type { MapEntry__Output } from './generated/ringkv/v1/MapEntry.js';
import type { MapFieldType__Output } from './generated/ringkv/v1/MapFieldType.js';
import { NODE_MAX_MESSAGE_BYTES, serviceClient, type ServiceHandlers } from './protos.js';
import { CAS_OUTCOME, codeName, toStatus } from './status.js';

type Handlers = ServiceHandlers<'ringkv.v1.KeyValue'>;

const EMPTY = Buffer.alloc(0);
/** A field's tag and length, at most, in bytes. */
const FIELD_BYTES = 8;
/**
 * Most bytes of keys, values and contexts in one GetMany answer: a message a node may send
 * (protos.ts), less room for framing. A key whose values would go over it gets its own
 * RESOURCE_EXHAUSTED (a wire limit, not a domain error: it is not the key's fault), and
 * the keys after it still fit if they are smaller.
 */
const ANSWER_BYTES = NODE_MAX_MESSAGE_BYTES - 64 * 1024;

function deadlineOf<Req, Res>(call: grpc.ServerUnaryCall<Req, Res>): number | undefined {
  const d = call.getDeadline();
  const ms = d instanceof Date ? d.getTime() : d;
  return Number.isFinite(ms) ? ms : undefined;
}

function unary<Req, Res>(fn: (req: Req, deadline: number | undefined) => Promise<Res>) {
  return (call: grpc.ServerUnaryCall<Req, Res>, cb: grpc.sendUnaryData<Res>): void => {
    // Through a promise: a request refused as it is read (a bad bucket) rejects, it does not throw out of the handler.
    Promise.resolve(call.request)
      .then((req) => fn(req, deadlineOf(call)))
      .then(
        (res) => cb(null, res),
        (e: unknown) => cb(toStatus(e)),
      );
  };
}

/**
 * A compare-and-set call: as `unary`, but an error that proves the write did not apply
 * (a refusal before it ran, or a round that could not have been accepted: every coded
 * error but RK_CAS_UNKNOWN and RK_TIMEOUT) carries the trailer CAS_OUTCOME: not-applied.
 * Without it the outcome is unknown (a transport error, a node lost mid-call): a client
 * sends the call to another node only with it (client/kv.ts, docs/reads-and-writes.md).
 */
function casUnary<Req, Res>(fn: (req: Req, deadline: number | undefined) => Promise<Res>) {
  return (call: grpc.ServerUnaryCall<Req, Res>, cb: grpc.sendUnaryData<Res>): void => {
    Promise.resolve(call.request)
      .then((req) => fn(req, deadlineOf(call)))
      .then(
        (res) => cb(null, res),
        (e: unknown) => {
          const status = toStatus(e);
          if (!provesNotApplied(e)) return cb(status);
          const metadata = status.metadata ?? new grpc.Metadata();
          metadata.set(CAS_OUTCOME, 'not-applied');
          cb({ ...status, metadata });
        },
      );
  };
}

/** Domain errors a compare-and-set can end with that do not prove it did not apply. */
const MAYBE_APPLIED = new Set(['RK_CAS_UNKNOWN', 'RK_TIMEOUT', 'RK_INTERNAL']);

/**
 * Whether a compare-and-set's error proves it did not apply (casUnary): a domain error
 * (replication's RK_*, buckets' BK_*, storage's KV_*, which the coordinator and cas.ts raise
 * only before anything was proposed, or when nothing proposed can have been accepted) other
 * than those that may follow a proposal. Anything else — a system error, a bug — is unknown.
 */
export function provesNotApplied(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && /^(RK|BK|KV)_[A-Z0-9_]+$/.test(code) && !MAYBE_APPLIED.has(code);
}

/** Told of each stream call done: its operation, gRPC code name, seconds taken, a get's sibling count, and the bucket it named. */
export type KvObserver = (
  operation: string,
  code: string,
  seconds: number,
  siblings: number | undefined,
  bucket: string,
) => void;

/** The KeyValue service: unary calls (through `wrap`, which times them) and the stream (each call told to `observe`). */
export class KeyValueService {
  readonly #streams = new BatchedServer();
  readonly #codec: ServerCodec<DecodedKvCall, KvReply>;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly buckets: BucketTable,
    observe?: KvObserver,
  ) {
    this.#codec = {
      decode: decodeKvCalls,
      encode: encodeKvReplies,
      size: kvReplySize,
      refuse: (c, draining) =>
        draining
          ? {
              id: c.id,
              op: 'error',
              code: grpc.status.UNAVAILABLE,
              details: 'this node is shutting down; send the request to another node',
            }
          : undefined,
      run: async (c) => {
        const started = performance.now();
        let reply: KvReply;
        try {
          reply = await this.#run(c);
        } catch (e) {
          reply = {
            id: c.id,
            op: 'error',
            ...callError(e),
            ...((c.op === 'putIf' || c.op === 'deleteIf') && provesNotApplied(e) ? { casNotApplied: true } : {}),
          };
        }
        observe?.(
          c.op,
          reply.op === 'error' ? codeName(reply.code) : 'OK',
          (performance.now() - started) / 1000,
          reply.op === 'get' && reply.found ? reply.values.length : undefined,
          c.bucket,
        );
        return reply;
      },
    };
  }

  /** The service's definition, with the stream's messages passed through as bytes (kv-codec.ts encodes them). */
  definition(): grpc.ServiceDefinition {
    const def = serviceClient('ringkv.v1.KeyValue').service;
    return { ...def, Stream: { ...def.Stream, requestDeserialize: passThrough, responseSerialize: passThrough } };
  }

  /** Put, Get and Delete through `wrap`; Stream as it is, on bytes. */
  implementation(
    wrap: (impl: grpc.UntypedServiceImplementation) => grpc.UntypedServiceImplementation,
  ): grpc.UntypedServiceImplementation {
    return {
      ...wrap(kvService(this.coordinator, this.buckets)),
      Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => this.#streams.serve(call, this.#codec),
    };
  }

  /** Answer the calls running on streams, then end them (the server's graceful shutdown waits for them). */
  drain(): void {
    this.#streams.drain();
  }

  async #run(c: DecodedKvCall): Promise<KvReply> {
    if (c.op === 'unsupported')
      return {
        id: c.id,
        op: 'error',
        code: grpc.status.UNIMPLEMENTED,
        details: `call ${c.id} names no operation this node's release knows (none set, or one of a newer release); upgrade this node to the client's release`,
      };
    // An amount past ±(2^53 − 1) stays past it as a number, and the coordinator refuses it (KV_BAD_AMOUNT).
    if (c.op === 'counterUpdate')
      return {
        id: c.id,
        op: 'counterUpdate',
        value: await updateCounter(this.coordinator, this.buckets, c, Number(c.amount), c.deadline),
      };
    if (c.op === 'putIf' || c.op === 'deleteIf')
      return {
        id: c.id,
        op: 'putIf',
        ...(await compareAndSet(this.coordinator, this.buckets, c, c.op === 'putIf' ? c.value : null, c.deadline)),
      };
    const { key, options } = request(this.buckets, c, c.deadline, STREAM_CALL[c.op], c.op === 'get' ? GET_TYPES : 'kv');
    switch (c.op) {
      case 'put':
        return { id: c.id, op: 'put', context: (await this.coordinator.put(key, c.value, c.context, options)).context };
      case 'get': {
        const r = await this.coordinator.get(key, options);
        return { id: c.id, op: 'get', values: r.values, context: r.context, found: r.found };
      }
      case 'delete':
        await this.coordinator.delete(key, c.context, options);
        return { id: c.id, op: 'delete' };
    }
  }
}

/** A streamed call's operation as a refusal names it. */
const STREAM_CALL: Readonly<Record<Exclude<KvCall['op'], 'counterUpdate' | 'putIf' | 'deleteIf'>, string>> = {
  put: 'Put (on Stream)',
  get: 'Get (on Stream)',
  delete: 'Delete (on Stream)',
};

/** What a put, get or delete asks, unary or streamed (absent fields: proto3's defaults). */
interface KvRequest {
  readonly key: Buffer;
  readonly bucket?: string;
  readonly w?: number;
  readonly r?: number;
  readonly requestId?: Buffer;
  readonly ttlMs?: number;
  readonly nodeConfirms?: number;
  readonly zoneConfirms?: number;
  readonly pw?: number;
}

/** The bucket types Get takes: a consistent bucket's is a linearizable read. */
const GET_TYPES: readonly BucketType[] = ['kv', 'consistent'];

/** A request's stored key (its bucket's: buckets/bucket.ts) and the coordinator's options for it; `type` and `call`: the bucket type the call needs, and its name. */
function request(
  buckets: BucketTable,
  r: KvRequest,
  deadline: number | undefined,
  call: string,
  type: BucketType | readonly BucketType[] = 'kv',
): { key: Buffer; options: RequestOptions } {
  const { key, bucket } = buckets.locate(r.bucket ?? '', r.key);
  checkType(buckets, bucketName(r.bucket ?? ''), bucket, type, call);
  return {
    key,
    options: {
      quorum: r.w ?? r.r,
      deadline,
      requestId: r.requestId,
      bucket,
      ttlMs: r.ttlMs,
      nodeConfirms: r.nodeConfirms,
      zoneConfirms: r.zoneConfirms,
      pw: r.pw,
    },
  };
}

/** A streamed call's error, or a batch key's: the status its unary call (of that key alone) would have ended with. */
function callError(e: unknown): { code: number; details: string } {
  const st = toStatus(e);
  return { code: st.code ?? grpc.status.UNKNOWN, details: st.details ?? '' };
}

/**
 * A batch's keys located in `bucket`: its properties (a bad or unknown bucket fails the
 * whole call), and each key's stored key or, for a key the bucket refuses, its error.
 */
function locateAll(
  buckets: BucketTable,
  bucket: string,
  keys: readonly Buffer[],
  call: string,
): { props: BucketProps; located: ({ key: Buffer } | { error: unknown })[] } {
  const props = buckets.bucket(bucket);
  checkType(buckets, bucketName(bucket), props, 'kv', call);
  const located = keys.map((k) => {
    try {
      return { key: buckets.locate(bucket, k).key };
    } catch (error) {
      return { error };
    }
  });
  return { props, located };
}

/**
 * Run `run` on the keys that located, and give every key of the batch its outcome in
 * order: the run's, or its locating error.
 */
async function perKey<T>(
  located: readonly ({ key: Buffer } | { error: unknown })[],
  run: (indices: number[]) => Promise<KeyOutcome<T>[]>,
): Promise<KeyOutcome<T>[]> {
  const indices = located.flatMap((l, i) => ('key' in l ? [i] : []));
  const out: KeyOutcome<T>[] = located.map((l) =>
    'error' in l ? { ok: false, error: l.error } : { ok: false, error: undefined },
  );
  if (indices.length > 0) (await run(indices)).forEach((o, j) => (out[indices[j]!] = o));
  return out;
}

/** A counter update, unary or streamed: the counter's value after it, in decimal. */
async function updateCounter(
  coordinator: Coordinator,
  buckets: BucketTable,
  r: KvRequest,
  amount: number,
  deadline: number | undefined,
): Promise<string> {
  const { key, options } = request(buckets, r, deadline, 'CounterUpdate', 'counter');
  return (await coordinator.counterUpdate(key, amount, options)).value.toString();
}

/** A request's set operations as the coordinator takes them; DT_BAD_OP for one that is neither an add nor a remove. */
function setOps(ops: readonly SetOp__Output[]): SetOp[] {
  return ops.map((o, i) => {
    if (o.add !== undefined && o.add !== null) return { op: 'add', element: o.add };
    if (o.remove !== undefined && o.remove !== null)
      return { op: 'remove', element: o.remove.element, context: o.remove.context };
    throw new DataTypeError(
      'DT_BAD_OP',
      `operation ${i + 1} of ${ops.length} is neither an add nor a remove: set one of them`,
    );
  });
}

const FIELD_TYPE_OF: ReadonlyMap<string, FieldType> = new Map(
  FIELD_TYPES.map((t) => [`MAP_FIELD_TYPE_${t.toUpperCase()}`, t]),
);
const wireFieldType = (t: FieldType): MapFieldType__Output =>
  `MAP_FIELD_TYPE_${t.toUpperCase()}` as MapFieldType__Output;

/** A request's map ops as the coordinator takes them (storage's SubOp); DT_BAD_OP for one that sets no op or enables false, DT_BAD_PATH for a field of no type. */
function mapOps(ops: readonly MapOp__Output[]): SubOp[] {
  return ops.map((o, i) => {
    const at = `operation ${i + 1} of ${ops.length}`;
    const fields = o.path.map((f, j) => {
      const type = FIELD_TYPE_OF.get(f.type);
      if (type === undefined)
        throw new DataTypeError(
          'DT_BAD_PATH',
          `${at}: field ${j + 1} of its path has no type (${f.type}): set one of ${[...FIELD_TYPE_OF.keys()].join(', ')}`,
        );
      return { name: f.name, type };
    });
    // A oneof: the member set (proto-loader leaves the others unset).
    const set = <T>(v: T | null | undefined): v is T => v !== undefined && v !== null;
    if (set(o.assign)) return { op: 'assign', path: { fields }, value: o.assign };
    if (set(o.enable)) {
      if (!o.enable)
        throw new DataTypeError(
          'DT_BAD_OP',
          `${at}: enable is false; disable a flag with a remove carrying the context a read returned`,
        );
      return { op: 'add', path: { fields } };
    }
    if (set(o.increment)) return { op: 'increment', path: { fields }, amount: o.increment };
    if (set(o.add)) return { op: 'add', path: { fields, element: o.add } };
    if (set(o.remove))
      return {
        op: 'remove',
        path: o.remove.element.length > 0 ? { fields, element: o.remove.element } : { fields },
        context: o.remove.context,
      };
    throw new DataTypeError('DT_BAD_OP', `${at} sets no op: set one of assign, enable, increment, add or remove`);
  });
}

/** A map entry as MapRead answers it. */
function wireEntry(e: MapEntry): MapEntry__Output {
  const path = e.path.map((f) => ({ name: f.name, type: wireFieldType(f.type) }));
  switch (e.kind) {
    case 'register':
      return { path, value: e.value, counter: '', element: EMPTY, context: e.context };
    case 'flag':
      return { path, value: EMPTY, counter: '', element: EMPTY, context: e.context };
    case 'counter':
      return { path, value: EMPTY, counter: e.value.toString(), element: EMPTY, context: e.context };
    case 'element':
      return { path, value: EMPTY, counter: '', element: e.element, context: e.context };
  }
}

/** A PutIf (`value`) or DeleteIf (null), unary or streamed, answered as PutIfResponse. */
async function compareAndSet(
  coordinator: Coordinator,
  buckets: BucketTable,
  r: KvRequest & { readonly context: Buffer },
  value: Buffer | null,
  deadline: number | undefined,
): Promise<{ applied: boolean; context: Buffer; found: boolean; value: Buffer }> {
  const { key, options } = request(buckets, r, deadline, value === null ? 'DeleteIf' : 'PutIf', 'consistent');
  const o = await coordinator.putIf(key, value, r.context, options);
  return o.applied
    ? { applied: true, context: o.context, found: false, value: EMPTY }
    : { applied: false, context: o.context, found: o.value !== null, value: o.value ?? EMPTY };
}

/** Put, Get, Delete, GetMany, PutMany and the data types' calls (the stream is KeyValueService's). */
export function kvService(coordinator: Coordinator, buckets: BucketTable): Omit<Handlers, 'Stream'> {
  return {
    ...keyCalls(coordinator, buckets),
    GetMany: getMany(coordinator, buckets),
    PutMany: putMany(coordinator, buckets),
    ...dataTypeCalls(coordinator, buckets),
  };
}

/** The unary calls on one key of a kv bucket (Put, Get, Delete) and of a consistent one (Get, PutIf, DeleteIf). */
function keyCalls(
  coordinator: Coordinator,
  buckets: BucketTable,
): Pick<Handlers, 'Put' | 'Get' | 'Delete' | 'PutIf' | 'DeleteIf'> {
  return {
    Put: unary(async (r, deadline) => {
      const { key, options } = request(buckets, r, deadline, 'Put');
      const { context } = await coordinator.put(key, r.value, r.context, options);
      return { context };
    }),
    Get: unary((r, deadline) => {
      const { key, options } = request(buckets, r, deadline, 'Get', GET_TYPES);
      return coordinator.get(key, options);
    }),
    Delete: unary(async (r, deadline) => {
      const { key, options } = request(buckets, r, deadline, 'Delete');
      await coordinator.delete(key, r.context, options);
      return {};
    }),
    PutIf: casUnary((r, deadline) => compareAndSet(coordinator, buckets, r, r.value, deadline)),
    DeleteIf: casUnary((r, deadline) => compareAndSet(coordinator, buckets, r, null, deadline)),
  };
}

/** GetMany: each key's values, or its error, in order; keys past ANSWER_BYTES get RESOURCE_EXHAUSTED. */
function getMany(coordinator: Coordinator, buckets: BucketTable): Handlers['GetMany'] {
  return unary(async (r, deadline) => {
    checkBatchSize(r.keys.length, 'key');
    const { props, located } = locateAll(buckets, r.bucket, r.keys, 'GetMany');
    const options: RequestOptions = { quorum: r.r, deadline, bucket: props };
    const results = await perKey(located, (ix) =>
      coordinator.getMany(
        ix.map((i) => (located[i] as { key: Buffer }).key),
        options,
      ),
    );
    let left = ANSWER_BYTES;
    return {
      results: results.map((o, i) => {
        const key = r.keys[i]!;
        if (!o.ok) return { key, error: callError(o.error) };
        const size =
          key.length +
          o.value.context.length +
          o.value.values.reduce((sum, v) => sum + v.length + FIELD_BYTES, 3 * FIELD_BYTES);
        if (size > left)
          return {
            key,
            error: {
              code: grpc.status.RESOURCE_EXHAUSTED,
              details: `the batch's answer would be over ${ANSWER_BYTES} bytes with this key's ${size}: get this key alone or in a smaller batch`,
            },
          };
        left -= size;
        return { key, get: o.value };
      }),
    };
  });
}

/** PutMany: each item's new context, or its error, in order. */
function putMany(coordinator: Coordinator, buckets: BucketTable): Handlers['PutMany'] {
  return unary(async (r: PutManyRequest__Output, deadline) => {
    checkBatchSize(r.items.length, 'item');
    const { props, located } = locateAll(
      buckets,
      r.bucket,
      r.items.map((it) => it.key),
      'PutMany',
    );
    const options: RequestOptions = {
      quorum: r.w,
      deadline,
      bucket: props,
      nodeConfirms: r.nodeConfirms,
      zoneConfirms: r.zoneConfirms,
      pw: r.pw,
    };
    const results = await perKey(located, (ix) =>
      coordinator.putMany(
        ix.map((i) => {
          const it = r.items[i]!;
          return {
            key: (located[i] as { key: Buffer }).key,
            value: it.value,
            context: it.context,
            requestId: it.requestId.length > 0 ? it.requestId : undefined,
            ttlMs: it.ttlMs,
          };
        }),
        options,
      ),
    );
    return {
      results: results.map((o, i) => ({
        key: r.items[i]!.key,
        ...(o.ok ? { put: { context: o.value.context } } : { error: callError(o.error) }),
      })),
    };
  });
}

/** A SetRead's or MapRead's page as the coordinator takes it (proto3's empty `after` and 0 `limit`: from the first element, and the default page). */
function pageOf(r: { readonly after: Buffer; readonly limit: number }): { after?: Buffer; limit?: number } {
  return { after: r.after.length > 0 ? r.after : undefined, limit: r.limit === 0 ? undefined : r.limit };
}

/** The data types' unary calls, each on a bucket of its type: counters, sets and maps. */
function dataTypeCalls(
  coordinator: Coordinator,
  buckets: BucketTable,
): Pick<
  Handlers,
  'CounterUpdate' | 'CounterGet' | 'CounterReset' | 'SetUpdate' | 'SetRead' | 'SetContains' | 'MapUpdate' | 'MapRead'
> {
  return {
    CounterUpdate: unary(async (r, deadline) => ({
      value: await updateCounter(coordinator, buckets, r, r.amount, deadline),
    })),
    CounterGet: unary(async (r, deadline) => {
      const { key, options } = request(buckets, r, deadline, 'CounterGet', 'counter');
      const { value, found, context } = await coordinator.counterGet(key, options, r.withContext);
      return { value: value.toString(), found, context: context ?? EMPTY };
    }),
    CounterReset: unary(async (r, deadline) => {
      const { key, options } = request(buckets, r, deadline, 'CounterReset', 'counter');
      const { value, found } = await coordinator.counterReset(key, r.context, options);
      return { value: value.toString(), found };
    }),
    SetUpdate: unary(async (r, deadline) => {
      const { key, options } = request(buckets, r, deadline, 'SetUpdate', 'set');
      await coordinator.setUpdate(key, setOps(r.ops), options);
      return {};
    }),
    SetRead: unary(async (r, deadline) => {
      const { key, options } = request(buckets, r, deadline, 'SetRead', 'set');
      const page = await coordinator.setRead(key, pageOf(r), options);
      return { elements: page.elements, next: page.next ?? EMPTY };
    }),
    SetContains: unary(async (r, deadline) => {
      const { key, options } = request(buckets, r, deadline, 'SetContains', 'set');
      return coordinator.setContains(key, r.element, options);
    }),
    MapUpdate: unary(async (r, deadline) => {
      const { key, options } = request(buckets, r, deadline, 'MapUpdate', 'map');
      await coordinator.mapUpdate(key, mapOps(r.ops), options);
      return {};
    }),
    MapRead: unary(async (r, deadline) => {
      const { key, options } = request(buckets, r, deadline, 'MapRead', 'map');
      const page = await coordinator.mapRead(key, pageOf(r), options);
      return { entries: page.entries.map(wireEntry), next: page.next ?? EMPTY };
    }),
  };
}
