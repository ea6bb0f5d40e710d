/**
 * `ringkv demo`: builds a small ring in memory and prints what the placement layer
 * decides: ownership per node, the preference lists of a few keys, and what moves when
 * a node joins. No node process, no network, no disk.
 *
 * Must not: hold placement logic (src/ring does); this file only formats.
 */

import { Ring, arcFraction, balance, claimRing, fairShares, joinRing, tokenHex, tokenOf } from '../ring/index.js';

export interface DemoOptions {
  readonly nodes: number;
  readonly zones: number;
  readonly n: number;
  readonly keys: readonly string[];
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, c) => cell.padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

export function demo(opts: DemoOptions): string {
  const zoneNames = Array.from({ length: opts.zones }, (_, i) => String.fromCharCode(97 + i));
  const members = Array.from({ length: opts.nodes }, (_, i) => ({ id: `n${i + 1}`, zone: zoneNames[i % opts.zones] }));
  const ring = claimRing(members, opts.n);
  const n = Math.min(opts.n, ring.size);
  const p1 = ring.ownership(1);
  const pn = ring.ownership(n);
  const f1 = fairShares(ring, 1);
  const fn = fairShares(ring, n);
  const out: string[] = [];
  out.push(
    `ringkv ring demo: ${ring.size} nodes in ${opts.zones} zones, ${ring.options.tokensPerNode} tokens per node, N = ${n}`,
  );
  out.push('');
  out.push(
    table([
      ['node', 'zone', 'tokens', 'primary', 'fair', `replicas (N=${n})`, 'fair'],
      ...ring.members.map((m) => [
        m.id,
        m.zone,
        String(m.tokens.length),
        pct(p1.get(m.id)!),
        pct(f1.get(m.id)!),
        pct(pn.get(m.id)!),
        pct(fn.get(m.id)!),
      ]),
    ]),
  );
  out.push(
    `busiest node ÷ fair share: primary ${balance(ring, 1).max.toFixed(3)}, replicas ${balance(ring, n).max.toFixed(3)}`,
  );
  out.push('');
  out.push(
    table([
      ['key', 'token', `preference list (N=${n})`],
      ...opts.keys.map((k) => {
        const list = ring.preferenceList(k, n);
        return [k, tokenHex(tokenOf(k)), list.map((id) => `${id} (${ring.member(id)!.zone})`).join(', ')];
      }),
    ]),
  );
  const id = `n${ring.size + 1}`;
  const zone = zoneNames[ring.size % opts.zones]!;
  const grown = joinRing(ring, { id, zone }, opts.n);
  const moved = Ring.diff(ring, grown, 1).reduce((s, c) => s + arcFraction(c.start, c.end), 0);
  out.push('');
  out.push(
    `adding ${id} (zone ${zone}) moves ${pct(moved)} of the keys to it (ideal ${pct(1 / grown.size)}); ` +
      `busiest node ÷ fair share then: primary ${balance(grown, 1).max.toFixed(3)}, replicas ${balance(grown, n).max.toFixed(3)}`,
  );
  return out.join('\n');
}
