/**
 * The Replica service (proto/ringkv/internal/v1/replica.proto) on both sides: the client
 * that implements ReplicaApi over unary gRPC calls, one channel per peer; and the server
 * handlers that run a peer's calls on this node's LocalReplica.
 *
 * Owns: the mapping and the channels. Must not: interpret the calls (replication/ does).
 */
import * as grpc from '@grpc/grpc-js';
import type { ApplyResult, ReplicaApi } from '../replication/replica-api.js';
import type { LocalReplica } from '../replication/local-replica.js';
import { PeerChannels } from './peer-channels.js';
import { callUnary } from './protos.js';
import { toStatus } from './status.js';

export class GrpcReplicas implements ReplicaApi {
  readonly #channels = new PeerChannels('ringkv.internal.v1.Replica');

  constructor(
    /** A node's address as gossip knows it. */
    private readonly addressOf: (id: string) => string | undefined,
  ) {}

  apply(node: string, key: Buffer, value: Buffer | null, context: Buffer, deadline: number): Promise<ApplyResult> {
    const req = { key, value: value ?? Buffer.alloc(0), tombstone: value === null, context };
    return this.#call(node, 'apply', req, deadline) as Promise<ApplyResult>;
  }

  async merge(node: string, key: Buffer, record: Buffer, hintFor: string | undefined, deadline: number): Promise<boolean> {
    const r = (await this.#call(node, 'merge', { key, record, hintFor: hintFor ?? '' }, deadline)) as { changed: boolean };
    return r.changed;
  }

  async read(node: string, key: Buffer, hintFor: string | undefined, deadline: number): Promise<Buffer | undefined> {
    const r = (await this.#call(node, 'read', { key, hintFor: hintFor ?? '' }, deadline)) as { found: boolean; record: Buffer };
    return r.found ? r.record : undefined;
  }

  async #call(node: string, method: string, req: unknown, deadline: number): Promise<unknown> {
    return callUnary(this.#channels.forNode(node, this.addressOf), method, req, { deadline });
  }

  /** Close channels to every address not in `keep`. */
  retain(keep: ReadonlySet<string>): void {
    this.#channels.retain(keep);
  }

  close(): void {
    this.#channels.close();
  }
}

/**
 * The server side: a peer's replica calls, run here. `refuse` says why not to serve now
 * (stopping), if so. At most `maxInFlight` calls run at once; more are refused with
 * RESOURCE_EXHAUSTED (the coordinator counts that replica as failed), so a flood from
 * peers cannot queue without bound.
 */
export function replicaService(local: LocalReplica, refuse: () => string | undefined, maxInFlight: number): grpc.UntypedServiceImplementation {
  let inFlight = 0;
  const handle =
    <Req, Res>(fn: (req: Req) => Promise<Res>) =>
    (call: grpc.ServerUnaryCall<Req, Res>, cb: grpc.sendUnaryData<Res>): void => {
      const why = refuse();
      if (why !== undefined) return cb({ code: grpc.status.UNAVAILABLE, details: why });
      if (inFlight >= maxInFlight) return cb({ code: grpc.status.RESOURCE_EXHAUSTED, details: `this replica already runs ${inFlight} calls (the limit); the coordinator should back off` });
      inFlight++;
      fn(call.request)
        .finally(() => inFlight--)
        .then(
          (res) => cb(null, res),
          (e: unknown) => cb(toStatus(e)),
        );
    };
  return {
    apply: handle(async (r: { key: Buffer; value: Buffer; tombstone: boolean; context: Buffer }) => local.apply(r.key, r.tombstone ? null : r.value, r.context)),
    merge: handle(async (r: { key: Buffer; record: Buffer; hintFor: string }) => ({ changed: await local.merge(r.key, r.record, r.hintFor === '' ? undefined : r.hintFor) })),
    read: handle(async (r: { key: Buffer; hintFor: string }) => {
      const record = await local.read(r.key, r.hintFor === '' ? undefined : r.hintFor);
      return record === undefined ? { found: false, record: Buffer.alloc(0) } : { found: true, record };
    }),
  };
}
