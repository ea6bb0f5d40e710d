/**
 * What a node lets in before any handler runs: connections up to a limit, calls per
 * connection up to a limit, and only requests that decode.
 *
 * - The node listens with its own TCP server and hands each connection to gRPC
 *   (grpc-js's connection injector), so that it counts them. A connection over
 *   `maxConnections` is still served long enough to be told why: each of its calls gets
 *   RESOURCE_EXHAUSTED, and it is closed after `OVERFLOW_GRACE_MS`.
 * - A connection with `maxCallsPerConnection` calls open (unary calls and streams alike)
 *   gets RESOURCE_EXHAUSTED for the next one. The calls on a stream are limited by the
 *   stream's server (batched-stream.ts), and a node's coordinated requests by the
 *   coordinator (RK_OVERLOADED).
 * - A request that does not decode as its method's message is answered INVALID_ARGUMENT
 *   (grpc-js would answer INTERNAL, which reads as the node's fault).
 *
 * Every RESOURCE_EXHAUSTED carries `grpc-retry-pushback-ms` (gRPC's retry advice) and says
 * in its message what to do.
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

export class Admission {
  /** Open connections, by peer: what grpc-js's call.getPeer() says of them. */
  readonly #sockets = new Map<string, Socket>();
  /** Peers whose connection is over the limit: served only to be told so. */
  readonly #overflow = new Set<string>();
  /** Calls open, by peer (connection). */
  readonly #calls = new Map<string, number>();

  constructor(
    private readonly limits: () => AdmissionLimits,
    private readonly onRefuse: (r: Refused) => void = () => {},
  ) {}

  /** Connections open now (over the limit ones included). */
  get connections(): number {
    return this.#sockets.size;
  }

  /** Take a new TCP connection: count it; one over the limit is closed after a grace period. */
  accept(socket: Socket): void {
    const peer = peerOf(socket);
    const over = this.#sockets.size >= this.limits().maxConnections;
    this.#sockets.set(peer, socket);
    if (over) {
      this.#overflow.add(peer);
      socket.setTimeout(OVERFLOW_GRACE_MS, () => socket.destroy());
      setTimeout(() => socket.destroy(), OVERFLOW_GRACE_MS).unref();
    }
    socket.once('close', () => {
      this.#sockets.delete(peer);
      this.#overflow.delete(peer);
      this.#calls.delete(peer);
    });
  }

  /** Close every connection (at shutdown, after gRPC's own grace). */
  destroyAll(): void {
    for (const s of this.#sockets.values()) s.destroy();
  }

  #refusal(path: string, peer: string): Refused | undefined {
    const { maxConnections, maxCallsPerConnection } = this.limits();
    if (this.#overflow.has(peer))
      return { path, peer, code: grpc.status.RESOURCE_EXHAUSTED, details: `this node already serves ${maxConnections} connections (its limit, --max-connections); retry in a moment, or share one channel between calls` };
    if ((this.#calls.get(peer) ?? 0) >= maxCallsPerConnection)
      return { path, peer, code: grpc.status.RESOURCE_EXHAUSTED, details: `this connection already has ${maxCallsPerConnection} calls open (the node's limit, --max-calls-per-connection); wait for some to finish, or spread calls over more connections or nodes` };
    return undefined;
  }

  /**
   * The server interceptor: refuses calls over the limits before their handlers run,
   * counts the rest until their status is sent or they are cancelled, and answers a
   * request that did not decode with INVALID_ARGUMENT.
   */
  interceptor(): grpc.ServerInterceptor {
    return (method, call) => {
      const peer = call.getPeer();
      let counted = false;
      const release = (): void => {
        if (!counted) return;
        counted = false;
        const n = (this.#calls.get(peer) ?? 1) - 1;
        if (n > 0) this.#calls.set(peer, n);
        else this.#calls.delete(peer);
      };
      const listener = new grpc.ServerListenerBuilder()
        .withOnReceiveMetadata((metadata, next) => {
          const refused = this.#refusal(method.path, peer);
          if (refused !== undefined) {
            this.onRefuse(refused);
            call.sendStatus({ code: refused.code, details: refused.details, metadata: retryAdvice() });
            return;
          }
          // Calls are counted only on open connections: one that raced its connection's
          // close must not leave a count behind.
          if (this.#sockets.has(peer)) {
            counted = true;
            this.#calls.set(peer, (this.#calls.get(peer) ?? 0) + 1);
          }
          next(metadata);
        })
        .withOnReceiveMessage((message, next) => {
          if (!(message instanceof Undecodable)) return next(message);
          const refused = { path: method.path, peer, code: grpc.status.INVALID_ARGUMENT, details: `${method.path}: the request does not decode as this method's message (${message.reason}); is the client built from this node's proto files (ringkv.v1)?` };
          this.onRefuse(refused);
          call.sendStatus({ code: refused.code, details: refused.details, metadata: new grpc.Metadata() });
        })
        .withOnCancel(release)
        .build();
      const responder = new grpc.ResponderBuilder()
        .withStart((next) => next(listener))
        .withSendStatus((status, next) => {
          release();
          next(status);
        })
        .build();
      return new grpc.ServerInterceptingCall(call, responder);
    };
  }
}

/**
 * Listen on `host:port` with a TCP server of our own and hand each connection, counted by
 * `admission`, to `server` with `credentials`. Resolves with the port bound and a function
 * that stops taking connections (gRPC's shutdown then closes the ones open).
 */
export async function listenAdmitted(server: grpc.Server, host: string, port: number, credentials: grpc.ServerCredentials, admission: Admission): Promise<{ port: number; close: () => void }> {
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
