import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { storedKey, subKey, type FieldType, type SubPath } from '../../../src/buckets/index.js';
import { LocalReplica } from '../../../src/replication/local-replica.js';
import { ReplicaFailure, callStep, type ReplicaCall, type ReplyTo } from '../../../src/replication/replica-api.js';
import {
  PAXOS_COMMIT,
  PAXOS_PREPARE,
  PAXOS_PROPOSE,
  REGISTER,
  decodeRegister,
  encodeRegister,
  type Ballot,
  type KindStep,
  type RegisterState,
} from '../../../src/kinds/index.js';
import { MemoryEngine, Store, recordDigest, resolveCounterReplies, type SubOp } from '../../../src/storage/index.js';
import { BatchedServer, type ServerCodec } from '../../../src/transport/batched-stream.js';
import { decodeBatch } from '../../../src/transport/protobuf-bytes.js';
import {
  decodeCalls,
  decodeReplies,
  encodeCalls,
  encodeReplies,
  replySize,
  type DecodedCall,
  type WireCall,
  type WirePaxosStep,
  type WireReply,
} from '../../../src/transport/replica-codec.js';
import { GrpcReplicas, ReplicaServer } from '../../../src/transport/replica-wire.js';

const B = (s: string): Buffer => Buffer.from(s);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A replica whose reads take `delayMs`. */
class SlowReplica extends LocalReplica {
  delayMs = 0;
  override async call<C extends ReplicaCall>(c: C): Promise<ReplyTo<C>> {
    if (c.op === 'read') await sleep(this.delayMs);
    return super.call(c);
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
  p.replicaServer = new ReplicaServer(replica, {
    refuse: () => p.stopping,
    maxInFlight: o.maxInFlight ?? 100,
    observe: (op, code) => p.observed.push(`${op}:${code}`),
  });
  const impl = p.replicaServer.implementation();
  const serve = impl['Stream'] as (call: grpc.ServerDuplexStream<Buffer, Buffer>) => void;
  p.server = new grpc.Server();
  p.server.addService(p.replicaServer.definition(), {
    Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      call.on('data', () => p.messages++);
      serve(call);
    },
  });
  const port = await new Promise<number>((res, rej) =>
    p.server.bindAsync(`127.0.0.1:${o.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (e, port) =>
      e ? rej(e) : res(port),
    ),
  );
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
    const applied = await Promise.all(
      keys.map((k) => c.call('b', { op: 'apply', key: k, value: B(`v-${k}`), context: Buffer.alloc(0) }, soon())),
    );
    expect(p.messages).toBeLessThan(30);
    const [records, digests, merged] = await Promise.all([
      Promise.all(keys.map((k) => c.call('b', { op: 'read', key: k }, soon()))),
      Promise.all(keys.map((k) => c.call('b', { op: 'digest', key: k }, soon()))),
      Promise.all(keys.map((k, i) => c.call('b', { op: 'merge', key: k, record: applied[i]!.record }, soon()))),
    ]);
    // The replica's stored record carries its own bookkeeping too: compare versions.
    records.forEach((r, i) => expect(recordDigest(r)).toEqual(recordDigest(applied[i]!.record)));
    digests.forEach((d, i) => expect(d).toEqual(recordDigest(applied[i]!.record)));
    expect(merged.every((changed) => !changed)).toBe(true);
    expect(await c.call('b', { op: 'read', key: B('absent') }, soon())).toBeUndefined();
    expect(await c.call('b', { op: 'digest', key: B('absent') }, soon())).toEqual(Buffer.alloc(0));
    // A hint is kept apart from the replica's own copy.
    expect(await c.call('b', { op: 'merge', key: B('h'), record: applied[0]!.record, hintFor: 'n9' }, soon())).toBe(
      true,
    );
    expect(recordDigest(await c.call('b', { op: 'read', key: B('h'), hintFor: 'n9' }, soon()))).toEqual(
      recordDigest(applied[0]!.record),
    );
    expect(await c.call('b', { op: 'read', key: B('h') }, soon())).toBeUndefined();
    expect(p.observed.filter((x) => x === 'apply:OK')).toHaveLength(300);
  });

  it('a delete travels as a tombstone', async () => {
    const p = await peer();
    const c = client(p.address);
    const put = await c.call('b', { op: 'apply', key: B('k'), value: B('v'), context: Buffer.alloc(0) }, soon());
    await c.call('b', { op: 'apply', key: B('k'), value: null, context: put.context }, soon());
    expect((await p.store.get(B('k'))).deleted).toBe(true);
  });

  it("a replica's refusal carries its code; a stopping node's counts as unreachable", async () => {
    const p = await peer();
    const c = client(p.address);
    const bad = await failure(c.call('b', { op: 'merge', key: B('k'), record: B('not a record') }, soon()));
    expect(bad).toMatchObject({ kind: 'refused', code: 'KV_BAD_RECORD' });
    const ctx = (await c.call('b', { op: 'apply', key: B('a'), value: B('v'), context: Buffer.alloc(0) }, soon()))
      .context;
    expect(await failure(c.call('b', { op: 'apply', key: B('b'), value: B('v'), context: ctx }, soon()))).toMatchObject(
      {
        kind: 'refused',
        code: 'KV_BAD_CONTEXT',
        message: expect.stringMatching(/different key/),
      },
    );
    p.stopping = 'node is shutting down';
    expect(await failure(c.call('b', { op: 'read', key: B('a') }, soon()))).toMatchObject({
      kind: 'unreachable',
      code: 'RK_NOT_READY',
      message: 'node is shutting down',
    });
    expect(p.observed).toContain('merge:INVALID_ARGUMENT');
    expect(p.observed).toContain('read:UNAVAILABLE');
  });

  it('calls past the in-flight bound are refused RK_OVERLOADED, and taken again after', async () => {
    const p = await peer({ maxInFlight: 2 });
    p.replica.delayMs = 100;
    const c = client(p.address);
    const calls = [0, 1, 2].map((i) =>
      c.call('b', { op: 'read', key: B(`k${i}`) }, soon()).then(
        () => 'ok',
        (e: ReplicaFailure) => e.code,
      ),
    );
    expect((await Promise.all(calls)).sort()).toEqual(['RK_OVERLOADED', 'ok', 'ok']);
    expect(await c.call('b', { op: 'read', key: B('k') }, soon())).toBeUndefined();
  });

  it('a call that gets no answer before its deadline fails as a timeout, and the stream carries on', async () => {
    const p = await peer();
    p.replica.delayMs = 400;
    const c = client(p.address);
    expect(await failure(c.call('b', { op: 'read', key: B('k') }, Date.now() + 50))).toMatchObject({
      kind: 'timeout',
      code: 'RK_TIMEOUT',
    });
    expect(await failure(c.call('b', { op: 'read', key: B('k') }, Date.now() - 1))).toMatchObject({ kind: 'timeout' });
    p.replica.delayMs = 0;
    expect(await c.call('b', { op: 'digest', key: B('k') }, soon())).toEqual(Buffer.alloc(0));
  });

  it('knows how long a peer has had calls in flight without answering any: silentMs', async () => {
    const p = await peer();
    const c = client(p.address);
    await c.call('b', { op: 'digest', key: B('warm') }, soon());
    expect(c.silentMs('b')).toBe(0); // nothing in flight
    p.replica.delayMs = 400;
    const slow = c.call('b', { op: 'read', key: B('k') }, soon());
    await sleep(250);
    expect(c.silentMs('b')).toBeGreaterThanOrEqual(200);
    await slow;
    expect(c.silentMs('b')).toBe(0);
  });

  it('no node at the address: unreachable', async () => {
    const p = await peer();
    const address = p.address;
    p.server.forceShutdown();
    expect(await failure(client(address).call('b', { op: 'read', key: B('k') }, soon()))).toMatchObject({
      kind: 'unreachable',
    });
    expect(
      await failure(
        new GrpcReplicas(() => undefined, grpc.credentials.createInsecure()).call(
          'b',
          { op: 'read', key: B('k') },
          soon(),
        ),
      ),
    ).toMatchObject({ kind: 'unreachable', message: /no address known for node b/ });
  });

  it('a stream that breaks fails its calls in flight as unreachable; the next call opens a new one', async () => {
    const p = await peer();
    p.replica.delayMs = 300;
    const c = client(p.address);
    await c.call('b', { op: 'digest', key: B('warm') }, soon());
    const inFlight = failure(c.call('b', { op: 'read', key: B('k') }, soon()));
    await sleep(50);
    p.server.forceShutdown();
    expect(await inFlight).toMatchObject({ kind: 'unreachable' });
    // The same address comes back (a restarted node): calls reach it again.
    const port = Number(p.address.split(':')[1]);
    const again = await peer({ port });
    let got: Buffer | undefined | 'failed' = 'failed';
    for (let i = 0; i < 50 && got === 'failed'; i++) {
      got = await c.call('b', { op: 'digest', key: B('k') }, soon()).catch(() => 'failed' as const);
      if (got === 'failed') await sleep(100);
    }
    expect(got).toEqual(Buffer.alloc(0));
    expect(again.messages).toBeGreaterThan(0);
  });

  it("drain answers the calls running, then ends peers' streams, so that a graceful shutdown completes", async () => {
    const p = await peer();
    p.replica.delayMs = 200;
    const c = client(p.address);
    await c.call('b', { op: 'digest', key: B('warm') }, soon());
    const running = c.call('b', { op: 'read', key: B('k') }, soon());
    await sleep(50);
    const shutdown = new Promise<string>((res) => p.server.tryShutdown(() => res('shut down')));
    p.stopping = 'node is shutting down';
    p.replicaServer.drain();
    await expect(running).resolves.toBeUndefined();
    // Without the drain, the open stream would hold the shutdown until it was forced.
    expect(await Promise.race([shutdown, sleep(4000).then(() => 'still waiting')])).toBe('shut down');
    expect(await failure(c.call('b', { op: 'read', key: B('k') }, soon()))).toMatchObject({ kind: 'unreachable' });
  });
});

const MAX = Number.MAX_SAFE_INTEGER;
const EMPTY = Buffer.alloc(0);
/** A set's parent: a named bucket's stored key. */
const parent = storedKey('carts', B('alice'));
const element = (e: string): SubPath => ({ element: e });

/** A stream to `address` sending bytes as given (encodeCalls, or protobufjs's), its replies decoded as they come. */
function rawStream(address: string) {
  const raw = new grpc.Client(address, grpc.credentials.createInsecure());
  const call = raw.makeBidiStreamRequest(
    '/ringkv.internal.v1.Replica/Stream',
    (b: Buffer) => b,
    (b: Buffer) => b,
    new grpc.Metadata(),
  );
  const out = { replies: [] as WireReply[], status: undefined as grpc.StatusObject | undefined };
  call.on('data', (b: Buffer) => out.replies.push(...decodeReplies(b)));
  call.on('error', () => undefined);
  call.on('status', (st: grpc.StatusObject) => (out.status = st));
  cleanup.push(() => {
    call.cancel();
    raw.close();
  });
  return {
    ...out,
    get replies() {
      return out.replies;
    },
    get status() {
      return out.status;
    },
    send: (b: Buffer) => call.write(b),
    async until(n: number): Promise<void> {
      for (let i = 0; i < 300 && out.replies.length < n && out.status === undefined; i++) await sleep(10);
    },
  };
}

describe("the data types' calls over the stream", () => {
  it('counterUpdate: the record, delta and value come back; a retried request id counts once; a value past 2^53 arrives exact', async () => {
    const p = await peer();
    const c = client(p.address);
    const first = await c.call('b', { op: 'counterUpdate', key: B('hits'), amount: 5 }, soon());
    expect(first.value).toBe(5n);
    const second = await c.call(
      'b',
      { op: 'counterUpdate', key: B('hits'), amount: -2, requestId: B('request-1') },
      soon(),
    );
    expect(second.value).toBe(3n);
    expect(await p.store.getRecord(B('hits'))).toEqual(second.record);
    // The same request again (a retry, a hedge): not counted twice.
    expect(
      (await c.call('b', { op: 'counterUpdate', key: B('hits'), amount: -2, requestId: B('request-1') }, soon())).value,
    ).toBe(3n);
    // The delta is what another replica merges: it holds the increment.
    const other = await Store.open({ engine: new MemoryEngine() });
    cleanup.push(() => other.close());
    expect((await other.merge(B('hits'), first.delta)).changed).toBe(true);
    expect(resolveCounterReplies([await other.getRecord(B('hits'))]).value).toBe(5n);
    // Past 2^53: one replica's sums are each within it, several replicas' together are not.
    const elsewhere = await other.counterUpdate(B('big'), MAX);
    expect(await c.call('b', { op: 'merge', key: B('big'), record: elsewhere.record }, soon())).toBe(true);
    const big = await c.call('b', { op: 'counterUpdate', key: B('big'), amount: MAX }, soon());
    expect(big.value).toBe(2n * BigInt(MAX));
    expect(resolveCounterReplies([big.record]).value).toBe(2n * BigInt(MAX));
    const down = await c.call('b', { op: 'counterUpdate', key: B('neg'), amount: -MAX }, soon());
    expect(down.value).toBe(-BigInt(MAX));
  });

  it("counterUpdate's refusals arrive as refused with the replica's code; the coordinator's resend after KV_COUNTER_GAP is taken", async () => {
    const p = await peer();
    const c = client(p.address);
    await c.call('b', { op: 'apply', key: B('plain'), value: B('v'), context: EMPTY }, soon());
    expect(await failure(c.call('b', { op: 'counterUpdate', key: B('plain'), amount: 1 }, soon()))).toMatchObject({
      kind: 'refused',
      code: 'KV_WRONG_TYPE',
    });
    expect(await failure(c.call('b', { op: 'counterUpdate', key: B('c'), amount: 0 }, soon()))).toMatchObject({
      kind: 'refused',
      code: 'KV_BAD_AMOUNT',
      message: /nonzero integer/,
    });
    await c.call('b', { op: 'counterUpdate', key: B('full'), amount: MAX }, soon());
    expect(await failure(c.call('b', { op: 'counterUpdate', key: B('full'), amount: 1 }, soon()))).toMatchObject({
      kind: 'refused',
      code: 'KV_COUNTER_OVERFLOW',
    });
    // Amounts the wire cannot carry exactly are refused before they are sent.
    const sent = p.messages;
    for (const amount of [2 ** 60, 1.5, Number.NaN, -Infinity])
      expect(await failure(c.call('b', { op: 'counterUpdate', key: B('c'), amount }, soon()))).toMatchObject({
        kind: 'refused',
        code: 'KV_BAD_AMOUNT',
        message: /from -9007199254740991 to 9007199254740991/,
      });
    expect(p.messages).toBe(sent);
    // A replica that missed a delta refuses the next (KV_COUNTER_GAP); the full record then merges.
    const issuer = await Store.open({ engine: new MemoryEngine() });
    cleanup.push(() => issuer.close());
    await issuer.counterUpdate(B('gap'), 1);
    const later = await issuer.counterUpdate(B('gap'), 2);
    expect(await failure(c.call('b', { op: 'merge', key: B('gap'), record: later.delta }, soon()))).toMatchObject({
      kind: 'refused',
      code: 'KV_COUNTER_GAP',
    });
    expect(await c.call('b', { op: 'merge', key: B('gap'), record: later.record }, soon())).toBe(true);
    expect(resolveCounterReplies([await c.call('b', { op: 'read', key: B('gap') }, soon())]).value).toBe(3n);
    expect(p.observed).toEqual(
      expect.arrayContaining([
        'counterUpdate:FAILED_PRECONDITION',
        'counterUpdate:INVALID_ARGUMENT',
        'counterUpdate:OUT_OF_RANGE',
        'merge:FAILED_PRECONDITION',
      ]),
    );
  });

  it('an amount past the bound from a peer (any sint64 arrives exact) is refused KV_BAD_AMOUNT, not rounded into range', async () => {
    const p = await peer();
    const s = rawStream(p.address);
    const call = (id: number, amount: bigint): WireCall => ({
      id,
      deadline: soon(),
      op: 'counterUpdate',
      key: B('c'),
      amount,
      requestId: EMPTY,
    });
    s.send(encodeCalls([call(1, 2n ** 63n - 1n), call(2, -(2n ** 53n)), call(3, 7n)]));
    await s.until(3);
    const byId = new Map(s.replies.map((r) => [r.id, r]));
    expect(byId.get(1)).toMatchObject({ op: 'error', code: 'KV_BAD_AMOUNT', message: /got 9223372036854775807/ });
    expect(byId.get(2)).toMatchObject({ op: 'error', code: 'KV_BAD_AMOUNT', message: /got -9007199254740992/ });
    expect(byId.get(3)).toMatchObject({ op: 'counterUpdate', value: '7' });
  });

  it('writeMany and readRange: adds and removes on sub-keys, their records in order, read back in pages', async () => {
    const p = await peer();
    const c = client(p.address);
    const ops = ['x', 'y', 'z', 'w'].map((e) => ({ op: 'add' as const, path: element(e) }));
    const gift = { fields: [{ name: 'gift', type: 'flag' as const }] };
    const written = await c.call(
      'b',
      { op: 'writeMany', parent, ops: [...ops, { op: 'add', path: gift }], requestId: B('request-1') },
      soon(),
    );
    expect(written.map((w) => w.key)).toEqual([...ops.map((o) => subKey(parent, o.path)), subKey(parent, gift)]);
    for (const w of written) expect(await p.store.getRecord(w.key)).toEqual(w.record);
    // Retried: nothing new is written, the same records come back.
    expect(
      (await c.call('b', { op: 'writeMany', parent, ops, requestId: B('request-1') }, soon())).map((w) =>
        recordDigest(w.record),
      ),
    ).toEqual(written.slice(0, 4).map((w) => recordDigest(w.record)));
    const y = subKey(parent, element('y'));
    const removed = await c.call(
      'b',
      { op: 'writeMany', parent, ops: [{ op: 'remove', path: element('y'), context: (await p.store.get(y)).context }] },
      soon(),
    );
    expect(removed).toHaveLength(1);
    expect((await p.store.get(y)).deleted).toBe(true);
    // Pages: 2 and 2 and 1 (the tombstone of y among them: the coordinator resolves it), in key order.
    const all = [...written.map((w) => w.key)].sort(Buffer.compare);
    const one = await c.call('b', { op: 'readRange', parent, limit: 2 }, soon());
    expect(one.records.map((r) => r.key)).toEqual(all.slice(0, 2));
    expect(one.next).toEqual(all[1]);
    const two = await c.call('b', { op: 'readRange', parent, after: one.next, limit: 2 }, soon());
    expect(two.records.map((r) => r.key)).toEqual(all.slice(2, 4));
    const three = await c.call('b', { op: 'readRange', parent, after: two.next, limit: 2 }, soon());
    expect(three.records.map((r) => r.key)).toEqual(all.slice(4));
    expect(three.next).toBeUndefined();
    for (const r of [...one.records, ...two.records, ...three.records])
      expect(recordDigest(r.record)).toEqual(recordDigest(await p.store.getRecord(r.key)));
    const none = await c.call('b', { op: 'readRange', parent: storedKey('carts', B('nobody')), limit: 10 }, soon());
    expect(none).toEqual({ records: [], next: undefined });
  });

  it('counts the bytes of each call sent, by operation; a call refused before it is sent counts none', async () => {
    const p = await peer();
    const c = client(p.address);
    await c.call('b', { op: 'writeMany', parent, ops: [{ op: 'add', path: element('x') }] }, soon());
    const one = c.bytesSent.get('writeMany') ?? 0;
    expect(one).toBeGreaterThan(parent.length);
    await c.call('b', { op: 'writeMany', parent, ops: [{ op: 'add', path: element('y') }] }, soon());
    expect(c.bytesSent.get('writeMany')).toBe(2 * one);
    await c.call('b', { op: 'read', key: parent }, soon());
    expect(c.bytesSent.get('read')).toBeGreaterThan(0);
    expect(
      await failure(c.call('b', { op: 'writeMany', parent, ops: [{ op: 'add', path: element('z') }] }, Date.now() - 1)),
    ).toMatchObject({
      kind: 'timeout',
    });
    expect(c.bytesSent.get('writeMany')).toBe(2 * one);
  });

  it("writeMany's and readRange's refusals arrive as refused with the replica's code (nothing written)", async () => {
    const p = await peer();
    const c = client(p.address);
    const refused = async (ops: readonly SubOp[], code: string, message: RegExp, at = parent) =>
      expect(await failure(c.call('b', { op: 'writeMany', parent: at, ops }, soon()))).toMatchObject({
        kind: 'refused',
        code,
        message: expect.stringMatching(message),
      });
    await refused([{ op: 'remove', path: element('x'), context: EMPTY }], 'DT_NO_CONTEXT', /needs the context/);
    // An element set but empty is not an unset one (a flag): it is refused as empty.
    await refused([{ op: 'add', path: { element: EMPTY } }], 'DT_ELEMENT_EMPTY', /at least one byte/);
    await refused([{ op: 'add', path: {} }], 'DT_BAD_OP', /not the parent itself/);
    await refused([], 'DT_BAD_OP', /1 to 1000 ops/);
    // Named wrongly past the types (a caller's bug): sent as unspecified, refused by the replica.
    await refused(
      [{ op: 'toggle', path: element('x') } as unknown as SubOp],
      'DT_BAD_OP',
      /kind 0 is unknown.*ADD \(1\), REMOVE \(2\), ASSIGN \(3\) or INCREMENT \(4\)/,
    );
    await refused(
      [{ op: 'add', path: { fields: [{ name: 'f', type: 'list' as FieldType }], element: 'e' } }],
      'DT_BAD_PATH',
      /unknown field type 0/,
    );
    await refused(
      [
        {
          op: 'add',
          path: {
            fields: Array.from({ length: 5 }, (_, i) => ({ name: `m${i}`, type: 'map' as const })),
            element: 'e',
          },
        },
      ],
      'DT_PATH_TOO_DEEP',
      /5 nested fields/,
    );
    await refused([{ op: 'add', path: element('x') }], 'DT_BAD_PARENT', /named buckets/, B('plain'));
    await refused(
      [{ op: 'remove', path: element('x'), context: B('not a context') }],
      'KV_BAD_CONTEXT',
      /bad causal context/,
    );
    await c.call(
      'b',
      { op: 'counterUpdate', key: subKey(parent, { fields: [{ name: 'n', type: 'flag' }] }), amount: 1 },
      soon(),
    );
    await refused([{ op: 'add', path: { fields: [{ name: 'n', type: 'flag' }] } }], 'KV_WRONG_TYPE', /counter/);
    expect(await c.call('b', { op: 'readRange', parent, limit: 10 }, soon())).toMatchObject({
      records: [expect.anything()],
    }); // only the counter
    expect(await failure(c.call('b', { op: 'readRange', parent, limit: 0 }, soon()))).toMatchObject({
      kind: 'refused',
      code: 'KV_BAD_OPTION',
      message: /limit must be 1 to 1000/,
    });
    expect(await failure(c.call('b', { op: 'readRange', parent, limit: 1001 }, soon()))).toMatchObject({
      kind: 'refused',
      code: 'KV_BAD_OPTION',
    });
    expect(
      await failure(c.call('b', { op: 'readRange', parent, after: B('elsewhere'), limit: 10 }, soon())),
    ).toMatchObject({
      kind: 'refused',
      code: 'KV_BAD_OPTION',
      message: /no sub-key of this parent/,
    });
    const sent = p.messages;
    for (const limit of [2 ** 40, 2.5, -1])
      expect(await failure(c.call('b', { op: 'readRange', parent, limit }, soon()))).toMatchObject({
        kind: 'refused',
        code: 'KV_BAD_OPTION',
      });
    expect(p.messages).toBe(sent);
  });

  it('a page of sub-keys near its 4 MiB cap travels as one reply', async () => {
    const p = await peer();
    const c = client(p.address);
    const value = Buffer.alloc((1 << 20) - 8 * 1024, 7); // the store's largest value, less room for its versions
    const keys = ['r1', 'r2', 'r3', 'r4', 'r5'].map((name) => subKey(parent, { fields: [{ name, type: 'register' }] }));
    for (const k of keys) await c.call('b', { op: 'apply', key: k, value, context: EMPTY }, soon());
    const page = await c.call('b', { op: 'readRange', parent, limit: 1000 }, soon());
    expect(page.records.map((r) => r.key)).toEqual(keys.slice(0, 4));
    expect(page.records.reduce((a, r) => a + r.key.length + r.record.length, 0)).toBeGreaterThan(
      4 * 1024 * 1024 - 64 * 1024,
    );
    expect(page.next).toEqual(keys[3]);
    expect(
      (await c.call('b', { op: 'readRange', parent, after: page.next, limit: 1000 }, soon())).records.map((r) => r.key),
    ).toEqual([keys[4]]);
  });
});

/** A server of an earlier release on a free port: the Replica service over `codec`, closed (with `store`) after the test. */
async function earlierRelease<C extends { id: number; deadline: number }>(
  replica: LocalReplica,
  store: Store,
  codec: ServerCodec<C, WireReply>,
): Promise<{ server: grpc.Server; port: number }> {
  const definition = new ReplicaServer(replica, { refuse: () => undefined, maxInFlight: 10 }).definition();
  const server = new grpc.Server();
  server.addService(definition, {
    Stream: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => new BatchedServer().serve(call, codec),
  });
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, n) => (e ? rej(e) : res(n))),
  );
  cleanup.push(async () => {
    server.forceShutdown();
    await store.close();
  });
  return { server, port };
}

/**
 * How a server of the release before kinds' steps ran a PaxosRequest and answered it,
 * written out here as that release did it (the acceptor's rules on the store, the reply's
 * state a register record), so that the client's fallback is checked against it and not
 * against this release's own mapping.
 */
async function earlierPaxos(store: Store, c: Extract<WireCall, { op: 'paxos' }>): Promise<WireReply> {
  const ballot = { n: c.ballot, by: c.proposer.toString('latin1') };
  const proposal = {
    ballot,
    id: c.proposalId.toString('latin1'),
    value: c.value,
    ...(c.base.length === 0 ? {} : { base: c.base.toString('latin1') }),
  };
  const state = (promised: Ballot, p?: Omit<RegisterState, 'promised'>): Buffer =>
    encodeRegister({ promised, accepted: p?.accepted, committed: p?.committed, history: p?.history ?? [] });
  switch (c.step) {
    case 'prepare': {
      const r = await store.step(c.key, REGISTER, PAXOS_PREPARE, ballot);
      return { id: c.id, op: 'paxos', ok: r.promised, state: r.promised ? state(ballot, r) : state(r.higher) };
    }
    case 'propose': {
      const r = await store.step(c.key, REGISTER, PAXOS_PROPOSE, proposal);
      return { id: c.id, op: 'paxos', ok: r.accepted, state: r.accepted ? Buffer.alloc(0) : state(r.higher) };
    }
    default:
      await store.step(c.key, REGISTER, PAXOS_COMMIT, proposal);
      return { id: c.id, op: 'paxos', ok: true, state: Buffer.alloc(0) };
  }
}

describe('mixed releases', () => {
  it('a call naming no operation this release knows is refused alone (RK_UNSUPPORTED); the calls beside it run and the stream carries on', async () => {
    const p = await peer();
    const s = rawStream(p.address);
    const digest = (id: number): WireCall => ({ id, deadline: soon(), op: 'digest', key: B('k') });
    // A call with no op set, as protobufjs encodes it; and one whose op is field 12, a later release's.
    const none = Buffer.from([0x0a, 0x05, 0x08, 0x05, 0x10, 0xe8, 0x07]);
    const newer = Buffer.from([0x0a, 0x09, 0x08, 0x06, 0x10, 0xe8, 0x07, 0x62, 0x02, 0x0a, 0x00]);
    s.send(Buffer.concat([encodeCalls([digest(4)]), none, newer, encodeCalls([digest(7)])]));
    await s.until(4);
    const byId = new Map(s.replies.map((r) => [r.id, r]));
    for (const id of [5, 6])
      expect(byId.get(id)).toMatchObject({
        op: 'error',
        code: 'RK_UNSUPPORTED',
        message: expect.stringMatching(/names no operation this node's release knows.*upgrade this node/),
      });
    expect(byId.get(4)).toMatchObject({ op: 'digest' });
    expect(byId.get(7)).toMatchObject({ op: 'digest' });
    s.send(encodeCalls([digest(8)]));
    await s.until(5);
    expect(s.replies.at(-1)).toMatchObject({ id: 8, op: 'digest' });
    expect(s.status).toBeUndefined();
    expect(p.observed).toContain('unsupported:UNIMPLEMENTED');
  });

  it('a peer of the release before the data types: each of their calls is refused RK_UNSUPPORTED (upgrade it), its plain calls in flight are not touched, and once upgraded it takes them', async () => {
    // The previous release's server: the same stream loop, its decoder knowing ops 3 to 6 only
    // and failing the whole batch on a call naming none of them (as it did: "call N names no operation").
    const store = await Store.open({ engine: new MemoryEngine() });
    const replica = new LocalReplica(store);
    const old: ServerCodec<WireCall, WireReply> = {
      decode: (buf, now) => {
        decodeBatch(buf, 'call', 3, 6, () => undefined);
        return decodeCalls(buf, now) as WireCall[];
      },
      encode: encodeReplies,
      size: replySize,
      refuse: () => undefined,
      run: async (c) => {
        if (c.op !== 'read') return { id: c.id, op: 'error', code: 'RK_INTERNAL', message: 'not in this test' };
        await sleep(300);
        return { id: c.id, op: 'read', record: await replica.call({ op: 'read', key: c.key }) };
      },
    };
    const { server, port } = await earlierRelease(replica, store, old);
    const address = `127.0.0.1:${port}`;
    const c = client(address);
    const plain = c.call('n7', { op: 'read', key: B('k') }, soon());
    await sleep(50);
    const typed = await Promise.all([
      failure(c.call('n7', { op: 'counterUpdate', key: B('c'), amount: 1 }, soon())),
      failure(c.call('n7', { op: 'writeMany', parent, ops: [{ op: 'add', path: element('x') }] }, soon())),
      failure(c.call('n7', { op: 'readRange', parent, limit: 10 }, soon())),
    ]);
    for (const f of typed)
      expect(f).toMatchObject({
        kind: 'refused',
        code: 'RK_UNSUPPORTED',
        message: expect.stringMatching(
          new RegExp(`peer n7 at ${address} runs a release without data types .*upgrade it`),
        ),
      });
    await expect(plain).resolves.toBeUndefined();
    // Not remembered: the next one is tried (and refused) again.
    expect(await failure(c.call('n7', { op: 'counterUpdate', key: B('c'), amount: 1 }, soon()))).toMatchObject({
      code: 'RK_UNSUPPORTED',
    });
    // The peer upgraded (the same address, this release): the calls go through.
    server.forceShutdown();
    await peer({ port });
    let value: bigint | 'failed' = 'failed';
    for (let i = 0; i < 50 && value === 'failed'; i++) {
      value = await c.call('n7', { op: 'counterUpdate', key: B('c'), amount: 1 }, soon()).then(
        (r) => r.value,
        () => 'failed' as const,
      );
      if (value === 'failed') await sleep(100);
    }
    expect(value).toBe(1n);
  });

  it("compare-and-set's steps reach a peer of the release before kinds' steps as its Paxos calls, and are answered as steps", async () => {
    // The previous release's server: this one's, except that a step call (field 11) names no operation it knows.
    const store = await Store.open({ engine: new MemoryEngine() });
    const replica = new LocalReplica(store);
    const old: ServerCodec<DecodedCall, WireReply> = {
      decode: (buf, now) =>
        decodeCalls(buf, now).map((c) =>
          c.op === 'step' ? { id: c.id, deadline: c.deadline, op: 'unsupported' as const } : c,
        ),
      encode: encodeReplies,
      size: replySize,
      refuse: () => undefined,
      run: (c) =>
        c.op === 'paxos'
          ? earlierPaxos(store, c)
          : Promise.resolve({
              id: c.id,
              op: 'error',
              code: 'RK_UNSUPPORTED',
              message: `call ${c.id} names no operation`,
            }),
    };
    const { port } = await earlierRelease(replica, store, old);
    const c = client(`127.0.0.1:${port}`);
    const key = B('r'),
      ballot = { n: 3, by: 'n1' },
      proposal = { ballot, id: 'req', value: B('v') };
    const step = <A, R>(s: KindStep<RegisterState, A, R>, arg: A): Promise<R> =>
      callStep(c, 'n7', REGISTER, s, key, arg, soon());
    expect(await step(PAXOS_PREPARE, ballot)).toEqual({
      promised: true,
      accepted: undefined,
      committed: undefined,
      history: [],
    });
    expect(await step(PAXOS_PROPOSE, proposal)).toEqual({ accepted: true });
    await step(PAXOS_COMMIT, proposal);
    expect(await step(PAXOS_PREPARE, { n: 2, by: 'n2' })).toEqual({ promised: false, higher: ballot });
    expect(await step(PAXOS_PROPOSE, { ...proposal, ballot: { n: 1, by: 'n2' } })).toEqual({
      accepted: false,
      higher: ballot,
    });
    expect(await step(PAXOS_PREPARE, { n: 4, by: 'n2' })).toMatchObject({
      promised: true,
      committed: { ballot, id: 'req', value: B('v') },
    });
    expect(decodeRegister((await store.getRecord(key))!).register.promised).toEqual({ n: 4, by: 'n2' });
  });

  it("a Paxos call from a node of the release before kinds' steps runs as the register's step, answered as that release reads it", async () => {
    const p = await peer();
    const s = rawStream(p.address);
    const paxos = (id: number, step: WirePaxosStep | number, n: number, more: Partial<WireCall> = {}): WireCall =>
      ({
        id,
        deadline: soon(),
        op: 'paxos',
        key: B('r'),
        step,
        ballot: n,
        proposer: B('n1'),
        proposalId: B(''),
        base: B(''),
        value: null,
        ...more,
      }) as WireCall;
    const state = (r: WireReply | undefined) => decodeRegister((r as { state: Buffer }).state).register;
    s.send(encodeCalls([paxos(1, 'prepare', 3)]));
    await s.until(1);
    expect(s.replies[0]).toMatchObject({ id: 1, op: 'paxos', ok: true });
    expect(state(s.replies[0]).promised).toEqual({ n: 3, by: 'n1' });
    s.send(encodeCalls([paxos(2, 'propose', 3, { proposalId: B('req'), value: B('v') })]));
    await s.until(2);
    expect(s.replies[1]).toEqual({ id: 2, op: 'paxos', ok: true, state: Buffer.alloc(0) });
    s.send(encodeCalls([paxos(3, 'commit', 3, { proposalId: B('req'), value: B('v') })]));
    s.send(encodeCalls([paxos(4, 'prepare', 2)]));
    await s.until(4);
    expect(s.replies[3]).toMatchObject({ id: 4, op: 'paxos', ok: false });
    expect(state(s.replies[3]).promised).toEqual({ n: 3, by: 'n1' });
    expect(decodeRegister((await p.store.getRecord(B('r')))!).register.committed).toMatchObject({ id: 'req' });
    // A step number this release does not know, and a malformed ballot: refused alone, with the store's words.
    s.send(encodeCalls([paxos(5, 9, 5), paxos(6, 'prepare', 0)]));
    await s.until(6);
    expect(s.replies[4]).toMatchObject({
      id: 5,
      op: 'error',
      code: 'RK_UNSUPPORTED',
      message: expect.stringMatching(/Paxos step 9 is unknown/),
    });
    expect(s.replies[5]).toMatchObject({ id: 6, op: 'error', code: 'KV_BAD_OPTION' });
  });

  it('a step this release does not know, or whose argument does not decode, is refused alone with a reason', async () => {
    const p = await peer();
    const c = client(p.address);
    const call = (kind: number, step: string, arg: Buffer) =>
      failure(c.call('n7', { op: 'step', key: B('r'), kind, step, arg }, soon()));
    expect(await call(5, 'paxosElect', Buffer.alloc(0))).toMatchObject({
      kind: 'refused',
      code: 'RK_UNSUPPORTED',
      message: expect.stringMatching(/step paxosElect of record format 5 is unknown to this node; upgrade it/),
    });
    expect(await call(9, 'paxosPrepare', Buffer.alloc(0))).toMatchObject({ code: 'RK_UNSUPPORTED' });
    expect(await call(5, 'paxosPrepare', Buffer.from([1]))).toMatchObject({
      code: 'KV_BAD_OPTION',
      message: expect.stringMatching(/a Paxos prepare came with an argument that does not decode/),
    });
    expect(await c.call('n7', { op: 'digest', key: B('r') }, soon())).toEqual(Buffer.alloc(0));
  });
});
