import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalReplica } from '../../../src/replication/local-replica.js';
import { MemoryEngine, Store } from '../../../src/storage/index.js';
import { replicaService } from '../../../src/transport/replica-wire.js';

let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

type Handler = (call: { request: unknown }, cb: (e: Partial<grpc.StatusObject> | null, r?: unknown) => void) => void;

function call(h: Handler, request: unknown): Promise<{ err: Partial<grpc.StatusObject> | null; res?: unknown }> {
  return new Promise((resolve) => h({ request }, (err, res) => resolve({ err, res })));
}

describe('the Replica service handlers', () => {
  it('refuse calls past the in-flight bound with RESOURCE_EXHAUSTED, and take them again after', async () => {
    store = await Store.open({ engine: new MemoryEngine() });
    const svc = replicaService(new LocalReplica(store), () => undefined, 2) as Record<string, Handler>;
    const req = { key: Buffer.from('k'), hintFor: '' };
    const [a, b, c] = [call(svc.read!, req), call(svc.read!, req), call(svc.read!, req)];
    expect((await c).err).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED, details: /already runs 2 calls \(the limit\)/ });
    expect((await a).err).toBeNull();
    expect((await b).err).toBeNull();
    expect((await call(svc.read!, req)).res).toEqual({ found: false, record: Buffer.alloc(0) });
  });

  it('refuse everything with UNAVAILABLE while the node stops, and map store errors to statuses', async () => {
    store = await Store.open({ engine: new MemoryEngine() });
    let stopping = false;
    const svc = replicaService(new LocalReplica(store), () => (stopping ? 'node is shutting down' : undefined), 10) as Record<string, Handler>;
    const bad = await call(svc.merge!, { key: Buffer.from('k'), record: Buffer.from('not a record'), hintFor: '' });
    expect(bad.err).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: /does not decode/ });
    stopping = true;
    expect((await call(svc.read!, { key: Buffer.from('k'), hintFor: '' })).err).toMatchObject({ code: grpc.status.UNAVAILABLE, details: 'node is shutting down' });
  });
});
