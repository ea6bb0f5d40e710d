/**
 * The wire contract, loaded from proto/: one PackageDefinition with every service, so
 * that server reflection describes them all, and for a process that only calls a
 * service (the client, the CLI) just the file that defines it. Typed by the code
 * generated from the same files (generated/, `npm run gen:proto`): a service's client,
 * handlers and definition by its full name, and each message as a sender gives it (`Foo`)
 * and as grpc-js hands it over (`Foo__Output`).
 *
 * Owns: where the .proto files are, and the one place the loaded objects are taken as the
 * generated types. Must not: choose how .proto maps to JS by hand (the generator's
 * options, generated/services.ts, are the run time's too).
 */

import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { LOAD_OPTIONS, SERVICE_FILES, type Services } from './generated/services.js';

/** proto/ at the package root, from src/transport or dist/transport alike. */
export const PROTO_DIR = fileURLToPath(new URL('../../proto/', import.meta.url));

/** grpc-health-check's proto/, where grpc.health.v1's file is, found without loading grpc-health-check (which loads a server's worth). */
const HEALTH_DIR = dirname(
  dirname(dirname(createRequire(import.meta.url).resolve('grpc-health-check/proto/health/v1/health.proto'))),
);

/** The wire contract's version, gossiped by every node (field `schema`). */
export const WIRE_SCHEMA = 'ringkv.v1';

export type ServiceName = keyof Services;
/** A service's client, its methods typed by the generated request and response types. */
export type ServiceClient<S extends ServiceName> = Services[S]['client'];
/** A service's server handlers, by method name as in the .proto (`Status`, `StreamRange`). */
export type ServiceHandlers<S extends ServiceName> = Services[S]['handlers'];
export type ServiceDefinitionOf<S extends ServiceName> = Services[S]['definition'];
export interface ServiceConstructor<S extends ServiceName> {
  new (address: string, credentials: grpc.ChannelCredentials, options?: Partial<grpc.ChannelOptions>): ServiceClient<S>;
  readonly service: ServiceDefinitionOf<S>;
  readonly serviceName: string;
}

/** ringkv's own files: the contract test/unit/transport/proto-compat.test.ts holds to its rule. */
export const PROTO_FILES: readonly string[] = Object.values(SERVICE_FILES).filter((f) => f.startsWith('ringkv/'));

const OPTIONS: protoLoader.Options = { ...LOAD_OPTIONS, includeDirs: [PROTO_DIR, HEALTH_DIR] };

let cached: { definition: protoLoader.PackageDefinition; grpcObject: grpc.GrpcObject } | undefined;
const byFile = new Map<string, grpc.GrpcObject>();

/** Every service, grpc.health.v1 too, so that reflection describes the health service as well. */
export function protos(): { definition: protoLoader.PackageDefinition; grpcObject: grpc.GrpcObject } {
  if (cached === undefined) {
    const definition = protoLoader.loadSync([...new Set(Object.values(SERVICE_FILES))], OPTIONS);
    cached = { definition, grpcObject: grpc.loadPackageDefinition(definition) };
  }
  return cached;
}

/** A service's client constructor (and its definition, `.service`) by its full name, e.g. 'ringkv.v1.Admin'. */
export function serviceClient<S extends ServiceName>(fullName: S): ServiceConstructor<S> {
  const file = SERVICE_FILES[fullName];
  // All of them once loaded (a node), else only the one file (a client).
  let o: grpc.GrpcObject | grpc.ServiceClientConstructor | grpc.ProtobufTypeDefinition | undefined =
    cached?.grpcObject ?? byFile.get(file);
  if (o === undefined) byFile.set(file, (o = grpc.loadPackageDefinition(protoLoader.loadSync(file, OPTIONS))));
  for (const part of fullName.split('.'))
    o = o !== undefined && !('format' in o) && typeof o !== 'function' ? o[part] : undefined;
  if (typeof o !== 'function') throw new Error(`no service ${fullName} in ${file}`);
  // The one place the loaded constructor is taken as the generated type: both come from `file`.
  return o as unknown as ServiceConstructor<S>;
}

/** Room for a message's framing beyond its largest payload: key, context, field tags. */
const FRAMING_BYTES = 64 * 1024;
/**
 * Largest message a node takes or sends (server and node-to-node channels): a key's
 * versions at the store's record cap (8 MiB by default, storage/store-options.ts) and framing.
 * Gossip of a 1,000-node table is about 1.5 MB. Just above the largest legitimate message,
 * so anything bigger is refused by gRPC (RESOURCE_EXHAUSTED) before it is buffered.
 */
export const NODE_MAX_MESSAGE_BYTES = 8 * 1024 * 1024 + FRAMING_BYTES;

/** A client's methods that take one request and answer one response (as grpc-js types them: the last overload, request and callback). */
type AnyUnary = (argument: any, callback: grpc.requestCallback<any>) => grpc.ClientUnaryCall;
export type UnaryMethod<C> = { [M in keyof C]: C[M] extends AnyUnary ? M : never }[keyof C] & string;
export type RequestOf<C, M extends keyof C> = C[M] extends (
  argument: infer Req,
  callback: grpc.requestCallback<infer _>,
) => grpc.ClientUnaryCall
  ? Req
  : never;
export type ResponseOf<C, M extends keyof C> = C[M] extends (
  argument: infer _,
  callback: grpc.requestCallback<infer Res>,
) => grpc.ClientUnaryCall
  ? Res
  : never;

type Unary<Req, Res> = (
  argument: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: grpc.requestCallback<Res>,
) => grpc.ClientUnaryCall;

/** One unary call of `method` on `client` (made by serviceClient), as a promise of its decoded response. */
export function callUnary<C extends grpc.Client, M extends UnaryMethod<C>>(
  client: C,
  method: M,
  req: RequestOf<C, M>,
  options: grpc.CallOptions,
  metadata = new grpc.Metadata(),
): Promise<ResponseOf<C, M>> {
  // Every generated unary method has this overload: (request, metadata, options, callback).
  const fn = client[method] as unknown as Unary<RequestOf<C, M>, ResponseOf<C, M>>;
  return new Promise((resolve, reject) => {
    fn.call(client, req, metadata, options, (e, r) => (e ? reject(e) : resolve(r!)));
  });
}
