/**
 * A node's Prometheus metrics (prom-client), served on /metrics by http-server.ts and
 * listed in docs/metrics.md. Requests are timed where they enter the node: every unary
 * handler of the KeyValue service (role coordinator) and of the internal Replica service
 * (role replica) is wrapped, so latency and the gRPC code are those the caller saw,
 * refusals included. Everything else is read from the node's parts when Prometheus
 * scrapes (collect callbacks), so nothing here runs between scrapes.
 *
 * Owns: metric names, labels and buckets. Must not: change behaviour; each node has its
 * own registry (several nodes may share a process in tests).
 */

import * as grpc from '@grpc/grpc-js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { codeName } from '../../transport/status.js';
import type { DiskState } from '../../storage/index.js';

/** What the metrics read at scrape time: the node's parts, as plain numbers. */
export interface MetricSources {
  /** Coordinator and hint counters since start (Admin Status's `counters`). */
  counters(): Record<string, number>;
  /** Members as this node sees them. */
  members(): readonly { id: string; status: string; up: boolean; phi: number; self: boolean }[];
  /** The current ring's short hash (`topo`), '' while none; and how often it changed since start. */
  ring(): { hash: string; changes: number; ranges: number };
  /** The bytes this node last gossiped as its load, and the keys it holds. */
  load(): { bytes: number; keys: number };
  /** Ranges this node pulls, by state, and bytes/keys received in them; streams it sends. */
  streams(): {
    pulls: Record<string, number>;
    receivedBytes: number;
    receivedKeys: number;
    outgoing: number;
    outgoingBytes: number;
  };
  /** The repair running or last run: ranges, done, failed; background totals. */
  repair(): {
    running: boolean;
    ranges: number;
    done: number;
    failed: number;
    backgroundRanges: number;
    backgroundBytes: number;
  };
  /** The certificate in use: its subject and when it expires (ms since the epoch); undefined with TLS off. */
  certificate(): { subject: string; validTo: number } | undefined;
  /** The buckets this node knows, with their N: the only `bucket` label values (others: 'unknown'), so cardinality stays bounded. */
  buckets(): ReadonlyMap<string, number>;
  /** The anti-entropy trees kept on write (storage/kept-trees.ts `stats`); undefined with --kept-trees off (their metrics are absent). */
  trees(): KeptTreeFigures | undefined;
  /** Bytes of replica calls this node sent to peers since start, by operation (transport/replica-wire.ts). */
  replicaBytesSent(): ReadonlyMap<string, number>;
  /** The disk of the data directory as last checked (storage/disk.ts); undefined before the first check (its metrics read 0). */
  disk(): DiskState | undefined;
  /** The verification pass's totals since start (repair/verify.ts). */
  verify(): { passes: number; records: number; bytes: number; corrupt: number; restored: number; unrestored: number };
  /** Entries with a data key damaged on disk that scans set aside since start (storage/store.ts `damagedKeys`). */
  damagedKeys(): number;
}

/** What the kept-tree metrics read: units by state, builds and rebuilds since start, the journal. */
export interface KeptTreeFigures {
  readonly kept: number;
  readonly ready: number;
  readonly building: number;
  readonly rebuilding: number;
  readonly queued: number;
  readonly journal: number;
  readonly builds: number;
  readonly buildFailures: number;
  readonly rebuilds: number;
  readonly rebuildMismatches: number;
  readonly rebuildMismatchedLeaves: number;
}

/** Seconds: 0.25 ms to 10 s, the range a quorum request on a LAN spans up to its timeout. */
const LATENCY_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class NodeMetrics {
  readonly registry = new Registry();
  readonly #latency: Histogram<'operation' | 'role'>;
  readonly #requests: Counter<'operation' | 'role' | 'code'>;
  readonly #siblings: Histogram;
  readonly #bucketRequests: Counter<'bucket' | 'operation' | 'code'>;
  readonly #knownBuckets: () => ReadonlyMap<string, number>;
  readonly gossipRounds: Counter;
  /** Clock entries of every record the store writes (storage/store.ts onClockEntries). */
  readonly clockEntries: Histogram;

  constructor(sources: MetricSources) {
    // /metrics lists the metrics in the order they are registered here.
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    const recorded = recordedMetrics(registers);
    this.#latency = recorded.latency;
    this.#requests = recorded.requests;
    this.#siblings = recorded.siblings;
    this.clockEntries = recorded.clockEntries;
    this.gossipRounds = recorded.gossipRounds;
    this.#bucketRequests = recorded.bucketRequests;
    this.#knownBuckets = sources.buckets;
    registerBucketReplicas(registers, sources);
    registerVerifyTotals(registers, sources);
    registerUpdateTotals(registers, sources);
    registerReadWriteTotals(registers, sources);
    registerHintTotals(registers, sources);
    registerRefusalTotals(registers, sources);
    registerActivityMetrics(registers, sources);
    registerStorageGauges(registers, sources);
    registerCertificateGauge(registers, sources);
    registerMembershipGauges(registers, sources);
    registerStreamGauges(registers, sources);
    registerRepairGauges(registers, sources);
    if (sources.trees() !== undefined) registerTreeMetrics(registers, sources);
  }

  /**
   * Wrap every unary handler of `impl` so that each call is timed and counted under
   * `role`, with the method name (lower case) as the operation. Streaming handlers pass through.
   */
  instrument(
    impl: grpc.UntypedServiceImplementation,
    role: 'coordinator' | 'replica',
  ): grpc.UntypedServiceImplementation {
    const out: grpc.UntypedServiceImplementation = {};
    for (const [name, handler] of Object.entries(impl)) {
      if (typeof handler !== 'function' || handler.length !== 2) {
        out[name] = handler;
        continue;
      }
      const operation = name.toLowerCase();
      const unary = handler as grpc.handleUnaryCall<unknown, unknown>;
      out[name] = (call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        const end = this.#latency.startTimer({ operation, role });
        unary(call, (err, value, ...rest) => {
          end();
          const code = err ? codeName((err as grpc.ServiceError).code) : 'OK';
          this.#requests.inc({ operation, role, code });
          if (role === 'coordinator')
            this.#countBucket((call.request as { bucket?: unknown } | undefined)?.bucket, operation, code);
          if (!err && operation === 'get' && role === 'coordinator') {
            const values = (value as { values?: unknown[] } | undefined)?.values;
            if (values !== undefined && values.length > 0) this.#siblings.observe(values.length);
          }
          cb(err, value, ...rest);
        });
      };
    }
    return out;
  }

  /** Count and time one request that was not a unary call: a call on a client's or a peer's stream (a get's sibling count with it). */
  observe(
    operation: string,
    role: 'coordinator' | 'replica',
    code: string,
    seconds: number,
    siblings?: number,
    bucket?: string,
  ): void {
    this.#latency.observe({ operation, role }, seconds);
    this.#requests.inc({ operation, role, code });
    if (role === 'coordinator') this.#countBucket(bucket, operation, code);
    if (siblings !== undefined && siblings > 0) this.#siblings.observe(siblings);
  }

  /** A client request in `bucket` (as the request named it: '' is the default bucket). */
  #countBucket(bucket: unknown, operation: string, code: string): void {
    const name = bucket === undefined || bucket === '' ? 'default' : String(bucket);
    this.#bucketRequests.inc({ bucket: this.#knownBuckets().has(name) ? name : 'unknown', operation, code });
  }

  /** The text Prometheus scrapes. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** The metrics NodeMetrics records itself, as requests are answered, records written and gossip rounds started. */
interface RecordedMetrics {
  latency: Histogram<'operation' | 'role'>;
  requests: Counter<'operation' | 'role' | 'code'>;
  siblings: Histogram;
  clockEntries: Histogram;
  gossipRounds: Counter;
  bucketRequests: Counter<'bucket' | 'operation' | 'code'>;
}

/** Register the metrics recorded as they happen: request latency and codes, siblings, clock entries, gossip rounds, requests by bucket. */
function recordedMetrics(registers: Registry[]): RecordedMetrics {
  const latency = new Histogram({
    name: 'ringkv_request_duration_seconds',
    help: 'Time from a request reaching this node to its answer, by operation and role (coordinator: client requests; replica: calls from coordinators)',
    labelNames: ['operation', 'role'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const requests = new Counter({
    name: 'ringkv_requests_total',
    help: 'Requests answered, by operation, role and gRPC status code',
    labelNames: ['operation', 'role', 'code'],
    registers,
  });
  const siblings = new Histogram({
    name: 'ringkv_get_siblings',
    help: 'Values a successful get returned (more than 1: concurrent writes kept as siblings)',
    buckets: [1, 2, 3, 4, 8, 16, 32, 64],
    registers,
  });
  const clockEntries = new Histogram({
    name: 'ringkv_clock_entries',
    help: "Entries in the clock of each record this node's store wrote (writes, merges, prunes); pruning keeps it near N + 2 (docs/causality.md#bounded-clocks)",
    buckets: [1, 2, 3, 4, 5, 6, 8, 12, 16, 32, 64],
    registers,
  });
  const gossipRounds = new Counter({
    name: 'ringkv_gossip_rounds_total',
    help: 'Gossip rounds this node started',
    registers,
  });
  const bucketRequests = new Counter({
    name: 'ringkv_bucket_requests_total',
    help: "Client requests this node coordinated, by bucket, operation and gRPC status code (a bucket the node does not know: 'unknown')",
    labelNames: ['bucket', 'operation', 'code'],
    registers,
  });
  return { latency, requests, siblings, clockEntries, gossipRounds, bucketRequests };
}

/** Register the N of each bucket this node knows. */
function registerBucketReplicas(registers: Registry[], sources: MetricSources): void {
  new Gauge({
    name: 'ringkv_bucket_replicas',
    help: 'Replicas per key (N) of each bucket this node knows',
    labelNames: ['bucket'],
    registers,
    collect() {
      this.reset();
      for (const [bucket, n] of sources.buckets()) this.set({ bucket }, n);
    },
  });
}

/** Register a counter that reads its total from `read` when Prometheus scrapes. */
function counter(registers: Registry[], name: string, help: string, read: () => number): void {
  new Counter({
    name,
    help,
    registers,
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

/** Register a counter for a total the coordinator or hint delivery already keeps (`sources.counters()[key]`). */
function fromCounters(registers: Registry[], sources: MetricSources, name: string, help: string, key: string): void {
  counter(registers, name, help, () => sources.counters()[key] ?? 0);
}

/** Register a gauge that reads its value from `read` when Prometheus scrapes. */
function gauge(registers: Registry[], name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers,
    collect() {
      this.set(read());
    },
  });
}

/** Register the verification pass's totals and the damaged keys scans set aside. */
function registerVerifyTotals(registers: Registry[], sources: MetricSources): void {
  counter(
    registers,
    'ringkv_verify_passes_total',
    'Verification passes (every record read again from disk) finished since start',
    () => sources.verify().passes,
  );
  counter(
    registers,
    'ringkv_verify_records_total',
    'Records the verification pass read and found whole',
    () => sources.verify().records,
  );
  counter(
    registers,
    'ringkv_verify_bytes_total',
    'Bytes of records the verification pass read',
    () => sources.verify().bytes,
  );
  counter(
    registers,
    'ringkv_verify_corrupt_total',
    'Records the verification pass found corrupt on disk',
    () => sources.verify().corrupt,
  );
  counter(
    registers,
    'ringkv_verify_restored_total',
    'Corrupt records the verification pass restored from their replicas',
    () => sources.verify().restored,
  );
  counter(
    registers,
    'ringkv_verify_unrestored_total',
    'Corrupt records no replica gave again (a read or repair of the key restores them once one can)',
    () => sources.verify().unrestored,
  );
  counter(
    registers,
    'ringkv_damaged_keys_total',
    'Entries whose data key was damaged on disk, set aside by a scan (the key they held comes back by repair)',
    () => sources.damagedKeys(),
  );
}

/** Register the totals of data type updates and compare-and-set writes this node coordinated. */
function registerUpdateTotals(registers: Registry[], sources: MetricSources): void {
  fromCounters(
    registers,
    sources,
    'ringkv_counter_updates_total',
    'Counter increments and decrements this node coordinated',
    'counterUpdates',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_set_updates_total',
    'Set updates (one request of adds and removes) this node coordinated',
    'setUpdates',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_map_updates_total',
    'Map updates (one request of field ops) this node coordinated',
    'mapUpdates',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_cas_writes_total',
    'Compare-and-set writes and deletes (PutIf, DeleteIf) this node coordinated',
    'casWrites',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_cas_retries_total',
    'Paxos rounds a compare-and-set ran again because a higher ballot preempted it (contention)',
    'casRetries',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_cas_not_applied_total',
    "Compare-and-set writes answered not applied: the key's version was not the one given",
    'casNotApplied',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_cas_unknown_total',
    'Compare-and-set writes whose outcome was unknown at their deadline (a proposal may have been accepted)',
    'casUnknown',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_counter_gaps_total',
    "Counter deltas a replica could not apply in order (it had missed one), so it was sent the counter's full state",
    'counterGaps',
  );
}

/** Register the totals of read repairs, digest mismatches, fallback and speculative writes, and repeated writes. */
function registerReadWriteTotals(registers: Registry[], sources: MetricSources): void {
  fromCounters(
    registers,
    sources,
    'ringkv_read_repairs_total',
    'Stale or missing replicas a get repaired',
    'readRepairs',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_read_repair_failures_total',
    'Read repairs that did not reach their replica',
    'readRepairFailures',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_read_digest_mismatches_total',
    'Digest replies to gets that differed from the data replies, so the replica was read in full',
    'digestMismatches',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_reads_awaiting_primary_total',
    "Reads a stand-in's not-found would have settled, which waited for a primary's reply instead",
    'readsAwaitingPrimary',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_sloppy_writes_total',
    'Writes that went to a fallback node with a hint because a replica was down',
    'sloppyWrites',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_hints_stored_on_failure_total',
    'Hints stored because a replica failed during a write',
    'hintsOnFailure',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_speculative_applies_total',
    'Writes whose version was also issued on the next replica because the first did not answer within its p99',
    'speculativeApplies',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_speculative_writes_total',
    'Writes sent to a fallback with a hint because a replica did not answer within its p99 and W was not met',
    'speculativeWrites',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_duplicate_writes_total',
    "Writes this node's store took for a repeat of one it had applied (same request id): not applied again",
    'duplicateWrites',
  );
}

/** Register the totals of hints delivered, expired and failed, and of writes missed past the hint window. */
function registerHintTotals(registers: Registry[], sources: MetricSources): void {
  fromCounters(
    registers,
    sources,
    'ringkv_hints_delivered_total',
    'Hints delivered to their replica',
    'hintsDelivered',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_hints_expired_total',
    'Hints dropped rather than delivered because they were older than --clock-prune-grace-ms',
    'hintsExpired',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_hint_delivery_failures_total',
    'Hint deliveries that failed (retried later)',
    'hintDeliveryFailures',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_writes_missed_past_hint_window_total',
    'Replica writes dropped because the replica was down longer than the hint window (left to repair)',
    'missedPastHintWindow',
  );
}

/** Register the totals of requests refused, timed out, undecodable or late, and of connections closed for room. */
function registerRefusalTotals(registers: Registry[], sources: MetricSources): void {
  fromCounters(
    registers,
    sources,
    'ringkv_requests_unavailable_total',
    'Client requests refused for too few replicas up',
    'unavailable',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_requests_timed_out_total',
    'Client requests that ran out of time waiting for their quorum',
    'timeouts',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_requests_overloaded_total',
    'Client requests refused because --max-in-flight were running',
    'overloaded',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_connections_idle_closed_total',
    'Idle connections closed to make room for new ones at --max-connections',
    'connectionsIdleClosed',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_calls_refused_over_limit_total',
    'Calls refused RESOURCE_EXHAUSTED by --max-connections or --max-calls-per-connection',
    'callsRefusedOverLimit',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_requests_undecodable_total',
    "Requests that did not decode as their method's message (INVALID_ARGUMENT)",
    'requestsUndecodable',
  );
  fromCounters(
    registers,
    sources,
    'ringkv_requests_arrived_late_total',
    'Unary requests ended because they did not arrive in full in time (10 s, or 1 s past 64 slow ones)',
    'requestsArrivedLate',
  );
}

/** Register replica bytes sent and the gauges of what runs now: connections, requests, replica calls, hints held, background share. */
function registerActivityMetrics(registers: Registry[], sources: MetricSources): void {
  new Counter({
    name: 'ringkv_replica_bytes_sent_total',
    help: "Bytes of replica calls this node sent to peers (each call's encoded size), by operation: what an update costs on the network",
    labelNames: ['call'],
    registers,
    collect() {
      this.reset();
      for (const [call, n] of sources.replicaBytesSent()) this.inc({ call }, n);
    },
  });
  gauge(
    registers,
    'ringkv_connections',
    'TCP connections open to this node (clients and peers)',
    () => sources.counters().connections ?? 0,
  );
  gauge(
    registers,
    'ringkv_requests_in_flight',
    'Client requests this node is coordinating now',
    () => sources.counters().inFlight ?? 0,
  );
  gauge(
    registers,
    'ringkv_replica_calls_in_flight',
    "Peers' replica calls (writes, reads, merges) this node is running now",
    () => sources.counters().replicaInFlight ?? 0,
  );
  gauge(
    registers,
    'ringkv_hints_pending',
    'Hints this node holds for other nodes, waiting for delivery',
    () => sources.counters().hintsHeld ?? 0,
  );
  gauge(
    registers,
    'ringkv_background_share_ratio',
    'Share of the configured streaming/hint/repair rates the latency governor allows now (0..1)',
    () => (sources.counters().backgroundSharePercent ?? 100) / 100,
  );
}

/** Register the gauges of the data this node holds and of its data directory's disk. */
function registerStorageGauges(registers: Registry[], sources: MetricSources): void {
  gauge(registers, 'ringkv_load_bytes', 'Bytes of data this node holds, as it gossips it', () => sources.load().bytes);
  // 0 until the first check, a second after start.
  const disk = (f: (d: DiskState) => number) => (): number => {
    const d = sources.disk();
    return d === undefined ? 0 : f(d);
  };
  gauge(
    registers,
    'ringkv_disk_free_bytes',
    "Free bytes of the data directory's disk (checked each second)",
    disk((d) => d.freeBytes),
  );
  gauge(
    registers,
    'ringkv_disk_total_bytes',
    "Size of the data directory's disk, bytes",
    disk((d) => d.totalBytes),
  );
  gauge(
    registers,
    'ringkv_disk_floor_bytes',
    'Free bytes below which this node takes no new writes (--min-free-disk)',
    disk((d) => d.floorBytes),
  );
  gauge(
    registers,
    'ringkv_disk_refusing_writes',
    "1 while this node's store takes no new writes: free space below the floor, or a write failed for want of it",
    disk((d) => (d.low || d.failed ? 1 : 0)),
  );
  gauge(
    registers,
    'ringkv_disk_write_failures',
    '1 after a write failed for want of disk space, until space is back and the store has reopened',
    disk((d) => (d.failed ? 1 : 0)),
  );
  gauge(
    registers,
    'ringkv_disk_reopens',
    'Times the store reopened after a write failed for want of disk space, since start',
    disk((d) => d.reopens),
  );
  gauge(registers, 'ringkv_keys', 'Keys this node holds (estimate)', () => sources.load().keys);
}

/** Register the TLS certificate's expiry. */
function registerCertificateGauge(registers: Registry[], sources: MetricSources): void {
  new Gauge({
    name: 'ringkv_tls_certificate_expiry_timestamp_seconds',
    help: "When this node's TLS certificate (the one in use, after reloads) expires, Unix seconds, by subject; absent with TLS off. Alert well before it",
    labelNames: ['subject'],
    registers,
    collect() {
      this.reset();
      const c = sources.certificate();
      if (c !== undefined) this.set({ subject: c.subject }, Math.floor(c.validTo / 1000));
    },
  });
}

/** Register the gauges of the ring and of the members and peers as this node sees them. */
function registerMembershipGauges(registers: Registry[], sources: MetricSources): void {
  gauge(registers, 'ringkv_ring_ranges', 'Token ranges of the current ring', () => sources.ring().ranges);
  gauge(
    registers,
    'ringkv_ring_changes_total',
    'Times the current ring changed since this node started (a counter that resets on restart)',
    () => sources.ring().changes,
  );
  new Gauge({
    name: 'ringkv_ring_info',
    help: 'Always 1, labelled with the hash of the ring this node uses: nodes that disagree show different hashes',
    labelNames: ['hash'],
    registers,
    collect() {
      this.reset();
      this.set({ hash: sources.ring().hash }, 1);
    },
  });
  new Gauge({
    name: 'ringkv_members',
    help: "Members as this node sees them, by status and up/down (this node's failure detector)",
    labelNames: ['status', 'up'],
    registers,
    collect() {
      this.reset();
      for (const m of sources.members()) this.inc({ status: m.status, up: String(m.up) });
    },
  });
  new Gauge({
    name: 'ringkv_peer_phi',
    help: 'Phi-accrual suspicion of each peer (down above --phi-threshold)',
    labelNames: ['peer'],
    registers,
    collect() {
      this.reset();
      for (const m of sources.members())
        if (!m.self && m.status !== 'removed' && m.status !== 'left')
          this.set({ peer: m.id }, Number.isFinite(m.phi) ? m.phi : 1e9);
    },
  });
  new Gauge({
    name: 'ringkv_peer_up',
    help: '1 when this node considers the peer up, 0 when down',
    labelNames: ['peer'],
    registers,
    collect() {
      this.reset();
      for (const m of sources.members())
        if (!m.self && m.status !== 'removed' && m.status !== 'left') this.set({ peer: m.id }, m.up ? 1 : 0);
    },
  });
}

/** Register the gauges of the range streams this node pulls and sends. */
function registerStreamGauges(registers: Registry[], sources: MetricSources): void {
  new Gauge({
    name: 'ringkv_stream_ranges',
    help: 'Ranges this node pulls in a join, leave or removal, by state (pending, active, done, failed)',
    labelNames: ['state'],
    registers,
    collect() {
      this.reset();
      for (const [state, n] of Object.entries(sources.streams().pulls)) this.set({ state }, n);
    },
  });
  gauge(
    registers,
    'ringkv_stream_received_bytes',
    'Bytes received by the pulls of the current or last movement',
    () => sources.streams().receivedBytes,
  );
  gauge(
    registers,
    'ringkv_stream_received_keys',
    'Keys received by the pulls of the current or last movement',
    () => sources.streams().receivedKeys,
  );
  gauge(
    registers,
    'ringkv_stream_outgoing',
    'Range streams this node is sending now',
    () => sources.streams().outgoing,
  );
  gauge(
    registers,
    'ringkv_stream_outgoing_bytes',
    'Bytes sent so far by the range streams this node is sending now',
    () => sources.streams().outgoingBytes,
  );
}

/** Register the gauges of repair runs and background repair. */
function registerRepairGauges(registers: Registry[], sources: MetricSources): void {
  gauge(
    registers,
    'ringkv_repair_running',
    '1 while an anti-entropy repair run (ringkv repair) is going on here',
    () => (sources.repair().running ? 1 : 0),
  );
  gauge(registers, 'ringkv_repair_ranges', 'Ranges of the running or last repair run', () => sources.repair().ranges);
  gauge(
    registers,
    'ringkv_repair_ranges_done',
    'Ranges of the running or last repair run that are done',
    () => sources.repair().done,
  );
  gauge(
    registers,
    'ringkv_repair_ranges_failed',
    'Ranges of the running or last repair run that failed',
    () => sources.repair().failed,
  );
  gauge(
    registers,
    'ringkv_repair_background_ranges',
    'Ranges background repair has repaired since start',
    () => sources.repair().backgroundRanges,
  );
  gauge(
    registers,
    'ringkv_repair_background_bytes',
    'Bytes background repair has read since start',
    () => sources.repair().backgroundBytes,
  );
}

/** Register the metrics of the anti-entropy trees kept on write. */
function registerTreeMetrics(registers: Registry[], sources: MetricSources): void {
  const tree = (key: keyof KeptTreeFigures) => (): number => sources.trees()?.[key] ?? 0;
  gauge(
    registers,
    'ringkv_tree_units',
    'Units (range and N class) this node keeps an anti-entropy tree for, ready or building',
    tree('kept'),
  );
  gauge(
    registers,
    'ringkv_tree_units_ready',
    'Units whose kept tree is ready (repair compares it without a scan)',
    tree('ready'),
  );
  gauge(
    registers,
    'ringkv_tree_units_building',
    'Units whose first tree is being built (repair scans them meanwhile)',
    tree('building'),
  );
  gauge(
    registers,
    'ringkv_tree_units_rebuilding',
    'Ready units being rebuilt on the long schedule (the kept tree serves meanwhile)',
    tree('rebuilding'),
  );
  gauge(registers, 'ringkv_tree_units_queued', 'Units waiting for a build or rebuild', tree('queued'));
  gauge(
    registers,
    'ringkv_tree_journal_entries',
    'Kept-tree journal entries written since the last checkpoint (replayed at open)',
    tree('journal'),
  );
  counter(
    registers,
    'ringkv_tree_builds_total',
    'Kept trees built for units tracked anew, since start',
    tree('builds'),
  );
  counter(
    registers,
    'ringkv_tree_build_failures_total',
    'Kept-tree builds and rebuilds that failed (logged; tried again)',
    tree('buildFailures'),
  );
  counter(
    registers,
    'ringkv_tree_rebuilds_total',
    'Kept trees rebuilt on the long schedule (--tree-rebuild-interval-ms), since start',
    tree('rebuilds'),
  );
  counter(
    registers,
    'ringkv_tree_rebuild_mismatches_total',
    'Rebuilds that found the kept tree differed from a scan of its records (a bug or a corruption; the scan replaced it)',
    tree('rebuildMismatches'),
  );
  counter(
    registers,
    'ringkv_tree_rebuild_mismatched_leaves_total',
    'Leaves those rebuilds found different',
    tree('rebuildMismatchedLeaves'),
  );
}
