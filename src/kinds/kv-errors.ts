/**
 * Errors raised by the kinds' rules and the node-local store. Each carries a stable `code` so that the
 * server maps it to a gRPC status in exactly one place (docs/architecture.md);
 * messages say what was wrong and what to do. Not-found is a value (an empty read),
 * never an error.
 */

export type KvErrorCode =
  | 'KV_BAD_KEY' // a key that is not a string or bytes
  | 'KV_BAD_VALUE' // a value that is not bytes
  | 'KV_KEY_EMPTY' // a key must have at least one byte
  | 'KV_KEY_TOO_LARGE' // key longer than limits.maxKeyBytes
  | 'KV_VALUE_TOO_LARGE' // value longer than limits.maxValueBytes
  | 'KV_BAD_CONTEXT' // a causal context that is malformed or belongs to another key
  | 'KV_BAD_REQUEST_ID' // a request id that is empty or longer than MAX_REQUEST_ID_BYTES
  | 'KV_BAD_RECORD' // an incoming record (merge, hint) that does not decode
  | 'KV_CORRUPT_RECORD' // bytes on disk that fail their checksum or do not decode
  | 'KV_TOO_MANY_SIBLINGS' // the write would leave more than limits.maxSiblings versions
  | 'KV_RECORD_TOO_LARGE' // the write would leave more than limits.maxRecordBytes of versions
  | 'KV_HINTS_FULL' // the hint store is at its byte or count cap
  | 'KV_BAD_RANGE' // a token range whose bounds are not tokens
  | 'KV_BAD_OPTION' // an option out of range
  | 'KV_BAD_AMOUNT' // a counter increment that is zero or not a safe integer
  | 'KV_COUNTER_OVERFLOW' // a counter increment that would take a replica's sum past 2^53 - 1
  | 'KV_COUNTER_GAP' // a counter's delta that does not follow what this replica holds of its issuer: send the full state
  | 'KV_WRONG_TYPE' // a counter's record (format 4) met by a versions operation, or the reverse
  | 'KV_CLOSED' // the store is closed (or closing)
  | 'KV_DISK_FULL' // free space below the floor, or a write failed for want of it: nothing was written
  | 'KV_IO'; // the engine failed underneath (permissions, a damaged file, ...)

export class KvError extends Error {
  readonly code: KvErrorCode;

  constructor(code: KvErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KvError';
    this.code = code;
  }
}

/** A key for messages: printable ASCII as is, anything else as hex. */
export function showKey(key: Uint8Array): string {
  const printable = key.length <= 200 && key.every((b) => b >= 0x20 && b < 0x7f);
  return printable ? JSON.stringify(Buffer.from(key).toString('latin1')) : `0x${Buffer.from(key).toString('hex')}`;
}

/** Refuses (KV_VALUE_TOO_LARGE) a value of `size` bytes over `limit`; `what` names it in the message. */
export function checkValueSize(size: number, limit: number, what = `value of ${size} bytes`): void {
  if (size > limit)
    throw new KvError('KV_VALUE_TOO_LARGE', `${what} is over the limit of ${limit} bytes; split it into several keys`);
}
