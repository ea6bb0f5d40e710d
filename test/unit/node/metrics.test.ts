/**
 * NodeMetrics: the gRPC wrapper times and counts each call under its code, siblings come
 * from successful gets only, collect callbacks read the sources at scrape time; and the
 * Grafana dashboard queries only metrics that exist and are documented.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { NodeMetrics, type MetricSources } from '../../../src/node/http/metrics.js';
import { codeName } from '../../../src/transport/status.js';
import { MemoryEngine, Store } from '../../../src/storage/index.js';

function sources(over: Partial<MetricSources> = {}): MetricSources {
  return {
    counters: () => ({ readRepairs: 4, hintsHeld: 7, hintsDelivered: 2, inFlight: 1, backgroundSharePercent: 50 }),
    members: () => [
      { id: 'n1', status: 'normal', up: true, phi: 0, self: true },
      { id: 'n2', status: 'normal', up: false, phi: Infinity, self: false },
      { id: 'n3', status: 'left', up: false, phi: 3, self: false },
    ],
    ring: () => ({ hash: 'abc', changes: 2, ranges: 192 }),
    load: () => ({ bytes: 1234, keys: 10 }),
    streams: () => ({
      pulls: { active: 2, waiting: 5 },
      receivedBytes: 100,
      receivedKeys: 3,
      outgoing: 1,
      outgoingBytes: 50,
    }),
    repair: () => ({ running: true, ranges: 10, done: 4, failed: 1, backgroundRanges: 0, backgroundBytes: 0 }),
    certificate: () => undefined,
    buckets: () =>
      new Map([
        ['default', 3],
        ['carts', 5],
      ]),
    trees: () => undefined,
    replicaBytesSent: () => new Map(),
    disk: () => ({
      freeBytes: 60 << 20,
      totalBytes: 64 << 20,
      floorBytes: 100 << 20,
      low: true,
      failed: false,
      reopens: 2,
    }),
    verify: () => ({ passes: 3, records: 1000, bytes: 64000, corrupt: 2, restored: 1, unrestored: 1 }),
    damagedKeys: () => 4,
    ...over,
  };
}

type Cb = grpc.sendUnaryData<unknown>;
const call = (handler: unknown, request: unknown = {}): Promise<[unknown, unknown]> =>
  new Promise((resolve) =>
    (handler as (c: unknown, cb: Cb) => void)({ request }, (err, value) => resolve([err, value])),
  );

describe('NodeMetrics', () => {
  it('times and counts each unary call under its operation, role and code, and passes results through', async () => {
    const m = new NodeMetrics(sources());
    const impl = m.instrument(
      {
        get: (_c: unknown, cb: Cb) => cb(null, { values: [Buffer.from('a'), Buffer.from('b')] }),
        put: (_c: unknown, cb: Cb) => cb({ code: grpc.status.UNAVAILABLE, details: 'too few replicas' }),
        stream: (_c: unknown) => undefined,
      } as unknown as grpc.UntypedServiceImplementation,
      'coordinator',
    );
    const [err, value] = await call(impl.get);
    expect(err).toBeNull();
    expect((value as { values: Buffer[] }).values).toHaveLength(2);
    const [perr] = await call(impl.put);
    expect((perr as grpc.ServiceError).code).toBe(grpc.status.UNAVAILABLE);
    await call(impl.get);
    const text = await m.text();
    expect(text).toMatch(/^ringkv_requests_total\{operation="get",role="coordinator",code="OK"\} 2$/m);
    expect(text).toMatch(/^ringkv_requests_total\{operation="put",role="coordinator",code="UNAVAILABLE"\} 1$/m);
    expect(text).toMatch(/^ringkv_request_duration_seconds_count\{operation="put",role="coordinator"\} 1$/m);
    // Siblings from the two successful gets only.
    expect(text).toMatch(/^ringkv_get_siblings_count 2$/m);
    expect(text).toMatch(/^ringkv_get_siblings_sum 4$/m);
    // A streaming handler (one argument) is left as it is.
    expect(impl.stream).toBeTypeOf('function');
    expect((impl.stream as (...a: unknown[]) => unknown).length).toBe(1);
  });

  it('counts the clock entries of records the store writes, told by the store', async () => {
    const m = new NodeMetrics(sources());
    const store = await Store.open({ engine: new MemoryEngine() });
    store.onClockEntries = (n) => m.clockEntries.observe(n);
    const w = await store.put('k', Buffer.from('a'));
    const other = await Store.open({ engine: new MemoryEngine() });
    await store.merge('k', (await other.put('k', Buffer.from('b'), w.context)).record);
    const text = await m.text();
    expect(text).toMatch(/^ringkv_clock_entries_count 2$/m);
    expect(text).toMatch(/^ringkv_clock_entries_sum 3$/m);
    expect(text).toMatch(/^ringkv_clock_entries_bucket\{le="1"\} 1$/m);
    await store.close();
    await other.close();
  });

  it('counts client requests by bucket, only under the names of buckets the node knows', async () => {
    const m = new NodeMetrics(sources());
    const impl = m.instrument(
      { put: (_c: unknown, cb: Cb) => cb(null, {}) } as unknown as grpc.UntypedServiceImplementation,
      'coordinator',
    );
    await call(impl.put, { bucket: 'carts' });
    await call(impl.put, { bucket: '' });
    await call(impl.put, { bucket: 'made-up-1' });
    m.observe('get', 'coordinator', 'OK', 0.001, undefined, 'made-up-2');
    m.observe('get', 'coordinator', 'NOT_FOUND', 0.001, undefined, 'carts');
    m.observe('merge', 'replica', 'OK', 0.001);
    const text = await m.text();
    expect(text).toMatch(/^ringkv_bucket_requests_total\{bucket="carts",operation="put",code="OK"\} 1$/m);
    expect(text).toMatch(/^ringkv_bucket_requests_total\{bucket="default",operation="put",code="OK"\} 1$/m);
    expect(text).toMatch(/^ringkv_bucket_requests_total\{bucket="unknown",operation="put",code="OK"\} 1$/m);
    expect(text).toMatch(/^ringkv_bucket_requests_total\{bucket="unknown",operation="get",code="OK"\} 1$/m);
    expect(text).toMatch(/^ringkv_bucket_requests_total\{bucket="carts",operation="get",code="NOT_FOUND"\} 1$/m);
    expect(text).not.toMatch(/made-up|ringkv_bucket_requests_total\{[^}]*operation="merge"/);
    expect(text).toMatch(/^ringkv_bucket_replicas\{bucket="carts"\} 5$/m);
  });

  it('reads the sources when scraped', async () => {
    let hints = 7;
    const m = new NodeMetrics(
      sources({
        counters: () => ({
          hintsHeld: hints,
          readRepairs: 4,
          counterUpdates: 3,
          setUpdates: 2,
          mapUpdates: 5,
          counterGaps: 1,
          casWrites: 6,
          casRetries: 2,
          casNotApplied: 3,
          casUnknown: 1,
        }),
        replicaBytesSent: () =>
          new Map([
            ['writeMany', 900],
            ['apply', 40],
          ]),
      }),
    );
    expect(await m.text()).toMatch(/^ringkv_hints_pending 7$/m);
    hints = 9;
    const text = await m.text();
    expect(text).toMatch(/^ringkv_hints_pending 9$/m);
    expect(text).toMatch(/^ringkv_read_repairs_total 4$/m);
    expect(text).toMatch(/^ringkv_counter_updates_total 3$/m);
    expect(text).toMatch(/^ringkv_set_updates_total 2$/m);
    expect(text).toMatch(/^ringkv_map_updates_total 5$/m);
    expect(text).toMatch(/^ringkv_counter_gaps_total 1$/m);
    expect(text).toMatch(/^ringkv_cas_writes_total 6$/m);
    expect(text).toMatch(/^ringkv_cas_retries_total 2$/m);
    expect(text).toMatch(/^ringkv_cas_not_applied_total 3$/m);
    expect(text).toMatch(/^ringkv_cas_unknown_total 1$/m);
    expect(text).toMatch(/^ringkv_disk_free_bytes 62914560$/m);
    expect(text).toMatch(/^ringkv_disk_total_bytes 67108864$/m);
    expect(text).toMatch(/^ringkv_disk_floor_bytes 104857600$/m);
    expect(text).toMatch(/^ringkv_disk_refusing_writes 1$/m);
    expect(text).toMatch(/^ringkv_disk_write_failures 0$/m);
    expect(text).toMatch(/^ringkv_disk_reopens 2$/m);
    expect(text).toMatch(/^ringkv_verify_passes_total 3$/m);
    expect(text).toMatch(/^ringkv_damaged_keys_total 4$/m);
    expect(text).toMatch(/^ringkv_verify_corrupt_total 2$/m);
    expect(text).toMatch(/^ringkv_verify_restored_total 1$/m);
    expect(text).toMatch(/^ringkv_verify_unrestored_total 1$/m);
    expect(text).toMatch(/^ringkv_replica_bytes_sent_total\{call="writeMany"\} 900$/m);
    expect(text).toMatch(/^ringkv_replica_bytes_sent_total\{call="apply"\} 40$/m);
    expect(text).toMatch(/^ringkv_ring_info\{hash="abc"\} 1$/m);
    expect(text).toMatch(/^ringkv_members\{status="normal",up="false"\} 1$/m);
    // Peers only, departed ones left out; an infinite phi is a large finite number.
    expect(text).toMatch(/^ringkv_peer_phi\{peer="n2"\} 1000000000$/m);
    expect(text).not.toMatch(/peer="n1"|peer="n3"/);
    expect(text).toMatch(/^ringkv_stream_ranges\{state="waiting"\} 5$/m);
    expect(text).toMatch(/^ringkv_repair_running 1$/m);
    expect(text).not.toMatch(/^ringkv_tls_certificate_expiry_timestamp_seconds/m); // TLS off: absent, not 0
    const tls = new NodeMetrics(
      sources({ certificate: () => ({ subject: 'CN=n1, OU=node, O=ringkv', validTo: Date.UTC(2027, 0, 1) }) }),
    );
    expect(await tls.text()).toMatch(
      /^ringkv_tls_certificate_expiry_timestamp_seconds\{subject="CN=n1, OU=node, O=ringkv"\} 1798761600$/m,
    );
  });

  it('shows the kept trees when the node keeps them, and nothing of them when it does not', async () => {
    expect(await new NodeMetrics(sources()).text()).not.toMatch(/^ringkv_tree_/m); // --kept-trees off
    let mismatches = 0;
    const figures = () => ({
      kept: 6,
      ready: 4,
      building: 2,
      rebuilding: 1,
      queued: 3,
      journal: 17,
      builds: 5,
      buildFailures: 0,
      rebuilds: 2,
      rebuildMismatches: mismatches,
      rebuildMismatchedLeaves: 3 * mismatches,
    });
    const m = new NodeMetrics(sources({ trees: figures }));
    mismatches = 1;
    const text = await m.text();
    for (const line of [
      'ringkv_tree_units 6',
      'ringkv_tree_units_ready 4',
      'ringkv_tree_units_building 2',
      'ringkv_tree_units_rebuilding 1',
      'ringkv_tree_units_queued 3',
      'ringkv_tree_journal_entries 17',
      'ringkv_tree_builds_total 5',
      'ringkv_tree_build_failures_total 0',
      'ringkv_tree_rebuilds_total 2',
      'ringkv_tree_rebuild_mismatches_total 1',
      'ringkv_tree_rebuild_mismatched_leaves_total 3',
    ])
      expect(text).toMatch(new RegExp(`^${line}$`, 'm'));
  });

  it('keeps one registry per node', async () => {
    const a = new NodeMetrics(sources());
    const b = new NodeMetrics(sources({ load: () => ({ bytes: 99, keys: 1 }) }));
    expect(await a.text()).toMatch(/^ringkv_load_bytes 1234$/m);
    expect(await b.text()).toMatch(/^ringkv_load_bytes 99$/m);
  });

  it('names gRPC codes as Prometheus labels carry them', () => {
    expect(codeName(grpc.status.DEADLINE_EXCEEDED)).toBe('DEADLINE_EXCEEDED');
    expect(codeName(undefined)).toBe('UNKNOWN');
  });

  it('the Grafana dashboard queries only metrics that exist and docs/metrics.md documents', async () => {
    const root = join(import.meta.dirname, '../../..');
    const dashboard = JSON.parse(readFileSync(join(root, 'deploy/grafana/ringkv-dashboard.json'), 'utf8')) as {
      panels: { targets: { expr: string }[] }[];
    };
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(10);
    const served = await new NodeMetrics(sources()).text();
    const doc = readFileSync(join(root, 'docs/metrics.md'), 'utf8');
    const used = new Set(
      exprs.flatMap((e) => [...e.matchAll(/\b((?:ringkv|nodejs|process)_[a-z0-9_]+)/g)].map((x) => x[1]!)),
    );
    const base = (n: string) => n.replace(/_(bucket|sum|count)$/, '');
    const missing = [...used].filter((n) => !served.includes(`# TYPE ${base(n)} `));
    expect(missing).toEqual([]);
    const undocumented = [...used].filter((n) => n.startsWith('ringkv_') && !doc.includes(`\`${base(n)}\``));
    expect(undocumented).toEqual([]);
  });
});
