/**
 * A KeyValue server in this process: the node's own service code (kv-service.ts) in front
 * of a scripted coordinator, whose every call goes through `run` (which answers, refuses
 * or holds it). What the client's unit tests talk to.
 */
import * as grpc from '@grpc/grpc-js';
import type { Coordinator, RequestOptions } from '../src/replication/coordinator.js';
import { BucketTable } from '../src/buckets/index.js';
import { KeyValueService } from '../src/transport/kv-service.js';

export type Run = <T>(value: T, o?: RequestOptions) => Promise<T>;

/** Serve KeyValue on a free port of 127.0.0.1; put, get and delete answer through `run`. */
export async function fakeKvServer(run: Run): Promise<{ server: grpc.Server; address: string }> {
  const coordinator = {
    put: (_k: Buffer, _v: Buffer, _c: Buffer, o: RequestOptions) => run({ context: Buffer.from('ctx') }, o),
    get: () => run({ values: [Buffer.from('v')], context: Buffer.from('ctx'), found: true }),
    delete: (_k: Buffer, _c: Buffer, o: RequestOptions) => run(undefined, o),
  } as unknown as Coordinator;
  const server = new grpc.Server();
  const kv = new KeyValueService(coordinator, new BucketTable(3));
  server.addService(
    kv.definition(),
    kv.implementation((impl) => impl),
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { server, address: `127.0.0.1:${port}` };
}
