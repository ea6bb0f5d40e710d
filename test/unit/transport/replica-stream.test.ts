import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalReplica } from '../../../src/replication/local-replica.js';
import { ReplicaFailure } from '../../../src/replication/replica-api.js';
import { MemoryEngine, Store, recordDigest } from '../../../src/storage/index.js';
import { GrpcReplicas, ReplicaServer } from '../../../src/transport/replica-wire.js';

const B = (s: string): Buffer => Buffer.from(s);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A replica whose reads take `delayMs`. */
class SlowReplica extends LocalReplica {
  delayMs = 0;
  override async read(key: Buffer, hintFor: string | undefined): Promise<Buffer | undefined> {
    await sleep(this.delayMs);
    return super.read(key, hintFor);
  }
}

interface Peer {
  store: Store;
  replica: SlowReplica;
  replicaServer: ReplicaServer;
  server: grpc.Server;
  address: string;
  /** Messages the server received. */
  messages: number;
  observed: string[];
  stopping?: string;
}

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function peer(o: { maxInFlight?: number; port?: number } = {}): Promise<Peer> {
  const store = await Store.open({ engine: new MemoryEngine() });
  const replica = new SlowReplica(store);
  const p = { store, replica, messages: 0, observed: [] as string[] } as Partial<Peer> as Peer;
  p.replicaServer = new ReplicaServer(replica, { refuse: () => p.stopping, maxInFlight: o.maxInFlight ?? 100, observe: (op, code) => p.observed.push(`${op}:${code}`) });
  const impl = p.replicaServer.implementation();
  const serve = impl['Stream'] as (call: grpc.ServerDuplexStream<Buffer, Buffer>) => void;
  p.server = new grpc.Server();
  p.server.addService(p.replicaServer.definition(), {
    Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      call.on('data', () => p.messages++);
      serve(call);
    },
  });
  const port = await new Promise<number>((res, rej) => p.server.bindAsync(`127.0.0.1:${o.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (e, port) => (e ? rej(e) : res(port))));
  p.address = `127.0.0.1:${port}`;
  cleanup.push(async () => {
    p.server.forceShutdown();
    await store.close();
  });
  return p;
}

function client(address: string): GrpcReplicas {
  const c = new GrpcReplicas(() => address, grpc.credentials.createInsecure());
  cleanup.push(() => c.close());
  return c;
}

const soon = (): number => Date.now() + 5000;

async function failure(p: Promise<unknown>): Promise<ReplicaFailure> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(ReplicaFailure);
  return e as ReplicaFailure;
}

describe('replica calls over one stream per peer', () => {
  it('many calls at once travel in a few messages, each answered with its own reply', async () => {
    const p = await peer({ maxInFlight: 1000 });
    const c = client(p.address);
    const keys = Array.from({ length: 300 }, (_, i) => B(`k${i}`));
    const applied = await Promise.all(keys.map((k) => c.apply('b', k, B(`v-${k}`), Buffer.alloc(0), soon())));
    expect(p.messages).toBeLessThan(30);
    const [records, digests, merged] = await Promise.all([
      Promise.all(keys.map((k) => c.read('b', k, undefined, soon()))),
      Promise.all(keys.map((k) => c.digest('b', k, soon()))),
      Promise.all(keys.map((k, i) => c.merge('b', k, applied[i]!.record, undefined, soon()))),
    ]);
    // The replica's stored record carries its own bookkeeping too: compare versions.
    records.forEach((r, i) => expect(recordDigest(r)).toEqual(recordDigest(applied[i]!.record)));
    digests.forEach((d, i) => expect(d).toEqual(recordDigest(applied[i]!.record)));
    expect(merged.every((changed) => !changed)).toBe(true);
    expect(await c.read('b', B('absent'), undefined, soon())).toBeUndefined();
    expect(await c.digest('b', B('absent'), soon())).toEqual(Buffer.alloc(0));
    // A hint is kept apart from the replica's own copy.
    expect(await c.merge('b', B('h'), applied[0]!.record, 'n9', soon())).toBe(true);
    expect(recordDigest(await c.read('b', B('h'), 'n9', soon()))).toEqual(recordDigest(applied[0]!.record));
    expect(await c.read('b', B('h'), undefined, soon())).toBeUndefined();
    expect(p.observed.filter((x) => x === 'apply:OK')).toHaveLength(300);
  });

  it('a delete travels as a tombstone', async () => {
    const p = await peer();
    const c = client(p.address);
    const put = await c.apply('b', B('k'), B('v'), Buffer.alloc(0), soon());
    await c.apply('b', B('k'), null, put.context, soon());
    expect((await p.store.get(B('k'))).deleted).toBe(true);
  });

  it("a replica's refusal carries its code; a stopping node's counts as unreachable", async () => {
    const p = await peer();
    const c = client(p.address);
    const bad = await failure(c.merge('b', B('k'), B('not a record'), undefined, soon()));
    expect(bad).toMatchObject({ kind: 'refused', code: 'KV_BAD_RECORD' });
    const ctx = (await c.apply('b', B('a'), B('v'), Buffer.alloc(0), soon())).context;
    expect(await failure(c.apply('b', B('b'), B('v'), ctx, soon()))).toMatchObject({ kind: 'refused', code: 'KV_BAD_CONTEXT', message: expect.stringMatching(/different key/) });
    p.stopping = 'node is shutting down';
    expect(await failure(c.read('b', B('a'), undefined, soon()))).toMatchObject({ kind: 'unreachable', code: 'RK_NOT_READY', message: 'node is shutting down' });
    expect(p.observed).toContain('merge:INVALID_ARGUMENT');
    expect(p.observed).toContain('read:UNAVAILABLE');
  });

  it('calls past the in-flight bound are refused RK_OVERLOADED, and taken again after', async () => {
    const p = await peer({ maxInFlight: 2 });
    p.replica.delayMs = 100;
    const c = client(p.address);
    const calls = [0, 1, 2].map((i) => c.read('b', B(`k${i}`), undefined, soon()).then(() => 'ok', (e: ReplicaFailure) => e.code));
    expect((await Promise.all(calls)).sort()).toEqual(['RK_OVERLOADED', 'ok', 'ok']);
    expect(await c.read('b', B('k'), undefined, soon())).toBeUndefined();
  });

  it('a call that gets no answer before its deadline fails as a timeout, and the stream carries on', async () => {
    const p = await peer();
    p.replica.delayMs = 400;
    const c = client(p.address);
    expect(await failure(c.read('b', B('k'), undefined, Date.now() + 50))).toMatchObject({ kind: 'timeout', code: 'RK_TIMEOUT' });
    expect(await failure(c.read('b', B('k'), undefined, Date.now() - 1))).toMatchObject({ kind: 'timeout' });
    p.replica.delayMs = 0;
    expect(await c.digest('b', B('k'), soon())).toEqual(Buffer.alloc(0));
  });

  it('knows how long a peer has had calls in flight without answering any: silentMs', async () => {
    const p = await peer();
    const c = client(p.address);
    await c.digest('b', B('warm'), soon());
    expect(c.silentMs('b')).toBe(0); // nothing in flight
    p.replica.delayMs = 400;
    const slow = c.read('b', B('k'), undefined, soon());
    await sleep(250);
    expect(c.silentMs('b')).toBeGreaterThanOrEqual(200);
    await slow;
    expect(c.silentMs('b')).toBe(0);
  });

  it('no node at the address: unreachable', async () => {
    const p = await peer();
    const address = p.address;
    p.server.forceShutdown();
    expect(await failure(client(address).read('b', B('k'), undefined, soon()))).toMatchObject({ kind: 'unreachable' });
    expect(await failure(new GrpcReplicas(() => undefined, grpc.credentials.createInsecure()).read('b', B('k'), undefined, soon()))).toMatchObject({ kind: 'unreachable', message: /no address known for node b/ });
  });

  it('a stream that breaks fails its calls in flight as unreachable; the next call opens a new one', async () => {
    const p = await peer();
    p.replica.delayMs = 300;
    const c = client(p.address);
    await c.digest('b', B('warm'), soon());
    const inFlight = failure(c.read('b', B('k'), undefined, soon()));
    await sleep(50);
    p.server.forceShutdown();
    expect(await inFlight).toMatchObject({ kind: 'unreachable' });
    // The same address comes back (a restarted node): calls reach it again.
    const port = Number(p.address.split(':')[1]);
    const again = await peer({ port });
    let got: Buffer | undefined | 'failed' = 'failed';
    for (let i = 0; i < 50 && got === 'failed'; i++) {
      got = await c.digest('b', B('k'), soon()).catch(() => 'failed' as const);
      if (got === 'failed') await sleep(100);
    }
    expect(got).toEqual(Buffer.alloc(0));
    expect(again.messages).toBeGreaterThan(0);
  });

  it("drain answers the calls running, then ends peers' streams, so that a graceful shutdown completes", async () => {
    const p = await peer();
    p.replica.delayMs = 200;
    const c = client(p.address);
    await c.digest('b', B('warm'), soon());
    const running = c.read('b', B('k'), undefined, soon());
    await sleep(50);
    const shutdown = new Promise<string>((res) => p.server.tryShutdown(() => res('shut down')));
    p.stopping = 'node is shutting down';
    p.replicaServer.drain();
    await expect(running).resolves.toBeUndefined();
    // Without the drain, the open stream would hold the shutdown until it was forced.
    expect(await Promise.race([shutdown, sleep(4000).then(() => 'still waiting')])).toBe('shut down');
    expect(await failure(c.read('b', B('k'), undefined, soon()))).toMatchObject({ kind: 'unreachable' });
  });
});
