/**
 * A bare grpc-js unary echo server (bench/echo.proto) in its own process: the ceiling for
 * one gRPC hop on this machine. Prints "listening PORT" once bound; SIGTERM stops it.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';

const def = protoLoader.loadSync(fileURLToPath(new URL('./echo.proto', import.meta.url)), {
  keepCase: false,
  longs: Number,
  defaults: true,
});
const Echo = (grpc.loadPackageDefinition(def) as unknown as { bench: { v1: { Echo: grpc.ServiceClientConstructor } } })
  .bench.v1.Echo;
const server = new grpc.Server();
server.addService(Echo.service, {
  echo: (call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => cb(null, call.request),
});
server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) throw err;
  console.log(`listening ${port}`);
});
process.on('SIGTERM', () => server.tryShutdown(() => process.exit(0)));
