/**
 * Compare-and-set end to end in one process: the client (putIf, deleteIf, get), the
 * service (kv-service.ts PutIf, DeleteIf, Get on a bucket of type consistent) and a fake
 * cluster's coordinators over in-memory replicas. The three outcomes, the trailer that
 * says a failed call did not apply (and its absence when the outcome is unknown), and
 * each refusal with its status, checked without the client too; the client on its stream
 * and with unary calls.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { BucketTable, storedKey, type BucketProps } from '../../../src/buckets/index.js';
import { Client, casNotApplied } from '../../../src/client/index.js';
import { KeyValueService, provesNotApplied } from '../../../src/transport/kv-service.js';
import { callUnary, serviceClient } from '../../../src/transport/protos.js';
import { FakeCluster } from '../replication/fake-cluster.js';

const B = (s: string): Buffer => Buffer.from(s);
const EMPTY = Buffer.alloc(0);
const S = grpc.status;
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const props = (type: BucketProps['type']): BucketProps => ({ n: 3, r: 0, w: 0, ttlMs: 0, siblings: 'siblings', type });

/** A 3-node fake cluster (coordinator timeouts `timeoutMs`) with buckets locks (consistent) and carts (kv); KeyValue served on n1. */
async function node(timeoutMs = 2000): Promise<{ cluster: FakeCluster; address: string }> {
  const cluster = await FakeCluster.create(3, { timeoutMs });
  cleanup.push(() => cluster.close());
  const buckets = new BucketTable(3);
  buckets.create('locks', props('consistent'), 1000, 'n1');
  buckets.create('carts', props('kv'), 1000, 'n1');
  const service = new KeyValueService(cluster.coordinator('n1'), buckets);
  const server = new grpc.Server();
  server.addService(
    service.definition(),
    service.implementation((impl) => impl),
  );
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
  );
  cleanup.push(() => server.forceShutdown());
  return { cluster, address: `127.0.0.1:${port}` };
}

function client(address: string, streaming: boolean): Client {
  const c = new Client({ nodes: [address], tokenAware: false, deadlineMs: 10_000, streaming });
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

/** What `p` rejects with: status, details, and whether it says the write did not apply. */
async function refusal(p: Promise<unknown>): Promise<{ code: number; details: string; notApplied: boolean }> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e, 'expected a refusal').toBeDefined();
  const { code, details } = e as grpc.ServiceError;
  return { code, details, notApplied: casNotApplied(e) };
}

// The client's calls on its stream (KvCall put_if, delete_if: the error's cas_not_applied for the trailer) and unary.
describe.each([
  ['on the stream', true],
  ['unary', false],
])('compare-and-set over gRPC, the client %s', (_, streaming) => {
  it('puts if absent, then on the version read; answers the current value when not applied; deletes only that version', async () => {
    const { address } = await node();
    const c = client(address, streaming);
    const o = { bucket: 'locks' };
    expect(await c.get('lock', o)).toEqual({ values: [], context: EMPTY, found: false });
    const first = await c.putIf('lock', 'owner-1', o);
    // Applied: the key now holds the value written, and says so.
    expect(first).toMatchObject({ applied: true, found: true, value: B('owner-1') });
    // Taken: not applied, with the holder and its version.
    expect(await c.putIf('lock', 'owner-2', o)).toEqual({
      applied: false,
      found: true,
      value: B('owner-1'),
      context: first.context,
    });
    const read = await c.get('lock', o);
    expect(read).toEqual({ values: [B('owner-1')], context: first.context, found: true });
    const second = await c.putIf('lock', 'owner-2', { ...o, context: read.context });
    expect(second.applied).toBe(true);
    // The version read before is stale now, for a put and for a delete.
    expect(await c.putIf('lock', 'owner-3', { ...o, context: first.context })).toEqual({
      applied: false,
      found: true,
      value: B('owner-2'),
      context: second.context,
    });
    expect((await c.deleteIf('lock', first.context, o)).applied).toBe(false);
    const gone = await c.deleteIf('lock', second.context, o);
    expect(gone).toMatchObject({ applied: true, found: false, value: undefined });
    expect(await c.get('lock', o)).toEqual({ values: [], context: gone.context, found: false });
    // Deleted: not applied against the deleted version's context, applied if absent.
    expect(await c.putIf('lock', 'owner-4', { ...o, context: second.context })).toEqual({
      applied: false,
      found: false,
      value: undefined,
      context: gone.context,
    });
    expect((await c.putIf('lock', 'owner-4', o)).applied).toBe(true);
  });

  it('a retry with the request id of a write that applied answers applied, not "the version moved"', async () => {
    const { address } = await node();
    const c = client(address, streaming);
    const requestId = B('retry-0001');
    const a = await c.putIf('k', 'v1', { bucket: 'locks', requestId });
    expect(await c.putIf('k', 'v1', { bucket: 'locks', requestId })).toEqual(a);
  });

  it('refuses with the trailer "not applied" when too few replicas are up; without it when the outcome is unknown', async () => {
    const { cluster, address } = await node(300);
    const c = client(address, streaming);
    const o = { bucket: 'locks' };
    const key = storedKey('locks', B('k'));
    const others = cluster.ring.preferenceList(key, 3).filter((id) => id !== 'n1'); // n1 is one of the three
    expect(others).toHaveLength(2);
    const v1 = await c.putIf('k', 'v1', o);
    // Prepares too slow on two of three: nothing proposed, so certainly not applied.
    for (const id of others) cluster.net.faults.set(`*>${id}`, { delayMs: 1000 });
    const none = await refusal(c.putIf('k', 'v2', { ...o, context: v1.context }));
    expect(none).toMatchObject({
      code: S.UNAVAILABLE,
      notApplied: true,
      details: expect.stringMatching(/Nothing was written/),
    });
    // Only proposals slow: n1 accepted its own, the others may have: unknown, no trailer.
    for (const id of others) cluster.net.faults.set(`*>${id}`, { delayMs: 1000, delayOnly: ['paxosPropose'] });
    const unknown = await refusal(c.putIf('k', 'v2', { ...o, context: v1.context }));
    expect(unknown).toMatchObject({
      code: S.DEADLINE_EXCEEDED,
      notApplied: false,
      details: expect.stringMatching(/unknown outcome/),
    });
  });

  it('refuses plain writes to a consistent bucket, compare-and-set on a kv bucket, and bad input, each saying what to do', async () => {
    const { address } = await node();
    const kv = raw(address);
    const c = client(address, streaming);
    // Put and Delete would bypass the rounds: refused, naming the calls the bucket takes.
    const put = await refusal(callUnary(kv, 'Put', { bucket: 'locks', key: B('k'), value: B('v') }, soon()));
    expect(put).toMatchObject({
      code: S.FAILED_PRECONDITION,
      details: expect.stringMatching(/type consistent.*PutIf, DeleteIf and Get/),
    });
    expect(await refusal(callUnary(kv, 'Delete', { bucket: 'locks', key: B('k') }, soon()))).toMatchObject({
      code: S.FAILED_PRECONDITION,
    });
    const onKv = await refusal(c.putIf('k', 'v', { bucket: 'carts' }));
    expect(onKv).toMatchObject({
      code: S.FAILED_PRECONDITION,
      notApplied: true,
      details: expect.stringMatching(/bucket of type consistent.*--type consistent/),
    });
    // A context that is no consistent key's (a kv get's, or garbage).
    const bad = await refusal(c.putIf('k', 'v', { bucket: 'locks', context: B('garbage') }));
    expect(bad).toMatchObject({
      code: S.INVALID_ARGUMENT,
      notApplied: true,
      details: expect.stringMatching(/not a consistent key's: pass the context a Get or PutIf/),
    });
    // A delete needs the version it deletes.
    expect(await refusal(callUnary(kv, 'DeleteIf', { bucket: 'locks', key: B('k') }, soon()))).toMatchObject({
      code: S.INVALID_ARGUMENT,
      notApplied: true,
      details: expect.stringMatching(/needs the context/),
    });
    // An empty key, no value, a quorum on a read.
    expect(await refusal(callUnary(kv, 'PutIf', { bucket: 'locks', key: EMPTY, value: B('v') }, soon()))).toMatchObject(
      { code: S.INVALID_ARGUMENT, notApplied: true },
    );
    expect(await refusal(callUnary(kv, 'PutIf', { bucket: 'locks', key: B('k') }, soon()))).toMatchObject({
      code: S.INVALID_ARGUMENT,
      notApplied: true,
    });
    expect(await refusal(c.get('k', { bucket: 'locks', r: 2 }))).toMatchObject({
      code: S.INVALID_ARGUMENT,
      details: expect.stringMatching(/majority of its replicas always/),
    });
    // A bucket nobody created.
    expect(await refusal(c.putIf('k', 'v', { bucket: 'nope' }))).toMatchObject({ code: S.NOT_FOUND, notApplied: true });
    // Nothing was written by any of them.
    expect(await c.get('k', { bucket: 'locks' })).toMatchObject({ found: false });
  });
});

describe('which errors say a compare-and-set did not apply', () => {
  it('the domain refusals raised before a proposal, not a timeout, an unknown outcome, an internal fault or a system error', () => {
    for (const code of [
      'RK_UNAVAILABLE',
      'RK_BAD_ARGUMENT',
      'RK_OVERLOADED',
      'BK_WRONG_TYPE',
      'BK_NOT_FOUND',
      'KV_WRONG_TYPE',
    ])
      expect(provesNotApplied({ code }), code).toBe(true);
    for (const code of [
      'RK_CAS_UNKNOWN',
      'RK_TIMEOUT',
      'RK_INTERNAL',
      'ENOSPC',
      'LEVEL_IO_ERROR',
      'ERR_INVALID_ARG_TYPE',
      14,
    ])
      expect(provesNotApplied({ code }), String(code)).toBe(false);
    expect(provesNotApplied(new TypeError('a bug'))).toBe(false);
    expect(provesNotApplied(undefined)).toBe(false);
  });
});
