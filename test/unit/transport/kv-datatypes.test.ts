/**
 * The data types' calls end to end in one process: the client (src/client/kv.ts), the
 * service (kv-service.ts) and a fake cluster's coordinators over in-memory replicas.
 * Each call on a bucket of its type; each refusal (a call on a bucket of another type, bad
 * input) with its status and a message that says what to do, checked without the client
 * too (the raw KeyValue client sends what ringkv/client would refuse before sending).
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { BucketTable, type BucketProps } from '../../../src/buckets/index.js';
import { Client, MAX_MAP_OPS, MAX_SET_OPS, type MapEntry, type MapField } from '../../../src/client/index.js';
import type { Coordinator } from '../../../src/replication/coordinator.js';
import { KeyValueService } from '../../../src/transport/kv-service.js';
import { NODE_MAX_MESSAGE_BYTES, callUnary, serviceClient } from '../../../src/transport/protos.js';
import { FakeCluster } from '../replication/fake-cluster.js';

const B = (s: string): Buffer => Buffer.from(s);
const S = grpc.status;
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function serve(coordinator: Coordinator, buckets: BucketTable): Promise<string> {
  const service = new KeyValueService(coordinator, buckets);
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

const props = (type: BucketProps['type']): BucketProps => ({ n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'siblings', type });

/** A 3-node fake cluster with buckets hits (counter), tags (set), carts (kv) and profiles (map); KeyValue served on the coordinators of `on`. */
async function nodes(on: string[] = ['n1']): Promise<{ cluster: FakeCluster; addresses: string[] }> {
  const cluster = await FakeCluster.create(3);
  cleanup.push(() => cluster.close());
  const buckets = new BucketTable(3);
  buckets.create('hits', props('counter'), 1000, 'n1');
  buckets.create('tags', props('set'), 1000, 'n1');
  buckets.create('carts', props('kv'), 1000, 'n1');
  buckets.create('profiles', props('map'), 1000, 'n1');
  const addresses = [];
  for (const id of on) addresses.push(await serve(cluster.coordinator(id), buckets));
  return { cluster, addresses };
}

function client(nodes: string[], streaming = true): Client {
  const c = new Client({ nodes, tokenAware: false, deadlineMs: 10_000, streaming });
  cleanup.push(() => c.close());
  return c;
}

function raw(address: string): InstanceType<ReturnType<typeof serviceClient<'ringkv.v1.KeyValue'>>> {
  const KeyValue = serviceClient('ringkv.v1.KeyValue');
  const c = new KeyValue(address, grpc.credentials.createInsecure());
  cleanup.push(() => c.close());
  return c;
}

const soon = (): { deadline: number } => ({ deadline: Date.now() + 10_000 });

/** The status and details `p` rejects with. */
async function refusal(p: Promise<unknown>): Promise<{ code: number; details: string }> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e, 'expected a refusal').toBeDefined();
  const { code, details } = e as grpc.ServiceError;
  return { code, details };
}

describe('counters', () => {
  it('a reset takes out what it read and answers it; increments after it count; a counter never updated is not found, and nothing is written', async () => {
    const { addresses } = await nodes();
    const c = client(addresses);
    await c.counterIncrement('r', 5, { bucket: 'hits' });
    await c.counterIncrement('r', -2, { bucket: 'hits' });
    expect(await c.counterReset('r', { bucket: 'hits' })).toEqual({ value: 3n, found: true });
    expect(await c.counterGet('r', { bucket: 'hits', r: 3 })).toEqual({ value: 0n, found: true });
    expect((await c.counterIncrement('r', 4, { bucket: 'hits' })).value).toBe(4n);
    expect(await c.counterGet('r', { bucket: 'hits', r: 3 })).toEqual({ value: 4n, found: true });
    expect(await c.counterReset('none', { bucket: 'hits' })).toEqual({ value: 0n, found: false });
    expect(await c.counterGet('none', { bucket: 'hits', r: 3 })).toEqual({ value: 0n, found: false });
    // Through the raw service too: without a context the node reads first; refused on a bucket of another type, or with an unknown option in the client.
    expect(await callUnary(raw(addresses[0]!), 'CounterReset', { bucket: 'hits', key: B('r'), w: 3 }, soon())).toEqual({
      value: '4',
      found: true,
    });
    expect(
      await refusal(callUnary(raw(addresses[0]!), 'CounterReset', { bucket: 'tags', key: B('r') }, soon())),
    ).toMatchObject({ code: S.FAILED_PRECONDITION, details: expect.stringMatching(/CounterReset does not take/) });
    expect(await refusal(c.counterReset('r', { bucket: 'hits', ttlMs: 5 } as never))).toMatchObject({
      code: S.INVALID_ARGUMENT,
      details: expect.stringMatching(/unknown option "ttlMs"/),
    });
  });

  it("a reset with a read's context takes out that read's increments however often it is sent; another key's or a made-up context is refused", async () => {
    const { addresses } = await nodes();
    const c = client(addresses);
    const kv = raw(addresses[0]!);
    for (const k of ['a', 'b']) await c.counterIncrement(k, 10, { bucket: 'hits' });
    const seen = await callUnary(kv, 'CounterGet', { bucket: 'hits', key: B('a'), r: 3, withContext: true }, soon());
    expect(seen).toMatchObject({ value: '10', found: true });
    expect(seen.context.length).toBeGreaterThan(0);
    expect((await callUnary(kv, 'CounterGet', { bucket: 'hits', key: B('a') }, soon())).context).toHaveLength(0); // only when asked
    await c.counterIncrement('a', 5, { bucket: 'hits' }); // after the read: not in its context
    const reset = { bucket: 'hits', key: B('a'), context: seen.context };
    expect(await callUnary(kv, 'CounterReset', reset, soon())).toEqual({ value: '10', found: true });
    expect(await callUnary(kv, 'CounterReset', reset, soon())).toEqual({ value: '10', found: true }); // sent again: the same reset
    expect((await c.counterGet('a', { bucket: 'hits', r: 3 })).value).toBe(5n);
    const other = await callUnary(kv, 'CounterGet', { bucket: 'hits', key: B('b'), withContext: true }, soon());
    expect(
      await refusal(callUnary(kv, 'CounterReset', { bucket: 'hits', key: B('a'), context: other.context }, soon())),
    ).toMatchObject({
      code: S.INVALID_ARGUMENT,
      details: expect.stringMatching(/bad counter context for .*read from a different key/),
    });
    expect(
      await refusal(callUnary(kv, 'CounterReset', { bucket: 'hits', key: B('a'), context: B('nonsense') }, soon())),
    ).toMatchObject({ code: S.INVALID_ARGUMENT, details: expect.stringMatching(/not a counter's context/) });
    // A context whose counts contradict what the replicas hold (made up, or damaged with a valid checksum): refused, nothing written.
    const forged = Buffer.from(seen.context);
    const { decodeCounterContext, encodeCounterContext } = await import('../../../src/kinds/counter/counter-record.js');
    const state = decodeCounterContext(forged, forged.readUInt32BE(1));
    const lie = encodeCounterContext(forged.readUInt32BE(1), {
      ...state,
      entries: state.entries.map((e) => ({ ...e, p: e.p + 100 })),
    });
    expect(
      await refusal(callUnary(kv, 'CounterReset', { bucket: 'hits', key: B('a'), context: lie }, soon())),
    ).toMatchObject({
      code: S.INVALID_ARGUMENT,
      details: expect.stringMatching(/resets more than its replicas counted/),
    });
    expect((await c.counterGet('a', { bucket: 'hits', r: 3 })).value).toBe(5n);
  });

  it('increments, decrements and reads; each update answers the value after it; a counter never updated is 0, not found', async () => {
    const { addresses } = await nodes();
    const c = client(addresses);
    expect(await c.counterGet('page', { bucket: 'hits' })).toEqual({ value: 0n, found: false });
    expect((await c.counterIncrement('page', undefined, { bucket: 'hits' })).value).toBe(1n);
    expect((await c.counterIncrement('page', 41, { bucket: 'hits' })).value).toBe(42n);
    expect((await c.counterUpdate('page', -50n, { bucket: 'hits' })).value).toBe(-8n);
    expect(await c.counterGet('page', { bucket: 'hits', r: 3 })).toEqual({ value: -8n, found: true });
    // Another key of the bucket is its own counter.
    expect(await c.counterGet('other', { bucket: 'hits' })).toEqual({ value: 0n, found: false });
  });

  it('an update sent again with its request id, through another coordinator, counts once', async () => {
    const { addresses } = await nodes(['n1', 'n2']);
    const [a, b] = [client([addresses[0]!]), client([addresses[1]!])];
    const requestId = B('0123456789abcdef');
    expect((await a.counterUpdate('once', 5, { bucket: 'hits', requestId })).value).toBe(5n);
    expect((await b.counterUpdate('once', 5, { bucket: 'hits', requestId })).value).toBe(5n);
    // Without one, each call is an increment of its own (the client draws a new id each time).
    await b.counterUpdate('once', 5, { bucket: 'hits' });
    await a.counterUpdate('once', 5, { bucket: 'hits' });
    expect((await a.counterGet('once', { bucket: 'hits', r: 3 })).value).toBe(15n);
  });

  it('refuses a bad amount, in the client and on the node', async () => {
    const { addresses } = await nodes();
    const c = client(addresses);
    expect(await refusal(c.counterUpdate('x', 0.5, { bucket: 'hits' }))).toMatchObject({
      code: S.INVALID_ARGUMENT,
      details: expect.stringMatching(/whole number/),
    });
    expect(await refusal(c.counterUpdate('x', 2n ** 60n, { bucket: 'hits' }))).toMatchObject({
      code: S.INVALID_ARGUMENT,
    });
    const r = raw(addresses[0]!);
    // 0 changes nothing: a mistake, said so.
    expect(
      await refusal(callUnary(r, 'CounterUpdate', { bucket: 'hits', key: B('x'), amount: 0 }, soon())),
    ).toMatchObject({ code: S.INVALID_ARGUMENT, details: expect.stringMatching(/nonzero/) });
    // Past 2^53 the wire's number is not exact: refused rather than rounded.
    expect(
      await refusal(callUnary(r, 'CounterUpdate', { bucket: 'hits', key: B('x'), amount: '9007199254740993' }, soon())),
    ).toMatchObject({ code: S.INVALID_ARGUMENT });
    expect(await refusal(callUnary(r, 'Put', { bucket: 'carts', key: B(''), value: B('v') }, soon()))).toMatchObject({
      code: S.INVALID_ARGUMENT,
    });
    expect(
      await refusal(callUnary(r, 'CounterUpdate', { bucket: 'hits', key: B(''), amount: 1 }, soon())),
    ).toMatchObject({ code: S.INVALID_ARGUMENT });
    expect(
      await refusal(callUnary(r, 'CounterUpdate', { bucket: 'nope', key: B('x'), amount: 1 }, soon())),
    ).toMatchObject({ code: S.NOT_FOUND, details: expect.stringMatching(/no bucket nope/) });
    expect(
      await refusal(
        callUnary(r, 'CounterUpdate', { bucket: 'hits', key: B('x'), amount: 1, requestId: Buffer.alloc(65) }, soon()),
      ),
    ).toMatchObject({ code: S.INVALID_ARGUMENT });
    expect((await c.counterGet('x', { bucket: 'hits' })).found).toBe(false);
  });
});

describe('sets', () => {
  it('adds, reads in pages, tells membership with a context, and removes with it', async () => {
    const { addresses } = await nodes();
    const c = client(addresses);
    const all = ['apple', 'banana', 'cherry', 'date', 'elder'];
    await c.setAdd('basket', all.slice(0, 3), { bucket: 'tags' });
    await c.setUpdate(
      'basket',
      [
        { op: 'add', element: 'date' },
        { op: 'add', element: B('elder') },
      ],
      { bucket: 'tags' },
    );
    const first = await c.setRead('basket', { bucket: 'tags', limit: 2 });
    expect(first.elements.map((e) => String(e.element))).toEqual(['apple', 'banana']);
    expect(first.next).toBeDefined();
    const second = await c.setRead('basket', { bucket: 'tags', limit: 2, after: first.next });
    expect(second.elements.map((e) => String(e.element))).toEqual(['cherry', 'date']);
    const seen: string[] = [];
    for await (const e of c.setElements('basket', { bucket: 'tags', limit: 2 })) seen.push(String(e.element));
    expect(seen).toEqual(all);
    const has = await c.setContains('basket', 'banana', { bucket: 'tags' });
    expect(has.present).toBe(true);
    expect(has.context.length).toBeGreaterThan(0);
    expect((await c.setContains('basket', 'fig', { bucket: 'tags' })).present).toBe(false);
    await c.setRemove('basket', [{ element: 'banana', context: has.context }], { bucket: 'tags' });
    expect((await c.setContains('basket', 'banana', { bucket: 'tags', r: 3 })).present).toBe(false);
    // One page holds the rest, and says it is the last.
    const rest = await c.setRead('basket', { bucket: 'tags' });
    expect(rest.elements.map((e) => String(e.element))).toEqual(['apple', 'cherry', 'date', 'elder']);
    expect(rest.next).toBeUndefined();
    // A set never written reads empty.
    expect(await c.setRead('empty', { bucket: 'tags' })).toEqual({ elements: [], next: undefined });
  });

  it('refuses a remove without a context, an op that is neither, bad elements, too many ops, a bad page', async () => {
    const { addresses } = await nodes();
    const c = client(addresses);
    const r = raw(addresses[0]!);
    const update = (ops: object[]): Promise<unknown> =>
      callUnary(r, 'SetUpdate', { bucket: 'tags', key: B('s'), ops }, soon());
    expect(await refusal(update([{ remove: { element: B('a') } }]))).toMatchObject({
      code: S.INVALID_ARGUMENT,
      details: expect.stringMatching(/context/),
    });
    expect(await refusal(update([{}]))).toMatchObject({
      code: S.INVALID_ARGUMENT,
      details: 'operation 1 of 1 is neither an add nor a remove: set one of them',
    });
    expect(await refusal(update([{ add: B('') }]))).toMatchObject({ code: S.INVALID_ARGUMENT });
    expect(await refusal(update([{ add: Buffer.alloc(1025, 1) }]))).toMatchObject({ code: S.INVALID_ARGUMENT });
    expect(await refusal(update([]))).toMatchObject({ code: S.INVALID_ARGUMENT });
    expect(await refusal(update([{ add: B('a') }, { add: B('a') }]))).toMatchObject({ code: S.INVALID_ARGUMENT });
    expect(
      await refusal(update(Array.from({ length: MAX_SET_OPS + 1 }, (_, i) => ({ add: B(`e${i}`) })))),
    ).toMatchObject({ code: S.INVALID_ARGUMENT, details: expect.stringMatching(/1000/) });
    expect(
      await refusal(
        c.setAdd(
          's',
          Array.from({ length: MAX_SET_OPS + 1 }, (_, i) => `e${i}`),
          { bucket: 'tags' },
        ),
      ),
    ).toMatchObject({ code: S.INVALID_ARGUMENT });
    expect(await refusal(callUnary(r, 'SetRead', { bucket: 'tags', key: B('s'), limit: 1001 }, soon()))).toMatchObject({
      code: S.INVALID_ARGUMENT,
      details: expect.stringMatching(/limit/),
    });
    expect(
      await refusal(callUnary(r, 'SetContains', { bucket: 'tags', key: B('s'), element: B('') }, soon())),
    ).toMatchObject({ code: S.INVALID_ARGUMENT });
    // Nothing of those reached the set.
    expect(await c.setRead('s', { bucket: 'tags' })).toEqual({ elements: [], next: undefined });
  });
});

describe('maps', () => {
  it("a counter field's remove resets what its read saw; a context of another map's counter is refused; a drop removes every entry", async () => {
    const { addresses } = await nodes();
    const c = client(addresses);
    const points: MapField[] = [{ name: 'points', type: 'counter' }];
    await c.mapUpdate(
      'm1',
      [
        { op: 'increment', path: points, amount: 6 },
        { op: 'enable', path: [{ name: 'on', type: 'flag' }] },
      ],
      { bucket: 'profiles' },
    );
    await c.mapUpdate('m2', [{ op: 'increment', path: points, amount: 2 }], { bucket: 'profiles' });
    const counterOf = async (key: string): Promise<Extract<MapEntry, { kind: 'counter' }>> =>
      (await c.mapRead(key, { bucket: 'profiles', r: 3 })).entries.find((e) => e.kind === 'counter') as Extract<
        MapEntry,
        { kind: 'counter' }
      >;
    const seen = await counterOf('m1');
    expect(seen.value).toBe(6n);
    // An increment the read did not see survives the remove.
    await c.mapUpdate('m1', [{ op: 'increment', path: points, amount: 1 }], { bucket: 'profiles' });
    const other = await counterOf('m2');
    expect(
      await refusal(
        c.mapUpdate('m1', [{ op: 'remove', path: points, context: other.context }], { bucket: 'profiles' }),
      ),
    ).toMatchObject({ code: S.INVALID_ARGUMENT, details: expect.stringMatching(/read from a different key/) });
    await c.mapUpdate('m1', [{ op: 'remove', path: points, context: seen.context }], { bucket: 'profiles' });
    expect((await c.mapGet('m1', { bucket: 'profiles', r: 3 })).counters).toEqual({ points: 1n });
    // Reset and not incremented since: no longer listed.
    await c.mapUpdate('m1', [{ op: 'remove', path: points, context: (await counterOf('m1')).context }], {
      bucket: 'profiles',
    });
    expect((await c.mapRead('m1', { bucket: 'profiles', r: 3 })).entries.map((e) => e.kind)).toEqual(['flag']);
    expect(await c.mapDrop('m1', { bucket: 'profiles' })).toEqual({ removed: 1 });
    expect(await c.mapRead('m1', { bucket: 'profiles', r: 3 })).toEqual({ entries: [], next: undefined });
    expect((await c.mapGet('m2', { bucket: 'profiles' })).counters).toEqual({ points: 2n });
  });

  const f = (name: string, type: MapField['type']): MapField => ({ name, type });
  const opts = { bucket: 'profiles' };

  it('assigns registers, enables flags, increments counters, adds to set fields, nested; reads in pages and whole; removes with contexts', async () => {
    const { addresses } = await nodes(['n1', 'n2']);
    const c = client(addresses);
    await c.mapUpdate(
      'u1',
      [
        { op: 'assign', path: [f('name', 'register')], value: 'Ada' },
        { op: 'enable', path: [f('admin', 'flag')] },
        { op: 'increment', path: [f('logins', 'counter')], amount: 3 },
        { op: 'add', path: [f('tags', 'set')], element: 'math' },
        { op: 'add', path: [f('address', 'map'), f('zips', 'set')], element: 'NW1' },
        { op: 'assign', path: [f('address', 'map'), f('city', 'register')], value: 'London' },
      ],
      opts,
    );
    // A second request through another coordinator: a later assign wins, counters add, sets grow.
    const other = client([addresses[1]!]);
    await other.mapUpdate(
      'u1',
      [
        { op: 'assign', path: [f('name', 'register')], value: 'Ada L.' },
        { op: 'increment', path: [f('logins', 'counter')], amount: -1 },
        { op: 'add', path: [f('tags', 'set')], element: 'poetry' },
      ],
      opts,
    );
    const m = await c.mapGet('u1', opts);
    expect(String(m.registers.name)).toBe('Ada L.');
    expect(m.flags).toEqual({ admin: true });
    expect(m.counters).toEqual({ logins: 2n });
    expect(m.sets.tags!.map(String)).toEqual(['math', 'poetry']);
    expect(String(m.maps.address!.registers.city)).toBe('London');
    expect(m.maps.address!.sets.zips!.map(String)).toEqual(['NW1']);
    // Pages of 2, in path order, each entry once.
    const first = await c.mapRead('u1', { ...opts, limit: 2 });
    expect(first.entries).toHaveLength(2);
    expect(first.next).toBeDefined();
    const seen: MapEntry[] = [];
    for await (const e of c.mapEntries('u1', { ...opts, limit: 2 })) seen.push(e);
    expect(seen.map((e) => e.kind).sort()).toEqual([
      'counter',
      'element',
      'element',
      'element',
      'flag',
      'register',
      'register',
    ]);
    // Removes take the contexts a read gave: clear the name, disable admin, drop a tag.
    const byPath = (p: string) =>
      seen.find(
        (e) =>
          e.path.map((x) => String(x.name)).join('.') === p && (e.kind !== 'element' || String(e.element) === 'math'),
      )!;
    const ctx = (p: string): Buffer => {
      const e = byPath(p);
      if (e.kind === 'counter') throw new Error('a counter has no context');
      return e.context;
    };
    await c.mapUpdate(
      'u1',
      [
        { op: 'remove', path: [f('name', 'register')], context: ctx('name') },
        { op: 'remove', path: [f('admin', 'flag')], context: ctx('admin') },
        { op: 'remove', path: [f('tags', 'set')], element: 'math', context: ctx('tags') },
      ],
      opts,
    );
    const after = await c.mapGet('u1', { ...opts, r: 3 });
    expect(after.registers).toEqual({});
    expect(after.flags).toEqual({});
    expect(after.sets.tags!.map(String)).toEqual(['poetry']);
    expect(after.counters).toEqual({ logins: 2n });
    // A map never written reads empty.
    expect(await c.mapRead('nobody', opts)).toEqual({ entries: [], next: undefined });
  });

  it('applies an update sent again with its request id once, through another coordinator: an increment counts once', async () => {
    const { addresses } = await nodes(['n1', 'n3']);
    const requestId = B('map-update-0001');
    const ops = [
      { op: 'increment' as const, path: [f('n', 'counter')], amount: 5 },
      { op: 'add' as const, path: [f('s', 'set')], element: 'x' },
    ];
    await client([addresses[0]!]).mapUpdate('once', ops, { ...opts, requestId });
    await client([addresses[1]!]).mapUpdate('once', ops, { ...opts, requestId });
    const m = await client(addresses).mapGet('once', { ...opts, r: 3 });
    expect(m.counters).toEqual({ n: 5n });
    expect(m.sets.s!.map(String)).toEqual(['x']);
  });

  it('refuses bad ops and paths with clear codes, and writes nothing of a refused request', async () => {
    const { addresses } = await nodes();
    const c = client(addresses);
    const r = raw(addresses[0]!);
    const field = (name: string, type: string) => ({
      name: B(name),
      type: `MAP_FIELD_TYPE_${type}` as 'MAP_FIELD_TYPE_FLAG',
    });
    const update = (ops: object[]): Promise<unknown> =>
      callUnary(r, 'MapUpdate', { bucket: 'profiles', key: B('m'), ops }, soon());
    const bad = async (ops: object[], details: RegExp): Promise<void> => {
      expect(await refusal(update(ops))).toMatchObject({
        code: S.INVALID_ARGUMENT,
        details: expect.stringMatching(details),
      });
    };
    await bad([{ path: [field('a', 'REGISTER')] }], /operation 1 of 1 sets no op/);
    await bad([{ path: [field('a', 'FLAG')], enable: false }], /enable is false; disable a flag with a remove/);
    await bad([{ path: [{ name: B('a') }], assign: B('v') }], /field 1 of its path has no type/);
    await bad(
      [{ path: [field('a', 'COUNTER')], assign: B('v') }],
      /assign applies to a register field, not a counter field/,
    );
    await bad(
      [{ path: [field('a', 'REGISTER')], increment: 1 }],
      /increment applies to a counter field, not a register field/,
    );
    await bad([{ path: [field('a', 'COUNTER')], increment: 0 }], /nonzero/);
    await bad(
      [{ path: [field('a', 'SET')], enable: true }],
      /add applies to a set element or a flag field .*not a set field/,
    );
    await bad([{ path: [field('a', 'FLAG')], remove: {} }], /needs the context/);
    // A counter's remove is its reset, which needs the context a map read gave that counter.
    await bad(
      [{ path: [field('a', 'COUNTER')], remove: { context: B('x') } }],
      /bad causal context for .*: not a counter's context \(a counter read or a map read gives one\)/,
    );
    await bad([{ path: [field('a', 'MAP')], remove: { context: B('x') } }], /remove applies to .* not a map field/);
    await bad([{ path: [field('a', 'REGISTER')], add: B('e') }], /only a set field has elements/);
    await bad(
      [{ path: ['a', 'b', 'c', 'd'].map((n) => field(n, 'MAP')).concat(field('e', 'FLAG')), enable: true }],
      /5 nested fields is over the limit of 4/,
    );
    await bad([{ path: [field('a', 'FLAG'), field('b', 'FLAG')], enable: true }], /only a map field has fields/);
    await bad([{ path: [field('', 'FLAG')], enable: true }], /at least one byte/);
    await bad([{ path: [], enable: true }], /op 0 names no field/);
    await bad([{ path: [], add: B('loose') }], /op 0 names no field: a map op's path names the field/);
    await bad(
      [
        { path: [field('a', 'FLAG')], enable: true },
        { path: [field('a', 'FLAG')], remove: { context: B('x') } },
      ],
      /same element or field/,
    );
    await bad([], /1 to 1000/);
    await bad(
      Array.from({ length: MAX_MAP_OPS + 1 }, (_, i) => ({ path: [field(`f${i}`, 'FLAG')], enable: true })),
      /1 to 1000/,
    );
    expect(
      await refusal(
        callUnary(
          r,
          'MapUpdate',
          {
            bucket: 'profiles',
            key: B('m'),
            ops: [{ path: [field('a', 'REGISTER')], assign: Buffer.alloc((1 << 20) + 1) }],
          },
          soon(),
        ),
      ),
    ).toMatchObject({ code: S.INVALID_ARGUMENT, details: expect.stringMatching(/over the limit/) });
    expect(
      await refusal(callUnary(r, 'MapRead', { bucket: 'profiles', key: B('m'), limit: 1001 }, soon())),
    ).toMatchObject({ code: S.INVALID_ARGUMENT, details: expect.stringMatching(/limit/) });
    expect(
      await refusal(callUnary(r, 'MapRead', { bucket: 'profiles', key: B('m'), after: B('zz') }, soon())),
    ).toMatchObject({
      code: S.INVALID_ARGUMENT,
      details: expect.stringMatching(/no page token of this map.*pass the previous page's next/),
    });
    // The client refuses before sending what it can tell is wrong.
    expect(await refusal(c.mapUpdate('m', [], opts))).toMatchObject({ code: S.INVALID_ARGUMENT });
    expect(
      await refusal(c.mapUpdate('m', [{ op: 'increment', path: [f('n', 'counter')], amount: 1.5 }], opts)),
    ).toMatchObject({ code: S.INVALID_ARGUMENT });
    // Nothing of those reached the map.
    expect(await c.mapRead('m', opts)).toEqual({ entries: [], next: undefined });
  });
});

describe('bucket types', () => {
  const wrongType = (bucket: string, type: string, uses: RegExp): { code: number; details: string } => ({
    code: S.FAILED_PRECONDITION,
    details: expect.stringMatching(
      new RegExp(`^bucket ${bucket} is of type ${type}, which .* does not take: use ${uses.source}`),
    ) as unknown as string,
  });

  it("refuses every call on a bucket of a type this release does not know (a later release's): BK_UNKNOWN_TYPE, not taken as kv", async () => {
    const cluster = await FakeCluster.create(3);
    cleanup.push(() => cluster.close());
    const buckets = new BucketTable(3);
    // As gossip brings a bucket a later release created: its type is a value this one cannot read.
    const write = (value: string) => ({ value, at: 1000, by: 'n9' });
    buckets.merge([
      {
        name: 'profiles',
        props: {
          created: write('1'),
          n: write('3'),
          r: write('0'),
          w: write('0'),
          ttl_ms: write('0'),
          siblings: write('siblings'),
          type: write('hll'),
        },
      },
    ]);
    expect(buckets.unknownType('profiles')).toBe('hll');
    expect(buckets.unknownType('default')).toBeUndefined();
    const address = await serve(cluster.coordinator('n1'), buckets);
    for (const streaming of [true, false]) {
      const c = client([address], streaming);
      const refused = {
        code: S.FAILED_PRECONDITION,
        details:
          /bucket profiles is of type "hll", which this node's release does not know, so \w+.* cannot take its keys: upgrade this node/,
      };
      await expect(c.put('k', 'v', { bucket: 'profiles' })).rejects.toMatchObject(refused);
      await expect(c.get('k', { bucket: 'profiles' })).rejects.toMatchObject(refused);
      await expect(c.getMany(['k'], { bucket: 'profiles' })).rejects.toMatchObject(refused);
      await expect(c.counterIncrement('k', 1, { bucket: 'profiles' })).rejects.toMatchObject(refused);
      await expect(c.setAdd('k', ['x'], { bucket: 'profiles' })).rejects.toMatchObject(refused);
      await expect(c.mapGet('k', { bucket: 'profiles' })).rejects.toMatchObject(refused);
    }
  });

  it('refuses put, get, delete and the batches on a counter or set bucket (BK_WRONG_TYPE), unary and on the stream', async () => {
    const { addresses } = await nodes();
    const r = raw(addresses[0]!);
    for (const [bucket, type, uses] of [
      ['hits', 'counter', /CounterUpdate, CounterGet and CounterReset/],
      ['tags', 'set', /SetUpdate, SetRead and SetContains/],
      ['profiles', 'map', /MapUpdate and MapRead/],
    ] as const) {
      const want = wrongType(bucket, type, uses);
      expect(await refusal(callUnary(r, 'Put', { bucket, key: B('k'), value: B('v') }, soon()))).toMatchObject(want);
      expect(await refusal(callUnary(r, 'Get', { bucket, key: B('k') }, soon()))).toMatchObject(want);
      expect(await refusal(callUnary(r, 'Delete', { bucket, key: B('k') }, soon()))).toMatchObject(want);
      expect(await refusal(callUnary(r, 'GetMany', { bucket, keys: [B('k')] }, soon()))).toMatchObject(want);
      expect(
        await refusal(callUnary(r, 'PutMany', { bucket, items: [{ key: B('k'), value: B('v') }] }, soon())),
      ).toMatchObject(want);
      // The stream's calls (what the client sends by default), each refused as its unary call.
      const streamed = client(addresses, true);
      expect(await refusal(streamed.put('k', 'v', { bucket }))).toMatchObject({
        code: S.FAILED_PRECONDITION,
        details: expect.stringMatching(/Put \(on Stream\) does not take/),
      });
      expect(await refusal(streamed.get('k', { bucket }))).toMatchObject(want);
      expect(await refusal(streamed.delete('k', { bucket, context: Buffer.alloc(0) }))).toMatchObject(want);
    }
  });

  it('refuses counter calls on set, kv and default buckets, and set calls on counter, kv and default buckets', async () => {
    const { addresses } = await nodes();
    const c = client(addresses);
    expect(await refusal(c.counterIncrement('k', 1, { bucket: 'tags' }))).toMatchObject(
      wrongType('tags', 'set', /SetUpdate/),
    );
    expect(await refusal(c.counterGet('k', { bucket: 'carts' }))).toMatchObject({
      code: S.FAILED_PRECONDITION,
      details:
        'bucket carts is of type kv, which CounterGet does not take: use Put, Get, Delete, GetMany, PutMany and Stream (ringkv put, get, del) on its keys; counters live in a bucket of type counter (ringkv bucket create NAME --type counter)',
    });
    expect(await refusal(c.counterIncrement('k'))).toMatchObject(wrongType('default', 'kv', /Put, Get/));
    expect(await refusal(c.setAdd('k', ['a'], { bucket: 'hits' }))).toMatchObject(
      wrongType('hits', 'counter', /CounterUpdate/),
    );
    expect(await refusal(c.setRead('k', { bucket: 'carts' }))).toMatchObject({
      code: S.FAILED_PRECONDITION,
      details: expect.stringMatching(
        /which SetRead does not take.*sets live in a bucket of type set \(ringkv bucket create NAME --type set\)$/,
      ),
    });
    expect(await refusal(c.setContains('k', 'a'))).toMatchObject(wrongType('default', 'kv', /Put/));
    expect(await refusal(c.setRemove('k', [{ element: 'a', context: B('x') }], { bucket: 'hits' }))).toMatchObject(
      wrongType('hits', 'counter', /CounterUpdate/),
    );
    const name: MapField[] = [{ name: 'name', type: 'register' }];
    expect(
      await refusal(c.mapUpdate('k', [{ op: 'assign', path: name, value: 'x' }], { bucket: 'tags' })),
    ).toMatchObject(wrongType('tags', 'set', /SetUpdate/));
    expect(await refusal(c.mapRead('k', { bucket: 'carts' }))).toMatchObject({
      code: S.FAILED_PRECONDITION,
      details: expect.stringMatching(
        /which MapRead does not take.*maps live in a bucket of type map \(ringkv bucket create NAME --type map\)$/,
      ),
    });
    expect(await refusal(c.setAdd('k', ['a'], { bucket: 'profiles' }))).toMatchObject(
      wrongType('profiles', 'map', /MapUpdate and MapRead/),
    );
    expect(await refusal(c.counterGet('k', { bucket: 'profiles' }))).toMatchObject(
      wrongType('profiles', 'map', /MapUpdate/),
    );
    // A kv bucket still takes put and get, on the stream and unary.
    await c.put('k', 'v', { bucket: 'carts' });
    expect((await client(addresses, false).get('k', { bucket: 'carts' })).values.map(String)).toEqual(['v']);
  });
});
