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

  /** Serve one stream: its calls run as they arrive and their replies go back batched, until it ends. */
  serve<C extends Batched, R extends { readonly id: number }>(
    call: grpc.ServerDuplexStream<Buffer, Buffer>,
    codec: ServerCodec<C, R>,
  ): void {
    const stream: ServedStream<C, R> = new ServedStream(
      call,
      codec,
      () => this.#draining,
      () => this.#streams.delete(stream.wake),
    );
    this.#streams.add(stream.wake);
    stream.listen();
  }
}

/** One stream a BatchedServer serves: the calls that wait and run on it, the replies batched back, its end. */
class ServedStream<C extends Batched, R extends { readonly id: number }> {
  #out: R[] = [];
  #outBytes = 0;
  #flushing = false;
  #running = 0;
  #peerEnded = false;
  #closed = false;
  // What a peer can make this node hold is bounded: at most STREAM_CONCURRENCY of its
  // calls run at once and the rest wait here, decoded; no call starts while
  // STREAM_UNSENT_BYTES of replies wait for the peer to read them; and while any call
  // waits, the node stops reading the stream, so that HTTP/2's flow control holds the
  // peer's further calls on its side. Without this, a peer that sent a thousand gets of
  // a 1 MiB value and read nothing made the node hold a gigabyte and a half.
  #waiting: C[] = [];
  #head = 0;
  #unsent = 0;

  /** A stream of `call`'s calls, decoded and run by `codec`; nothing happens on it until listen(). */
  constructor(
    private readonly call: grpc.ServerDuplexStream<Buffer, Buffer>,
    private readonly codec: ServerCodec<C, R>,
    /** Whether the server is draining, asked as each call starts and as the stream may end. */
    private readonly draining: () => boolean,
    /** Tells the server this stream is over: a drain need not wake it. */
    private readonly forgotten: () => void,
  ) {}

  /** Told when the server drains: waiting calls are answered (refused), then the stream ends. */
  readonly wake = (): void => {
    this.#pump();
    this.#endIfDone();
  };

  /** Listen to the stream: batches of calls, the peer's end, an error or a cancel. */
  listen(): void {
    this.call.on('data', (buf: Buffer) => this.#received(buf));
    this.call.on('end', () => {
      this.#peerEnded = true;
      this.#endIfDone();
    });
    this.call.on('error', () => this.#forget());
    this.call.on('cancelled', () => this.#forget());
  }

  /** A batch came: its calls wait their turn; one that does not decode fails the stream. */
  #received(buf: Buffer): void {
    let calls: C[];
    try {
      calls = this.codec.decode(buf, Date.now());
    } catch (e) {
      this.#forget();
      this.call.emit('error', {
        code: grpc.status.INVALID_ARGUMENT,
        details: `${UNDECODABLE} (${(e as Error).message})`,
      });
      return;
    }
    for (const c of calls) this.#waiting.push(c);
    this.#pump();
  }

  /** Read the stream only while no call waits (HTTP/2's flow control then holds the peer's calls). */
  #flow(): void {
    if (this.#closed) return;
    if (this.#head < this.#waiting.length) this.call.pause();
    else this.call.resume();
  }

  /** Send the replies batched so far as one message; when HTTP/2 has taken it, more calls may start. */
  #flush(): void {
    this.#flushing = false;
    if (this.#out.length === 0 || this.#closed) return;
    const replies = this.#out;
    this.#out = [];
    this.#outBytes = 0;
    const buf = this.codec.encode(replies);
    this.#unsent += buf.length;
    this.call.write(buf, () => {
      this.#unsent -= buf.length;
      this.#pump();
    });
  }

  /** Batch a reply: sent when the turn ends, or at once when the batch holds FLUSH_BYTES. */
  #send(reply: R): void {
    let r = reply,
      size = this.codec.size(r);
    if (size > NODE_MAX_MESSAGE_BYTES && this.codec.tooLarge !== undefined) {
      r = this.codec.tooLarge(r, size);
      size = this.codec.size(r);
    }
    // A reply that would take the batch past FLUSH_BYTES starts the next one: a message is
    // then at most one large reply, never replies queued before it as well, which could
    // take it past the message limit (a page of sub-keys of 4 MiB, a record of 8 MiB, and
    // the replies of a busy turn before it), and gRPC would break the stream on that.
    if (this.#out.length > 0 && this.#outBytes + size > FLUSH_BYTES) this.#flush();
    this.#out.push(r);
    this.#outBytes += size;
    if (this.#outBytes >= FLUSH_BYTES) this.#flush();
    else if (!this.#flushing) {
      this.#flushing = true;
      setImmediate(() => this.#flush());
    }
  }

  /** Start waiting calls while there is room; refusals (draining, deadline passed while waiting) are answered at once. */
  #pump(): void {
    while (
      this.#head < this.#waiting.length &&
      this.#running < STREAM_CONCURRENCY &&
      this.#unsent < STREAM_UNSENT_BYTES &&
      !this.#closed
    ) {
      const c = this.#waiting[this.#head++]!;
      const refused = this.codec.refuse(c, this.draining());
      if (refused !== undefined) {
        this.#send(refused);
        continue;
      }
      this.#running++;
      void this.codec.run(c).then((r) => {
        this.#running--;
        this.#send(r);
        this.#pump();
        this.#endIfDone();
      });
    }
    if (this.#head === this.#waiting.length) {
      this.#waiting = [];
      this.#head = 0;
    }
    this.#flow();
  }

  /** The stream is over for this side: nothing more is sent on it, and a drain leaves it be. */
  #forget(): void {
    this.#closed = true;
    this.forgotten();
  }

  /** Once the peer is done sending, or the server is draining, and every call is answered: end the stream. */
  #endIfDone(): void {
    if (this.#closed || this.#running > 0 || this.#head < this.#waiting.length || !(this.#peerEnded || this.draining()))
      return;
    this.#flush();
    this.#forget();
    this.call.end();
  }
}
