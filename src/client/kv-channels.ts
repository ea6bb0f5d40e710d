/**
 * The client's connections to the nodes: one gRPC channel per address, and on it the
 * KeyValue stream that carries calls batched (two per node: counter updates and
 * compare-and-sets on a stream of their own, see kvCodec), or, with streaming off, a
 * unary call each. Either way an attempt answers the stream's reply of its op, and
 * fails with the error the unary call would have given.
 *
 * Owns: the channels and streams, and the stream's codec for the client. Must not:
 * choose the node (client-routing.ts) or retry (call-attempts.ts).
 */
import * as grpc from '@grpc/grpc-js';
import { NODE_MAX_MESSAGE_BYTES, callUnary, serviceClient, type ServiceClient } from '../transport/protos.js';
import { BatchedStream, brokeOnUndecodable, type ClientCodec } from '../transport/batched-stream.js';
import { decodeKvReplies, encodeKvCalls, kvCallSize, type KvCall, type KvReply } from '../transport/kv-codec.js';
import { CAS_OUTCOME, retryAdvice } from '../transport/status.js';
import { requestTooLarge, type Request } from './kv-requests.js';
import { serviceError } from './wire-values.js';

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

/** One client's channels and streams, by address. */
export class KvChannels {
  readonly #channels = new Map<string, ServiceClient<'ringkv.v1.KeyValue'>>();
  readonly #streams = new Map<string, BatchedStream<KvCall, KvReply>>();
  /** Counter updates' streams, by address (kvCodec). */
  readonly #typedStreams = new Map<string, BatchedStream<KvCall, KvReply>>();
  readonly #streaming: boolean;
  readonly #credentials: grpc.ChannelCredentials;
  readonly #metadata: grpc.Metadata | undefined;

  /** Channels made with `credentials`, every call carrying `metadata`; `streaming` false: unary calls only. */
  constructor(streaming: boolean, credentials: grpc.ChannelCredentials, metadata: grpc.Metadata | undefined) {
    this.#streaming = streaming;
    this.#credentials = credentials;
    this.#metadata = metadata;
  }

  /** The channel to `address`, opened at its first use. */
  channel(address: string): ServiceClient<'ringkv.v1.KeyValue'> {
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
  send(address: string, req: Request, deadline: number): Promise<KvReply> {
    if (!this.#streaming) return this.#unary(address, req, deadline);
    // Counter updates and compare-and-sets on a stream of their own: see kvCodec.
    const typed = req.op === 'counterUpdate' || req.op === 'putIf' || req.op === 'deleteIf';
    const streams = typed ? this.#typedStreams : this.#streams;
    let s = streams.get(address);
    if (s === undefined) {
      s = new BatchedStream(this.channel(address), kvCodec(address, typed), this.#metadata);
      streams.set(address, s);
    }
    return s.call({ ...req, deadline });
  }

  /** One call as a unary call (Put, Get, Delete), its response as the stream's reply of the same op. */
  async #unary(address: string, req: Request, deadline: number): Promise<KvReply> {
    const c = this.channel(address);
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

  /** Close every stream and channel. */
  close(): void {
    for (const streams of [this.#streams, this.#typedStreams]) {
      for (const s of streams.values()) s.close();
      streams.clear();
    }
    for (const c of this.#channels.values()) c.close();
    this.#channels.clear();
  }
}
