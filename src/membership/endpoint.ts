/**
 * What gossip carries about one node: its state, versioned by (generation, version).
 *
 * A node's state is a heartbeat plus named fields (address, zone, tokens, status, ...),
 * each stamped with a version drawn from one counter the node alone advances, so a
 * single number — the largest version — summarises how much of the state a peer has
 * seen (Scuttlebutt; Cassandra's EndpointState). A restart starts a new generation,
 * which supersedes everything of the old one.
 *
 * Owns: the state type, its immutable updates and merge, and the check of every field
 * value that arrives from the network. Must not: choose peers, keep time or do I/O.
 */

import { tokenHex } from '../ring/index.js';

export type NodeStatus = 'joining' | 'normal' | 'leaving' | 'left' | 'removed';
export const NODE_STATUSES: readonly NodeStatus[] = ['joining', 'normal', 'leaving', 'left', 'removed'];

export interface Versioned {
  readonly value: string;
  readonly version: number;
}

/** One node's state. Immutable: every change makes a new object, so tables can share them. */
export interface EndpointState {
  readonly id: string;
  /** Starts anew at each restart (wall-clock seconds, always larger than the last one). */
  readonly generation: number;
  /** Version of the latest heartbeat. */
  readonly heartbeat: number;
  readonly fields: ReadonlyMap<string, Versioned>;
  /** Largest version in the state: what a digest reports. */
  readonly version: number;
}

/**
 * (id, generation, version): what a node has seen of another's state. In delta gossip
 * (gossiper.ts) `version` is the field version (fieldVersionOf) and the digest carries
 * the heartbeat apart.
 */
export interface Digest {
  readonly id: string;
  readonly generation: number;
  readonly version: number;
  readonly heartbeat?: number;
}

/** Part of a node's state: the heartbeat and the fields newer than what the receiver has. */
export interface Delta {
  readonly id: string;
  readonly generation: number;
  readonly heartbeat: number;
  readonly fields: readonly { readonly name: string; readonly value: string; readonly version: number }[];
  /**
   * The version the delta starts after (absent or 0: the whole state): `fields` are all
   * the fields newer than it, so only a receiver that holds every field up to it may take
   * them (gossiper.ts #apply).
   */
  readonly since?: number;
}

/** Bounds on what one state may hold, so that a peer cannot make us keep without limit. */
export const MAX_FIELDS = 32;
export const MAX_FIELD_BYTES = 64 * 1024;
export const MAX_ID_LENGTH = 128;

const ADDRESS = /^[A-Za-z0-9.\-_]+:\d{1,5}$|^\[[0-9A-Fa-f:.]+\]:\d{1,5}$/;

/** Field names the membership layer reads, with the check each value must pass. */
const CHECKS = new Map<string, (v: string) => string | undefined>(
  Object.entries({
    addr: (v: string) => (isAddress(v) ? undefined : 'must be host:port'),
    zone: (v: string) => (v.length <= 256 ? undefined : 'must be at most 256 characters'),
    rack: (v: string) => (v.length <= 256 ? undefined : 'must be at most 256 characters'),
    weight: (v: string) => {
      const w = Number(v);
      return Number.isFinite(w) && w > 0 && w <= 1000 ? undefined : 'must be a number in (0, 1000]';
    },
    status: (v: string) =>
      (NODE_STATUSES as readonly string[]).includes(v) ? undefined : `must be one of ${NODE_STATUSES.join(', ')}`,
    // '' is a joiner withdrawing its claim (ring-view.ts).
    tokens: (v: string) => (v === '' || parseTokens(v) ? undefined : 'must be comma-separated 16-digit hex tokens'),
    load: (v: string) => (/^\d{1,16}$/.test(v) ? undefined : 'must be a byte count'),
    hints: (v: string) => (/^\d{1,16}$/.test(v) ? undefined : 'must be a count'),
    replicas: (v: string) => (/^([1-9]|1[0-6])$/.test(v) ? undefined : 'must be a whole number from 1 to 16'),
    empty: (v: string) => (v === 'true' || v === 'false' ? undefined : "must be 'true' or 'false'"),
    // Topology changes (ring-view.ts): whom a replacer replaces, whom a member is removing
    // ('' once done), the ids it removed, and the hash of the view a node writes by.
    replaces: (v: string) => (v === '' || isId(v) ? undefined : 'must be a node id'),
    removing: (v: string) => (v === '' || isId(v) ? undefined : 'must be a node id'),
    removed: (v: string) => (v === '' || v.split(',').every(isId) ? undefined : 'must be comma-separated node ids'),
    // Who inherits each token of a node this one decommissions or removes (ring-view.ts).
    heirs: (v: string) =>
      v.length <= 1 << 20 && parseHeirs(v) !== undefined ? undefined : 'must be NODE=token:heir,...;NODE=...',
    topo: (v: string) => (/^[0-9a-f]{16}$/.test(v) ? undefined : 'must be 16 hex digits'),
    // Ranges done of the movement a node streams or drives ('' when none), for status.
    keys: (v: string) => (/^\d{1,16}$/.test(v) ? undefined : 'must be a count'),
    standby: (v: string) => (v === 'true' || v === 'false' ? undefined : "must be 'true' or 'false'"),
    // A node draining before it exits (docs/operations.md#drain): peers hold it down at once,
    // until its next generation.
    stopping: (v: string) => (v === 'true' || v === 'false' ? undefined : "must be 'true' or 'false'"),
    // The nodes this one holds hints for: a restarted node waits until no peer names it.
    hinted: (v: string) => (v === '' || v.split(',').every(isId) ? undefined : 'must be comma-separated node ids'),
    progress: (v: string) => (v === '' || /^\d{1,9}\/\d{1,9}$/.test(v) ? undefined : 'must be done/total'),
    // The gossip a node speaks beyond full Scuttlebutt (gossiper.ts): 'delta'.
    gossip: (v: string) => (/^[a-z0-9,]{0,64}$/.test(v) ? undefined : 'must be comma-separated lower-case names'),
  }),
);

function isId(v: string): boolean {
  return v.length > 0 && v.length <= MAX_ID_LENGTH && !v.includes(',');
}

export function isAddress(v: string): boolean {
  if (!ADDRESS.test(v)) return false;
  const port = Number(v.slice(v.lastIndexOf(':') + 1));
  return port >= 1 && port <= 65535;
}

/** Tokens as gossip carries them: 16 hex digits each, comma-separated, ascending. */
export function formatTokens(tokens: readonly bigint[]): string {
  return tokens.map(tokenHex).join(',');
}

/** The tokens of a `tokens` field, or undefined if it is malformed. */
export function parseTokens(v: string): bigint[] | undefined {
  // Sixteen hex digits are at most 2^64 - 1: every token that matches is in range.
  if (!TOKENS_FIELD.test(v)) return undefined;
  return v.split(',').map((p) => BigInt(`0x${p}`));
}

const TOKENS_FIELD = /^[0-9a-f]{16}(?:,[0-9a-f]{16})*$/;

/** Why a delta from the network is unacceptable, or undefined when it is fine. */
export function checkDelta(d: Delta): string | undefined {
  if (d === null || typeof d !== 'object') return 'a state must be an object';
  if (typeof d.id !== 'string' || d.id.length === 0 || d.id.length > MAX_ID_LENGTH)
    return 'node id must be 1-128 characters';
  if (!isCount(d.generation) || !isCount(d.heartbeat)) return `${d.id}: generation and heartbeat must be whole numbers`;
  if (d.since !== undefined && !isCount(d.since)) return `${d.id}: since must be a whole number`;
  if (!Array.isArray(d.fields) || d.fields.length > MAX_FIELDS) return `${d.id}: at most ${MAX_FIELDS} fields`;
  for (const f of d.fields) {
    if (f === null || typeof f !== 'object') return `${d.id}: a field must be an object`;
    if (typeof f.name !== 'string' || f.name.length === 0 || f.name.length > 64) return `${d.id}: bad field name`;
    if (typeof f.value !== 'string' || f.value.length > MAX_FIELD_BYTES) return `${d.id}.${f.name}: value too large`;
    if (!isCount(f.version)) return `${d.id}.${f.name}: version must be a whole number`;
    // A Map, not an object: a field named "__proto__" or "constructor" is just a name.
    const why = CHECKS.get(f.name)?.(f.value);
    if (why) return `${d.id}.${f.name} ${why}, got ${JSON.stringify(f.value.slice(0, 80))}`;
  }
  return undefined;
}

export function checkDigest(d: Digest): string | undefined {
  if (d === null || typeof d !== 'object') return 'a digest must be an object';
  if (typeof d.id !== 'string' || d.id.length === 0 || d.id.length > MAX_ID_LENGTH)
    return 'node id must be 1-128 characters';
  if (!isCount(d.generation) || !isCount(d.version)) return `${d.id}: generation and version must be whole numbers`;
  if (d.heartbeat !== undefined && !isCount(d.heartbeat)) return `${d.id}: heartbeat must be a whole number`;
  return undefined;
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** A fresh state for a node starting generation `generation`, fields at versions 1..k. */
export function initialState(id: string, generation: number, fields: Readonly<Record<string, string>>): EndpointState {
  let version = 0;
  const map = new Map<string, Versioned>();
  for (const [name, value] of Object.entries(fields)) map.set(name, { value, version: ++version });
  return { id, generation, heartbeat: ++version, fields: map, version };
}

/** The state with its heartbeat advanced (the owner does this every round). */
export function beat(s: EndpointState): EndpointState {
  return { ...s, heartbeat: s.version + 1, version: s.version + 1 };
}

/** The state with field `name` set (a no-op when the value is the same). */
export function setField(s: EndpointState, name: string, value: string): EndpointState {
  if (s.fields.get(name)?.value === value) return s;
  const fields = new Map(s.fields);
  fields.set(name, { value, version: s.version + 1 });
  return { ...s, fields, version: s.version + 1 };
}

/** Field versions by fields map: maps are shared by every state a heartbeat makes of one. */
const FIELD_VERSIONS = new WeakMap<ReadonlyMap<string, Versioned>, number>();

/**
 * The largest version among the fields of `s` (0 if none): what changes only when a
 * field does, not on a heartbeat. Delta gossip compares states on it.
 */
export function fieldVersionOf(s: EndpointState): number {
  let v = FIELD_VERSIONS.get(s.fields);
  if (v === undefined) {
    v = 0;
    for (const f of s.fields.values()) if (f.version > v) v = f.version;
    FIELD_VERSIONS.set(s.fields, v);
  }
  return v;
}

/** The state with a newer heartbeat heard from a peer (`heartbeat` > s.heartbeat). */
export function withHeartbeat(s: EndpointState, heartbeat: number): EndpointState {
  return { id: s.id, generation: s.generation, heartbeat, fields: s.fields, version: Math.max(s.version, heartbeat) };
}

export function digestOf(s: EndpointState): Digest {
  return { id: s.id, generation: s.generation, version: s.version };
}

/** What of `s` a peer that has seen `seen` versions of this generation lacks (seen 0: all), `since` seen. */
export function deltaOf(s: EndpointState, seen: number): Delta {
  const fields: { name: string; value: string; version: number }[] = [];
  for (const [name, f] of s.fields) if (f.version > seen) fields.push({ name, value: f.value, version: f.version });
  return seen > 0
    ? { id: s.id, generation: s.generation, heartbeat: s.heartbeat, fields, since: seen }
    : { id: s.id, generation: s.generation, heartbeat: s.heartbeat, fields };
}

/**
 * Merge a (checked) delta into what we hold. A newer generation replaces the state; the
 * same generation takes each newer field and a newer heartbeat; an older generation is
 * ignored. Returns `local` itself when nothing is newer. Idempotent and order-free per field.
 */
export function mergeDelta(local: EndpointState | undefined, d: Delta): EndpointState {
  if (local !== undefined && d.generation < local.generation) return local;
  const fresh = local === undefined || d.generation > local.generation;
  const base: EndpointState = fresh
    ? { id: d.id, generation: d.generation, heartbeat: 0, fields: new Map(), version: 0 }
    : local;
  let fields: Map<string, Versioned> | undefined;
  let version = base.version;
  for (const f of d.fields) {
    const have = (fields ?? base.fields).get(f.name);
    if (have !== undefined && have.version >= f.version) continue;
    fields ??= new Map(base.fields);
    fields.set(f.name, { value: f.value, version: f.version });
    if (f.version > version) version = f.version;
  }
  const heartbeat = Math.max(base.heartbeat, d.heartbeat);
  if (heartbeat > version) version = heartbeat;
  if (!fresh && fields === undefined && heartbeat === base.heartbeat) return local!;
  return { id: d.id, generation: d.generation, heartbeat, fields: fields ?? base.fields, version };
}

export function field(s: EndpointState, name: string): string | undefined {
  return s.fields.get(name)?.value;
}

export function statusOf(s: EndpointState): NodeStatus | undefined {
  return field(s, 'status') as NodeStatus | undefined;
}

/** The heirs a `heirs` field names: leaver → (token → heir). `S=token:heir,...;S2=...`. */
export function parseHeirs(v: string): Map<string, Map<bigint, string>> | undefined {
  const out = new Map<string, Map<bigint, string>>();
  if (v === '') return out;
  for (const entry of v.split(';')) {
    const eq = entry.indexOf('=');
    const subject = entry.slice(0, eq);
    if (eq <= 0 || out.has(subject)) return undefined;
    const map = new Map<bigint, string>();
    for (const pair of entry.slice(eq + 1).split(',')) {
      const m = /^([0-9a-f]{16}):(.+)$/.exec(pair);
      if (m === null || m[2]!.includes('=') || m[2]!.includes(';')) return undefined;
      map.set(BigInt(`0x${m[1]}`), m[2]!);
    }
    out.set(subject, map);
  }
  return out;
}

export function formatHeirs(entries: ReadonlyMap<string, ReadonlyMap<bigint, string>>): string {
  return [...entries]
    .map(([subject, map]) => `${subject}=${[...map].map(([t, h]) => `${tokenHex(t)}:${h}`).join(',')}`)
    .join(';');
}
