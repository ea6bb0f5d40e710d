/**
 * The client API (proto/ringkv/v1/kv.proto) on a node: each call goes to the coordinator
 * with the client's deadline; errors become statuses in one place (transport/status.ts).
 * Put, Get and Delete as unary calls, and Stream: the same calls batched on one
 * long-lived stream per client (batched-stream.ts, kv-codec.ts), each answered as its
 * unary call would be.
 *
 * Owns: the request/response mapping. Must not: contain quorum logic (replication/ does).
 */
import * as grpc from '@grpc/grpc-js';
import type { BucketTable } from '../buckets/index.js';
import type { Coordinator, RequestOptions } from '../replication/coordinator.js';
import { BatchedServer, passThrough, type ServerCodec } from './batched-stream.js';
import { decodeKvCalls, encodeKvReplies, kvReplySize, type KvCall, type KvReply } from './kv-codec.js';
import { serviceClient, type ServiceHandlers } from './protos.js';
import { codeName, toStatus } from './status.js';

type Handlers = ServiceHandlers<'ringkv.v1.KeyValue'>;

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
          const st = toStatus(e);
          reply = { id: c.id, op: 'error', code: st.code ?? grpc.status.UNKNOWN, details: st.details ?? '' };
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

/** Put, Get and Delete (the stream is KeyValueService's). */
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
  };
}
