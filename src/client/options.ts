/**
 * The checks of every option a client or admin call takes, before anything is sent: an
 * unknown option name, a value of the wrong type, a fraction, a negative number, a
 * quorum above the largest N, or a TTL that is not a duration is refused with
 * INVALID_ARGUMENT naming the call, the option, the value and what is accepted. TTLs are
 * taken as a number of ms or as a duration with a unit ("7d", "90s"), as the CLI takes
 * them (duration.ts).
 *
 * Owns: the rule of each option. Must not: call a node, or know
 * what a call does with its options.
 */
import * as grpc from '@grpc/grpc-js';
import { BUCKET_TYPES, MAX_N, MAX_TTL_MS, parseDuration } from '../buckets/index.js';
import { serviceError } from './wire-values.js';

/** An option's check: its value as the call uses it, or the reason it is refused ("must be …"). */
export type Rule = (value: unknown) => { readonly ok: unknown } | { readonly refused: string };

const show = (v: unknown): string => {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Uint8Array) return `${v.constructor.name}(${v.length})`;
  if (v === null || typeof v !== 'object') return String(v);
  return Array.isArray(v) ? 'an array' : 'an object';
};

/** A whole number from `min` to `max`. */
export function whole(min: number, max: number, what = ''): Rule {
  return (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max
      ? { ok: v }
      : { refused: `must be a whole number from ${min} to ${max}${what}, got ${show(v)}` };
}

/** A quorum (r, w, pw) or a count of confirmations: 0 for the default, else 1 to the largest N. */
export const quorum = whole(0, MAX_N, " (0 or unset: the default; at most the bucket's n)");

/** A deadline, ms from now. */
export const deadline = whole(1, 2 ** 31 - 1, ' ms');

/** A time to live: a number of ms from 0 (none) to 10 years, or a duration with its unit. */
export const ttl: Rule = (v) => {
  const ms = typeof v === 'string' ? parseDuration(v) : v;
  if (typeof ms === 'string') return { refused: ms };
  if (typeof ms === 'number' && Number.isInteger(ms) && ms >= 0 && ms <= MAX_TTL_MS) return { ok: ms };
  return {
    refused: `must be a time to live: whole ms from 0 (none) to ${MAX_TTL_MS} (10 years), or a duration like "30s", "12h" or "7d"; got ${show(v)}`,
  };
};

export const text: Rule = (v) => (typeof v === 'string' ? { ok: v } : { refused: `must be a string, got ${show(v)}` });
export const flag: Rule = (v) =>
  typeof v === 'boolean' ? { ok: v } : { refused: `must be true or false, got ${show(v)}` };
export const byteString: Rule = (v) =>
  v instanceof Uint8Array ? { ok: v } : { refused: `must be a Uint8Array (a Buffer), got ${show(v)}` };
/** A request id: 1 to 64 bytes. */
export const requestId: Rule = (v) =>
  v instanceof Uint8Array && v.length >= 1 && v.length <= 64
    ? { ok: v }
    : {
        refused: `must be 1 to 64 bytes (a Uint8Array: 16 random bytes, a UUID, the same on every attempt of one write), got ${show(v)}`,
      };
/** One of `values`. */
export function oneOf(values: readonly string[]): Rule {
  return (v) =>
    typeof v === 'string' && values.includes(v)
      ? { ok: v }
      : { refused: `must be one of ${values.map((x) => JSON.stringify(x)).join(', ')}, got ${show(v)}` };
}
/** Anything: an option checked where it is used (a nested object with checks of its own). */
export const any: Rule = (v) => ({ ok: v });

export type Rules = Readonly<Record<string, Rule>>;

/** The option names closest to `name` (a typo's likely meaning). */
function nearest(name: string, names: readonly string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    const d = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      let prev = d[0]!;
      d[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const here = d[j]!;
        d[j] = Math.min(d[j]! + 1, d[j - 1]! + 1, prev + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1));
        prev = here;
      }
    }
    return d[b.length]!;
  };
  const best = names.map((n) => [n, distance(name, n)] as const).sort((x, y) => x[1] - y[1])[0];
  return best !== undefined && best[1] <= Math.max(1, Math.floor(best[0].length / 3)) ? best[0] : undefined;
}

/**
 * `o` checked against `rules`: every option present must be named in `rules` and pass its
 * rule (an option set to undefined counts as unset). Returns the options as the call uses
 * them (a TTL given as "7d" in ms). Throws INVALID_ARGUMENT naming `call`, the option,
 * the value and what is accepted.
 */
export function checkOptions<T extends object>(call: string, o: T | undefined, rules: Rules): Checked<T> {
  if (o === undefined) return {} as Checked<T>;
  if (o === null || typeof o !== 'object' || Array.isArray(o))
    throw refuse(`${call}: options must be an object like { ${Object.keys(rules)[0]}: … }, got ${show(o)}`);
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(o)) {
    const rule = Object.hasOwn(rules, name) ? rules[name] : undefined;
    if (rule === undefined) {
      const guess = nearest(name, Object.keys(rules));
      throw refuse(
        `${call}: unknown option ${JSON.stringify(name)}${guess ? ` (did you mean ${guess}?)` : ''}; ${call} takes ${Object.keys(rules).join(', ')}`,
      );
    }
    if (value === undefined) continue;
    const r = rule(value);
    if ('refused' in r) throw refuse(`${call}: option ${name} ${r.refused}`);
    out[name] = r.ok;
  }
  return out as Checked<T>;
}

/** Options as checkOptions returns them: a TTL in ms. */
export type Checked<T> = { readonly [K in keyof T]: K extends 'ttlMs' ? Exclude<T[K], string> : T[K] };

function refuse(message: string): grpc.ServiceError {
  return serviceError(grpc.status.INVALID_ARGUMENT, message);
}

/** The rules of the options every call takes, and of each kind of call. */
const call = { deadlineMs: deadline, bucket: text } as const;
const write = { ...call, w: quorum, requestId, nodeConfirms: quorum, zoneConfirms: quorum, pw: quorum } as const;

export const RULES = {
  get: { ...call, r: quorum },
  put: { ...write, context: byteString, ttlMs: ttl },
  delete: { ...write, context: byteString },
  putIf: { ...call, context: byteString, requestId },
  deleteIf: { ...call, requestId },
  /** counterUpdate, setUpdate, mapUpdate: a write with no context or TTL. */
  update: write,
  /** setDrop, mapDrop: pages read at r, their removes written at w. */
  drop: { ...call, r: quorum, w: quorum },
  /** counterReset: a read at r, then the reset of what it saw at w. */
  reset: { ...call, r: quorum, w: quorum },
  /** setRead, mapRead: a read of one page. */
  page: { ...call, r: quorum, after: byteString, limit: whole(1, 1000) },
  /** setElements, mapEntries, mapGet: every page. */
  pages: { ...call, r: quorum, limit: whole(1, 1000) },
  putMany: { deadlineMs: deadline, bucket: text, w: quorum, nodeConfirms: quorum, zoneConfirms: quorum, pw: quorum },
  putItem: { key: any, value: any, context: byteString, requestId, ttlMs: ttl },
  client: {
    nodes: any,
    deadlineMs: deadline,
    tokenAware: flag,
    ringRefreshMs: whole(1, 2 ** 31 - 1, ' ms'),
    streaming: flag,
    adaptive: flag,
    hedge: any,
    budget: any,
    stallMs: whole(1, 2 ** 31 - 1, ' ms'),
    tls: any,
    token: text,
    credentials: any,
  },
  deleteBucket: { purge: flag },
  /** A bucket's properties, as createBucket and setBucket take them. */
  bucket: {
    n: whole(1, MAX_N),
    r: quorum,
    w: quorum,
    ttlMs: ttl,
    siblings: oneOf(['siblings', 'lww']),
    type: oneOf(BUCKET_TYPES),
  },
} as const satisfies Record<string, Rules>;
