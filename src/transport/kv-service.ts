/**
 * The client API (proto/ringkv/v1/kv.proto) on a node: each call goes to the coordinator
 * with the client's deadline; errors become statuses in one place (transport/status.ts).
 * Put, Get and Delete as unary calls, and Stream: the same calls batched on one
 * long-lived stream per client (batched-stream.ts, kv-codec.ts), each answered as its
 * unary call would be. GetMany and PutMany: the keys of one bucket, located here, run by
 * the coordinator as a batch; each key's outcome in its result, as its own call's would be.
 *
 * Owns: the request/response mapping. Must not: contain quorum logic (replication/ does).
 */
import * as grpc from '@grpc/grpc-js';
import type { BucketProps, BucketTable } from '../buckets/index.js';
import { checkBatchSize, type Coordinator, type KeyOutcome, type RequestOptions } from '../replication/coordinator.js';
import { BatchedServer, passThrough, type ServerCodec } from './batched-stream.js';
import { decodeKvCalls, encodeKvReplies, kvReplySize, type KvCall, type KvReply } from './kv-codec.js';
import type { PutManyRequest__Output } from './generated/ringkv/v1/PutManyRequest.js';
import { NODE_MAX_MESSAGE_BYTES, serviceClient, type ServiceHandlers } from './protos.js';
import { codeName, toStatus } from './status.js';

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
    Promise.resolve(call.request).then((req) => fn(req, deadlineOf(call))).then(
      (res) => cb(null, res),
      (e: unknown) => cb(toStatus(e)),
    );
  };
}

/** Told of each stream call done: its operation, gRPC code name, seconds taken, a get's sibling count, and the bucket it named. */
export type KvObserver = (operation: string, code: string, seconds: number, siblings: number | undefined, bucket: string) => void;

/** The KeyValue service: unary calls (through `wrap`, which times them) and the stream (each call told to `observe`). */
export class KeyValueService {
  readonly #streams = new BatchedServer();
  readonly #codec: ServerCodec<KvCall, KvReply>;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly buckets: BucketTable,
    observe?: KvObserver,
  ) {
    this.#codec = {
      decode: decodeKvCalls,
      encode: encodeKvReplies,
      size: kvReplySize,
      refuse: (c, draining) => (draining ? { id: c.id, op: 'error', code: grpc.status.UNAVAILABLE, details: 'this node is shutting down; send the request to another node' } : undefined),
      run: async (c) => {
        const started = performance.now();
        let reply: KvReply;
        try {
          reply = await this.#run(c);
        } catch (e) {
          reply = { id: c.id, op: 'error', ...callError(e) };
        }
        observe?.(c.op, reply.op === 'error' ? codeName(reply.code) : 'OK', (performance.now() - started) / 1000, reply.op === 'get' && reply.found ? reply.values.length : undefined, c.bucket);
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
  implementation(wrap: (impl: grpc.UntypedServiceImplementation) => grpc.UntypedServiceImplementation): grpc.UntypedServiceImplementation {
    return { ...wrap(kvService(this.coordinator, this.buckets)), Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => this.#streams.serve(call, this.#codec) };
  }

  /** Answer the calls running on streams, then end them (the server's graceful shutdown waits for them). */
  drain(): void {
    this.#streams.drain();
  }

  async #run(c: KvCall): Promise<KvReply> {
    const { key, options } = request(this.buckets, c, c.deadline);
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

/** A request's stored key (its bucket's: buckets/bucket.ts) and the coordinator's options for it. */
function request(buckets: BucketTable, r: KvRequest, deadline: number | undefined): { key: Buffer; options: RequestOptions } {
  const { key, bucket } = buckets.locate(r.bucket ?? '', r.key);
  return {
    key,
    options: { quorum: r.w ?? r.r, deadline, requestId: r.requestId, bucket, ttlMs: r.ttlMs, nodeConfirms: r.nodeConfirms, zoneConfirms: r.zoneConfirms, pw: r.pw },
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
function locateAll(buckets: BucketTable, bucket: string, keys: readonly Buffer[]): { props: BucketProps; located: ({ key: Buffer } | { error: unknown })[] } {
  const props = buckets.locate(bucket, EMPTY).bucket;
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
async function perKey<T>(located: readonly ({ key: Buffer } | { error: unknown })[], run: (indices: number[]) => Promise<KeyOutcome<T>[]>): Promise<KeyOutcome<T>[]> {
  const indices = located.flatMap((l, i) => ('key' in l ? [i] : []));
  const out: KeyOutcome<T>[] = located.map((l) => ('error' in l ? { ok: false, error: l.error } : { ok: false, error: undefined }));
  if (indices.length > 0) (await run(indices)).forEach((o, j) => (out[indices[j]!] = o));
  return out;
}

/** Put, Get, Delete, GetMany and PutMany (the stream is KeyValueService's). */
export function kvService(coordinator: Coordinator, buckets: BucketTable): Omit<Handlers, 'Stream'> {
  return {
    Put: unary(async (r, deadline) => {
      const { key, options } = request(buckets, r, deadline);
      const { context } = await coordinator.put(key, r.value, r.context, options);
      return { context };
    }),
    Get: unary((r, deadline) => {
      const { key, options } = request(buckets, r, deadline);
      return coordinator.get(key, options);
    }),
    Delete: unary(async (r, deadline) => {
      const { key, options } = request(buckets, r, deadline);
      await coordinator.delete(key, r.context, options);
      return {};
    }),
    GetMany: unary(async (r, deadline) => {
      checkBatchSize(r.keys.length, 'key');
      const { props, located } = locateAll(buckets, r.bucket, r.keys);
      const options: RequestOptions = { quorum: r.r, deadline, bucket: props };
      const results = await perKey(located, (ix) => coordinator.getMany(ix.map((i) => (located[i] as { key: Buffer }).key), options));
      let left = ANSWER_BYTES;
      return {
        results: results.map((o, i) => {
          const key = r.keys[i]!;
          if (!o.ok) return { key, error: callError(o.error) };
          const size = key.length + o.value.context.length + o.value.values.reduce((sum, v) => sum + v.length + FIELD_BYTES, 3 * FIELD_BYTES);
          if (size > left) return { key, error: { code: grpc.status.RESOURCE_EXHAUSTED, details: `the batch's answer would be over ${ANSWER_BYTES} bytes with this key's ${size}: get this key alone or in a smaller batch` } };
          left -= size;
          return { key, get: o.value };
        }),
      };
    }),
    PutMany: unary(async (r: PutManyRequest__Output, deadline) => {
      checkBatchSize(r.items.length, 'item');
      const { props, located } = locateAll(buckets, r.bucket, r.items.map((it) => it.key));
      const options: RequestOptions = { quorum: r.w, deadline, bucket: props, nodeConfirms: r.nodeConfirms, zoneConfirms: r.zoneConfirms, pw: r.pw };
      const results = await perKey(located, (ix) =>
        coordinator.putMany(
          ix.map((i) => {
            const it = r.items[i]!;
            return { key: (located[i] as { key: Buffer }).key, value: it.value, context: it.context, requestId: it.requestId.length > 0 ? it.requestId : undefined, ttlMs: it.ttlMs };
          }),
          options,
        ),
      );
      return { results: results.map((o, i) => ({ key: r.items[i]!.key, ...(o.ok ? { put: { context: o.value.context } } : { error: callError(o.error) }) })) };
    }),
  };
}
