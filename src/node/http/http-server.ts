/**
 * The node's HTTP port (--http host:port): Prometheus metrics and the status page.
 *
 *   GET /metrics         Prometheus text (metrics.ts; docs/metrics.md)
 *   GET /                the status page (web/status.html), which polls the JSON below
 *   GET /api/status      what `ringkv status --json` prints, from this node
 *   GET /api/ring        what `ringkv ring --json` prints, plus the pending ranges
 *   GET /api/transfers   what `ringkv transfers --json` gathers from every member
 *   GET /api/events      this node's last membership events, oldest first
 *   GET /api/buckets     what `ringkv bucket list --json` prints: the buckets this node knows
 *
 * The JSON is the Admin service's replies passed through the same protobuf encoding a
 * gRPC client decodes, so the page and the CLI read the very same fields.
 *
 * With --read-auth credential, everything but the page itself needs the admin token
 * (Authorization: Bearer), and gets 401 without it.
 *
 * Owns: routes and HTTP status codes. Must not: compute what it serves (admin-service.ts,
 * metrics.ts and membership-log.ts do), nor decide who may read (security/ does); it
 * serves only GET, and nothing that changes state.
 */

import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { serviceClient } from '../../transport/protos.js';
import type { NodeMetrics } from './metrics.js';
import type { Refusal } from '../../transport/admin-service.js';
import type { ListBucketsResponse } from '../../transport/generated/ringkv/v1/ListBucketsResponse.js';
import type { RingResponse } from '../../transport/generated/ringkv/v1/RingResponse.js';
import type { StatusResponse } from '../../transport/generated/ringkv/v1/StatusResponse.js';
import type { RecordedEvent } from '../membership-log.js';

/** The page, next to proto/ in the package (three levels above both src/node/http and dist/node/http). */
const PAGE = join(import.meta.dirname, '../../../web/status.html');

export interface HttpDeps {
  readonly metrics: NodeMetrics;
  status(replicas: number): StatusResponse | Refusal;
  ring(replicas: number): RingResponse | Refusal;
  events(): readonly RecordedEvent[];
  /** The buckets this node knows (Admin ListBuckets' reply). */
  buckets(): ListBucketsResponse;
  /** Every member's transfers, and who did not answer (/api/transfers). */
  transfers(): Promise<{ replies: unknown[]; unreachable: string[] }>;
  /** Why this request may not read the node's state (logged by the callee), or undefined when it may. */
  refusal(req: IncomingMessage, path: string): string | undefined;
  readonly log: Logger;
}

/** An Admin reply as a gRPC client decodes it: encoded and decoded with the method's own (de)serializers. */
function asDecoded(method: string, reply: StatusResponse | RingResponse | ListBucketsResponse): unknown {
  const def = (serviceClient('ringkv.v1.Admin').service as grpc.ServiceDefinition)[method];
  if (def === undefined) throw new Error(`no Admin method ${method}`);
  return def.responseDeserialize(def.responseSerialize(reply));
}

function isRefusal(r: StatusResponse | RingResponse | ListBucketsResponse | Refusal): r is Refusal {
  return 'code' in r && typeof r.code === 'number' && typeof r.details === 'string';
}

/** gRPC status → the HTTP status a refusal of the same kind gets. */
function httpStatus(code: number): number {
  // INVALID_ARGUMENT 3 → 400, FAILED_PRECONDITION 9 → 503 (the cluster is still forming), else 500.
  return code === 3 ? 400 : code === 9 ? 503 : 500;
}

export class HttpServer {
  readonly #server: Server;
  readonly #page: string;

  private constructor(
    private readonly deps: HttpDeps,
    server: Server,
  ) {
    this.#server = server;
    this.#page = readFileSync(PAGE, 'utf8');
  }

  /** Listen on `listen` (host:port; port 0 picks a free one). Rejects with a clear message when the port is taken. */
  static async start(listen: string, deps: HttpDeps): Promise<HttpServer> {
    const server = createServer();
    const http = new HttpServer(deps, server);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void http.#handle(req, res));
    const colon = listen.lastIndexOf(':');
    const host = listen.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
    const port = Number(listen.slice(colon + 1));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e) =>
        reject(new Error(`cannot serve HTTP on ${listen} (--http): ${e.message}`, { cause: e })),
      );
      server.listen(port, host, () => resolve());
    });
    return http;
  }

  /** host:port bound (the real port when 0 was asked for). */
  get address(): string {
    const a = this.#server.address();
    if (a === null || typeof a === 'string') return String(a);
    return a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    try {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('allow', 'GET, HEAD');
        return this.#send(
          res,
          405,
          'text/plain',
          `${req.method} is not served here: this port is read-only (GET /metrics, /, /api/...)\n`,
        );
      }
      const isPage = url.pathname === '/' || url.pathname === '/index.html';
      const refused = isPage ? undefined : this.deps.refusal(req, url.pathname);
      if (refused !== undefined) {
        res.setHeader('www-authenticate', 'Bearer realm="ringkv"');
        return this.#send(res, 401, 'text/plain', `${refused}\n`);
      }
      const replicas = Number(url.searchParams.get('replicas') ?? 0);
      if (!Number.isInteger(replicas) || replicas < 0)
        return this.#json(res, 400, {
          error: `replicas must be a whole number from 1 to 16 (0 or absent: the cluster's N), got "${url.searchParams.get('replicas')}"`,
        });
      switch (url.pathname) {
        case '/metrics':
          return this.#send(res, 200, this.deps.metrics.contentType, await this.deps.metrics.text());
        case '/':
        case '/index.html':
          return this.#send(res, 200, 'text/html; charset=utf-8', this.#page);
        case '/api/status':
          return this.#reply(res, 'Status', this.deps.status(replicas));
        case '/api/ring':
          return this.#reply(res, 'Ring', this.deps.ring(replicas));
        case '/api/transfers': {
          const { replies, unreachable } = await this.deps.transfers();
          return this.#json(res, 200, { nodes: replies, unreachable });
        }
        case '/api/events':
          return this.#json(res, 200, { events: this.deps.events() });
        case '/api/buckets':
          return this.#reply(res, 'ListBuckets', this.deps.buckets());
        default:
          return this.#send(
            res,
            404,
            'text/plain',
            `nothing at ${url.pathname}: try / (status page), /metrics, /api/status, /api/ring, /api/transfers, /api/events or /api/buckets\n`,
          );
      }
    } catch (e) {
      this.deps.log.warn({ err: e, path: url.pathname }, 'HTTP request failed');
      if (!res.headersSent) this.#json(res, 500, { error: (e as Error).message });
      else res.destroy();
    }
  }

  #reply(
    res: ServerResponse,
    method: string,
    reply: StatusResponse | RingResponse | ListBucketsResponse | Refusal,
  ): void {
    if (isRefusal(reply)) return this.#json(res, httpStatus(reply.code), { error: reply.details });
    this.#json(res, 200, asDecoded(method, reply));
  }

  #json(res: ServerResponse, status: number, body: unknown): void {
    this.#send(res, status, 'application/json', `${JSON.stringify(body)}\n`);
  }

  #send(res: ServerResponse, status: number, type: string, body: string): void {
    res.writeHead(status, {
      'content-type': type,
      'cache-control': 'no-store',
      'content-length': Buffer.byteLength(body),
    });
    res.end(res.req.method === 'HEAD' ? undefined : body);
  }
}
