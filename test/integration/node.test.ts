/**
 * One node in this process on a free port: forming a cluster alone, health, reflection,
 * the admin service, refusing bad gossip, restart with the same tokens, clean stop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { service as healthService } from 'grpc-health-check';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../src/client/admin.js';
import { resolveConfig } from '../../src/node/config.js';
import { RingkvNode } from '../../src/node/node.js';
import { NODE_MAX_MESSAGE_BYTES, serviceClient } from '../../src/transport/protos.js';
import { Client } from '../../src/client/index.js';
import { waitFor } from '../../testkit/wait.js';

const root = mkdtempSync(join(tmpdir(), 'ringkv-node-'));
const started: RingkvNode[] = [];
const clients: grpc.Client[] = [];
afterAll(async () => {
  for (const c of clients) c.close();
  await Promise.all(started.map((n) => n.stop()));
  rmSync(root, { recursive: true, force: true });
});

const logLines: Record<string, unknown>[] = [];
const log = pino(
  { level: 'info' },
  { write: (l: string) => void logLines.push(JSON.parse(l) as Record<string, unknown>) },
);

async function startNode(dataDir: string, extra: Record<string, unknown> = {}): Promise<RingkvNode> {
  const config = resolveConfig(
    { listen: '127.0.0.1:0', dataDir, gossipIntervalMs: 100, id: 'solo', shutdownGraceMs: 2000, ...extra },
    {},
  );
  const node = await RingkvNode.start(config, log);
  started.push(node);
  return node;
}

function unary<T>(client: grpc.Client, method: string, req: unknown): Promise<T> {
  const fn = (client as unknown as Record<string, grpc.requestCallback<T> & ((...a: unknown[]) => void)>)[method]!.bind(
    client,
  );
  return new Promise((resolve, reject) =>
    fn(req, (err: grpc.ServiceError | null, res: T) => (err ? reject(err) : resolve(res))),
  );
}

function health(address: string): Promise<{ status: string }> {
  const Client = grpc.makeGenericClientConstructor(healthService, 'Health');
  const c = new Client(address, grpc.credentials.createInsecure());
  clients.push(c);
  return unary(c, 'check', { service: '' });
}

describe('a ringkv node in process', () => {
  const dataDir = join(root, 'solo');
  let node: RingkvNode;
  let tokens: string[];

  it('forms a cluster by itself when no seed answers, and reports SERVING only then', async () => {
    node = await startNode(dataDir, { seeds: '127.0.0.1:1' });
    expect(node.status).toBe('joining');
    expect((await health(node.address)).status).toBe('NOT_SERVING');
    const kv = new Client({ nodes: [node.address], tokenAware: false });
    await expect(kv.put('k', 'v', { w: 1 })).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
      details: /not serving requests \(it is joining, not yet a member\); send the request to another node/,
    });
    kv.close();
    await waitFor('status normal', 10_000, () => node.status === 'normal');
    // Normal, then caught up: alone, once a few gossip rounds have shown no peer (catch-up.ts).
    await waitFor('SERVING', 10_000, async () => (await health(node.address)).status === 'SERVING');
    expect(logLines.some((l) => l.msg === 'caught up: no peer holds hints for this node; serving')).toBe(true);
    expect(logLines.some((l) => l.msg === 'no seed answered: forming a new cluster' && l.node === 'solo')).toBe(true);
    expect(node.ring?.members.map((m) => m.id)).toEqual(['solo']);
  });

  it('answers Status and Ring, and refuses bad arguments with INVALID_ARGUMENT', async () => {
    const admin = new AdminClient(node.address);
    const s = await admin.status();
    expect(s).toMatchObject({ clusterName: 'ringkv', nodeId: 'solo', replicas: 3 });
    expect(s.members).toHaveLength(1);
    expect(s.members[0]).toMatchObject({ id: 'solo', status: 'normal', up: true, tokens: 64, ownership: 1 });
    const r = await admin.ring(1);
    expect(r.ranges).toHaveLength(64);
    tokens = r.ranges.map((x) => x.end);
    await expect(admin.status(99)).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: /replicas must be 1 to 16/,
    });
    admin.close();
  });

  it('lists its services through server reflection', async () => {
    const pkgPath = createRequire(import.meta.url).resolve('@grpc/reflection/package.json');
    const def = protoLoader.loadSync('grpc/reflection/v1/reflection.proto', {
      includeDirs: [join(pkgPath, '../build/proto')],
    });
    const Reflection = (grpc.loadPackageDefinition(def).grpc as grpc.GrpcObject).reflection as grpc.GrpcObject;
    const Client = (Reflection.v1 as grpc.GrpcObject).ServerReflection as grpc.ServiceClientConstructor;
    const c = new Client(node.address, grpc.credentials.createInsecure());
    clients.push(c);
    const names = await new Promise<string[]>((resolve, reject) => {
      const call = c.serverReflectionInfo!();
      call.on('data', (m: { listServicesResponse?: { service: { name: string }[] } }) => {
        resolve(m.listServicesResponse!.service.map((s) => s.name).sort());
        call.end();
      });
      call.on('error', reject);
      call.write({ listServices: '' });
    });
    expect(names).toEqual(
      expect.arrayContaining([
        'grpc.health.v1.Health',
        'ringkv.internal.v1.Gossip',
        'ringkv.internal.v1.Replica',
        'ringkv.v1.Admin',
        'ringkv.v1.KeyValue',
      ]),
    );
  });

  it('serves puts and gets alone at W=R=1; a quorum its one-member ring cannot meet is UNAVAILABLE; a message over the limit is RESOURCE_EXHAUSTED', async () => {
    const kv = new Client({ nodes: [node.address], tokenAware: false });
    try {
      const { context } = await kv.put('solo:k', 'v1', { w: 1 });
      await kv.put('solo:k', 'v2', { w: 1, context });
      expect((await kv.get('solo:k', { r: 1 })).values.map(String)).toEqual(['v2']);
      await expect(kv.get('solo:k')).rejects.toMatchObject({
        code: grpc.status.UNAVAILABLE,
        details: /needs R=2 of N=3 replicas, but only 1 is up \(the ring has only 1 member\(s\)\)/,
      });
    } finally {
      kv.close();
    }
    // A client that does not hold itself to the limit: the node refuses past 8 MiB + 64 KiB before reading it.
    const KeyValue = serviceClient('ringkv.v1.KeyValue');
    const raw = new KeyValue(node.address, grpc.credentials.createInsecure(), {
      'grpc.max_send_message_length': 64 << 20,
    });
    clients.push(raw);
    await expect(
      unary(raw, 'put', { key: Buffer.from('big'), value: Buffer.alloc(NODE_MAX_MESSAGE_BYTES + 1) }),
    ).rejects.toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    // Just under it, our own check answers with what to do.
    await expect(
      unary(raw, 'put', { key: Buffer.from('big'), value: Buffer.alloc(2 << 20), w: 1 }),
    ).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: /over the limit of 1048576 bytes; split it/,
    });
    // The limit is what the store's record cap needs, and no more.
    expect(NODE_MAX_MESSAGE_BYTES).toBe(node.store.settings.maxRecordBytes + 64 * 1024);
  });

  it('refuses gossip from another cluster (FAILED_PRECONDITION) and malformed gossip (INVALID_ARGUMENT), and keeps going', async () => {
    const Gossip = serviceClient('ringkv.internal.v1.Gossip');
    const c = new Gossip(node.address, grpc.credentials.createInsecure());
    clients.push(c);
    const msg = { cluster: 'ringkv', from: 'x', fromAddr: '127.0.0.1:1', kind: 'SYN', digests: [] };
    await expect(unary(c, 'exchange', { ...msg, cluster: 'other' })).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      details: /cluster name "other" is not ours/,
    });
    await expect(unary(c, 'exchange', { ...msg, fromAddr: 'nowhere' })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
    });
    await expect(unary(c, 'exchange', { ...msg, kind: 'KIND_UNSPECIFIED' })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: /unknown kind/,
    });
    const badDelta = {
      ...msg,
      kind: 'ACK2',
      deltas: [{ id: 'y', generation: 1, heartbeat: 1, fields: [{ name: 'tokens', value: 'zz', version: 1 }] }],
    };
    await expect(unary(c, 'exchange', badDelta)).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: /tokens must be comma-separated/,
    });
    expect(logLines.some((l) => l.msg === 'gossip refused')).toBe(true);
    await expect(unary(c, 'exchange', msg)).resolves.toEqual({});
    expect((await health(node.address)).status).toBe('SERVING');
  });

  it('turns NOT_SERVING first when it stops, then stops cleanly, and restarts with the same tokens and a new generation', async () => {
    const generation = node.generation;
    const Client = grpc.makeGenericClientConstructor(healthService, 'Health');
    const c = new Client(node.address, grpc.credentials.createInsecure());
    clients.push(c);
    const seen: string[] = [];
    const watch = (c as unknown as { watch: (r: unknown) => grpc.ClientReadableStream<{ status: string }> }).watch({
      service: '',
    });
    watch.on('error', () => {}); // cancelled below
    const sawNotServing = new Promise<void>((resolve) =>
      watch.on('data', (m: { status: string }) => {
        seen.push(m.status);
        if (m.status === 'NOT_SERVING') {
          watch.cancel(); // let the server finish shutting down
          resolve();
        }
      }),
    );
    await waitFor('watch started', 5000, () => seen.length > 0);
    const stopped = node.stop();
    await sawNotServing;
    await stopped;
    expect(seen).toEqual(['SERVING', 'NOT_SERVING']);
    await expect(health(node.address)).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    const again = await startNode(dataDir, { gossipIntervalMs: 100 });
    expect(again.status).toBe('normal');
    expect(again.generation).toBeGreaterThan(generation);
    const admin = new AdminClient(again.address);
    expect((await admin.ring(1)).ranges.map((x) => x.end)).toEqual(tokens);
    admin.close();
    await expect(startNode(dataDir, { id: 'other' })).rejects.toThrow(/belongs to node solo, not other/);
  });

  it('refuses to take the id of a member whose data dir was wiped, and the cluster keeps its tokens', async () => {
    const x = await startNode(join(root, 'x'), { id: 'x' });
    await waitFor('x normal', 10_000, () => x.status === 'normal');
    const published: string[][] = [];
    x.subscribe((ring) => published.push(ring?.members.map((m) => m.id) ?? []));
    const y = await startNode(join(root, 'y'), { id: 'y', seeds: x.address });
    await waitFor('y normal', 10_000, () => y.status === 'normal' && x.ring?.has('y'));
    expect(published).toEqual([['x', 'y']]); // subscribers get each new ring once, not every heartbeat
    await y.stop();
    rmSync(join(root, 'y'), { recursive: true, force: true });
    const y2 = await startNode(join(root, 'y'), { id: 'y', seeds: x.address });
    await y2.stopped;
    expect(y2.failure?.message).toMatch(
      /node id y is already a member of cluster ringkv \(status normal, 64 tokens.*data dir is new/,
    );
    expect(x.ring?.member('y')?.tokens).toHaveLength(64);
    expect(x.gossiper.state('y')?.fields.get('status')?.value).toBe('normal');
  });

  it('says which address is busy when it cannot listen', async () => {
    const other = await startNode(join(root, 'busy1'), { id: 'b1' });
    await expect(startNode(join(root, 'busy2'), { id: 'b2', listen: other.address })).rejects.toThrow(
      /cannot listen on 127\.0\.0\.1:\d+/,
    );
  });
});

describe('a node that meets a peer with another N', () => {
  it('warns once that the peer places keys on a different number of replicas', async () => {
    const node = await startNode(join(root, 'n-warn'), { id: 'n-warn', seeds: '127.0.0.1:1' });
    await waitFor('status normal', 10_000, () => node.status === 'normal');
    const Gossip = serviceClient('ringkv.internal.v1.Gossip');
    const c = new Gossip(node.address, grpc.credentials.createInsecure());
    clients.push(c);
    const fields = [
      { name: 'addr', value: '127.0.0.1:2', version: 1 },
      { name: 'replicas', value: '5', version: 2 },
    ];
    const ack2 = {
      cluster: 'ringkv',
      from: 'odd',
      fromAddr: '127.0.0.1:2',
      kind: 'ACK2',
      deltas: [{ id: 'odd', generation: 1, heartbeat: 3, fields }],
    };
    await unary(c, 'exchange', ack2);
    const warned = () =>
      logLines.filter(
        (l) =>
          l.node === 'n-warn' &&
          l.peer === 'odd' &&
          l.peerReplicas === 5 &&
          String(l.msg).includes('different number of replicas'),
      );
    await waitFor('the warning', 8000, () => warned().length === 1, 100);
    await new Promise((r) => setTimeout(r, 5500)); // the next check: no second warning
    expect(warned()).toHaveLength(1);
    // Its own waits add up to 23.5 s: they, not the test's timeout, should say what failed.
  }, 40_000);
});

describe('the wall clock of a fault-injection node', () => {
  it('starts skewed by --clock-offset-ms, takes its generation from it, and changes it only with --fault-injection on', async () => {
    const ahead = 10 * 60_000;
    const skewed = await startNode(join(root, 'skewed'), {
      id: 'skewed',
      seeds: '127.0.0.1:1',
      clockOffsetMs: ahead,
      faultInjection: 'on',
    });
    const plain = await startNode(join(root, 'plain'), { id: 'plain', seeds: '127.0.0.1:1' });
    // The generation is wall-clock seconds: ten minutes ahead on the skewed node.
    expect(skewed.gossiper.self.generation - Math.floor(Date.now() / 1000)).toBeGreaterThanOrEqual(ahead / 1000 - 5);
    expect(skewed.clock.now() - Date.now()).toBeGreaterThanOrEqual(ahead - 1000);

    const admin = new AdminClient(skewed.address, 2000);
    const behind = await admin.setClockOffset(-5 * 60_000);
    expect(behind.offsetMs).toBe(-5 * 60_000);
    expect(Math.abs(behind.nowMs - (Date.now() - 5 * 60_000))).toBeLessThan(2000);
    expect(skewed.clock.offsetMs).toBe(-5 * 60_000);
    await expect(admin.setClockOffset(25 * 60 * 60_000)).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: expect.stringMatching(/at most a day/),
    });
    expect(skewed.clock.offsetMs).toBe(-5 * 60_000);
    admin.close();

    const refuses = new AdminClient(plain.address, 2000);
    await expect(refuses.setClockOffset(1000)).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      details: expect.stringMatching(/--fault-injection on/),
    });
    expect(plain.clock.offsetMs).toBe(0);
    refuses.close();
  });

  it('refuses a clock offset beyond a day and a fault-injection mode other than on or off', () => {
    expect(() => resolveConfig({ clockOffsetMs: 86_400_001 }, {})).toThrow(
      /--clock-offset-ms: expected a whole number from -86400000 to 86400000/,
    );
    expect(() => resolveConfig({}, { RINGKV_FAULT_INJECTION: 'yes' })).toThrow(
      /RINGKV_FAULT_INJECTION: expected 'off' or 'on'/,
    );
    expect(resolveConfig({ clockOffsetMs: '-60000' }, {}).clockOffsetMs).toBe(-60_000);
  });
});
