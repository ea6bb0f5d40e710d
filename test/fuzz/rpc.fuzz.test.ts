/**
 * Every RPC a node serves (client, admin, gossip, replica, handoff, repair, health,
 * reflection; the batches GetMany and PutMany and the data types' calls among the
 * client's, with a counter, a set and a map bucket on the node so that the typed calls reach
 * the coordinator, not only the type check), fuzzed with random and boundary messages, raw bytes and damaged messages,
 * with and without the admin token. Each call must end with a clear status (never
 * INTERNAL, UNKNOWN or a dropped call, and a message whenever it is not OK); a refused
 * call must leave the stored data as it was; the node must keep serving.
 *
 * Under CI the seed is fixed (test/setup.ts) and each method gets FUZZ_RUNS runs (default
 * 25); `npm run fuzz` runs many more on a new seed. FUZZ_DEBUG=1 prints every call's
 * status and time; FUZZ_DEBUG=2 adds the request bytes, for replaying one.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient, Client } from '../../src/client/index.js';
import { resolveConfig } from '../../src/node/config.js';
import { RingkvNode } from '../../src/node/node.js';
import { protos } from '../../src/transport/protos.js';
import { waitFor } from '../../testkit/wait.js';
import { callRaw, methodsOf, requestBytesArb, type Pools } from './rpc-fuzz.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const TOKEN = 'fuzz-admin-token-0123456789';
/** Long-lived by design: a watch ends at its deadline. */
const ENDS_AT_DEADLINE = new Set(['/grpc.health.v1.Health/Watch']);
/** Never a clear answer to a caller: the node's own fault, or a call it dropped. */
const UNCLEAR = new Set([grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.CANCELLED, grpc.status.DATA_LOSS]);

const root = mkdtempSync(join(tmpdir(), 'ringkv-fuzz-'));
let node: RingkvNode;
let client: grpc.Client;
let kv: Client;
const keys = Array.from({ length: 20 }, (_, i) => Buffer.from(`fuzz-key-${i}`));
/** The fuzz node's counter, set and map buckets, and elements its sets hold. */
const COUNTERS = 'fuzz-counters';
const SETS = 'fuzz-sets';
const MAPS = 'fuzz-maps';
const LOCKS = 'fuzz-locks';
/** Contexts of the consistent bucket's keys (some current, later stale), so that some PutIf and DeleteIf calls apply. */
const contexts: Buffer[] = [Buffer.alloc(0)];
const ELEMENTS = ['a', 'b', 'c', 'd'].map((e) => Buffer.from(e));
/** The data types' calls: each must be answered OK sometimes (its typed path reached). */
const TYPED = [
  'CounterUpdate',
  'CounterGet',
  'SetUpdate',
  'SetRead',
  'SetContains',
  'MapUpdate',
  'MapRead',
  'PutIf',
  'DeleteIf',
];
const isTyped = (path: string): boolean => TYPED.some((t) => path === `/ringkv.v1.KeyValue/${t}`);

beforeAll(async () => {
  writeFileSync(join(root, 'token'), `${TOKEN}\n`, { mode: 0o600 });
  const config = resolveConfig(
    {
      listen: '127.0.0.1:0',
      dataDir: join(root, 'data'),
      id: 'fuzz',
      replicas: 1,
      gossipIntervalMs: 200,
      shutdownGraceMs: 2000,
      adminTokenFile: join(root, 'token'),
    },
    {},
  );
  node = await RingkvNode.start(config, pino({ level: 'silent' }));
  await waitFor('the node to form its cluster', 20_000, () => node.status === 'normal' || undefined);
  kv = new Client({ nodes: [node.address] });
  for (const k of keys) await kv.put(k, Buffer.from(`value of ${k.toString()}`));
  // A counter, a set and a map bucket, each with data, so that the typed calls find something.
  const admin = new AdminClient(node.address, 10_000, { token: TOKEN });
  try {
    await admin.createBucket(COUNTERS, { type: 'counter' });
    await admin.createBucket(SETS, { type: 'set' });
    await admin.createBucket(MAPS, { type: 'map' });
    await admin.createBucket(LOCKS, { type: 'consistent' });
  } finally {
    admin.close();
  }
  for (const k of keys.slice(0, 5)) {
    await kv.counterIncrement(k, 3, { bucket: COUNTERS });
    await kv.setAdd(k, ELEMENTS.slice(0, 3), { bucket: SETS });
    contexts.push((await kv.putIf(k, Buffer.from('held'), { bucket: LOCKS })).context);
    await kv.mapUpdate(
      k,
      [
        { op: 'assign', path: [{ name: 'r', type: 'register' }], value: 'v' },
        { op: 'enable', path: [{ name: 'f', type: 'flag' }] },
        {
          op: 'add',
          path: [
            { name: 'm', type: 'map' },
            { name: 's', type: 'set' },
          ],
          element: 'a',
        },
      ],
      { bucket: MAPS },
    );
  }
  client = new grpc.Client(node.address, grpc.credentials.createInsecure(), {
    'grpc.max_send_message_length': -1,
    'grpc.max_receive_message_length': -1,
  });
}, 60_000);

/** Status codes seen, by method: the matrix `npm run fuzz` prints at the end. */
const matrix = new Map<string, Map<string, number>>();

afterAll(async () => {
  if (process.env.FUZZ_REPORT !== undefined)
    console.log(
      [
        '| method | status codes seen (count) |',
        '|---|---|',
        ...[...matrix].map(
          ([path, codes]) =>
            `| ${path} | ${[...codes]
              .sort((a, b) => b[1] - a[1])
              .map(([c, n]) => `${c} ${n}`)
              .join(', ')} |`,
        ),
      ].join('\n'),
    );
  client?.close();
  kv?.close();
  await node?.stop();
  rmSync(root, { recursive: true, force: true });
});

/**
 * Until the node runs no client or replica call (a stream's calls outlive the stream when it
 * breaks) and no commit of a compare-and-set it answered (sent off the client's path).
 */
async function settled(): Promise<void> {
  const busy = (): boolean =>
    ['inFlight', 'replicaInFlight', 'casCommitsInFlight'].some((c) => (node.counters()[c] ?? 0) > 0);
  for (let i = 0; i < 500 && busy(); i++) await new Promise((r) => setTimeout(r, 10));
}

/** What a refused call must not change: every record (a hash over the whole ring) and the hints held. */
async function snapshot(): Promise<string> {
  const { hash, keys: n } = await node.store.ranges.hash({ start: 0n, end: 0n });
  const hints = node.store.hints.stats();
  return `${hash} ${n} ${hints.count} ${hints.bytes}`;
}

function metadataFor(auth: 'none' | 'token' | 'wrong'): grpc.Metadata {
  const m = new grpc.Metadata();
  if (auth === 'token') m.set('authorization', `Bearer ${TOKEN}`);
  if (auth === 'wrong') m.set('authorization', 'Bearer not-the-token-at-all');
  return m;
}

const definition = protos().definition;
const methods = methodsOf(definition);

describe('fuzzing every RPC', () => {
  it('covers every method of every service', () => {
    const paths = methods.map((m) => m.path);
    for (const service of [
      'ringkv.v1.KeyValue',
      'ringkv.v1.Admin',
      'ringkv.internal.v1.Gossip',
      'ringkv.internal.v1.Replica',
      'ringkv.internal.v1.Handoff',
      'ringkv.internal.v1.Repair',
      'ringkv.internal.v1.Control',
      'grpc.health.v1.Health',
    ])
      expect(
        paths.some((p) => p.startsWith(`/${service}/`)),
        service,
      ).toBe(true);
    expect(paths.length).toBeGreaterThanOrEqual(30);
    // The batches: their repeated keys and items reach the limits (arrays of 50 to 200 elements one time in six).
    for (const method of ['Put', 'Get', 'Delete', 'GetMany', 'PutMany', ...TYPED])
      expect(paths).toContain(`/ringkv.v1.KeyValue/${method}`);
  });

  // Tokens as the wire spells them: 16 hex digits.
  const token = fc.oneof(
    { arbitrary: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((t) => t.toString(16).padStart(16, '0')), weight: 4 },
    {
      arbitrary: fc.constantFrom(
        '0000000000000000',
        'ffffffffffffffff',
        '8000000000000000',
        '7fffffffffffffff',
        '0',
        'fffffffffffffffff',
        'gggggggggggggggg',
        '-000000000000001',
      ),
      weight: 1,
    },
  );
  /**
   * A method's bucket: its own type's mostly (so calls get past the type check), another
   * type's at times (so the refusals are fuzzed too).
   */
  const bucketFor = (path: string): fc.Arbitrary<string> => {
    const method = path.slice(path.lastIndexOf('/') + 1);
    if (method.startsWith('Counter'))
      return fc.oneof(
        { arbitrary: fc.constant(COUNTERS), weight: 8 },
        { arbitrary: fc.constantFrom(SETS, ''), weight: 1 },
      );
    if (method.startsWith('Set'))
      return fc.oneof(
        { arbitrary: fc.constant(SETS), weight: 8 },
        { arbitrary: fc.constantFrom(COUNTERS, ''), weight: 1 },
      );
    if (method.startsWith('Map'))
      return fc.oneof({ arbitrary: fc.constant(MAPS), weight: 8 }, { arbitrary: fc.constantFrom(SETS, ''), weight: 1 });
    if (method.endsWith('If'))
      return fc.oneof(
        { arbitrary: fc.constant(LOCKS), weight: 8 },
        { arbitrary: fc.constantFrom(MAPS, ''), weight: 1 },
      );
    return fc.constantFrom('', 'default', '', 'default', COUNTERS, SETS, MAPS, LOCKS);
  };

  /** A map op that names a field by a path its op applies to (so some MapUpdate calls are applied), the rest of the message random. */
  const fieldName = fc.uint8Array({ minLength: 1, maxLength: 8 }).map((b) => Buffer.from(b));
  const mapOp = (type: string, op: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<unknown> =>
    fc.record({
      path: fc
        .tuple(
          fc.array(
            fieldName.map((name) => ({ name, type: 'MAP_FIELD_TYPE_MAP' })),
            { maxLength: 2 },
          ),
          fieldName,
        )
        .map(([maps, name]) => [...maps, { name, type }]),
      ...op,
    });
  const validMapOp = fc.oneof(
    mapOp('MAP_FIELD_TYPE_REGISTER', { assign: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) }),
    mapOp('MAP_FIELD_TYPE_FLAG', { enable: fc.constant(true) }),
    mapOp('MAP_FIELD_TYPE_COUNTER', { increment: fc.integer({ min: -1000, max: 1000 }) }),
    mapOp('MAP_FIELD_TYPE_SET', { add: fc.constantFrom(...ELEMENTS) }),
  );
  const pools = (path: string): Pools => ({
    strings: ['fuzz', 'ringkv', node.address, 'ringkv.v1', 'normal', 'n1', COUNTERS, SETS, MAPS, LOCKS],
    keys,
    byField: {
      cluster: fc.constant('ringkv'),
      start: token,
      end: token,
      from: fc.constantFrom('fuzz', 'n1', 'n2'),
      fromAddr: fc.constantFrom(node.address, '127.0.0.1:1'),
      requester: fc.constantFrom('fuzz', 'n1'),
      kind: fc.constantFrom('SYN', 'ACK', 'ACK2'),
      hintFor: fc.constantFrom('', 'n1', 'fuzz'),
      bucket: bucketFor(path),
      r: fc.constantFrom(0, 1),
      w: fc.constantFrom(0, 1),
      // The data types' fields: amounts a counter takes, elements its sets hold, small pages.
      amount: fc.integer({ min: -1000, max: 1000 }),
      add: fc.constantFrom(...ELEMENTS),
      element: fc.constantFrom(...ELEMENTS),
      after: fc.constantFrom(Buffer.alloc(0), ...ELEMENTS),
      limit: fc.constantFrom(0, 1, 2, 1000),
      // A typed call has to get past more checks than a get (a key, its bucket's type, the confirmations) to reach its path.
      ...(isTyped(path)
        ? {
            key: fc.constantFrom(...keys),
            requestId: fc.uint8Array({ minLength: 1, maxLength: 16 }).map((b) => Buffer.from(b)),
            nodeConfirms: fc.constantFrom(0, 1),
            zoneConfirms: fc.constantFrom(0, 1),
            pw: fc.constantFrom(0, 1),
          }
        : {}),
      // The updates' ops favour ones that apply (an add of an element; a map op on a field of its type), or few calls would get past them.
      ...(path === '/ringkv.v1.KeyValue/SetUpdate' ? { ops: fc.record({ add: fc.constantFrom(...ELEMENTS) }) } : {}),
      ...(path === '/ringkv.v1.KeyValue/MapUpdate' ? { ops: validMapOp } : {}),
      // A compare-and-set's context: a consistent key's (current or stale) mostly, so that some calls get past the check and apply.
      ...(path.endsWith('If')
        ? {
            context: fc.oneof(
              { arbitrary: fc.constantFrom(...contexts), weight: 4 },
              { arbitrary: fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b)), weight: 1 },
            ),
          }
        : {}),
    },
  });

  for (const m of methods) {
    it(
      m.path,
      async () => {
        const seen = new Map<string, number>();
        matrix.set(m.path, seen);
        const frames = m.requestStream
          ? fc.array(requestBytesArb(definition, m, pools(m.path)), { maxLength: 3 })
          : requestBytesArb(definition, m, pools(m.path)).map((b) => [b]);
        await fc.assert(
          fc.asyncProperty(
            frames,
            fc.constantFrom('none' as const, 'token' as const, 'wrong' as const),
            async (requests, auth) => {
              // Calls an earlier stream sent before it broke may still be running: their writes are theirs, not this call's.
              await settled();
              const before = await snapshot();
              const t0 = Date.now();
              const out = await callRaw(
                client,
                m,
                requests,
                metadataFor(auth),
                ENDS_AT_DEADLINE.has(m.path) ? 500 : 5000,
              );
              seen.set(grpc.status[out.code]!, (seen.get(grpc.status[out.code]!) ?? 0) + 1);
              if (process.env.FUZZ_DEBUG)
                console.log(
                  m.path,
                  grpc.status[out.code],
                  Date.now() - t0,
                  out.details.slice(0, 200),
                  process.env.FUZZ_DEBUG === '2' ? requests.map((r) => r.toString('hex')).join(',') : '',
                );
              const unclear =
                UNCLEAR.has(out.code) || (out.code === grpc.status.DEADLINE_EXCEEDED && !ENDS_AT_DEADLINE.has(m.path));
              expect(unclear, `${m.path} answered ${grpc.status[out.code]}: ${out.details}`).toBe(false);
              if (
                out.code !== grpc.status.OK &&
                !(out.code === grpc.status.DEADLINE_EXCEEDED && ENDS_AT_DEADLINE.has(m.path))
              ) {
                expect(out.details, `${m.path} answered ${grpc.status[out.code]} without a message`).not.toBe('');
                // A stream's earlier frames are calls of their own, answered before a later frame is refused.
                if (requests.length <= 1)
                  expect(
                    await snapshot(),
                    `${m.path} refused (${grpc.status[out.code]}: ${out.details}) yet the stored data changed`,
                  ).toBe(before);
              }
            },
          ),
          // A typed call passes more checks before its path (a key, its bucket's type, the confirmations): twice the runs, so that some reach it.
          { numRuns: m.path.includes('/Watch') ? Math.min(RUNS, 3) : isTyped(m.path) ? 2 * RUNS : RUNS },
        );
        // The node still serves a client.
        const got = await kv.get(keys[0]!);
        expect(got.found).toBe(true);
        // A batch's well-formed calls get past the call's checks: some are answered (each key its own result).
        if (m.path.endsWith('Many') && RUNS >= 25)
          expect(seen.get('OK') ?? 0, `${m.path}: no call was answered OK`).toBeGreaterThan(0);
        // The typed calls too: some reach the coordinator and succeed, not only the type check's refusals.
        if (isTyped(m.path) && RUNS >= 25)
          expect(seen.get('OK') ?? 0, `${m.path}: no call was answered OK`).toBeGreaterThan(0);
        expect(seen.size).toBeGreaterThan(0);
      },
      120_000 + RUNS * 200,
    );
  }

  it('counts the requests that did not decode, for ringkv_requests_undecodable_total', () => {
    expect(node.counters().requestsUndecodable).toBeGreaterThan(0);
    expect(node.counters().requestsArrivedLate).toBe(0);
    expect(node.counters().connections).toBeGreaterThan(0);
  });
});
