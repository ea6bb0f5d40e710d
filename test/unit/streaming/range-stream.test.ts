/**
 * Range streaming end to end in one process: the StreamRange server over a store, the
 * client's hand-written RangeBatch decoder (against proto-loader's encoding, unknown
 * fields and damage), and the puller (transfers.ts) merging batches with mergeMany,
 * several ranges at once, resuming a cut stream, and its checkpoints on disk.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BucketTable, DEFAULT_BUCKET, defaultProps, storedKey } from '../../../src/buckets/index.js';
import { keyClasses, servedFilter } from '../../../src/cluster/n-classes.js';
import { MemoryEngine, Store } from '../../../src/storage/index.js';
import type { TokenRange } from '../../../src/storage/index.js';
import { Checkpoints } from '../../../src/streaming/checkpoints.js';
import { Throttle } from '../../../src/streaming/throttle.js';
import {
  Transfers,
  rangeKey,
  type PullItem,
  type RangeBatchIn,
  type RangeSourceApi,
} from '../../../src/streaming/transfers.js';
import {
  GrpcHandoff,
  decodeRangeBatch,
  encodeRangeBatch,
  handoffDefinition,
  handoffService,
  type HandoffServerDeps,
} from '../../../src/transport/handoff-wire.js';
import { callUnary, serviceClient } from '../../../src/transport/protos.js';

const quiet = { info() {}, warn() {}, debug() {} };
const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'ringkv-range-stream-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** proto-loader's own encoding of a RangeBatch: what a sender puts on the wire. */
function encode(batch: { entries: { key: Buffer; record: Buffer }[]; corrupt: number }): Buffer {
  return serviceClient('ringkv.internal.v1.Handoff').service.StreamRange.responseSerialize(batch);
}

const varint = (n: number): Buffer => {
  const out: number[] = [];
  while (n >= 0x80) (out.push((n % 0x80) | 0x80), (n = Math.floor(n / 0x80)));
  out.push(n);
  return Buffer.from(out);
};

describe('decodeRangeBatch', () => {
  const entries = [
    { key: Buffer.from('a'), record: Buffer.from('record of a') },
    { key: Buffer.from('empty record'), record: Buffer.alloc(0) },
    { key: Buffer.alloc(300, 7), record: Buffer.alloc(70_000, 9) }, // multi-byte lengths
  ];

  it('reads what proto-loader writes, as plain entries', () => {
    for (const corrupt of [0, 1, 300, 2 ** 32 - 1]) {
      const got = decodeRangeBatch(encode({ entries, corrupt }));
      expect(got.corrupt).toBe(corrupt);
      expect(got.entries.map((e) => [e.key.toString('hex'), e.record.toString('hex')])).toEqual(
        entries.map((e) => [e.key.toString('hex'), e.record.toString('hex')]),
      );
    }
    expect(decodeRangeBatch(Buffer.alloc(0))).toEqual({ entries: [], corrupt: 0 });
  });

  it('encodeRangeBatch writes what proto-loader reads (an empty field left out, as proto3 allows)', () => {
    const read = serviceClient('ringkv.internal.v1.Handoff').service.StreamRange.responseDeserialize;
    for (const corrupt of [0, 1, 300, 2 ** 32 - 1]) {
      const bytes = encodeRangeBatch(entries, corrupt);
      expect(decodeRangeBatch(bytes)).toEqual(decodeRangeBatch(encode({ entries, corrupt })));
      const got = read(bytes) as { entries: { key: Buffer; record: Buffer }[]; corrupt: number };
      expect(got.corrupt).toBe(corrupt);
      expect(
        got.entries.map((e) => [Buffer.from(e.key).toString('hex'), Buffer.from(e.record).toString('hex')]),
      ).toEqual(entries.map((e) => [e.key.toString('hex'), e.record.toString('hex')]));
    }
    expect(encodeRangeBatch([], 0).length).toBe(0);
  });

  it('skips fields it does not know, in the batch and in an entry', () => {
    const entry = Buffer.concat([
      Buffer.from([0x0a, 1]),
      Buffer.from('k'),
      Buffer.from([0x18]),
      varint(123456), // field 3, varint
      Buffer.from([0x21]),
      Buffer.alloc(8, 1), // field 4, fixed64
      Buffer.from([0x12, 1]),
      Buffer.from('r'),
      Buffer.from([0x2d]),
      Buffer.alloc(4, 2), // field 5, fixed32
    ]);
    const msg = Buffer.concat([
      Buffer.from([0x1a, 3]),
      Buffer.from('new'), // field 3, bytes
      Buffer.from([0x0a]),
      varint(entry.length),
      entry,
      Buffer.from([0x10]),
      varint(2),
      Buffer.from([0x20]),
      varint(2 ** 40), // field 4, a large varint
    ]);
    const got = decodeRangeBatch(msg);
    expect(got.corrupt).toBe(2);
    expect(got.entries.map((e) => [String(e.key), String(e.record)])).toEqual([['k', 'r']]);
  });

  it('refuses a damaged message rather than return part of it', () => {
    const good = encode({ entries, corrupt: 1 });
    for (const cut of [1, 5, 40, good.length - 1])
      expect(() => decodeRangeBatch(good.subarray(0, cut))).toThrow(/RangeBatch/);
    expect(() => decodeRangeBatch(Buffer.from([0x0b]))).toThrow(/wire type/); // a group
    expect(() => decodeRangeBatch(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]))).toThrow(
      /longer than the message/,
    );
  });
});

/** A Handoff server over `store` (node "src"), on a free loopback port. */
async function serve(
  store: Store,
  only?: HandoffServerDeps['only'],
): Promise<{ server: grpc.Server; address: string }> {
  const server = new grpc.Server();
  server.addService(
    handoffDefinition(),
    handoffService({
      clusterName: 'test',
      store,
      throttle: new Throttle(Infinity),
      refuse: () => undefined,
      knows: (id) => id === 'src',
      ...(only === undefined ? {} : { only }),
      fetch: () => Promise.reject(new Error('not here')),
      outgoing: new Set(),
      log: quiet,
    }),
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { server, address: `127.0.0.1:${port}` };
}

describe('a range streamed over gRPC and pulled into another store', () => {
  let source: Store;
  let server: grpc.Server;
  let address: string;
  const KEYS = 3000;

  beforeAll(async () => {
    source = await Store.open({ engine: new MemoryEngine() });
    for (let i = 0; i < KEYS; i += 500)
      await Promise.all(
        Array.from({ length: 500 }, (_, j) => source.put(`key-${i + j}`, Buffer.alloc(100, (i + j) % 251))),
      );
    ({ server, address } = await serve(source));
  });
  afterAll(async () => {
    server?.forceShutdown();
    await source?.close();
  });

  /** The whole ring cut into `n` ranges. */
  function ranges(n: number): PullItem[] {
    const step = 2n ** 64n / BigInt(n);
    return Array.from({ length: n }, (_, i) => ({
      start: step * BigInt(i),
      end: i === n - 1 ? 0n : step * BigInt(i + 1),
      sources: ['src'],
    }));
  }

  it('streams exactly what a local scan reads, batch by batch', async () => {
    const peers = new GrpcHandoff('me', 'test', () => address, grpc.credentials.createInsecure());
    try {
      const range = { start: 0n, end: 0n };
      const got: string[] = [];
      for await (const b of peers.stream('src', range, undefined, new AbortController().signal)) {
        expect(b.corrupt).toBe(0);
        for (const e of b.entries) got.push(`${e.key.toString()}=${e.record.toString('hex')}`);
      }
      const want: string[] = [];
      for await (const b of source.ranges.scan(range))
        for (const e of b.entries) want.push(`${e.key.toString()}=${e.record.toString('hex')}`);
      expect(got).toEqual(want);
      expect(got).toHaveLength(KEYS);
    } finally {
      peers.close();
    }
  });

  it('refuses a Fetch whose sources are not node ids this node knows, at once', async () => {
    const Handoff = serviceClient('ringkv.internal.v1.Handoff');
    const c = new Handoff(address, grpc.credentials.createInsecure());
    try {
      const fetch = (sources: string[]) =>
        callUnary(
          c,
          'fetch',
          {
            cluster: 'test',
            move: 'm',
            requester: 'x',
            ranges: [{ start: '0000000000000000', end: '8000000000000000', sources }],
          },
          { deadline: Date.now() + 5000 },
        );
      await expect(fetch(['nobody'])).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: /source nobody is not a node this one knows/,
      });
      await expect(fetch(['x'.repeat(129)])).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: /each source must be a node id of 1-128 characters/,
      });
      await expect(fetch(['src'])).rejects.toMatchObject({
        code: grpc.status.UNAVAILABLE,
        details: /fetch failed: not here/,
      });
    } finally {
      c.close();
    }
  });

  it('pulls every range into a new store; once the pull resolves, every range is done on disk', async () => {
    const dir = tmp();
    const target = await Store.open({ engine: new MemoryEngine() });
    const checkpoints = await Checkpoints.open(join(dir, 'transfers.json'));
    const peers = new GrpcHandoff('me', 'test', () => address, grpc.credentials.createInsecure());
    const items = ranges(40);
    try {
      const t = new Transfers({ store: target, checkpoints, source: peers, isUp: () => true, log: quiet });
      const r = await t.pull('move-1', 'me', items);
      expect(r.keys).toBe(KEYS);
      expect(await target.ranges.hash({ start: 0n, end: 0n })).toEqual(
        await source.ranges.hash({ start: 0n, end: 0n }),
      );
      const reread = await Checkpoints.open(join(dir, 'transfers.json'));
      for (const i of items) expect(reread.isDone('move-1', rangeKey(i))).toBe(true);
      expect(t.status()[0]!.ranges.every((p) => p.state === 'done')).toBe(true);
      // Pulled again for the same movement: nothing streams.
      const again = await t.pull('move-1', 'me', items);
      expect(again.keys).toBe(0);
    } finally {
      peers.close();
      await target.close();
    }
  });
});

describe('the puller', () => {
  it('a range whose only replica is gone for good (n=1, a removal) is done with nothing, not retried for ever', async () => {
    const store = await Store.open({ engine: new MemoryEngine() });
    const checkpoints = await Checkpoints.open(join(tmp(), 'transfers.json'));
    const warned: string[] = [];
    const source: RangeSourceApi = {
      stream() {
        throw new Error('nothing may be streamed from a node gone for good');
      },
    };
    try {
      const t = new Transfers({
        store,
        checkpoints,
        source,
        isUp: () => false,
        log: { ...quiet, warn: (_o: object, m: string) => void warned.push(m) },
      });
      const item: PullItem = { start: 0n, end: 0n, sources: ['gone'], leaverGone: true, n: 1, classes: [1, 3] };
      expect(await t.pull('remove-gone', 'me', [item])).toEqual({ keys: 0, bytes: 0, copied: 0 });
      expect(checkpoints.isDone('remove-gone', rangeKey(item))).toBe(true);
      expect(warned).toContain('the only replica of this range is gone for good: its keys are lost, nothing to pull');
    } finally {
      await store.close();
    }
  });

  /** A source that serves `store`'s ranges in batches of `batch`, counting streams at once, and can cut one stream. */
  function fakeSource(store: Store, o: { batch: number; cutOnce?: string; delayMs?: number }) {
    const seen = { active: 0, most: 0, afters: [] as (string | undefined)[] };
    let cut = o.cutOnce;
    const api: RangeSourceApi = {
      async *stream(_source: string, range: TokenRange, after: Buffer | undefined): AsyncIterable<RangeBatchIn> {
        seen.active++;
        seen.most = Math.max(seen.most, seen.active);
        seen.afters.push(after?.toString());
        try {
          let sent = 0;
          for await (const b of store.ranges.scan(range, { batchCount: o.batch }, after)) {
            if (o.delayMs) await new Promise((r) => setTimeout(r, o.delayMs));
            if (cut !== undefined && sent > 0 && b.entries.some((e) => e.key.toString() === cut)) {
              cut = undefined;
              throw Object.assign(new Error('connection reset'), { details: 'connection reset' });
            }
            sent++;
            yield { entries: b.entries, corrupt: b.corrupt.length };
          }
        } finally {
          seen.active--;
        }
      },
    };
    return { api, seen };
  }

  async function loaded(keys: number): Promise<{ store: Store; names: string[] }> {
    const store = await Store.open({ engine: new MemoryEngine() });
    const names = Array.from({ length: keys }, (_, i) => `k${i}`);
    await Promise.all(names.map((k) => store.put(k, Buffer.from(`v-${k}`))));
    return { store, names };
  }

  it('pulls four ranges at a time by default', async () => {
    const { store } = await loaded(400);
    const target = await Store.open({ engine: new MemoryEngine() });
    const checkpoints = await Checkpoints.open(join(tmp(), 'transfers.json'));
    const { api, seen } = fakeSource(store, { batch: 10, delayMs: 2 });
    const step = 2n ** 64n / 16n;
    const items = Array.from({ length: 16 }, (_, i) => ({
      start: step * BigInt(i),
      end: i === 15 ? 0n : step * BigInt(i + 1),
      sources: ['a'],
    }));
    const r = await new Transfers({ store: target, checkpoints, source: api, isUp: () => true, log: quiet }).pull(
      'm',
      'me',
      items,
    );
    expect(r.keys).toBe(400);
    expect(seen.most).toBe(4);
    await store.close();
    await target.close();
  });

  it('resumes a cut stream after the last key it merged, and loses nothing', async () => {
    const { store, names } = await loaded(300);
    // The whole ring is one range; cut it once, in its third batch.
    const order: string[] = [];
    for await (const b of store.ranges.scan({ start: 0n, end: 0n }))
      order.push(...b.entries.map((e) => e.key.toString()));
    const target = await Store.open({ engine: new MemoryEngine() });
    const checkpoints = await Checkpoints.open(join(tmp(), 'transfers.json'));
    const { api, seen } = fakeSource(store, { batch: 50, cutOnce: order[120] });
    const warnings: string[] = [];
    const log = { ...quiet, warn: (_o: object, m: string) => void warnings.push(m) };
    const r = await new Transfers({ store: target, checkpoints, source: api, isUp: () => true, log, retryMs: 1 }).pull(
      'm',
      'me',
      [{ start: 0n, end: 0n, sources: ['a'] }],
    );
    expect(warnings).toContain('range stream failed; trying the next source');
    expect(seen.afters).toEqual([undefined, order[99]]); // two batches of 50 were merged before the cut
    expect(r.keys).toBe(300);
    for (const k of names) expect((await target.get(k)).values.map(String)).toEqual([`v-${k}`]);
    await store.close();
    await target.close();
  });

  it('without the leaver: waits for one that may come back, and pulls from every replica that keeps the range, all up, only when it is gone', async () => {
    const { store } = await loaded(50);
    const from: string[] = [];
    const api: RangeSourceApi = {
      async *stream(source: string, range: TokenRange, after: Buffer | undefined): AsyncIterable<RangeBatchIn> {
        from.push(source);
        for await (const b of store.ranges.scan(range, {}, after)) yield { entries: b.entries, corrupt: 0 };
      },
    };
    const pull = async (up: (id: string) => boolean, leaverGone: boolean): Promise<unknown> => {
      const target = await Store.open({ engine: new MemoryEngine() });
      const checkpoints = await Checkpoints.open(join(tmp(), 'transfers.json'));
      try {
        return await new Transfers({
          store: target,
          checkpoints,
          source: api,
          isUp: up,
          log: quiet,
          retryMs: 1,
          attempts: 2,
          leaverWaitMs: 60_000,
        }).pull('m', 'me', [{ start: 0n, end: 0n, sources: ['l', 's1', 's2'], leaverGone }]);
      } catch (e) {
        return e;
      } finally {
        await target.close();
      }
    };
    expect(String(await pull((id) => id !== 'l', false))).toMatch(
      /waiting for l, the replica leaving this range, to be up/,
    );
    expect(from).toEqual([]);
    expect(await pull((id) => id !== 'l', true)).toEqual({ keys: 100, bytes: expect.any(Number), copied: 50 }); // 50 keys from each of s1 and s2: s1's copied (new here), s2's the same keys, merged
    expect(from).toEqual(['s1', 's2']);
    from.length = 0;
    expect(String(await pull((id) => id === 's1', true))).toMatch(/could not be pulled/); // s2 down too: not enough
    expect(from).toEqual([]);
    await store.close();
  });
});

describe('a range streamed for one N class', () => {
  let source: Store;
  let server: grpc.Server;
  let address: string;
  const table = new BucketTable(3);
  table.create('one', { ...defaultProps(3), n: 1 }, 1000, 'a');
  table.create('five', { ...defaultProps(3), n: 5 }, 1000, 'a');
  const key = (bucket: string, i: number): Buffer => storedKey(bucket, Buffer.from(`k${i}`));

  beforeAll(async () => {
    source = await Store.open({ engine: new MemoryEngine() });
    for (const b of [DEFAULT_BUCKET, 'one', 'five'])
      for (let i = 0; i < 300; i++) await source.put(key(b, i), Buffer.from(`${b}-${i}`));
    ({ server, address } = await serve(source, (n, classes) => servedFilter(keyClasses(table), n, classes)));
  });
  afterAll(async () => {
    server?.forceShutdown();
    await source?.close();
  });

  it("sends the class's keys only; a puller keeps its progress under the range and the class", async () => {
    const dir = tmp();
    const target = await Store.open({ engine: new MemoryEngine() });
    const checkpoints = await Checkpoints.open(join(dir, 'transfers.json'));
    const peers = new GrpcHandoff('me', 'test', () => address, grpc.credentials.createInsecure());
    try {
      const t = new Transfers({ store: target, checkpoints, source: peers, isUp: () => true, log: quiet });
      const item: PullItem = { start: 0n, end: 0n, sources: ['src'], n: 1, classes: [1, 3, 5] };
      expect((await t.pull('move-c', 'me', [item])).keys).toBe(300);
      const got: string[] = [];
      for await (const b of target.ranges.scan({ start: 0n, end: 0n }))
        for (const e of b.entries) got.push(e.key.toString('hex'));
      expect(got.sort()).toEqual(Array.from({ length: 300 }, (_, i) => key('one', i).toString('hex')).sort());
      expect(rangeKey(item)).toBe('0000000000000000-0000000000000000/n1');
      expect(checkpoints.isDone('move-c', rangeKey(item))).toBe(true);
      expect(checkpoints.isDone('move-c', rangeKey({ start: 0n, end: 0n }))).toBe(false);
      // n 0 (a release without buckets): every key.
      let all = 0;
      for await (const b of peers.stream('src', { start: 0n, end: 0n }, undefined, new AbortController().signal))
        all += b.entries.length;
      expect(all).toBe(900);
    } finally {
      peers.close();
      await target.close();
    }
  });

  it('refuses a stream planned on other classes, and a Fetch with a bad class, with what to do', async () => {
    const peers = new GrpcHandoff('me', 'test', () => address, grpc.credentials.createInsecure());
    const Handoff = serviceClient('ringkv.internal.v1.Handoff');
    const c = new Handoff(address, grpc.credentials.createInsecure());
    try {
      const drain = async (cls: { n?: number; classes?: number[] }): Promise<void> => {
        for await (const _ of peers.stream(
          'src',
          { start: 0n, end: 0n },
          undefined,
          new AbortController().signal,
          cls,
        ));
      };
      await expect(drain({ classes: [3] })).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: expect.stringMatching(
          /planned for buckets of n 3 but this node's bucket table has n 1, 3, 5: retry once the bucket tables converge/,
        ),
      });
      await expect(drain({ n: 2, classes: [1, 3, 5] })).rejects.toMatchObject({
        code: grpc.status.FAILED_PRECONDITION,
        details: expect.stringMatching(/no bucket here has n 2/),
      });
      const fetch = (n: number, classes: number[]) =>
        callUnary(
          c,
          'fetch',
          {
            cluster: 'test',
            move: 'm',
            requester: 'x',
            ranges: [{ start: '0000000000000000', end: '8000000000000000', sources: ['src'], n, classes }],
          },
          { deadline: Date.now() + 5000 },
        );
      await expect(fetch(17, [1])).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: /n and classes must be replica counts of 1-16/,
      });
      await expect(fetch(1, [0, 1])).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: /n and classes must be replica counts of 1-16/,
      });
    } finally {
      peers.close();
      c.close();
    }
  });
});
