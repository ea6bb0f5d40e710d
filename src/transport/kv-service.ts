/**
 * The client API (proto/ringkv/v1/kv.proto) on a node: each call goes to the coordinator
 * with the client's deadline; errors become statuses in one place (transport/status.ts).
 *
 * Owns: the request/response mapping. Must not: contain quorum logic (replication/ does).
 */
import * as grpc from '@grpc/grpc-js';
import type { Coordinator } from '../replication/coordinator.js';
import { toStatus } from './status.js';

interface PutRequest { key: Buffer; value: Buffer; context: Buffer; w: number }
interface GetRequest { key: Buffer; r: number }
interface DeleteRequest { key: Buffer; context: Buffer; w: number }

function deadlineOf(call: grpc.ServerUnaryCall<unknown, unknown>): number | undefined {
  const d = call.getDeadline();
  const ms = d instanceof Date ? d.getTime() : d;
  return Number.isFinite(ms) ? ms : undefined;
}

function unary<Req, Res>(fn: (req: Req, deadline: number | undefined) => Promise<Res>) {
  return (call: grpc.ServerUnaryCall<Req, Res>, cb: grpc.sendUnaryData<Res>): void => {
    fn(call.request, deadlineOf(call as grpc.ServerUnaryCall<unknown, unknown>)).then(
      (res) => cb(null, res),
      (e: unknown) => cb(toStatus(e)),
    );
  };
}

export function kvService(coordinator: Coordinator): grpc.UntypedServiceImplementation {
  return {
    put: unary(async (r: PutRequest, deadline) => {
      const { context } = await coordinator.put(r.key, r.value, r.context, { quorum: r.w, deadline });
      return { context };
    }),
    get: unary((r: GetRequest, deadline) => coordinator.get(r.key, { quorum: r.r, deadline })),
    delete: unary(async (r: DeleteRequest, deadline) => {
      await coordinator.delete(r.key, r.context, { quorum: r.w, deadline });
      return {};
    }),
  };
}
