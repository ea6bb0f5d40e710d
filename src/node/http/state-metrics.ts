/**
 * The metrics of this node's state, read at scrape time: its buckets, the verification
 * pass, its data and disk, its TLS certificate, the ring and members as it sees them,
 * range streams, repair, and the anti-entropy trees kept on write. NodeMetrics registers
 * these groups in the order /metrics lists them.
 *
 * Owns: these metrics' names, labels and help. Must not: keep a figure of its own (the
 * parts do).
 */

import { Gauge, type Registry } from 'prom-client';
import type { DiskState } from '../../storage/index.js';
import { counter, gauge, type KeptTreeFigures, type MetricSources } from './metric-sources.js';

/** Register the N of each bucket this node knows. */
export function registerBucketReplicas(registers: Registry[], sources: MetricSources): void {
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

/** Register the verification pass's totals and the damaged keys scans set aside. */
export function registerVerifyTotals(registers: Registry[], sources: MetricSources): void {
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

/** Register the gauges of the data this node holds and of its data directory's disk. */
export function registerStorageGauges(registers: Registry[], sources: MetricSources): void {
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
export function registerCertificateGauge(registers: Registry[], sources: MetricSources): void {
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
export function registerMembershipGauges(registers: Registry[], sources: MetricSources): void {
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
export function registerStreamGauges(registers: Registry[], sources: MetricSources): void {
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
export function registerRepairGauges(registers: Registry[], sources: MetricSources): void {
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
export function registerTreeMetrics(registers: Registry[], sources: MetricSources): void {
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
