/**
 * The wire contract, loaded from proto/: one PackageDefinition with every service, so
 * that server reflection describes them all, and for a process that only calls a
 * service (the client, the CLI) just the file that defines it.
 *
 * Owns: where the .proto files are and how they map to JS (64-bit integers as numbers —
 * generations, versions and byte counts stay below 2^53 — and enums as names).
 */

import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** proto/ at the package root, from src/transport or dist/transport alike. */
export const PROTO_DIR = fileURLToPath(new URL('../../proto/', import.meta.url));

/** grpc.health.v1's file, found without loading grpc-health-check (which loads a server's worth). */
const HEALTH_PROTO = createRequire(import.meta.url).resolve('grpc-health-check/proto/health/v1/health.proto');

/** The wire contract's version, gossiped by every node (field `schema`). */
export const WIRE_SCHEMA = 'ringkv.v1';

/** Each service and the file that defines it. */
const SERVICE_FILES: Readonly<Record<string, string>> = {
  'ringkv.v1.KeyValue': 'ringkv/v1/kv.proto',
  'ringkv.v1.Admin': 'ringkv/v1/admin.proto',
  'ringkv.internal.v1.Gossip': 'ringkv/internal/v1/gossip.proto',
  'ringkv.internal.v1.Replica': 'ringkv/internal/v1/replica.proto',
  'ringkv.internal.v1.Handoff': 'ringkv/internal/v1/handoff.proto',
  'ringkv.internal.v1.Repair': 'ringkv/internal/v1/repair.proto',
  'ringkv.internal.v1.Control': 'ringkv/internal/v1/control.proto',
  'grpc.health.v1.Health': HEALTH_PROTO,
};

/** ringkv's own files: the contract test/unit/transport/proto-compat.test.ts holds to its rule. */
export const PROTO_FILES = Object.values(SERVICE_FILES).filter((f) => f !== HEALTH_PROTO);

const LOAD_OPTIONS: protoLoader.Options = { includeDirs: [PROTO_DIR], keepCase: false, longs: Number, enums: String, defaults: true, arrays: true };

let cached: { definition: protoLoader.PackageDefinition; grpcObject: grpc.GrpcObject } | undefined;
const byFile = new Map<string, grpc.GrpcObject>();

/** Every service, grpc.health.v1 too, so that reflection describes the health service as well. */
export function protos(): { definition: protoLoader.PackageDefinition; grpcObject: grpc.GrpcObject } {
  if (cached === undefined) {
    const definition = protoLoader.loadSync(Object.values(SERVICE_FILES), LOAD_OPTIONS);
    cached = { definition, grpcObject: grpc.loadPackageDefinition(definition) };
  }
  return cached;
}

/** A service constructor by its full name, e.g. 'ringkv.v1.Admin'. */
export function serviceClient(fullName: string): grpc.ServiceClientConstructor {
  const file = SERVICE_FILES[fullName];
  if (file === undefined) throw new Error(`no service ${fullName} in ${PROTO_FILES.join(', ')}`);
  // All of them once loaded (a node), else only the one file (a client).
  let o: unknown = cached?.grpcObject ?? byFile.get(file);
  if (o === undefined) byFile.set(file, (o = grpc.loadPackageDefinition(protoLoader.loadSync(file, LOAD_OPTIONS))));
  for (const part of fullName.split('.')) o = (o as Record<string, unknown>)[part];
  return o as grpc.ServiceClientConstructor;
}

/** Room for a message's framing beyond its largest payload: key, context, field tags. */
const FRAMING_BYTES = 64 * 1024;
/**
 * Largest message a node takes or sends (server and node-to-node channels): a key's
 * versions at the store's record cap (8 MiB by default, storage/options.ts) and framing.
 * Gossip of a 1,000-node table is about 1.5 MB. Just above the largest legitimate message,
 * so anything bigger is refused by gRPC (RESOURCE_EXHAUSTED) before it is buffered.
 */
export const NODE_MAX_MESSAGE_BYTES = 8 * 1024 * 1024 + FRAMING_BYTES;
/** Largest request a client sends: one value at the 1 MiB cap, with its key and context. */
export const CLIENT_MAX_SEND_BYTES = 1024 * 1024 + FRAMING_BYTES;

type Callback = (e: grpc.ServiceError | null, r: unknown) => void;
type Unary = (...args: unknown[]) => void;

/** One unary call of `method` on a client made from these protos, as a promise. */
export function callUnary<T>(client: grpc.Client, method: string, req: unknown, options: grpc.CallOptions, metadata?: grpc.Metadata): Promise<T> {
  const fn = (client as unknown as Record<string, Unary>)[method];
  if (fn === undefined) return Promise.reject(new Error(`no method ${method} on this client`));
  return new Promise((resolve, reject) => {
    const done: Callback = (e, r) => (e ? reject(e) : resolve(r as T));
    if (metadata === undefined) fn.call(client, req, options, done);
    else fn.call(client, req, metadata, options, done); // grpc-js: (request, [metadata], [options], callback)
  });
}
