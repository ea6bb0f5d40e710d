/**
 * The client's checks of what a caller passes, shared by its calls (kv.ts, maps.ts): bytes
 * from strings or Uint8Arrays, safe integer amounts, and the ServiceError the client makes
 * for a refusal of its own.
 *
 * Owns: those checks and their messages. Must not: call a node.
 */
import * as grpc from '@grpc/grpc-js';

/** `x` as bytes (a string is its UTF-8); a TypeError naming `what` for anything else. */
export function bytes(x: string | Uint8Array, what: string): Buffer {
  if (typeof x === 'string') return Buffer.from(x, 'utf8');
  if (x instanceof Uint8Array) return Buffer.from(x.buffer, x.byteOffset, x.byteLength);
  throw new TypeError(`${what} must be a string or a Uint8Array, got ${typeof x}`);
}

/** A ServiceError as grpc-js makes them, for failures the stream reports itself. */
export function serviceError(code: grpc.status, details: string, metadata = new grpc.Metadata()): grpc.ServiceError {
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata });
}

/** A counter's amount as a safe integer, or INVALID_ARGUMENT. */
export function amountOf(amount: number | bigint): number {
  const n = typeof amount === 'bigint' ? Number(amount) : amount;
  if (typeof amount === 'bigint' ? BigInt(n) !== amount || !Number.isSafeInteger(n) : !Number.isSafeInteger(n))
    throw serviceError(
      grpc.status.INVALID_ARGUMENT,
      `a counter's amount must be a whole number within ±${Number.MAX_SAFE_INTEGER}, got ${String(amount)}`,
    );
  return n;
}
