/**
 * Durations as people write them ("250ms", "30s", "15m", "12h", "7d"): how a TTL (a bucket's
 * or a put's) is given to the client and to the CLI's --ttl alike. Imports nothing: the
 * CLI parses its flags with it before any gRPC is loaded.
 *
 * Owns: the duration syntax. Must not: import anything.
 */

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration written with its unit ("250ms", "30s", "15m", "12h", "7d"), or "0", in ms;
 * a string giving the reason otherwise. A bare number other than 0 is refused: "7" could
 * mean 7 ms, 7 s or 7 days.
 */
export function parseDuration(text: string): number | string {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim());
  if (m === null)
    return `must be a duration like 30s, 15m, 12h or 7d (units ms, s, m, h, d), got ${JSON.stringify(text)}`;
  if (m[2] === undefined && Number(m[1]) !== 0)
    return `must say its unit: ${m[1]}s, ${m[1]}m, ${m[1]}h, ${m[1]}d, or ${m[1]}ms if milliseconds are meant; got ${JSON.stringify(text)}`;
  const ms = Number(m[1]) * UNIT_MS[m[2] ?? 'ms']!;
  return Number.isSafeInteger(ms) ? ms : `is too long: ${JSON.stringify(text)}`;
}
