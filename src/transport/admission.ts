/**
 * What a node lets in before any handler runs: connections up to a limit, calls per
 * connection up to a limit, and only requests that decode.
 *
 * - The node listens with its own TCP server and hands each connection to gRPC
 *   (grpc-js's connection injector), so that it counts them. At `maxConnections`, a new
 *   connection takes the place of one idle for IDLE_EVICT_MS (so that connections held
 *   open and unused cannot lock clients out); with none idle, it is served long enough
 *   to be told why: each of its calls gets RESOURCE_EXHAUSTED, and it is closed after
 *   OVERFLOW_GRACE_MS.
 * - A connection with `maxCallsPerConnection` calls open (unary calls and streams alike)
 *   gets RESOURCE_EXHAUSTED for the next one. The calls on a stream are limited by the
 *   stream's server (batched-stream.ts), and a node's coordinated requests by the
 *   coordinator (RK_OVERLOADED).
 * - A unary call's request must arrive whole within ARRIVAL_MS of its headers, and at
 *   most MAX_SLOW_ARRIVALS may take longer than SLOW_ARRIVAL_MS at once (more are ended
 *   then): a half-sent message is held in memory. A burst of calls whose messages follow
 *   their headers at once is never touched.
 * - A request that does not decode as its method's message is answered INVALID_ARGUMENT
 *   (grpc-js would answer INTERNAL, which reads as the node's fault).
 *
 * Every RESOURCE_EXHAUSTED carries `grpc-retry-pushback-ms` (gRPC's retry advice) and says
 * in its message what to do. Every status message is cut to MAX_DETAILS_CHARS.
 *
 * Owns: the counts and the refusals. Must not: know what the calls mean.
 */
import { createServer, type Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { retryAdvice } from './status.js';

export interface AdmissionLimits {
  /** TCP connections served at once; more are told RESOURCE_EXHAUSTED and closed. */
  readonly maxConnections: number;
  /** Calls (unary or streams) open at once on one connection; more get RESOURCE_EXHAUSTED. */
  readonly maxCallsPerConnection: number;
}

/** How long a connection over the limit is kept so that its calls can be told why, ms. */
export const OVERFLOW_GRACE_MS = 1000;
/** A connection with no call open for this long may be closed to make room for a new one, ms. */
export const IDLE_EVICT_MS = 10_000;
/**
 * Longest status message sent, characters: a message that quotes what the caller sent
 * (a name, a list of sources) must not outgrow the caller's header limit (HTTP/2 peers
 * refuse trailers over 16–64 KiB, and the connection goes with them).
 */
export const MAX_DETAILS_CHARS = 1024;
/**
 * A unary call's request must arrive in full within this long of its headers, ms: a
 * message held half-sent keeps its bytes in memory here, up to the 8 MiB cap.
 */
export const ARRIVAL_MS = 10_000;
/** A unary call whose request has not arrived this long after its headers is arriving slowly, ms. */
export const SLOW_ARRIVAL_MS = 1000;
/** Requests arriving slowly at once over the node (64 × 8 MiB held at most); more are ended RESOURCE_EXHAUSTED. */
export const MAX_SLOW_ARRIVALS = 64;

export interface AdmissionOptions {
  /** A connection with no call open for this long may be closed to make room for a new one, ms. */
  readonly idleEvictMs?: number;
  readonly arrivalMs?: number;
  readonly slowArrivalMs?: number;
  readonly maxSlowArrivals?: number;
  readonly now?: () => number;
}

/** A request that did not decode; the admission interceptor answers INVALID_ARGUMENT in its place. */
class Undecodable {
  constructor(readonly reason: string) {}
}

/**
 * `def` with every request deserializer made total: a message that does not decode
 * becomes an Undecodable for the admission interceptor to refuse, rather than an
 * exception that grpc-js answers INTERNAL.
 */
export function guardDeserializers(def: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const guarded: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const [name, method] of Object.entries(def as Record<string, grpc.MethodDefinition<unknown, unknown>>)) {
    const decode = method.requestDeserialize;
    guarded[name] = {
      ...method,
      requestDeserialize: (buf: Buffer) => {
        try {
          return decode(buf);
        } catch (e) {
          return new Undecodable((e as Error).message);
        }
      },
    };
  }
  return guarded as grpc.ServiceDefinition;
}

/** A grpc.Server whose services all go through guardDeserializers. */
export class GuardedServer extends grpc.Server {
  override addService(service: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation): void {
    super.addService(guardDeserializers(service), implementation);
  }
}

/**
 * A status as the caller should read it: grpc-js answers a unary call with no request
 * message, or two, UNIMPLEMENTED ("... for server streaming method"), which reads as a
 * method the node lacks; it is the caller's malformed call. Long messages are cut.
 */
function clarify<S extends { code: grpc.status; details: string }>(status: S, path: string): S {
  let { code, details } = status;
  if (code === grpc.status.UNIMPLEMENTED && /^Received (no|a second) request message/.test(details)) {
    code = grpc.status.INVALID_ARGUMENT;
    details = `${path} takes exactly one request message; the call ${details.startsWith('Received no') ? 'ended without a whole one' : 'sent more than one'}`;
  }
  if (details.length > MAX_DETAILS_CHARS)
    details = `${details.slice(0, MAX_DETAILS_CHARS)}… (${details.length - MAX_DETAILS_CHARS} more characters cut)`;
  return code === status.code && details === status.details ? status : { ...status, code, details };
}

/** The key a connection is known by: what grpc-js's call.getPeer() says of it. */
function peerOf(socket: { remoteAddress?: string; remotePort?: number }): string {
  return `${socket.remoteAddress}:${socket.remotePort}`;
}

export interface Refused {
  readonly path: string;
  readonly peer: string;
  readonly code: grpc.status;
  readonly details: string;
}

/** One TCP connection, as admission sees it. */
interface Connection {
  readonly socket: Socket;
  /** Over the limit: served only to be told so, then closed. */
  readonly over: boolean;
  /** Calls open on it. */
  calls: number;
  /** When it last had no call open (accepted, or its last call ended), ms. */
  idleSince: number;
}

/** One call as admission follows it, from its headers to its status. */
interface AdmittedCall {
  readonly path: string;
  /** Its connection, as call.getPeer() names it (the key of Admission's connections). */
  readonly peer: string;
  readonly requestStream: boolean;
  readonly call: grpc.ServerInterceptingCallInterface;
  /** The connection it is counted on; undefined for a call that raced its connection's close, or once released. */
  counted: Connection | undefined;
  /** Set while a unary call's request is arriving. */
  arrival: NodeJS.Timeout | undefined;
  /** Its request has taken slowArrivalMs and is counted as arriving slowly. */
  slow: boolean;
}

export class Admission {
  /** Open connections, by peer: what grpc-js's call.getPeer() says of them. */
  readonly #connections = new Map<string, Connection>();
  /** Since start: connections closed to make room, calls refused over a limit, requests that did not decode or did not arrive in time. */
  readonly counts = { idleClosed: 0, refusedOverLimit: 0, undecodable: 0, arrivedLate: 0 };
  /** Unary calls whose request is arriving slowly. */
  #slow = 0;
  readonly #o: Required<AdmissionOptions>;

  constructor(
    private readonly limits: () => AdmissionLimits,
    private readonly onRefuse: (r: Refused) => void = () => {},
    options: AdmissionOptions = {},
  ) {
    this.#o = {
      idleEvictMs: options.idleEvictMs ?? IDLE_EVICT_MS,
      arrivalMs: options.arrivalMs ?? ARRIVAL_MS,
      slowArrivalMs: options.slowArrivalMs ?? SLOW_ARRIVAL_MS,
      maxSlowArrivals: options.maxSlowArrivals ?? MAX_SLOW_ARRIVALS,
      now: options.now ?? Date.now,
    };
  }

  /** Connections open now (over the limit ones included). */
  get connections(): number {
    return this.#connections.size;
  }

  /**
   * Take a new TCP connection. At the limit, the connection idle longest (no call open
   * for idleEvictMs) is closed to make room: idle connections cannot lock clients out.
   * With none idle, the new one is over the limit: its calls are told so, and it is
   * closed after OVERFLOW_GRACE_MS.
   */
  accept(socket: Socket): void {
    const peer = peerOf(socket);
    let over = this.#connections.size >= this.limits().maxConnections;
    if (over) {
      const idle = this.#idlest();
      if (idle !== undefined) {
        this.#connections.delete(idle[0]);
        idle[1].socket.destroy();
        this.counts.idleClosed++;
        over = false;
      }
    }
    this.#connections.set(peer, { socket, over, calls: 0, idleSince: this.#o.now() });
    if (over) setTimeout(() => socket.destroy(), OVERFLOW_GRACE_MS).unref();
    socket.once('close', () => {
      if (this.#connections.get(peer)?.socket === socket) this.#connections.delete(peer);
    });
  }

  /** The connection with no call open for longest, if one has been so for idleEvictMs. */
  #idlest(): [string, Connection] | undefined {
    let best: [string, Connection] | undefined;
    for (const entry of this.#connections) {
      const c = entry[1];
      if (c.calls === 0 && !c.over && (best === undefined || c.idleSince < best[1].idleSince)) best = entry;
    }
    return best !== undefined && this.#o.now() - best[1].idleSince >= this.#o.idleEvictMs ? best : undefined;
  }

  /** Close every connection (at shutdown, after gRPC's own grace). */
  destroyAll(): void {
    for (const c of this.#connections.values()) c.socket.destroy();
  }

  #refusal(path: string, peer: string, c: Connection | undefined): Refused | undefined {
    const { maxConnections, maxCallsPerConnection } = this.limits();
    if (c?.over)
      return {
        path,
        peer,
        code: grpc.status.RESOURCE_EXHAUSTED,
        details: `this node already serves ${maxConnections} connections (its limit, --max-connections), none of them idle; retry in a moment, or share one channel between calls`,
      };
    if (c !== undefined && c.calls >= maxCallsPerConnection)
      return {
        path,
        peer,
        code: grpc.status.RESOURCE_EXHAUSTED,
        details: `this connection already has ${maxCallsPerConnection} calls open (the node's limit, --max-calls-per-connection); wait for some to finish, or spread calls over more connections or nodes`,
      };
    return undefined;
  }

  /**
   * The server interceptor: refuses calls over the limits before their handlers run,
   * counts the rest until their status is sent or they are cancelled, and answers a
   * request that did not decode with INVALID_ARGUMENT.
   */
  interceptor(): grpc.ServerInterceptor {
    return (method, call) => {
      const c: AdmittedCall = {
        path: method.path,
        peer: call.getPeer(),
        requestStream: method.requestStream,
        call,
        counted: undefined,
        arrival: undefined,
        slow: false,
      };
      const listener = new grpc.ServerListenerBuilder()
        .withOnReceiveMetadata((metadata, next) => {
          if (this.#admit(c)) next(metadata);
        })
        .withOnReceiveMessage((message, next) => this.#receive(c, message, next))
        .withOnCancel(() => this.#release(c))
        .build();
      const responder = new grpc.ResponderBuilder()
        .withStart((next) => next(listener))
        .withSendStatus((status, next) => {
          this.#release(c);
          next(clarify(status, method.path));
        })
        .build();
      return new grpc.ServerInterceptingCall(call, responder);
    };
  }

  /** A call's headers: refused over a limit (false), or counted on its connection, a unary call's request timed as it arrives (true). */
  #admit(c: AdmittedCall): boolean {
    const connection = this.#connections.get(c.peer);
    const refused = this.#refusal(c.path, c.peer, connection);
    if (refused !== undefined) {
      this.counts.refusedOverLimit++;
      this.#end(c, refused, retryAdvice());
      return false;
    }
    if (connection !== undefined) {
      connection.calls++;
      c.counted = connection;
    }
    if (!c.requestStream) this.#timeArrival(c);
    return true;
  }

  /**
   * Time a unary call's request: after slowArrivalMs it is arriving slowly, and is ended
   * RESOURCE_EXHAUSTED if maxSlowArrivals others already are; else DEADLINE_EXCEEDED at arrivalMs.
   */
  #timeArrival(c: AdmittedCall): void {
    const { arrivalMs, slowArrivalMs, maxSlowArrivals } = this.#o;
    c.arrival = setTimeout(() => {
      if (this.#slow >= maxSlowArrivals) {
        this.counts.arrivedLate++;
        return this.#end(
          c,
          {
            path: c.path,
            peer: c.peer,
            code: grpc.status.RESOURCE_EXHAUSTED,
            details: `${c.path}: the request did not arrive in full within ${slowArrivalMs / 1000} s, and ${maxSlowArrivals} others are arriving as slowly (this node's limit); send each request whole, or retry in a moment`,
          },
          retryAdvice(),
        );
      }
      c.slow = true;
      this.#slow++;
      c.arrival = setTimeout(() => {
        this.counts.arrivedLate++;
        this.#end(
          c,
          {
            path: c.path,
            peer: c.peer,
            code: grpc.status.DEADLINE_EXCEEDED,
            details: `${c.path}: the request did not arrive in full within ${arrivalMs / 1000} s of its headers; send each request whole, or check the network`,
          },
          new grpc.Metadata(),
        );
      }, arrivalMs - slowArrivalMs);
    }, slowArrivalMs);
  }

  /** A call's request message: passed on if it decoded, else the call is answered INVALID_ARGUMENT. */
  #receive(c: AdmittedCall, message: unknown, next: (message: unknown) => void): void {
    this.#arrived(c);
    if (!(message instanceof Undecodable)) return next(message);
    this.counts.undecodable++;
    this.#end(
      c,
      {
        path: c.path,
        peer: c.peer,
        code: grpc.status.INVALID_ARGUMENT,
        details: `${c.path}: the request does not decode as this method's message (${message.reason}); is the client built from this node's proto files (ringkv.v1)?`,
      },
      new grpc.Metadata(),
    );
  }

  /** A call's request has arrived (or the call is over): stop timing it, and no longer count it as arriving slowly. */
  #arrived(c: AdmittedCall): void {
    if (c.arrival === undefined) return;
    clearTimeout(c.arrival);
    c.arrival = undefined;
    if (c.slow) this.#slow--;
    c.slow = false;
  }

  /** Answer the call with `r` before its handler sees it (or sees more of it). */
  #end(c: AdmittedCall, r: Refused, metadata: grpc.Metadata): void {
    this.#arrived(c);
    this.onRefuse(r);
    c.call.sendStatus({ code: r.code, details: r.details, metadata });
  }

  /** The call is over (its status sent, or cancelled): its connection has one call fewer open. */
  #release(c: AdmittedCall): void {
    this.#arrived(c);
    if (c.counted === undefined) return;
    if (--c.counted.calls === 0) c.counted.idleSince = this.#o.now();
    c.counted = undefined;
  }
}

/**
 * Listen on `host:port` with a TCP server of our own and hand each connection, counted by
 * `admission`, to `server` with `credentials`. Resolves with the port bound and a function
 * that stops taking connections (gRPC's shutdown then closes the ones open).
 */
export async function listenAdmitted(
  server: grpc.Server,
  host: string,
  port: number,
  credentials: grpc.ServerCredentials,
  admission: Admission,
): Promise<{ port: number; close: () => void }> {
  const injector = server.createConnectionInjector(credentials);
  const tcp = createServer({ noDelay: true }, (socket) => {
    // A connection reset before gRPC takes it must not be an unhandled error.
    socket.on('error', () => {});
    admission.accept(socket);
    injector.injectConnection(socket);
  });
  const bound = await new Promise<number>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen({ host: host.replace(/^\[(.*)\]$/, '$1'), port }, () => {
      tcp.off('error', reject);
      resolve((tcp.address() as { port: number }).port);
    });
  });
  return { port: bound, close: () => tcp.close() };
}
