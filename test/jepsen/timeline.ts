/**
 * The run's picture, plain SVG: operations per second that succeeded and that failed, and
 * the 99th-percentile latency, second by second, with each fault's window shaded and
 * labelled, so a person sees at a glance what each fault did to the clients.
 */
import type { Op, Window } from './checkers.js';

const COLOURS: Record<string, string> = {
  partition: '#f4a261',
  kill: '#e76f51',
  pause: '#e9c46a',
  packet: '#8ab17d',
  clock: '#9d8ac7',
  membership: '#6fa8dc',
  slow: '#c06c84',
};

export interface Buckets {
  readonly ok: number[];
  readonly failed: number[];
  readonly p99: number[];
}

/** Per second from the start: successes, failures (failed or unknown), p99 latency in ms of the operations that started in it. */
export function buckets(ops: readonly Op[], seconds: number): Buckets {
  const ok = new Array<number>(seconds).fill(0),
    failed = new Array<number>(seconds).fill(0);
  const lat: number[][] = Array.from({ length: seconds }, () => []);
  for (const o of ops) {
    const s = Math.floor(o.startMs / 1000);
    if (s < 0 || s >= seconds) continue;
    if (o.outcome === 'ok') ok[s]!++;
    else failed[s]!++;
    lat[s]!.push(o.endMs - o.startMs);
  }
  const p99 = lat.map((l) => {
    if (l.length === 0) return 0;
    l.sort((a, b) => a - b);
    return l[Math.min(l.length - 1, Math.floor(l.length * 0.99))]!;
  });
  return { ok, failed, p99 };
}

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function timelineSvg(title: string, ops: readonly Op[], windows: readonly Window[], endMs: number): string {
  const seconds = Math.max(1, Math.ceil(endMs / 1000));
  const b = buckets(ops, seconds);
  // Wider for longer runs (2.5 px a second, up to 4800 px), so that windows stay apart.
  const W = Math.max(1200, Math.min(4800, Math.round(seconds * 2.5) + 120)),
    left = 60,
    right = 60,
    top = 40,
    plotH = 220,
    latTop = top + plotH + 40,
    latH = 120,
    H = latTop + latH + 70;
  const plotW = W - left - right;
  const x = (s: number): number => left + (s / seconds) * plotW;
  const maxOps = Math.max(1, ...b.ok.map((v, i) => v + b.failed[i]!));
  const maxLat = Math.max(1, ...b.p99);
  const yOps = (v: number): number => top + plotH - (v / maxOps) * plotH;
  const yLat = (v: number): number => latTop + latH - (v / maxLat) * latH;
  const line = (vals: number[], y: (v: number) => number): string =>
    vals.map((v, i) => `${i === 0 ? 'M' : 'L'}${x(i + 0.5).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${left}" y="22" font-size="14" font-weight="bold">${esc(title)}</text>`);
  // Fault windows, shaded across both plots (the full label as a tooltip), labelled at the
  // top on three rows where there is room.
  const lastLabelEnd = [-Infinity, -Infinity, -Infinity];
  for (const w of windows) {
    const x0 = x(w.startMs / 1000),
      x1 = Math.max(x0 + 1, x(w.endMs / 1000));
    const c = COLOURS[w.kind] ?? '#cccccc';
    out.push(
      `<rect x="${x0.toFixed(1)}" y="${top}" width="${(x1 - x0).toFixed(1)}" height="${latTop + latH - top}" fill="${c}" fill-opacity="0.25"><title>${esc(`${w.kind}: ${w.label}`)}</title></rect>`,
    );
    const text = w.label.length > 28 ? `${w.label.slice(0, 27)}…` : w.label;
    const row = lastLabelEnd.findIndex((end) => end < x0);
    if (row < 0) continue;
    lastLabelEnd[row] = x0 + text.length * 5 + 4;
    out.push(
      `<text x="${(x0 + 2).toFixed(1)}" y="${top + 10 + row * 11}" fill="${c}" font-size="9">${esc(text)}</text>`,
    );
  }
  // Axes.
  out.push(`<line x1="${left}" y1="${top + plotH}" x2="${left + plotW}" y2="${top + plotH}" stroke="#333"/>`);
  out.push(`<line x1="${left}" y1="${latTop + latH}" x2="${left + plotW}" y2="${latTop + latH}" stroke="#333"/>`);
  out.push(`<text x="8" y="${top + 10}">${maxOps} ops/s</text><text x="8" y="${top + plotH}">0</text>`);
  out.push(`<text x="8" y="${latTop + 10}">${Math.round(maxLat)} ms</text><text x="8" y="${latTop + latH}">0</text>`);
  const step = Math.max(1, Math.ceil(seconds / 20 / 5) * 5);
  for (let s = 0; s <= seconds; s += step)
    out.push(`<text x="${x(s).toFixed(1)}" y="${latTop + latH + 14}" text-anchor="middle">${s}s</text>`);
  out.push(`<path d="${line(b.ok, yOps)}" fill="none" stroke="#2a9d8f" stroke-width="1.5"/>`);
  out.push(`<path d="${line(b.failed, yOps)}" fill="none" stroke="#d62828" stroke-width="1.5"/>`);
  out.push(`<path d="${line(b.p99, yLat)}" fill="none" stroke="#264653" stroke-width="1.2"/>`);
  // Legend.
  const ly = H - 28;
  const legend: [string, string, boolean][] = [
    ['#2a9d8f', 'succeeded / s', false],
    ['#d62828', 'failed or unknown / s', false],
    ['#264653', 'p99 latency (lower plot)', false],
    ...Object.entries(COLOURS).map(([k, c]): [string, string, boolean] => [c, k, true]),
  ];
  let lx = left;
  for (const [c, label, box] of legend) {
    out.push(
      box
        ? `<rect x="${lx}" y="${ly - 8}" width="12" height="10" fill="${c}" fill-opacity="0.5"/>`
        : `<line x1="${lx}" y1="${ly - 3}" x2="${lx + 12}" y2="${ly - 3}" stroke="${c}" stroke-width="2"/>`,
    );
    out.push(`<text x="${lx + 16}" y="${ly}">${esc(label)}</text>`);
    lx += 24 + label.length * 6;
  }
  out.push('</svg>');
  return out.join('\n');
}
