/**
 * What a node's metrics read when Prometheus scrapes (MetricSources, which node.ts fills
 * from the node's parts), and the counter and gauge that read a figure then: nothing here
 * runs between scrapes.
 *
 * Owns: the figures the metrics read and the scrape-time counter and gauge. Must not:
 * name a metric (metrics.ts, serving-metrics.ts and state-metrics.ts do).
 */

import { Counter, Gauge, type Registry } from 'prom-client';
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

/** Register a counter that reads its total from `read` when Prometheus scrapes. */
export function counter(registers: Registry[], name: string, help: string, read: () => number): void {
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
export function fromCounters(
  registers: Registry[],
  sources: MetricSources,
  name: string,
  help: string,
  key: string,
): void {
  counter(registers, name, help, () => sources.counters()[key] ?? 0);
}

/** Register a gauge that reads its value from `read` when Prometheus scrapes. */
export function gauge(registers: Registry[], name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers,
    collect() {
      this.set(read());
    },
  });
}
