/**
 * GetMany and PutMany end to end in one process: the client (src/client/kv.ts), the
 * service (kv-service.ts) and a fake cluster's coordinators. Bad input is checked twice:
 * by the client before sending, and by the node, called here without the client.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { BucketTable } from '../../../src/buckets/index.js';
import { Client, MAX_BATCH_KEYS, MAX_BATCH_VALUE_BYTES } from '../../../src/client/index.js';
import type { Coordinator } from '../../../src/replication/coordinator.js';
import { KeyValueService } from '../../../src/transport/kv-service.js';
import { NODE_MAX_MESSAGE_BYTES, callUnary, serviceClient } from '../../../src/transport/protos.js';
import { freePort } from '../../../testkit/ports.js';
import { FakeCluster } from '../replication/fake-cluster.js';

const B = (s: string): Buffer => Buffer.from(s);
const S = grpc.status;
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function serve(coordinator: Coordinator, buckets: BucketTable): Promise<string> {
  const service = new KeyValueService(coordinator, buckets);
  // As a node's server takes them (node.ts).
  const server = new grpc.Server({
    'grpc.max_receive_message_length': NODE_MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': NODE_MAX_MESSAGE_BYTES,
  });
  server.addService(
    service.definition(),
    service.implementation((impl) => impl),
  );
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
  );
  cleanup.push(() => server.forceShutdown());
  return `127.0.0.1:${port}`;
}

/** n1 of a 3-node fake cluster serving KeyValue, with bucket "carts" (N=3, W=3). */
async function node(): Promise<{ cluster: FakeCluster; address: string }> {
  const cluster = await FakeCluster.create(3);
  cleanup.push(() => cluster.close());
  const buckets = new BucketTable(3);
  buckets.create('carts', { n: 3, r: 0, w: 3, ttlMs: 0, siblings: 'siblings' }, 1000, 'n1');
  return { cluster, address: await serve(cluster.coordinator('n1'), buckets) };
}

function client(nodes: string[]): Client {
  const c = new Client({ nodes, tokenAware: false, deadlineMs: 10_000 });
  cleanup.push(() => c.close());
  return c;
}

/** The raw KeyValue client, to send what ringkv/client would refuse before sending. */
function raw(address: string): InstanceType<ReturnType<typeof serviceClient<'ringkv.v1.KeyValue'>>> {
  const KeyValue = serviceClient('ringkv.v1.KeyValue');
  const c = new KeyValue(address, grpc.credentials.createInsecure(), {
    'grpc.max_send_message_length': NODE_MAX_MESSAGE_BYTES,
  });
  cleanup.push(() => c.close());
  return c;
}

const soon = (): { deadline: number } => ({ deadline: Date.now() + 10_000 });

describe('GetMany and PutMany', () => {
  it('put and get a batch in a bucket: each key its own result, in order; the default bucket is apart', async () => {
    const { cluster, address } = await node();
    const c = client([address]);
    const keys = Array.from({ length: MAX_BATCH_KEYS - 1 }, (_, i) => `cart-${i}`);
    const put = await c.putMany(
      keys.map((key, i) => ({ key, value: `v${i}` })),
      { bucket: 'carts' },
    );
    expect(put.map((r) => r.ok)).toEqual(keys.map(() => true));
    expect(put[0]!.key.toString()).toBe('cart-0');
    const got = await c.getMany([...keys, 'absent'], { bucket: 'carts' });
    expect(
      got.map((r) => (r.ok ? (r.value.found ? r.value.values.map(String).join() : 'absent') : r.error.code)),
    ).toEqual([...keys.map((_, i) => `v${i}`), 'absent']);
    // Stored under the bucket's keys: the default bucket has none of them.
    expect((await c.getMany(['cart-0'])).map((r) => r.ok && r.value.found)).toEqual([false]);
    // A context from the batch replaces the value, as a single put's would.
    const first = got[0]!;
    if (!first.ok) throw first.error;
    await c.putMany([{ key: 'cart-0', value: 'new', context: first.value.context }], { bucket: 'carts' });
    expect((await c.get('cart-0', { bucket: 'carts' })).values.map(String)).toEqual(['new']);
    // The bucket's W=3 applied to every item: each is on all three replicas already.
    for (const id of ['n1', 'n2', 'n3'])
      expect(
        (await cluster.store(id).get(Buffer.concat([B('\x00bkt\x05carts'), B('cart-7')]))).values.map(String),
      ).toEqual(['v7']);
  });

  it('refuses a malformed call whole, with the status a single call would get', async () => {
    const { address } = await node();
    const kv = raw(address);
    const refused = async (p: Promise<unknown>, code: grpc.status, details: RegExp): Promise<void> => {
      await expect(p).rejects.toMatchObject({ code, details: expect.stringMatching(details) });
    };
    const item = (key: string, value = 'v') => ({ key: B(key), value: B(value) });
    await refused(callUnary(kv, 'GetMany', { keys: [] }, soon()), S.INVALID_ARGUMENT, /at least one key/);
    await refused(
      callUnary(kv, 'GetMany', { keys: Array.from({ length: 101 }, (_, i) => B(`k${i}`)) }, soon()),
      S.INVALID_ARGUMENT,
      /101 keys is over the limit of 100/,
    );
    await refused(callUnary(kv, 'GetMany', { keys: [B('k')], r: 4 }, soon()), S.INVALID_ARGUMENT, /r must be 1 to N=3/);
    await refused(
      callUnary(kv, 'GetMany', { keys: [B('k')], bucket: 'Bad Name!' }, soon()),
      S.INVALID_ARGUMENT,
      /bucket/,
    );
    await refused(
      callUnary(kv, 'GetMany', { keys: [B('k')], bucket: 'nosuch' }, soon()),
      S.NOT_FOUND,
      /there is no bucket nosuch/,
    );
    await refused(callUnary(kv, 'PutMany', { items: [] }, soon()), S.INVALID_ARGUMENT, /at least one item/);
    await refused(
      callUnary(kv, 'PutMany', { items: Array.from({ length: 101 }, (_, i) => item(`k${i}`)) }, soon()),
      S.INVALID_ARGUMENT,
      /101 items is over the limit of 100/,
    );
    const mib = 'x'.repeat(1 << 20);
    await refused(
      callUnary(kv, 'PutMany', { items: Array.from({ length: 5 }, (_, i) => item(`k${i}`, mib)) }, soon()),
      S.INVALID_ARGUMENT,
      new RegExp(`over the limit of ${MAX_BATCH_VALUE_BYTES} bytes per batch`),
    );
    await refused(
      callUnary(kv, 'PutMany', { items: [item('k')], w: 4 }, soon()),
      S.INVALID_ARGUMENT,
      /w must be 1 to N=3/,
    );
    await refused(
      callUnary(kv, 'PutMany', { items: [item('k')], bucket: 'nosuch' }, soon()),
      S.NOT_FOUND,
      /there is no bucket nosuch/,
    );
  });

  it('refuses a bad key, a repeated key, a reserved key and a bad value on their own; the others run', async () => {
    const { address } = await node();
    const kv = raw(address);
    const reserved = Buffer.from([0x00, 0x62, 0x6b, 0x74, 1, 2]);
    const put = await callUnary(
      kv,
      'PutMany',
      {
        items: [
          { key: B('a'), value: B('1') },
          { key: B(''), value: B('2') },
          { key: B('a'), value: B('3') },
          { key: reserved, value: B('4') },
          { key: B('k'.repeat(4097)), value: B('5') },
          { key: B('b'), value: Buffer.alloc((1 << 20) + 1) },
          { key: B('c'), value: B('') },
          { key: B('d'), value: B('6') },
        ],
      },
      soon(),
    );
    const codes = (rs: { key: Buffer; error?: { code: number; details: string } | null }[]): (string | number)[] =>
      rs.map((r) => (r.error ? r.error.code : 'ok'));
    expect(codes(put.results)).toEqual([
      'ok',
      S.INVALID_ARGUMENT,
      S.INVALID_ARGUMENT,
      S.INVALID_ARGUMENT,
      S.INVALID_ARGUMENT,
      S.INVALID_ARGUMENT,
      S.INVALID_ARGUMENT,
      'ok',
    ]);
    expect(put.results.map((r) => r.key)).toEqual([
      B('a'),
      B(''),
      B('a'),
      reserved,
      B('k'.repeat(4097)),
      B('b'),
      B('c'),
      B('d'),
    ]);
    expect(put.results[2]!.error!.details).toMatch(/appears more than once/);
    expect(put.results[3]!.error!.details).toMatch(/may not begin with the bytes 00 62 6b 74/);
    expect(put.results[5]!.error!.details).toMatch(/over the limit of 1048576 bytes/);
    const get = await callUnary(kv, 'GetMany', { keys: [B('d'), B('d'), B(''), reserved, B('a')] }, soon());
    expect(codes(get.results)).toEqual(['ok', S.INVALID_ARGUMENT, S.INVALID_ARGUMENT, S.INVALID_ARGUMENT, 'ok']);
    expect(get.results[4]!.get).toMatchObject({ found: true, values: [B('1')] });
  });

  it('gives replication failures per key: an unreachable replica fails only the keys that need it', async () => {
    const cluster = await FakeCluster.create(5);
    cleanup.push(() => cluster.close());
    const c = client([await serve(cluster.coordinator('n1'), new BucketTable(3))]);
    const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
    await c.putMany(
      keys.map((key) => ({ key, value: 'v' })),
      { w: 3 },
    );
    cluster.net.faults.set('*>n4', { unreachable: true });
    const needsN4 = keys.map((k) => cluster.owners(k).includes('n4'));
    const got = await c.getMany(keys, { r: 3 });
    expect(got.map((r) => (r.ok ? 'ok' : r.error.code))).toEqual(needsN4.map((x) => (x ? S.UNAVAILABLE : 'ok')));
    const failed = got.find((r) => !r.ok);
    expect(failed && !failed.ok && failed.error.details).toMatch(/needs R=3|got \d of R=3/);
  });

  it('checks on the client what a node would refuse, before sending', async () => {
    const c = client([`127.0.0.1:${await freePort()}`]); // nothing listens: a call that were sent would be UNAVAILABLE
    await expect(c.getMany([])).rejects.toMatchObject({
      code: S.INVALID_ARGUMENT,
      details: expect.stringMatching(/at least one key/),
    });
    await expect(c.getMany(Array.from({ length: 101 }, (_, i) => `k${i}`))).rejects.toMatchObject({
      code: S.INVALID_ARGUMENT,
      details: expect.stringMatching(/101 keys/),
    });
    await expect(c.putMany([])).rejects.toMatchObject({ code: S.INVALID_ARGUMENT });
    const big = Buffer.alloc(1 << 20);
    await expect(c.putMany(Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: big })))).rejects.toMatchObject({
      code: S.INVALID_ARGUMENT,
      details: expect.stringMatching(/5242880 bytes, over the limit/),
    });
    await expect(c.putMany([{ key: 'k', value: 'v', requestId: Buffer.alloc(65) }])).rejects.toMatchObject({
      code: S.INVALID_ARGUMENT,
      details: expect.stringMatching(/^putMany item: option requestId must be 1 to 64 bytes .*, got Buffer\(65\)$/),
    });
    await expect(c.getMany([42 as unknown as string])).rejects.toThrow(/key must be a string or a Uint8Array/);
    expect(c.stats().attempts).toBe(0);
  });

  it('fails over to the next node when one cannot be reached, with the same request ids', async () => {
    const { cluster, address } = await node();
    const c = new Client({
      nodes: [`127.0.0.1:${await freePort()}`, address],
      tokenAware: false,
      adaptive: false,
      deadlineMs: 10_000,
    });
    cleanup.push(() => c.close());
    const out = await c.putMany([{ key: 'x', value: '1', requestId: B('same-id') }]);
    expect(out[0]!.ok).toBe(true);
    expect(c.stats()).toMatchObject({ calls: 1, failovers: 1 });
    // The same request id again (a retry): applied once, no sibling.
    await c.putMany([{ key: 'x', value: '1', requestId: B('same-id') }]);
    expect((await cluster.coordinator('n2').get(B('x'), { quorum: 3 })).values.map(String)).toEqual(['1']);
  });

  it("keeps a GetMany's answer under the message limit: keys past it get RESOURCE_EXHAUSTED of their own", async () => {
    const three = Buffer.alloc(3 << 20, 7);
    const coordinator = {
      getMany: async (keys: Buffer[]) =>
        keys.map(() => ({ ok: true, value: { values: [three], context: B('ctx'), found: true } })),
    } as unknown as Coordinator;
    const c = client([await serve(coordinator, new BucketTable(3))]);
    const got = await c.getMany(['a', 'b', 'c', 'd']);
    expect(got.map((r) => (r.ok ? r.value.values[0]!.length : r.error.code))).toEqual([
      3 << 20,
      3 << 20,
      S.RESOURCE_EXHAUSTED,
      S.RESOURCE_EXHAUSTED,
    ]);
    expect(!got[2]!.ok && got[2]!.error.details).toMatch(/get this key alone or in a smaller batch/);
  });
});
