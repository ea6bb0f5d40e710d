/**
 * A node's Prometheus metrics (prom-client), served on /metrics by http-server.ts and
 * listed in docs/metrics.md. Requests are timed where they enter the node: every unary
 * handler of the KeyValue service (role coordinator) and of the internal Replica service
 * (role replica) is wrapped, so latency and the gRPC code are those the caller saw,
 * refusals included. Everything else is read from the node's parts when Prometheus
 * scrapes (collect callbacks, metric-sources.ts), so nothing here runs between scrapes:
 * the groups of what this node serves are in serving-metrics.ts, of its state in
 * state-metrics.ts, registered here in the order /metrics lists them.
 *
 * Owns: the registry, the order of the groups, and the metrics recorded as requests are
 * answered (names, labels and buckets). Must not: change behaviour; each node has its own
 * registry (several nodes may share a process in tests).
 */

import * as grpc from '@grpc/grpc-js';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { codeName } from '../../transport/status.js';
import type { MetricSources } from './metric-sources.js';
import {
  registerActivityMetrics,
  registerHintTotals,
  registerReadWriteTotals,
  registerRefusalTotals,
  registerUpdateTotals,
} from './serving-metrics.js';
import {
  registerBucketReplicas,
  registerCertificateGauge,
  registerMembershipGauges,
  registerRepairGauges,
  registerStorageGauges,
  registerStreamGauges,
  registerTreeMetrics,
  registerVerifyTotals,
} from './state-metrics.js';

export type { KeptTreeFigures, MetricSources } from './metric-sources.js';

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
