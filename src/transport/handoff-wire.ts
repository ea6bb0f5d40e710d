/**
 * The Handoff service (proto/ringkv/internal/v1/handoff.proto) on both sides: the server
 * streams a token range out of this node's store, throttled and under gRPC flow control,
 * and runs a peer's Fetch; the client side implements RangeSourceApi (a range streamed
 * from a peer) and asks a peer to fetch, one channel per peer.
 *
 * Owns: the mapping and the channels. Must not: decide what moves (handoff/ does).
 */
import * as grpc from '@grpc/grpc-js';
import type { KeyFilter, Store } from '../storage/index.js';
import { MAX_TOKEN, tokenHex as hex } from '../ring/index.js';
import type { Throttle } from '../streaming/throttle.js';
import type { PullItem, RangeBatchIn, RangeSourceApi } from '../streaming/transfers.js';
import type {
  StreamRangeRequest,
  StreamRangeRequest__Output,
} from './generated/ringkv/internal/v1/StreamRangeRequest.js';
import type { FetchRange } from './generated/ringkv/internal/v1/FetchRange.js';
import type { FetchRequest } from './generated/ringkv/internal/v1/FetchRequest.js';
import { PeerChannels } from './peer-channels.js';
import { callUnary, serviceClient, type ServiceClient, type ServiceHandlers } from './protos.js';
import { Writer, bytesField, messageField, varintField } from './protobuf-bytes.js';
import { toStatus } from './status.js';
import { MAX_ID_LENGTH } from '../membership/endpoint.js';
import { peerRefusal } from './peer-refusal.js';

const SERVICE = 'ringkv.internal.v1.Handoff' as const;
type Handlers = ServiceHandlers<typeof SERVICE>;

/**
 * Records per streamed batch, and bytes (a single larger record is its own batch). Each
 * batch costs both ends a message, a throttle take, a lock round and a LevelDB batch on
 * the receiver, and a checkpoint: 2,048 records of ~150 bytes (~300 KB) rather than 512
 * (bench:handoff). Any receiver takes any batch size, so older peers are unaffected.
 */
export const STREAM_BATCH_COUNT = 2048;
export const STREAM_BATCH_BYTES = 1 << 20;

function parseToken(v: string): bigint | undefined {
  return /^[0-9a-f]{16}$/.test(v) ? BigInt(`0x${v}`) : undefined;
}

function status(code: grpc.status, details: string): Partial<grpc.StatusObject> {
  return { code, details };
}

export interface HandoffServerDeps {
  readonly clusterName: string;
  readonly store: Store;
  readonly throttle: Throttle;
  /** Why not to serve now (stopping), if so. */
  refuse(): string | undefined;
  /** Whether `id` is a node this one knows (itself, or a member it gossips with): a Fetch's sources must be. */
  knows(id: string): boolean;
  /**
   * The keys a stream of N class `n` (0: every key) planned on the requester's `classes`
   * takes; throws (BK_NOT_READY) when this node cannot tell them now. Unset: every key.
   */
  only?(n: number, classes: readonly number[]): KeyFilter;
  /** Run a peer's Fetch: pull `items` for movement `move`. */
  fetch(move: string, from: string, items: PullItem[]): Promise<{ keys: number; bytes: number }>;
  /** Outgoing streams, for `transfers`. */
  readonly outgoing: Set<OutgoingStream>;
  readonly log: { debug(o: object, m: string): void; warn(o: object, m: string): void };
}

export interface OutgoingStream {
  readonly to: string;
  readonly start: string;
  readonly end: string;
  readonly startedAt: number;
  keys: number;
  bytes: number;
}

export function handoffService(deps: HandoffServerDeps): Handlers {
  return {
    StreamRange: (call) => {
      // Served under handoffDefinition(): its batches go out as encodeRangeBatch's bytes.
      void streamRange(deps, call as unknown as grpc.ServerWritableStream<StreamRangeRequest__Output, Buffer>).catch(
        (e: unknown) => {
          if (!call.cancelled) call.emit('error', toStatus(e));
        },
      );
    },
    Fetch: (call, cb) => {
      const r = call.request;
      const refused = peerRefusal(r.cluster, deps.clusterName, deps.refuse());
      if (refused !== undefined) return cb(refused);
      const items: PullItem[] = [];
      for (const x of r.ranges) {
        const start = parseToken(x.start),
          end = parseToken(x.end);
        if (start === undefined || end === undefined || x.sources.length === 0)
          return cb(
            status(
              grpc.status.INVALID_ARGUMENT,
              `range (${x.start}, ${x.end}] must be two 16-hex-digit tokens with at least one source`,
            ),
          );
        if (x.sources.some((id) => id.length === 0 || id.length > MAX_ID_LENGTH))
          return cb(
            status(
              grpc.status.INVALID_ARGUMENT,
              `range (${x.start}, ${x.end}]: each source must be a node id of 1-${MAX_ID_LENGTH} characters`,
            ),
          );
        const unknown = x.sources.find((id) => !deps.knows(id));
        if (unknown !== undefined)
          return cb(
            status(
              grpc.status.FAILED_PRECONDITION,
              `range (${x.start}, ${x.end}]: source ${unknown} is not a node this one knows; if it just joined, retry once gossip has reached this node`,
            ),
          );
        if (x.n > 16 || x.classes.some((c) => c < 1 || c > 16))
          return cb(
            status(
              grpc.status.INVALID_ARGUMENT,
              `range (${x.start}, ${x.end}]: n and classes must be replica counts of 1-16 (n 0: every key)`,
            ),
          );
        items.push({
          start,
          end,
          sources: x.sources,
          leaverGone: x.leaverGone,
          ...(x.n === 0 ? {} : { n: x.n }),
          ...(x.classes.length === 0 ? {} : { classes: x.classes }),
        });
      }
      if (r.move.length === 0) return cb(status(grpc.status.INVALID_ARGUMENT, 'a fetch must name its movement (move)'));
      deps.fetch(r.move, r.requester, items).then(
        (res) => cb(null, res),
        (e: unknown) =>
          cb({ code: grpc.status.UNAVAILABLE, details: `fetch failed: ${(e as Error)?.message ?? String(e)}` }),
      );
    },
  };
}

/**
 * The Handoff service's definition, with StreamRange's batches sent as the bytes
 * encodeRangeBatch wrote (the same wire format as proto-loader's, written in one pass).
 */
export function handoffDefinition(): grpc.ServiceDefinition {
  const def = serviceClient(SERVICE).service;
  return { ...def, StreamRange: { ...def.StreamRange, responseSerialize: (b: Buffer) => b } };
}

/**
 * A RangeBatch encoded by hand: sizes first, then one buffer of the exact size, each
 * record copied once. proto-loader's encoder builds the message through protobufjs's
 * writer (a fork per entry, then a join): on the sender, whose CPU shares the machine
 * with the joiner's. Tags as in decodeRangeBatch; checked against protobufjs's decoding by
 * test/unit/streaming/range-stream.test.ts.
 */
export function encodeRangeBatch(
  entries: readonly { readonly key: Uint8Array; readonly record: Uint8Array }[],
  corrupt: number,
): Buffer {
  let size = varintField(corrupt);
  for (const e of entries) size += messageField(bytesField(e.key.length) + bytesField(e.record.length));
  const w = new Writer(Buffer.allocUnsafe(size));
  for (const e of entries) {
    w.message(1, bytesField(e.key.length) + bytesField(e.record.length));
    w.bytes(1, e.key);
    w.bytes(2, e.record);
  }
  w.uint(2, corrupt);
  return w.buf;
}

async function streamRange(
  deps: HandoffServerDeps,
  call: grpc.ServerWritableStream<StreamRangeRequest__Output, Buffer>,
): Promise<void> {
  const r = call.request;
  const refused = peerRefusal(r.cluster, deps.clusterName, deps.refuse());
  if (refused !== undefined) return void call.emit('error', refused);
  const start = parseToken(r.start),
    end = parseToken(r.end);
  if (start === undefined || end === undefined || start > MAX_TOKEN || end > MAX_TOKEN)
    return void call.emit(
      'error',
      status(grpc.status.INVALID_ARGUMENT, `range (${r.start}, ${r.end}] must be two tokens of 16 hex digits`),
    );
  const only = deps.only?.(r.n, r.classes);
  const out: OutgoingStream = { to: r.requester, start: r.start, end: r.end, startedAt: Date.now(), keys: 0, bytes: 0 };
  deps.outgoing.add(out);
  try {
    const after = r.afterKey.length > 0 ? r.afterKey : undefined;
    for await (const batch of deps.store.ranges.scan(
      { start, end },
      { batchCount: STREAM_BATCH_COUNT, batchBytes: STREAM_BATCH_BYTES },
      after,
      only,
    )) {
      if (call.cancelled) return;
      // A stretch of other classes' keys only: nothing to send.
      if (batch.entries.length === 0 && batch.corrupt.length === 0) continue;
      let bytes = 0;
      for (const e of batch.entries) bytes += e.key.length + e.record.length;
      await deps.throttle.take(bytes);
      out.keys += batch.entries.length;
      out.bytes += bytes;
      // Flow control: write() says false once the receiver is behind; wait for it.
      if (!call.write(encodeRangeBatch(batch.entries, batch.corrupt.length))) {
        await new Promise<void>((resolve) => {
          const done = (): void => {
            call.off('drain', done);
            call.off('cancelled', done);
            resolve();
          };
          call.on('drain', done);
          call.on('cancelled', done);
        });
      }
    }
    if (!call.cancelled) call.end();
  } finally {
    deps.outgoing.delete(out);
  }
}

/**
 * A RangeBatch (proto/ringkv/internal/v1/handoff.proto) decoded by hand, on the receiving
 * side of a stream: one plain object per entry whose key and record are views into the
 * message. proto-loader's decoder builds a message object per entry and then copies each
 * into a plain object (toObject), at about three times this one's cost per record
 * (docs/benchmarks.md#the-receivers-settings), on the joiner, whose CPU bounds a join.
 * The records themselves are checked when the store merges them. Fields it does not
 * know are skipped, as protobuf requires, so a newer sender's additions are harmless; a
 * message that does not parse throws (gRPC ends the call with INTERNAL). The tags are
 * handoff.proto's (entries 1, key 1, record 2, corrupt 2), checked against protobufjs's
 * encoding by test/unit/streaming/range-stream.test.ts.
 */
export function decodeRangeBatch(buf: Buffer): RangeBatchIn {
  const entries: { key: Buffer; record: Buffer }[] = [];
  let corrupt = 0;
  const r = new WireReader(buf, 0, buf.length);
  while (r.more()) {
    const tag = r.varint();
    if (tag === 0x0a) {
      const end = r.end(r.varint());
      let key: Buffer = EMPTY,
        record: Buffer = EMPTY;
      const e = new WireReader(buf, r.pos, end);
      while (e.more()) {
        const t = e.varint();
        if (t === 0x0a) key = e.bytes();
        else if (t === 0x12) record = e.bytes();
        else e.skip(t);
      }
      entries.push({ key, record });
      r.pos = end;
    } else if (tag === 0x10) corrupt = r.varint() >>> 0;
    else r.skip(tag);
  }
  return { entries, corrupt };
}

const EMPTY: Buffer = Buffer.alloc(0);

class WireReader {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    readonly limit: number,
  ) {}

  more(): boolean {
    return this.pos < this.limit;
  }

  varint(): number {
    let n = 0,
      scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.limit) throw new Error('RangeBatch: truncated varint');
      const b = this.buf[this.pos++]!;
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
    }
    throw new Error('RangeBatch: varint too long');
  }

  /** Where a length-delimited field of `len` bytes starting here ends (checked). */
  end(len: number): number {
    if (len > this.limit - this.pos) throw new Error('RangeBatch: field longer than the message');
    return this.pos + len;
  }

  bytes(): Buffer {
    const end = this.end(this.varint());
    const out = this.buf.subarray(this.pos, end);
    this.pos = end;
    return out;
  }

  /** Skip the value of a field this decoder does not know. */
  skip(tag: number): void {
    switch (tag & 7) {
      case 0:
        this.varint();
        return;
      case 1:
        this.pos = this.end(8);
        return;
      case 2:
        this.pos = this.end(this.varint());
        return;
      case 5:
        this.pos = this.end(4);
        return;
      default:
        throw new Error(`RangeBatch: unsupported wire type ${tag & 7}`);
    }
  }
}

/** The client side: ranges streamed from peers, and Fetch asked of peers. */
export class GrpcHandoff implements RangeSourceApi {
  readonly #channels: PeerChannels<typeof SERVICE>;

  constructor(
    private readonly self: string,
    private readonly clusterName: string,
    private readonly addressOf: (id: string) => string | undefined,
    credentials: grpc.ChannelCredentials,
  ) {
    this.#channels = new PeerChannels(SERVICE, credentials);
  }

  #client(node: string): ServiceClient<typeof SERVICE> {
    return this.#channels.forNode(node, this.addressOf);
  }

  async *stream(
    source: string,
    range: { start: bigint; end: bigint },
    after: Buffer | undefined,
    signal: AbortSignal,
    cls?: { readonly n?: number; readonly classes?: readonly number[] },
  ): AsyncIterable<RangeBatchIn> {
    const method = this.#channels.Client.service.StreamRange;
    const req: StreamRangeRequest = {
      start: hex(range.start),
      end: hex(range.end),
      afterKey: after ?? Buffer.alloc(0),
      requester: this.self,
      cluster: this.clusterName,
      n: cls?.n ?? 0,
      classes: [...(cls?.classes ?? [])],
    };
    // The batches are decoded by hand (decodeRangeBatch), not by the proto-loader definition.
    const call: grpc.ClientReadableStream<RangeBatchIn> = this.#client(source).makeServerStreamRequest(
      method.path,
      method.requestSerialize,
      decodeRangeBatch,
      req,
    );
    const cancel = (): void => call.cancel();
    signal.addEventListener('abort', cancel);
    try {
      for await (const batch of call) yield batch;
    } finally {
      signal.removeEventListener('abort', cancel);
      call.cancel();
    }
  }

  /** Ask `node` to pull `items` for movement `move`; resolves when it has them all. */
  fetch(
    node: string,
    move: string,
    items: readonly PullItem[],
    deadline: number,
  ): Promise<{ keys: number; bytes: number }> {
    const req: FetchRequest = {
      cluster: this.clusterName,
      move,
      requester: this.self,
      ranges: items.map((i): FetchRange => ({
        start: hex(i.start),
        end: hex(i.end),
        sources: [...i.sources],
        leaverGone: i.leaverGone === true,
        n: i.n ?? 0,
        classes: [...(i.classes ?? [])],
      })),
    };
    return callUnary(this.#client(node), 'fetch', req, { deadline });
  }

  /** Close channels to every address not in `keep`. */
  retain(keep: ReadonlySet<string>): void {
    this.#channels.retain(keep);
  }

  close(): void {
    this.#channels.close();
  }
}
