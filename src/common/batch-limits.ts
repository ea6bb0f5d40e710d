/**
 * The limits of one batch (GetMany, PutMany), and what is said when a batch is past them:
 * the coordinator refuses such a batch, and the client refuses it before it splits the
 * batch by node (each node's share would pass), with the same words.
 *
 * Owns: the batch limits and their messages. Must not: import anything, or raise an
 * error of either side's kind (each wraps the message in its own).
 */

/** Most keys (GetMany) or items (PutMany) in one batch. */
export const MAX_BATCH_KEYS = 100;
/** Most bytes of values in one PutMany, all items together. */
export const MAX_BATCH_VALUE_BYTES = 4 * 1024 * 1024;

/** What is wrong with a batch of `count` keys or items, or undefined when nothing is. */
export function batchCountProblem(count: number, what: 'key' | 'item'): string | undefined {
  if (count === 0) return `a batch needs at least one ${what}`;
  if (count > MAX_BATCH_KEYS)
    return `a batch of ${count} ${what}s is over the limit of ${MAX_BATCH_KEYS}; split it into batches of ${MAX_BATCH_KEYS}`;
  return undefined;
}

/** What is wrong with a PutMany whose values add up to `bytes`, or undefined when nothing is. */
export function batchBytesProblem(bytes: number): string | undefined {
  return bytes > MAX_BATCH_VALUE_BYTES
    ? `the items' values add up to ${bytes} bytes, over the limit of ${MAX_BATCH_VALUE_BYTES} bytes per batch; send them in several batches`
    : undefined;
}
