/**
 * The client's data-type calls against two KeyValue servers in this process (the node's
 * own service code, a scripted coordinator behind it): a counter update or set update
 * hedged or failed over to the second node carries the request id of its first attempt,
 * and each update has an id of its own. That is what makes a retried increment count once.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BucketTable } from '../../../src/buckets/index.js';
import { Client } from '../../../src/client/index.js';
import type { Coordinator, RequestOptions } from '../../../src/replication/coordinator.js';
import { KeyValueService } from '../../../src/transport/kv-service.js';

/** A node whose coordinator records each update's request id, and holds (`hang`) or refuses (`refuse`) updates as told. */
interface Node {
  address: string;
  server: grpc.Server;
  requestIds: string[];
  mode: 'answer' | 'hang' | 'refuse';
}

async function fakeNode(): Promise<Node> {
  const node = { requestIds: [] as string[], mode: 'answer' } as Node;
  const update = <T>(value: T, o: RequestOptions | undefined): Promise<T> => {
    node.requestIds.push(o?.requestId?.toString('hex') ?? '(none)');
    if (node.mode === 'hang') return new Promise(() => undefined);
    if (node.mode === 'refuse')
      return Promise.reject(
        Object.assign(new Error('this node is shutting down; send the request to another node'), {
          code: 'RK_UNAVAILABLE',
        }),
      );
    return Promise.resolve(value);
  };
  const coordinator = {
    counterUpdate: (_k: Buffer, amount: number, o: RequestOptions) => update({ value: BigInt(amount) }, o),
    setUpdate: (_k: Buffer, _ops: unknown, o: RequestOptions) => update(undefined, o),
  } as unknown as Coordinator;
  const buckets = new BucketTable(3);
  const base = { n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'siblings' } as const;
  buckets.create('hits', { ...base, type: 'counter' }, 1000, 'n1');
  buckets.create('tags', { ...base, type: 'set' }, 1000, 'n1');
  node.server = new grpc.Server();
  const kv = new KeyValueService(coordinator, buckets);
  node.server.addService(
    kv.definition(),
    kv.implementation((impl) => impl),
  );
  const port = await new Promise<number>((resolve, reject) =>
    node.server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  node.address = `127.0.0.1:${port}`;
  return node;
}

let a: Node;
let b: Node;
beforeAll(async () => {
  [a, b] = await Promise.all([fakeNode(), fakeNode()]);
});
afterAll(() => {
  a?.server.forceShutdown();
  b?.server.forceShutdown();
});

/** A client of a and b taking them in turn (so that calls start at a and at b), hedging after 20 ms. */
function client(): Client {
  return new Client({
    nodes: [a.address, b.address],
    tokenAware: false,
    adaptive: false,
    hedge: { minMs: 20, maxMs: 20 },
    deadlineMs: 3000,
  });
}

describe("the client's data-type updates", () => {
  it.each([
    ['hedged away from a node that holds them', 'hang'],
    ['failed over from a node that refuses them', 'refuse'],
  ] as const)('carry one request id on every attempt when %s, and a new one per update', async (_how, mode) => {
    a.mode = mode;
    b.mode = 'answer';
    a.requestIds.length = b.requestIds.length = 0;
    const c = client();
    try {
      for (let i = 1; i <= 6; i++)
        expect((await c.counterIncrement(`k${i}`, i, { bucket: 'hits' })).value).toBe(BigInt(i));
      for (let i = 0; i < 4; i++) await c.setAdd(`s${i}`, ['x'], { bucket: 'tags' });
    } finally {
      c.close();
    }
    // Some updates started at a, and every one of those reached b with the same id.
    expect(a.requestIds.length).toBeGreaterThan(0);
    for (const id of a.requestIds) expect(b.requestIds).toContain(id);
    // b saw each update once, each with its own id (16 bytes for a counter's, drawn at random).
    expect(b.requestIds).toHaveLength(10);
    expect(new Set(b.requestIds).size).toBe(10);
    expect(b.requestIds.every((id) => id.length === 32)).toBe(true);
  });

  it('sends the request id it is given, so that an update retried by the caller counts once', async () => {
    a.mode = b.mode = 'answer';
    a.requestIds.length = b.requestIds.length = 0;
    const c = client();
    try {
      const requestId = Buffer.from('retry-of-one-increment');
      await c.counterUpdate('k', 1, { bucket: 'hits', requestId });
      await c.counterUpdate('k', 1, { bucket: 'hits', requestId });
      // Each update reached a node at least once (a hedge under load may send one to both), always with the given id.
      const sent = [...a.requestIds, ...b.requestIds];
      expect(sent.length).toBeGreaterThanOrEqual(2);
      expect(new Set(sent)).toEqual(new Set([requestId.toString('hex')]));
      await expect(c.counterUpdate('k', 1, { bucket: 'hits', requestId: Buffer.alloc(0) })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
      });
    } finally {
      c.close();
    }
  });
});
