/**
 * The metrics of what this node serves, read at scrape time from the totals the
 * coordinator, the replica server and hint delivery keep (Admin Status's counters): data
 * type and compare-and-set updates, read repairs and fallback writes, hints, refusals, and
 * what runs now. NodeMetrics registers these groups in the order /metrics lists them.
 *
 * Owns: these metrics' names and help. Must not: keep a figure of its own (the parts do).
 */

import { Counter, type Registry } from 'prom-client';
import { fromCounters, gauge, type MetricSources } from './metric-sources.js';

/** Register the totals of data type updates and compare-and-set writes this node coordinated. */
export function registerUpdateTotals(registers: Registry[], sources: MetricSources): void {
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
export function registerReadWriteTotals(registers: Registry[], sources: MetricSources): void {
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
export function registerHintTotals(registers: Registry[], sources: MetricSources): void {
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
export function registerRefusalTotals(registers: Registry[], sources: MetricSources): void {
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
export function registerActivityMetrics(registers: Registry[], sources: MetricSources): void {
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
