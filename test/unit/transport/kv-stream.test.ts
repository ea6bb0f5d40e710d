import { connect } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, casNotApplied } from '../../../src/client/index.js';
import { STREAM_CONCURRENCY, STREAM_UNSENT_BYTES } from '../../../src/transport/batched-stream.js';
import {
  decodeKvCalls,
  decodeKvReplies,
  encodeKvCalls,
  encodeKvReplies,
  type KvCall,
  type KvReply,
} from '../../../src/transport/kv-codec.js';
import { BucketTable } from '../../../src/buckets/index.js';
import { KeyValueService } from '../../../src/transport/kv-service.js';
import { FakeCluster } from '../replication/fake-cluster.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** Node `id` of a fake cluster serving KeyValue on 127.0.0.1, and what its stream calls told `observe`. */
async function serve(
  cluster: FakeCluster,
  id: string,
  stream?: grpc.handleBidiStreamingCall<Buffer, Buffer>,
): Promise<{ address: string; server: grpc.Server; service: KeyValueService; observed: string[] }> {
  const observed: string[] = [];
  const buckets = new BucketTable(cluster.coordinator(id).options.replicas);
  buckets.create('hits', { n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'siblings', type: 'counter' }, 1000, id);
  buckets.create('locks', { n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'siblings', type: 'consistent' }, 1000, id);
  const service = new KeyValueService(cluster.coordinator(id), buckets, (op, code, _s, siblings) =>
    observed.push(`${op}:${code}${siblings ? `:${siblings}` : ''}`),
  );
  const server = new grpc.Server();
  const impl = service.implementation((x) => x);
  server.addService(service.definition(), stream === undefined ? impl : { ...impl, Stream: stream });
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
  );
  cleanup.push(() => server.forceShutdown());
  return { address: `127.0.0.1:${port}`, server, service, observed };
}

function client(nodes: string[], streaming = true): Client {
  const c = new Client({ nodes, tokenAware: false, streaming, deadlineMs: 10_000 });
  cleanup.push(() => c.close());
  return c;
}

describe('KeyValue over a stream, as the client sends it', () => {
  it('answers put, get and delete as the unary calls do, many at once', async () => {
    const cluster = await FakeCluster.create(3);
    cleanup.push(() => cluster.close());
    const n1 = await serve(cluster, 'n1');
    for (const streaming of [true, false]) {
      const c = client([n1.address], streaming);
      const keys = Array.from({ length: 100 }, (_, i) => `${streaming}-${i}`);
      const puts = await Promise.all(keys.map((k) => c.put(k, `v-${k}`)));
      const gets = await Promise.all(keys.map((k) => c.get(k)));
      gets.forEach((g, i) => expect(g).toMatchObject({ found: true, values: [Buffer.from(`v-${keys[i]}`)] }));
      await c.put(keys[0]!, 'sibling'); // blind: a sibling
      expect((await c.get(keys[0]!)).values.map(String).sort()).toEqual(['sibling', `v-${keys[0]}`]);
      await c.delete(keys[1]!, { context: puts[1]!.context });
      expect(await c.get(keys[1]!)).toMatchObject({ found: false, values: [] });
    }
    // Stream calls are counted one by one (unary ones by the metrics wrapper, not here).
    expect(n1.observed.filter((x) => x === 'put:OK')).toHaveLength(101);
    expect(n1.observed).toContain('get:OK:2');
  });

  it("gives each call its own status: bad input, a refusal, the node's deadline", async () => {
    const cluster = await FakeCluster.create(3);
    cleanup.push(() => cluster.close());
    const n1 = await serve(cluster, 'n1');
    const c = client([n1.address]);
    const [empty, tooMany, fine] = await Promise.allSettled([c.put('', 'v'), c.get('k', { r: 4 }), c.put('k', 'v')]);
    expect(empty).toMatchObject({
      status: 'rejected',
      reason: { code: grpc.status.INVALID_ARGUMENT, details: /at least one byte/ },
    });
    expect(tooMany).toMatchObject({
      status: 'rejected',
      reason: { code: grpc.status.INVALID_ARGUMENT, details: /r must be 1 to N=3/ },
    });
    expect(fine.status).toBe('fulfilled');
    cluster.net.faults.set('*>n2', { delayMs: 2000 }).set('*>n3', { delayMs: 2000 });
    await expect(c.put('slow', 'v', { w: 3, deadlineMs: 1500 })).rejects.toMatchObject({
      code: grpc.status.DEADLINE_EXCEEDED,
      details: /may have been applied/,
    });
  });

  it('fails over to the next node when one is not serving, or its stream breaks mid-call', async () => {
    const cluster = await FakeCluster.create(3);
    cleanup.push(() => cluster.close());
    const [n1, n2] = [await serve(cluster, 'n1'), await serve(cluster, 'n2')];
    const c = client([n1.address, n2.address]);
    cluster.notServing = 'joining';
    await expect(c.get('k')).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
      details: /not serving requests \(joining\)/,
    });
    cluster.notServing = undefined;
    await c.put('k', 'v');
    // A call in flight on n1 when it dies: UNAVAILABLE there, answered by n2.
    cluster.net.faults.set('*>n2', { delayMs: 300 }).set('*>n3', { delayMs: 300 });
    const calls = Array.from({ length: 4 }, () => c.get('k', { r: 3 }));
    await new Promise((r) => setTimeout(r, 100));
    n1.server.forceShutdown();
    cluster.net.faults.clear();
    for (const r of await Promise.all(calls)) expect(r.values.map(String)).toEqual(['v']);
  });

  it('drain answers the calls running, then ends the streams, so that a graceful shutdown completes', async () => {
    const cluster = await FakeCluster.create(3);
    cleanup.push(() => cluster.close());
    const n1 = await serve(cluster, 'n1');
    const c = client([n1.address]);
    await c.put('k', 'v');
    cluster.net.faults.set('*>n2', { delayMs: 200 }).set('*>n3', { delayMs: 200 });
    const running = c.get('k', { r: 3 });
    await new Promise((r) => setTimeout(r, 50));
    const shutdown = new Promise<string>((res) => n1.server.tryShutdown(() => res('shut down')));
    n1.service.drain();
    await expect(running).resolves.toMatchObject({ found: true });
    expect(await Promise.race([shutdown, new Promise((r) => setTimeout(() => r('still waiting'), 4000))])).toBe(
      'shut down',
    );
  });

  it('stops reading the calls of a peer that does not read its replies, so that replies cannot pile up', async () => {
    const cluster = await FakeCluster.create(3);
    cleanup.push(() => cluster.close());
    const n1 = await serve(cluster, 'n1');
    const c = client([n1.address]);
    await c.put('big', Buffer.alloc(64 * 1024, 1));
    // A raw HTTP/2 peer whose receive window is never opened: the node can send it no reply data.
    const session = connect(`http://${n1.address}`, { settings: { initialWindowSize: 0 } });
    cleanup.push(() => session.destroy());
    const stream = session.request({
      ':method': 'POST',
      ':path': '/ringkv.v1.KeyValue/Stream',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    stream.on('error', () => {});
    // One batch of 2,000 gets (125 MiB of replies), then more batches until the node stops taking them.
    const BATCHES = 400;
    const PER_BATCH = 50;
    const frameOf = (calls: KvCall[]): Buffer => {
      const body = encodeKvCalls(calls);
      const frame = Buffer.alloc(5 + body.length);
      frame.writeUInt32BE(body.length, 1);
      body.copy(frame, 5);
      return frame;
    };
    const gets = (n: number, from: number): KvCall[] =>
      Array.from({ length: n }, (_, i) => ({
        id: from + i,
        deadline: Date.now() + 60_000,
        op: 'get',
        key: Buffer.from('big'),
        r: 1,
        bucket: '',
      }));
    stream.write(frameOf(gets(2000, 0)));
    let sent = 0;
    for (let b = 0; b < BATCHES; b++) {
      // Stop once the node stops taking our data (its flow control window is spent).
      const more = stream.write(frameOf(gets(PER_BATCH, 2000 + b * PER_BATCH)));
      sent++;
      if (
        !more &&
        !(await Promise.race([
          new Promise<boolean>((r) => stream.once('drain', () => r(true))),
          new Promise<boolean>((r) => setTimeout(() => r(false), 1000)),
        ]))
      )
        break;
    }
    await new Promise((r) => setTimeout(r, 500));
    const ran = n1.observed.filter((x) => x.startsWith('get:')).length;
    expect(sent, 'the node kept reading every call').toBeLessThan(BATCHES);
    // STREAM_CONCURRENCY at a time, more while under STREAM_UNSENT_BYTES of replies (64 KiB each) were unsent; then none.
    expect(ran, 'calls ran while their replies could not be sent').toBeLessThan(
      STREAM_CONCURRENCY + STREAM_UNSENT_BYTES / (64 * 1024) + 32,
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(n1.observed.filter((x) => x.startsWith('get:')).length).toBe(ran);
    // Other clients are still served meanwhile.
    expect(await c.get('big')).toMatchObject({ found: true });
  });

  it('carries counter updates, each counted once under its request id and with its own status, as the unary call does', async () => {
    const cluster = await FakeCluster.create(3);
    cleanup.push(() => cluster.close());
    const n1 = await serve(cluster, 'n1');
    for (const streaming of [true, false]) {
      const c = client([n1.address], streaming);
      const key = `hits-${streaming}`;
      await Promise.all(Array.from({ length: 50 }, () => c.counterIncrement(key, 1, { bucket: 'hits' })));
      const requestId = Buffer.from(`retried-${streaming}`);
      expect((await c.counterUpdate(key, 5, { bucket: 'hits', requestId })).value).toBe(55n);
      expect((await c.counterUpdate(key, 5, { bucket: 'hits', requestId })).value).toBe(55n);
      expect((await c.counterUpdate(key, -10, { bucket: 'hits' })).value).toBe(45n);
      const [wrongType, fine] = await Promise.allSettled([c.counterIncrement(key), c.put(key, 'v')]);
      expect(wrongType).toMatchObject({
        status: 'rejected',
        reason: {
          code: grpc.status.FAILED_PRECONDITION,
          details: /bucket default is of type kv, which CounterUpdate does not take/,
        },
      });
      expect(fine.status).toBe('fulfilled');
      expect(await c.counterGet(key, { bucket: 'hits' })).toEqual({ value: 45n, found: true });
    }
    expect(n1.observed.filter((x) => x === 'counterUpdate:OK')).toHaveLength(53);
    expect(n1.observed).toContain('counterUpdate:FAILED_PRECONDITION');
  });

  it('carries compare-and-sets, many at once, one applied per version; a refusal keeps its "not applied" mark', async () => {
    const cluster = await FakeCluster.create(3);
    cleanup.push(() => cluster.close());
    const n1 = await serve(cluster, 'n1');
    const c = client([n1.address]);
    const o = { bucket: 'locks' };
    // Ten writers at once on an absent key: one applies, the others answer its value (or, preempted, unknown).
    const tries = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => c.putIf('lock', `owner-${i}`, o)));
    const answers = tries.flatMap((t) => (t.status === 'fulfilled' ? [t.value] : []));
    const won = answers.filter((a) => a.applied);
    expect(won.length).toBeLessThanOrEqual(1);
    const held = await c.get('lock', o);
    expect(held.found).toBe(true);
    for (const a of answers.filter((x) => !x.applied)) expect(a.value).toEqual(held.values[0]);
    const gone = await c.deleteIf('lock', held.context, o);
    expect(gone.applied).toBe(true);
    expect((await c.deleteIf('lock', held.context, o)).applied).toBe(false);
    const refused = await c.putIf('k', 'v', { bucket: 'hits' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      details: expect.stringMatching(/of type counter, which PutIf does not take/),
    });
    expect(casNotApplied(refused)).toBe(true);
    // Every one of them on the stream.
    expect(n1.observed.filter((x) => x.startsWith('putIf:') || x.startsWith('deleteIf:'))).toHaveLength(
      tries.length + 3,
    );
    expect(n1.observed).toContain('putIf:FAILED_PRECONDITION');
  });

  it('refuses alone a call naming an operation its release does not know (UNIMPLEMENTED); the calls beside it are answered', async () => {
    const cluster = await FakeCluster.create(3);
    cleanup.push(() => cluster.close());
    const n1 = await serve(cluster, 'n1');
    await client([n1.address]).put('k', 'v');
    const session = connect(`http://${n1.address}`);
    cleanup.push(() => session.destroy());
    const stream = session.request({
      ':method': 'POST',
      ':path': '/ringkv.v1.KeyValue/Stream',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    stream.on('error', () => {});
    // A get, then KvCall 2 naming field 9: an operation of some later release.
    const body = Buffer.concat([
      encodeKvCalls([{ id: 1, deadline: Date.now() + 5000, op: 'get', key: Buffer.from('k'), r: 1, bucket: '' }]),
      Buffer.from([0x0a, 0x06, 0x08, 0x02, 0x4a, 0x02, 0x08, 0x01]),
    ]);
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    body.copy(frame, 5);
    stream.write(frame);
    const replies: KvReply[] = [];
    let data = Buffer.alloc(0);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`2 replies expected, got ${JSON.stringify(replies)}`)), 5000);
      stream.on('data', (d: Buffer) => {
        data = Buffer.concat([data, d]);
        while (data.length >= 5 && data.length >= 5 + data.readUInt32BE(1)) {
          replies.push(...decodeKvReplies(data.subarray(5, 5 + data.readUInt32BE(1))));
          data = data.subarray(5 + data.readUInt32BE(1));
        }
        if (replies.length >= 2) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    expect(replies.find((r) => r.id === 1)).toMatchObject({ op: 'get', found: true, values: [Buffer.from('v')] });
    expect(replies.find((r) => r.id === 2)).toMatchObject({
      op: 'error',
      code: grpc.status.UNIMPLEMENTED,
      details: /names no operation this node's release knows/,
    });
  });

  it('a node of a release that breaks its stream on a counter update: that update fails UNIMPLEMENTED (upgrade it), the puts on its other stream go on', async () => {
    const cluster = await FakeCluster.create(3);
    cleanup.push(() => cluster.close());
    // As the release before counter updates on the stream answers: puts, and a batch holding anything else breaks its stream.
    const old = await serve(cluster, 'n1', (call) =>
      call.on('data', (buf: Buffer) => {
        const calls = decodeKvCalls(buf);
        if (calls.every((x) => x.op === 'put'))
          call.write(encodeKvReplies(calls.map((x) => ({ id: x.id, op: 'put', context: Buffer.alloc(0) }))));
        else
          call.emit('error', {
            code: grpc.status.INVALID_ARGUMENT,
            details: 'a batch does not decode (call 1 names no operation)',
          });
      }),
    );
    const c = client([old.address]);
    const [update, put] = await Promise.allSettled([c.counterIncrement('x', 1, { bucket: 'hits' }), c.put('y', 'v')]);
    expect(update).toMatchObject({
      status: 'rejected',
      reason: {
        code: grpc.status.UNIMPLEMENTED,
        details: /runs a release without counter updates on its stream; upgrade it/,
      },
    });
    expect(put.status).toBe('fulfilled');
    expect((await c.put('z', 'v')).context).toBeDefined();
  });
});
