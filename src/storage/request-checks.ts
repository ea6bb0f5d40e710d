/**
 * What a write request must be when it reaches the store: a request id of 1 to
 * MAX_REQUEST_ID_BYTES bytes, and the write id made of it (what makes the same request,
 * sent twice, count once). A value's size is checked by kinds/kv-errors.ts checkValueSize.
 *
 * Owns: those checks and their messages, and the write id. Must not: do I/O.
 */
import { createHash } from 'node:crypto';
import { KvError } from '../kinds/kv-errors.js';
import { WRITE_ID_BYTES, type WriteId } from '../kinds/dots.js';

/** The longest request id a write may carry. */
export const MAX_REQUEST_ID_BYTES = 64;

/**
 * A write's id: the first 8 bytes of MD5 over its request id, kind, context and value.
 * Only the same request repeated has the same id, so a client that reuses a request id
 * for another write gets a new version, never a write taken for a duplicate.
 */
export function writeIdOf(requestId: Uint8Array, value: Uint8Array | null, context: Uint8Array): WriteId {
  const h = createHash('md5');
  const len = Buffer.allocUnsafe(4);
  len.writeUInt32BE(requestId.length);
  h.update(len).update(requestId);
  len.writeUInt32BE(context.length);
  h.update(len).update(context);
  h.update(value === null ? TOMBSTONE_MARK : VALUE_MARK);
  if (value !== null) h.update(value);
  return h.digest().toString('latin1', 0, WRITE_ID_BYTES);
}

/** A request id as given, refused (KV_BAD_REQUEST_ID) unless 1 to MAX_REQUEST_ID_BYTES bytes. */
export function checkRequestId(requestId: Uint8Array): Uint8Array {
  if (!(requestId instanceof Uint8Array) || requestId.length === 0 || requestId.length > MAX_REQUEST_ID_BYTES)
    throw new KvError(
      'KV_BAD_REQUEST_ID',
      `a request id must be 1 to ${MAX_REQUEST_ID_BYTES} bytes, got ${requestId instanceof Uint8Array ? `${requestId.length} bytes` : typeof requestId}; use 16 random bytes (a UUID), the same on every attempt of one request`,
    );
  return requestId;
}

const TOMBSTONE_MARK = Buffer.from([0]);
const VALUE_MARK = Buffer.from([1]);
