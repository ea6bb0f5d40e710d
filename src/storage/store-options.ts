/**
 * Store settings, their units and defaults, checked once at open.
 */
import { KvError } from '../kinds/kv-errors.js';

export type Durability = 'default' | 'sync';

/** The subset of a pino logger the store uses. */
export interface Logger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface StoreLimits {
  /** Longest key, bytes (default 4,096; a key has at least 1 byte). */
  readonly maxKeyBytes?: number;
  /** Largest value, bytes (default 1 MiB, as Riak's recommended object size ceiling). */
  readonly maxValueBytes?: number;
  /** A write that would leave more versions than this is refused (default 100: Riak fails past 100). */
  readonly maxSiblings?: number;
  /** Log a warning when a key reaches this many versions (default 25, as Riak). */
  readonly warnSiblings?: number;
  /**
   * Largest record (all of a key's versions), bytes (default 8 MiB, or the value limit
   * plus 64 KiB if that is more): bounds what one replication or handoff message
   * carries, however many siblings pile up.
   */
  readonly maxRecordBytes?: number;
}

export interface HintLimits {
  /** Most bytes of hints held for all targets together (default 64 MiB). */
  readonly maxBytes?: number;
  /** Most hints (keys owed to some node) held (default 1,000,000). */
  readonly maxCount?: number;
}

export interface StoreSettings {
  readonly durability: Durability;
  readonly maxKeyBytes: number;
  readonly maxValueBytes: number;
  readonly maxSiblings: number;
  readonly warnSiblings: number;
  readonly maxRecordBytes: number;
  /** How long a tombstone is kept after the key was deleted here, ms. */
  readonly tombstoneGraceMs: number;
  /**
   * How long a key's history must stay unchanged here (and be confirmed by repair since)
   * before its clock is pruned, ms; also the age past which a hint is dropped rather than
   * delivered, since a hint is the one stale copy that could bring back what a prune
   * forgot (docs/causality.md#bounded-clocks). Default: the tombstone grace.
   */
  readonly clockPruneGraceMs: number;
  readonly hintMaxBytes: number;
  readonly hintMaxCount: number;
}

/** Cassandra's gc_grace_seconds default: long enough for repair to reach every replica. */
export const DEFAULT_TOMBSTONE_GRACE_MS = 10 * 24 * 3600 * 1000;

function int(name: string, v: number | undefined, fallback: number, min: number): number {
  if (v === undefined) return fallback;
  if (!Number.isSafeInteger(v) || v < min)
    throw new KvError('KV_BAD_OPTION', `${name} must be an integer ≥ ${min}, got ${String(v)}`);
  return v;
}

export function settings(o: {
  durability?: Durability | undefined;
  limits?: StoreLimits | undefined;
  hints?: HintLimits | undefined;
  tombstoneGraceMs?: number | undefined;
  clockPruneGraceMs?: number | undefined;
}): StoreSettings {
  const durability = o.durability ?? 'default';
  if (durability !== 'default' && durability !== 'sync')
    throw new KvError('KV_BAD_OPTION', `durability must be 'default' or 'sync', got ${JSON.stringify(durability)}`);
  const l = o.limits ?? {};
  const maxSiblings = int('limits.maxSiblings', l.maxSiblings, 100, 1);
  const maxValueBytes = int('limits.maxValueBytes', l.maxValueBytes, 1 << 20, 0);
  const maxRecordBytes = int(
    'limits.maxRecordBytes',
    l.maxRecordBytes,
    Math.max(8 << 20, maxValueBytes + 64 * 1024),
    64,
  );
  if (maxRecordBytes < maxValueBytes + 1024)
    throw new KvError(
      'KV_BAD_OPTION',
      `limits.maxRecordBytes (${maxRecordBytes}) must exceed limits.maxValueBytes (${maxValueBytes}) by at least 1 KiB: one value and its versions must fit`,
    );
  const tombstoneGraceMs = int('tombstoneGraceMs', o.tombstoneGraceMs, DEFAULT_TOMBSTONE_GRACE_MS, 0);
  return {
    durability,
    maxKeyBytes: int('limits.maxKeyBytes', l.maxKeyBytes, 4096, 1),
    maxValueBytes,
    maxSiblings,
    warnSiblings: int('limits.warnSiblings', l.warnSiblings, Math.min(25, maxSiblings), 1),
    maxRecordBytes,
    tombstoneGraceMs,
    clockPruneGraceMs: int('clockPruneGraceMs', o.clockPruneGraceMs, tombstoneGraceMs, 0),
    hintMaxBytes: int('hints.maxBytes', o.hints?.maxBytes, 64 << 20, 1),
    hintMaxCount: int('hints.maxCount', o.hints?.maxCount, 1_000_000, 1),
  };
}
