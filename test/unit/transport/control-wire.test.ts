import type { BucketEntry } from '../../../src/buckets/index.js';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CONTROL_SERVICE,
  ControlPeers,
  controlService,
  type ControlDeps,
} from '../../../src/transport/control-wire.js';
import { gather } from '../../../src/transport/gather.js';
import { serviceClient } from '../../../src/transport/protos.js';
import { RingError } from '../../../src/ring/ring-errors.js';

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0).reverse()) c();
});

interface Served {
  address: string;
  /** The authorization header of each call. */
  auth: (string | undefined)[];
  asked: { peer: string; method: string }[];
  stopping?: string;
}

/** A Control server in this process whose answers the test sets. */
async function serve(overrides: Partial<ControlDeps> = {}): Promise<Served> {
  const s: Served = { address: '', auth: [], asked: [] };
  const server = new grpc.Server();
  const impl = controlService({
    clusterName: 'c1',
    admit: async () => ({ move: 'join:n2:1', message: 'n2 joins' }),
    decommission: async () => ({ move: 'leave:n2:1', message: 'n2 is leaving' }),
    transfers: () => ({
      nodeId: 'n2',
      movements: ['join n2'],
      pulls: [],
      outgoing: [],
      drive: null,
      streamBytesPerSecond: 7,
    }),
    buckets: () => TABLE,
    repairRange: async (r) => ({
      leavesDiffering: r.replicas.length,
      keysExchanged: Number.parseInt(r.start, 16),
      bytes: r.n,
    }),
    bucketKeys: async (name, limit) => (name === 'full' ? limit : 0),
    refuse: () => s.stopping,
    log: { info: (o: object) => s.asked.push(o as { peer: string; method: string }) },
    ...overrides,
  });
  const seen =
    (h: grpc.UntypedHandleCall) => (call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      s.auth.push(call.metadata.get('authorization')[0]?.toString());
      (h as (c: typeof call, cb: grpc.sendUnaryData<unknown>) => void)(call, cb);
    };
  server.addService(
    serviceClient(CONTROL_SERVICE).service,
    Object.fromEntries(Object.entries(impl).map(([k, h]) => [k, seen(h)])),
  );
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
  );
  cleanup.push(() => server.forceShutdown());
  s.address = `127.0.0.1:${port}`;
  return s;
}

function peers(address: string | undefined, cluster = 'c1', token?: () => string | undefined): ControlPeers {
  const p = new ControlPeers(
    'n1',
    cluster,
    (id) => (id === 'n2' ? address : undefined),
    grpc.credentials.createInsecure(),
    2000,
    token,
  );
  cleanup.push(() => p.close());
  return p;
}

const TABLE: BucketEntry[] = [
  {
    name: 'carts',
    props: {
      created: { value: '1', at: 1_796_000_000_000, by: 'n2' },
      n: { value: '5', at: 1_796_000_000_000, by: 'n2' },
    },
  },
  { name: 'default', props: { ttl_ms: { value: '60000', at: 1_796_000_000_123, by: 'n3' } } },
];

describe('the Control service between nodes', () => {
  it("gives a node's bucket table, every write with its time and node, unlogged", async () => {
    const s = await serve();
    expect(await peers(s.address).buckets('n2')).toEqual(TABLE);
    expect(s.asked).toEqual([]);
  });

  it('admits, decommissions and reports transfers, and logs who asked for a change', async () => {
    const s = await serve();
    const p = peers(s.address);
    expect(await p.admit('n2')).toEqual({ move: 'join:n2:1', message: 'n2 joins' });
    expect(await p.decommission('n2')).toEqual({ move: 'leave:n2:1', message: 'n2 is leaving' });
    const t = await p.transfers('n2');
    expect(t).toMatchObject({ nodeId: 'n2', movements: ['join n2'], streamBytesPerSecond: 7, drive: null });
    expect(s.asked).toEqual([
      { peer: 'n1', method: 'admit' },
      { peer: 'n1', method: 'decommission' },
    ]);
  });

  it("repairs a removal's unit when asked, with the range, class and replicas the driver named, and logs who asked", async () => {
    let asked: unknown;
    const s = await serve({
      repairRange: async (r) => ((asked = r), { leavesDiffering: 2, keysExchanged: 17, bytes: 900 }),
    });
    const unit = {
      start: '00000000000000ff',
      end: '0000000000000fff',
      n: 3,
      classes: [1, 3],
      replicas: ['n2', 'n3', 'n4'],
    };
    expect(await peers(s.address).repairRange('n2', unit, 60_000)).toEqual({
      leavesDiffering: 2,
      keysExchanged: 17,
      bytes: 900,
    });
    expect(asked).toEqual({ cluster: 'c1', from: 'n1', ...unit });
    expect(s.asked).toEqual([{ peer: 'n1', method: 'repairRange' }]);
  });

  it("counts a bucket's keys on the node asked, up to the limit asked (1 to 1,000)", async () => {
    const s = await serve();
    const p = peers(s.address);
    expect(await p.bucketKeys('n2', 'full', 5)).toBe(5);
    expect(await p.bucketKeys('n2', 'full', 0)).toBe(1);
    expect(await p.bucketKeys('n2', 'full', 5000)).toBe(1000);
    expect(await p.bucketKeys('n2', 'empty', 5)).toBe(0);
  });

  it('presents the admin token when the node has one, read at each call (a reload applies)', async () => {
    const s = await serve();
    let token: string | undefined;
    const p = peers(s.address, 'c1', () => token);
    await p.transfers('n2');
    token = 'tok-1';
    await p.admit('n2');
    token = 'tok-2';
    await p.decommission('n2');
    expect(s.auth).toEqual([undefined, 'Bearer tok-1', 'Bearer tok-2']);
  });

  it('refuses a node of another cluster (FAILED_PRECONDITION) and does nothing', async () => {
    let admitted = 0;
    const s = await serve({ admit: async () => (admitted++, { move: '', message: '' }) });
    await expect(peers(s.address, 'other').admit('n2')).rejects.toMatchObject({
      code: grpc.status.FAILED_PRECONDITION,
      details: expect.stringMatching(/cluster name "other" is not ours \("c1"\)/),
    });
    expect(admitted).toBe(0);
  });

  it('refuses while the node is stopping (UNAVAILABLE), saying why', async () => {
    const s = await serve();
    s.stopping = 'node is shutting down';
    await expect(peers(s.address).decommission('n2')).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
      details: 'node is shutting down',
    });
  });

  it("maps the node's refusals through the one error table, and an unknown error to INTERNAL", async () => {
    const s = await serve({
      admit: () => Promise.reject(new RingError('RING_BAD_MEMBER', 'n2 is not a standby')),
      decommission: () => Promise.reject(new Error('disk on fire')),
    });
    const p = peers(s.address);
    await expect(p.admit('n2')).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'n2 is not a standby',
    });
    await expect(p.decommission('n2')).rejects.toMatchObject({
      code: grpc.status.INTERNAL,
      details: expect.stringMatching(/disk on fire/),
    });
  });

  it('a node with no known address fails like an unreachable peer (UNAVAILABLE), not with a throw', async () => {
    await expect(peers(undefined).admit('n2')).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
      details: 'no address known for node n2',
    });
  });
});

describe('gather', () => {
  it('asks every node at once, sorts the answers by node and lists who did not answer', async () => {
    let inFlight = 0,
      most = 0;
    const ask = async (node: string): Promise<string> => {
      most = Math.max(most, ++inFlight);
      await new Promise((r) => setTimeout(r, node === 'a' ? 20 : 1));
      inFlight--;
      if (node.startsWith('x')) throw new Error('down');
      return `reply of ${node}`;
    };
    expect(await gather(['c', 'x2', 'a', 'b', 'x1'], ask)).toEqual({
      replies: ['reply of a', 'reply of b', 'reply of c'],
      unreachable: ['x1', 'x2'],
    });
    expect(most).toBe(5);
  });
});
