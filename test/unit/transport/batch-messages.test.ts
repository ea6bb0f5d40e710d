/**
 * A batch's replica calls on the real replica stream (replica-wire.ts over
 * batched-stream.ts, loopback gRPC): the coordinator issues every key's calls in one
 * turn, so each replica gets one message for the whole batch, not one per key.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { Coordinator } from '../../../src/replication/coordinator.js';
import { LocalReplica } from '../../../src/replication/local-replica.js';
import { claimRing } from '../../../src/ring/index.js';
import { MemoryEngine, Store } from '../../../src/storage/index.js';
import { GrpcReplicas, ReplicaServer } from '../../../src/transport/replica-wire.js';

const B = (s: string): Buffer => Buffer.from(s);
const EMPTY = Buffer.alloc(0);
const quiet = { debug() {}, info() {}, warn() {} };

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A replica on a loopback port, counting the messages (not calls) it receives. */
async function peer(): Promise<{ address: string; messages: number; calls: number }> {
  const store = await Store.open({ engine: new MemoryEngine() });
  const p = { address: '', messages: 0, calls: 0 };
  const rs = new ReplicaServer(new LocalReplica(store), {
    refuse: () => undefined,
    maxInFlight: 10_000,
    observe: () => p.calls++,
  });
  const serve = rs.implementation()['Stream'] as (call: grpc.ServerDuplexStream<Buffer, Buffer>) => void;
  const server = new grpc.Server();
  server.addService(rs.definition(), {
    Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      call.on('data', () => p.messages++);
      serve(call);
    },
  });
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, x) => (e ? rej(e) : res(x))),
  );
  p.address = `127.0.0.1:${port}`;
  cleanup.push(async () => {
    server.forceShutdown();
    await store.close();
  });
  return p;
}

describe('a batch on the replica stream', () => {
  it('sends one message per replica for a GetMany of 100 keys, and one per round for a PutMany', async () => {
    const peers = { r1: await peer(), r2: await peer(), r3: await peer() };
    const ring = claimRing(
      Object.keys(peers).map((id, i) => ({ id, zone: `z${i}` })),
      3,
      { tokensPerNode: 16, seed: 'batch' },
    );
    const replicas = new GrpcReplicas(
      (id) => peers[id as keyof typeof peers]?.address,
      grpc.credentials.createInsecure(),
    );
    cleanup.push(() => replicas.close());
    // The coordinator is no replica: every call crosses the network.
    const c = new Coordinator(
      { self: 'c', replicas: 3, timeoutMs: 10_000, maxInFlight: 1000, maxKeyBytes: 4096, maxValueBytes: 1 << 20 },
      {
        placement: () => ({ ring, target: ring }),
        isUp: () => true,
        notServing: () => undefined,
        replicas,
        log: quiet,
      },
    );
    const keys = Array.from({ length: 100 }, (_, i) => B(`key-${i}`));
    // Open the streams first, so that what is counted is the batch's messages only.
    await c.get(B('warm-up'), { quorum: 3 });
    const reset = (): void => Object.values(peers).forEach((p) => ((p.messages = 0), (p.calls = 0)));

    reset();
    const speculative = (): number => c.counters.speculativeApplies + c.counters.speculativeWrites;
    const before = speculative();
    const put = await c.putMany(
      keys.map((key) => ({ key, value: B('v'), context: EMPTY })),
      { quorum: 3 },
    );
    expect(put.every((o) => o.ok)).toBe(true);
    // 100 applies (each on its key's first primary) and 200 merges (the other two replicas),
    // in at most two messages per replica: the applies' round, then the merges'. A replica
    // call slower than its kind's p99 (100 ms before there is one: a loaded machine) draws a
    // speculative call, by design, in a later turn: each is counted.
    const extra = speculative() - before;
    expect(Object.values(peers).reduce((s, p) => s + p.calls, 0)).toBe(300 + extra);
    if (extra === 0) for (const p of Object.values(peers)) expect(p.messages).toBeLessThanOrEqual(2);

    reset();
    const got = await c.getMany(keys, { quorum: 3 });
    expect(got.every((o) => o.ok && o.value.found)).toBe(true);
    // 300 reads and digests, all issued in one turn: exactly one message to each replica.
    expect(Object.values(peers).reduce((s, p) => s + p.calls, 0)).toBe(300);
    expect(Object.values(peers).map((p) => p.messages)).toEqual([1, 1, 1]);
  });
});
