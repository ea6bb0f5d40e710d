/**
 * Text output of `ringkv status`, `ringkv ring` and `ringkv bucket`, in the spirit of `nodetool status`.
 * Pure: replies in, text out.
 */

import type { BucketInfo, EndpointsReply, RingReply, StatusReply } from '../client/admin.js';

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

/** `rows` as aligned columns, each as wide as its widest cell in `rows` or in `alignWith`. */
function table(rows: string[][], alignWith: readonly string[][] = rows): string {
  const all = alignWith === rows ? rows : [...rows, ...alignWith];
  const widths = rows[0]!.map((_, c) => Math.max(...all.map((r) => r[c]?.length ?? 0)));
  return rows
    .map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  '))
    .join('\n');
}

/** `words` joined by spaces into lines of at most `width` characters (a longer word alone on its line). */
function wrap(words: readonly string[], width: number): string[] {
  const lines: string[] = [];
  for (const w of words) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + 1 + w.length <= width) lines[lines.length - 1] = `${last} ${w}`;
    else lines.push(w);
  }
  return lines;
}

/**
 * `ringkv status`: the members, by zone. The answering node's counters (Admin Status's
 * `counters`, some forty) follow only with `verbose` (--verbose): they are for
 * digging into one node, and would bury the table.
 */
export function formatStatus(s: StatusReply, o: { verbose?: boolean } = {}): string {
  const out = [
    `Cluster: ${s.clusterName} (as seen by ${s.nodeId}; up/down is this node's opinion)`,
    'Status=Up/Down',
    '|/ State=Normal/Joining/Leaving/lefT/Removed',
  ];
  // Members that left or were removed are history, not rows (they are listed below).
  const gone = s.members.filter((m) => m.status === 'left' || m.status === 'removed');
  const members = s.members.filter((m) => !gone.includes(m));
  const zones = [...new Set(members.map((m) => m.zone))].sort();
  const header = ['--', 'Address', 'Load', 'Hints', 'Tokens', `Owns (effective, N=${s.replicas})`, 'Host ID', 'Rack'];
  const tables = zones.map((zone) => {
    const rows = [header];
    for (const m of members.filter((x) => x.zone === zone)) {
      rows.push([
        `${m.up ? 'U' : 'D'}${STATE[m.status] ?? '?'}`,
        m.address,
        formatBytes(m.loadBytes),
        String(m.hints),
        String(m.tokens),
        (m.tokens === 0 || m.status === 'joining' ? '?' : `${(m.ownership * 100).toFixed(1)}%`) +
          (m.progress ? ` (streaming ${m.progress} ranges)` : '') +
          (m.stopping ? ' (stopping)' : ''),
        m.id,
        m.rack === '' ? '-' : m.rack,
      ]);
    }
    return rows;
  });
  // One set of column widths for every zone: the tables read as one, as in nodetool status.
  const everyRow = tables.flat();
  zones.forEach((zone, i) => out.push('', `Zone: ${zone === '' ? '(none)' : zone}`, table(tables[i]!, everyRow)));
  if (gone.length > 0) out.push('', `Left or removed: ${gone.map((m) => `${m.id} (${m.status})`).join(', ')}`);
  const full = members.filter((m) => m.disk === 'low' || m.disk === 'failed');
  if (full.length > 0) out.push('');
  for (const m of full)
    out.push(
      m.disk === 'low'
        ? `Disk: ${m.id} has ${formatBytes(m.diskFreeBytes)} free of ${formatBytes(m.diskTotalBytes)}, below its floor (--min-free-disk): it takes no new writes; other replicas take them.`
        : `Disk: ${m.id} had a write fail for want of space (${formatBytes(m.diskFreeBytes)} free of ${formatBytes(m.diskTotalBytes)}): it takes no new writes until space is back.`,
    );
  if (full.length > 0) out.push('See docs/operations.md#a-full-disk');
  const owners = s.members.filter((m) => m.status === 'normal' && m.tokens > 0);
  if (new Set(owners.map((m) => m.tokens)).size > 1)
    out.push(
      '',
      'Tokens differ: a node holds the tokens it claimed when it joined (--tokens, times its --weight) and those it inherited from nodes that left (docs/ring.md).',
    );
  const counters = o.verbose ? Object.entries(s.counters ?? {}) : [];
  if (counters.length > 0)
    out.push(
      '',
      `Counters of ${s.nodeId} since it started:`,
      ...wrap(
        counters.map(([k, v]) => `${k}=${v}`),
        88,
      ).map((l) => `  ${l}`),
    );
  return out.join('\n');
}

export function formatRing(r: RingReply): string {
  const rows = [['Start (exclusive)', 'End (inclusive)', `Replicas (N=${r.replicas})`]];
  for (const x of r.ranges) rows.push([x.start, x.end, x.replicas.join(',')]);
  return table(rows);
}

/** A value for a terminal: UTF-8 text when it is printable, else hex. */
export function showValue(v: Uint8Array): string {
  const text = Buffer.from(v).toString('utf8');
  // eslint-disable-next-line no-control-regex
  return !text.includes('\uFFFD') && !/[\x00-\x08\x0e-\x1f\x7f]/.test(text)
    ? text
    : `0x${Buffer.from(v).toString('hex')}`;
}

export function formatGet(
  key: string,
  r: { values: readonly Uint8Array[]; context: Uint8Array; found: boolean },
): string {
  const ctx = Buffer.from(r.context).toString('base64');
  if (!r.found) return `${key}: not found\ncontext: ${ctx}`;
  const lines =
    r.values.length === 1
      ? [showValue(r.values[0]!)]
      : [
          `${key}: ${r.values.length} siblings (concurrent writes); put with the context to resolve them`,
          ...r.values.map((v, i) => `  [${i + 1}] ${showValue(v)}`),
        ];
  return [...lines, `context: ${ctx}`].join('\n');
}

export function formatEndpoints(key: string, e: EndpointsReply): string {
  const out = [`key ${key}: token ${e.token}, N=${e.replicas}`];
  const rows = [['Replica', 'Address', 'Zone', 'State', 'Writes go to']];
  for (const p of e.preferenceList) {
    const fallback = e.targets.find((t) => t.hintFor === p.id);
    rows.push([
      p.id,
      p.address,
      p.zone === '' ? '-' : p.zone,
      p.up ? 'up' : 'down',
      p.up
        ? p.id
        : fallback
          ? `${fallback.id} (${fallback.address}, fallback keeping a hint)`
          : 'nowhere: no fallback is up',
    ]);
  }
  out.push(table(rows));
  return out.join('\n');
}

/** A duration in ms the way an operator wrote it: the largest whole unit. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** Buckets as a table: name, type, n, r, w, ttl, siblings, and the latest change. */
export function formatBuckets(buckets: readonly BucketInfo[]): string {
  const q = (x: number, n: number): string => (x === 0 ? `quorum (${Math.floor(n / 2) + 1})` : String(x));
  const rows = [['Bucket', 'Type', 'N', 'R', 'W', 'TTL', 'Siblings', 'Changed']];
  for (const b of buckets) {
    const p = b.props;
    rows.push([
      b.name,
      p.type ?? 'kv',
      String(p.n),
      q(p.r, p.n),
      q(p.w, p.n),
      p.ttlMs === 0 ? 'none' : formatDuration(p.ttlMs),
      p.siblings,
      b.changedAtMs === 0 ? '-' : `${new Date(b.changedAtMs).toISOString()} on ${b.changedBy}`,
    ]);
  }
  return table(rows);
}
