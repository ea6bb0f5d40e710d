/**
 * Many calls and replies over one long-lived gRPC stream, batched: what the replica
 * stream (node to node) and the key-value stream (client to node) share. The messages
 * are bytes each side encodes by hand (replica-codec.ts, kv-codec.ts).
 *
 * Batching: a call joins the stream's queue, which is sent when the current turn of the
 * event loop ends (setImmediate), or at once when it holds FLUSH_BYTES. The server
 * batches replies the same way. Under load one message carries the calls of a whole
 * turn; idle, a call waits for nothing.
 *
 * Silence: the client side knows how long the peer has had calls in flight without
 * answering any (`silentMs`): a peer that stopped (paused, cut off) shows it within a
 * fraction of a second, long before its calls' deadlines. When this process itself
 * stalled (its deadline sweep ran late), the silence starts again: the pause was ours.
 *
 * Owns: the stream's lifecycle, ids and deadlines of calls in flight, batching, silence,
 * and the server's draining. Must not: know what the calls mean (each codec and handler does).
 */
import * as grpc from '@grpc/grpc-js';
import { NODE_MAX_MESSAGE_BYTES } from './protos.js';

/** A batch is sent once it holds this much, without waiting for the turn to end. */
export const FLUSH_BYTES = 256 * 1024;
/** Calls of one stream a server runs at once; more wait, and the stream is not read meanwhile. */
export const STREAM_CONCURRENCY = 64;
/** Reply bytes of one stream written but not yet taken by HTTP/2 (the peer reads them); above it no more calls start. */
export const STREAM_UNSENT_BYTES = 8 << 20;
/** How often calls in flight are checked against their deadlines, ms. */
const SWEEP_MS = 20;
/** A sweep this late means the process itself stalled, ms. */
const LATE_SWEEP_MS = 200;

export interface Batched {
  readonly id: number;
  /** Absolute, ms since the epoch (Date.now()). */
  readonly deadline: number;
}

/** A call as its caller makes it: the stream gives it its id. */
export type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

export const passThrough = (b: Buffer): Buffer => b;

/** How a server ends a stream whose batch does not decode (every release so far has said it so). */
const UNDECODABLE = 'a batch does not decode';

/**
 * True when a stream ended as a server ends it on a batch it cannot decode. A server of
 * an earlier release ends it so on a call it does not know (this release's refuses such
 * a call alone), so on a stream that carries only calls an earlier release lacked, this
 * says the peer runs that release.
 */
export const brokeOnUndecodable = (status: grpc.status, why: string): boolean =>
  status === grpc.status.INVALID_ARGUMENT && why.includes(UNDECODABLE);

/** What the client side needs of a stream's messages and failures. */
export interface ClientCodec<C extends Batched, R extends { readonly id: number }> {
  /** The method's path, e.g. /ringkv.internal.v1.Replica/Stream. */
  readonly path: string;
  encode(calls: readonly C[], now: number): Buffer;
  decode(buf: Buffer): R[];
  size(call: C, now: number): number;
  /** The error a reply stands for, if it is one. */
  failure(reply: R): Error | undefined;
  /** A call never answered: the stream broke (or could not open), with why. */
  unreachable(why: string, status: grpc.status): Error;
  timeout(): Error;
  tooLarge(size: number): Error;
  /** Told of each call queued to be sent, with its encoded size (metrics). */
  queued?(call: C, size: number): void;
}

interface Pending<R> {
  readonly deadline: number;
  readonly resolve: (r: R) => void;
  readonly reject: (e: Error) => void;
}

/** The client side: calls to one address, on one stream opened on first use and again after it ends. */
export class BatchedStream<C extends Batched, R extends { readonly id: number }> {
  #stream: grpc.ClientDuplexStream<Buffer, Buffer> | undefined;
  readonly #pending = new Map<number, Pending<R>>();
  #queue: C[] = [];
  #queuedBytes = 0;
  #flushing = false;
  #nextId = 1;
  #sweep: NodeJS.Timeout | undefined;
  /** When the peer last answered anything, or got a call while it had none in flight (performance.now()). */
  #progressAt = 0;
  #sweptAt = 0;

  constructor(
    private readonly client: grpc.Client,
    private readonly codec: ClientCodec<C, R>,
    /** Sent when the stream opens (a bearer token). */
    private readonly metadata?: grpc.Metadata,
  ) {}

  call(c: WithoutId<C>): Promise<R> {
    const call = { ...c, id: this.#nextId } as unknown as C;
    this.#nextId = this.#nextId >= 0xffffffff ? 1 : this.#nextId + 1;
    const now = Date.now();
    const size = this.codec.size(call, now);
    if (size > NODE_MAX_MESSAGE_BYTES) return Promise.reject(this.codec.tooLarge(size));
    if (call.deadline <= now) return Promise.reject(this.codec.timeout());
    this.codec.queued?.(call, size);
    return new Promise<R>((resolve, reject) => {
      if (this.#pending.size === 0) this.#progressAt = performance.now();
      this.#pending.set(call.id, { deadline: call.deadline, resolve, reject });
      if (this.#sweep === undefined) {
        this.#sweptAt = performance.now();
        this.#sweep = setInterval(() => this.#expire(), SWEEP_MS).unref();
      }
      if (this.#queuedBytes + size > FLUSH_BYTES) this.#flush();
      this.#queue.push(call);
      this.#queuedBytes += size;
      if (this.#queuedBytes >= FLUSH_BYTES) this.#flush();
      else if (!this.#flushing) {
        this.#flushing = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#flushing = false;
    if (this.#queue.length === 0) return;
    const calls = this.#queue;
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#open().write(this.codec.encode(calls, Date.now()));
  }

  #open(): grpc.ClientDuplexStream<Buffer, Buffer> {
    if (this.#stream !== undefined) return this.#stream;
    const stream = this.client.makeBidiStreamRequest(
      this.codec.path,
      passThrough,
      passThrough,
      this.metadata ?? new grpc.Metadata(),
    );
    this.#stream = stream;
    stream.on('data', (buf: Buffer) => {
      this.#progressAt = performance.now();
      let replies: R[];
      try {
        replies = this.codec.decode(buf);
      } catch (e) {
        stream.cancel();
        return this.#broken(
          stream,
          `the peer sent a reply that does not decode (${(e as Error).message})`,
          grpc.status.INTERNAL,
        );
      }
      for (const r of replies) {
        const p = this.#pending.get(r.id);
        if (p === undefined) continue; // timed out here already
        this.#pending.delete(r.id);
        const f = this.codec.failure(r);
        if (f !== undefined) p.reject(f);
        else p.resolve(r);
      }
    });
    stream.on('error', (e: grpc.ServiceError) =>
      this.#broken(stream, e.details || e.message, e.code ?? grpc.status.UNAVAILABLE),
    );
    stream.on('status', (s: grpc.StatusObject) =>
      this.#broken(
        stream,
        s.code === grpc.status.OK ? 'the peer closed the stream (stopping)' : s.details,
        s.code === grpc.status.OK ? grpc.status.UNAVAILABLE : s.code,
      ),
    );
    stream.on('end', () => this.#broken(stream, 'the peer closed the stream', grpc.status.UNAVAILABLE));
    return stream;
  }

  /** The stream ended or failed: its calls in flight never got an answer. The next call opens a new one. */
  #broken(stream: grpc.ClientDuplexStream<Buffer, Buffer>, why: string, status: grpc.status): void {
    if (this.#stream !== stream) return;
    this.#stream = undefined;
    stream.end();
    this.#failAll(this.codec.unreachable(why, status));
  }

  #failAll(e: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    this.#queue = [];
    this.#queuedBytes = 0;
    for (const p of pending) p.reject(e);
    this.#stopSweep();
  }

  /** How long the peer has had calls in flight and answered none, ms (0 when none are in flight). */
  silentMs(): number {
    return this.#pending.size === 0 ? 0 : performance.now() - this.#progressAt;
  }

  #expire(): void {
    const t = performance.now();
    // A sweep far later than its interval: this process stalled, and the silence was ours.
    if (t - this.#sweptAt > LATE_SWEEP_MS) this.#progressAt = Math.max(this.#progressAt, t);
    this.#sweptAt = t;
    const now = Date.now();
    for (const [id, p] of this.#pending) {
      if (p.deadline > now) continue;
      this.#pending.delete(id);
      p.reject(this.codec.timeout());
    }
    if (this.#pending.size === 0) this.#stopSweep();
  }

  #stopSweep(): void {
    if (this.#sweep !== undefined) clearInterval(this.#sweep);
    this.#sweep = undefined;
  }

  /** Cancel the stream; calls in flight fail as unreachable. */
  close(): void {
    const s = this.#stream;
    this.#stream = undefined;
    s?.cancel();
    this.#failAll(this.codec.unreachable('the connection was closed here', grpc.status.UNAVAILABLE));
  }
}

/** What the server side needs of a stream's messages, and how to run a call. */
export interface ServerCodec<C extends Batched, R extends { readonly id: number }> {
  decode(buf: Buffer, now: number): C[];
  encode(replies: readonly R[]): Buffer;
  size(reply: R): number;
  /** Run the call; a failure comes back as an error reply, never a rejection. */
  run(call: C): Promise<R>;
  /** The reply that refuses the call without running it (stopping, overloaded), if any. */
  refuse(call: C, draining: boolean): R | undefined;
  /** The reply that stands for `reply` when it is over the message limit (`size` bytes) and so cannot be sent; without it, it is sent (and breaks the stream). */
  tooLarge?(reply: R, size: number): R;
}

/**
 * The server side: each stream's calls run as they arrive (in parallel), replies batched
 * back. drain() lets running calls finish, answers them, and ends every stream, so that
 * the server's graceful shutdown is not held up by long-lived streams.
 */
export class BatchedServer {
  readonly #streams = new Set<() => void>();
  #draining = false;

  drain(): void {
    this.#draining = true;
    for (const wake of this.#streams) wake();
  }

  serve<C extends Batched, R extends { readonly id: number }>(
    call: grpc.ServerDuplexStream<Buffer, Buffer>,
    codec: ServerCodec<C, R>,
  ): void {
    let out: R[] = [];
    let outBytes = 0;
    let flushing = false;
    let running = 0;
    let peerEnded = false;
    let closed = false;
    // What a peer can make this node hold is bounded: at most STREAM_CONCURRENCY of its
    // calls run at once and the rest wait here, decoded; no call starts while
    // STREAM_UNSENT_BYTES of replies wait for the peer to read them; and while any call
    // waits, the node stops reading the stream, so that HTTP/2's flow control holds the
    // peer's further calls on its side. Without this, a peer that sent a thousand gets of
    // a 1 MiB value and read nothing made the node hold a gigabyte and a half.
    let waiting: C[] = [];
    let head = 0;
    let unsent = 0;
    const flow = (): void => {
      if (closed) return;
      if (head < waiting.length) call.pause();
      else call.resume();
    };
    const flush = (): void => {
      flushing = false;
      if (out.length === 0 || closed) return;
      const replies = out;
      out = [];
      outBytes = 0;
      const buf = codec.encode(replies);
      unsent += buf.length;
      call.write(buf, () => {
        unsent -= buf.length;
        pump();
      });
    };
    const send = (reply: R): void => {
      let r = reply,
        size = codec.size(r);
      if (size > NODE_MAX_MESSAGE_BYTES && codec.tooLarge !== undefined) {
        r = codec.tooLarge(r, size);
        size = codec.size(r);
      }
      // A reply that would take the batch past FLUSH_BYTES starts the next one: a message is
      // then at most one large reply, never replies queued before it as well, which could
      // take it past the message limit (a page of sub-keys of 4 MiB, a record of 8 MiB, and
      // the replies of a busy turn before it), and gRPC would break the stream on that.
      if (out.length > 0 && outBytes + size > FLUSH_BYTES) flush();
      out.push(r);
      outBytes += size;
      if (outBytes >= FLUSH_BYTES) flush();
      else if (!flushing) {
        flushing = true;
        setImmediate(flush);
      }
    };
    // Start waiting calls while there is room; refusals (draining, deadline passed while waiting) are answered at once.
    const pump = (): void => {
      while (head < waiting.length && running < STREAM_CONCURRENCY && unsent < STREAM_UNSENT_BYTES && !closed) {
        const c = waiting[head++]!;
        const refused = codec.refuse(c, this.#draining);
        if (refused !== undefined) {
          send(refused);
          continue;
        }
        running++;
        void codec.run(c).then((r) => {
          running--;
          send(r);
          pump();
          endIfDone();
        });
      }
      if (head === waiting.length) {
        waiting = [];
        head = 0;
      }
      flow();
    };
    const forget = (): void => {
      closed = true;
      this.#streams.delete(wake);
    };
    // Once the peer is done sending, or this server is draining, and every call is answered: end the stream.
    const endIfDone = (): void => {
      if (closed || running > 0 || head < waiting.length || !(peerEnded || this.#draining)) return;
      flush();
      forget();
      call.end();
    };
    // Told when the server drains: waiting calls are answered (refused), then the stream ends.
    const wake = (): void => {
      pump();
      endIfDone();
    };
    this.#streams.add(wake);
    call.on('data', (buf: Buffer) => {
      let calls: C[];
      try {
        calls = codec.decode(buf, Date.now());
      } catch (e) {
        forget();
        call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: `${UNDECODABLE} (${(e as Error).message})` });
        return;
      }
      for (const c of calls) waiting.push(c);
      pump();
    });
    call.on('end', () => {
      peerEnded = true;
      endIfDone();
    });
    call.on('error', forget);
    call.on('cancelled', forget);
  }
}
