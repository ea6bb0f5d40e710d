/**
 * Text output of `ringkv status` and `ringkv ring`, in the spirit of `nodetool status`.
 * Pure: replies in, text out.
 */

import type { RingReply, StatusReply } from '../client/admin.js';

const STATE: Record<string, string> = { joining: 'J', normal: 'N', leaving: 'L', left: 'T', removed: 'R' };

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${n.toFixed(2)} ${units[i]}`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')).join('\n');
}

export function formatStatus(s: StatusReply): string {
  const out = [
    `Cluster: ${s.clusterName} (as seen by ${s.nodeId}; up/down is this node's opinion)`,
    'Status=Up/Down',
    '|/ State=Normal/Joining/Leaving/lefT/Removed',
  ];
  const zones = [...new Set(s.members.map((m) => m.zone))].sort();
  for (const zone of zones) {
    out.push('', `Zone: ${zone === '' ? '(none)' : zone}`);
    const rows = [['--', 'Address', 'Load', 'Hints', 'Tokens', `Owns (effective, N=${s.replicas})`, 'Host ID', 'Rack']];
    for (const m of s.members.filter((x) => x.zone === zone)) {
      rows.push([
        `${m.up ? 'U' : 'D'}${STATE[m.status] ?? '?'}`,
        m.address,
        formatBytes(m.loadBytes),
        String(m.hints),
        String(m.tokens),
        m.tokens === 0 || m.status === 'joining' ? '?' : `${(m.ownership * 100).toFixed(1)}%`,
        m.id,
        m.rack === '' ? '-' : m.rack,
      ]);
    }
    out.push(table(rows));
  }
  const counters = Object.entries(s.counters ?? {});
  if (counters.length > 0) out.push('', `Counters of ${s.nodeId} since it started: ${counters.map(([k, v]) => `${k}=${v}`).join(' ')}`);
  return out.join('\n');
}

export function formatRing(r: RingReply): string {
  const rows = [['Start (exclusive)', 'End (inclusive)', `Replicas (N=${r.replicas})`]];
  for (const x of r.ranges) rows.push([x.start, x.end, x.replicas.join(',')]);
  return table(rows);
}
