/**
 * Batched range reads: entries of one or more key spans, in order, cut into batches of
 * at most `count` entries and about `bytes` bytes (a batch always holds at least one
 * entry, so one record larger than `bytes` still moves). Reads ahead with LevelDB's
 * `nextv`, which costs one native call per chunk instead of one per entry.
 *
 * Must not: decode records; callers decide what an entry means.
 */
import type { Engine } from './engine.js';
import { KvError } from '../kinds/kv-errors.js';
import type { Span } from './keys.js';

export interface BatchLimits {
  /** Most entries per batch (default 256). */
  readonly batchCount?: number;
  /** Most key + value bytes per batch (default 1 MiB); a single larger entry is its own batch. */
  readonly batchBytes?: number;
}

const READ_AHEAD = 1000;

function limit(name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isSafeInteger(v) || v < 1)
    throw new KvError('KV_BAD_OPTION', `${name} must be a positive integer, got ${String(v)}`);
  return v;
}

export async function* batches(
  engine: Engine,
  spans: readonly Span[],
  limits: BatchLimits = {},
): AsyncGenerator<Array<[Buffer, Buffer]>> {
  const maxCount = limit('batchCount', limits.batchCount, 256);
  const maxBytes = limit('batchBytes', limits.batchBytes, 1 << 20);
  let batch: Array<[Buffer, Buffer]> = [],
    bytes = 0;
  for (const span of spans) {
    const it = engine.iterator(span.gte, span.lt);
    try {
      for (;;) {
        const chunk = await it.nextv(Math.min(READ_AHEAD, Math.max(maxCount, 64)));
        if (chunk.length === 0) break;
        for (const entry of chunk) {
          const size = entry[0].length + entry[1].length;
          if (batch.length > 0 && (batch.length >= maxCount || bytes + size > maxBytes)) {
            yield batch;
            ((batch = []), (bytes = 0));
          }
          batch.push(entry);
          bytes += size;
        }
      }
    } finally {
      await it.close();
    }
  }
  if (batch.length > 0) yield batch;
}
