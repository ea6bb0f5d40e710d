/**
 * A call's shapes between the client's methods and the wire: the request as the client
 * makes it (before its id and deadline), the answer a call of each op expects, the key
 * the ring routes, a batch's checks before sending and its per-key results, and the
 * errors the client gives of its own (a request too large, a deadline passed before any
 * node was tried, a compare-and-set that certainly did not apply).
 *
 * Owns: those shapes and checks. Must not: call a node or pick one.
 */
import * as grpc from '@grpc/grpc-js';
import { NODE_MAX_MESSAGE_BYTES } from '../transport/protos.js';
import type { Confirms, KvCall, KvReply } from '../transport/kv-codec.js';
import { CAS_OUTCOME } from '../transport/status.js';
import { bucketName, storedKey } from '../buckets/index.js';
import { type KeyResult, type PutOptions } from './client-types.js';
import { batchCountProblem } from '../common/batch-limits.js';
import { serviceError } from './wire-values.js';

/**
 * Whether a failed putIf or deleteIf certainly did not apply: the node said so (a refusal
 * before it ran, or a round no replica could have accepted). Any other error leaves the
 * outcome unknown (a timeout, a node lost mid-call): get the key to learn it.
 */
export function casNotApplied(e: unknown): boolean {
  const m = (e as { metadata?: unknown })?.metadata;
  return m instanceof grpc.Metadata && m.get(CAS_OUTCOME)[0] === 'not-applied';
}

/** The bytes the ring hashes for `key` of `bucket`: its stored key, or the key itself when the bucket name is bad (the node will say so). */
export function routingKey(bucket: string, key: Buffer): Buffer {
  try {
    return storedKey(bucketName(bucket), key);
  } catch {
    return key;
  }
}

/** A write's confirmation rules as the wire carries them (0: no rule). */
export function confirmsOf(o: PutOptions): Confirms {
  return { nodeConfirms: o.nodeConfirms ?? 0, zoneConfirms: o.zoneConfirms ?? 0, pw: o.pw ?? 0 };
}

/** A counter's value as a node sends it (decimal); a node's bug otherwise (INTERNAL). */
export function decimal(text: string): bigint {
  if (!/^-?\d{1,20}$/.test(text))
    throw serviceError(
      grpc.status.INTERNAL,
      `the node answered a counter value that is not a whole number: ${JSON.stringify(text.slice(0, 40))}`,
    );
  return BigInt(text);
}

/** The DEADLINE_EXCEEDED details of a call whose deadline passed before it reached any node. */
export const NO_NODE_TRIED = 'deadline passed before any node was tried';

/** The most bytes one request to a node may carry (its message limit); a node's value limit is lower, and the node checks it. */
export const MAX_REQUEST_BYTES = NODE_MAX_MESSAGE_BYTES;

/**
 * INVALID_ARGUMENT for `what` (a request, a value) of `size` bytes, more than one request
 * to a node may carry: refused before sending rather than by gRPC's bare "message larger
 * than max".
 */
export function requestTooLarge(size: number, what = `a request of ${size} bytes`): grpc.ServiceError {
  const details = `${what} is over the ${MAX_REQUEST_BYTES} bytes one request to a node may carry; split it into several keys`;
  return Object.assign(new Error(`${grpc.status.INVALID_ARGUMENT} INVALID_ARGUMENT: ${details}`), {
    code: grpc.status.INVALID_ARGUMENT,
    details,
    metadata: new grpc.Metadata(),
  });
}

/** An empty context, after, or value. */
export const EMPTY = Buffer.alloc(0);

/**
 * A batch's entries as `convert` makes them, or INVALID_ARGUMENT when there are none or more than MAX_BATCH_KEYS:
 * checked before the batch is split by node (each node's share would pass), in a node's words.
 */
export function checkBatch<X, Y>(list: readonly X[], what: 'key' | 'item', convert: (x: X) => Y): Y[] {
  if (!Array.isArray(list)) throw new TypeError(`a batch must be an array, got ${typeof list}`);
  const problem = batchCountProblem(list.length, what);
  if (problem !== undefined) throw serviceError(grpc.status.INVALID_ARGUMENT, problem);
  return list.map(convert);
}

/** A node's per-key results as KeyResults, one per key asked, in order; `value` takes a result's value, undefined when it holds none. */
export function results<R extends { readonly error?: { readonly code: number; readonly details: string } | null }, T>(
  keys: readonly Buffer[],
  got: readonly R[],
  value: (r: R) => T | undefined | null,
): KeyResult<T>[] {
  if (got.length !== keys.length)
    throw serviceError(
      grpc.status.INTERNAL,
      `the node answered a batch of ${keys.length} keys with ${got.length} results`,
    );
  return got.map((r, i) => {
    const key = keys[i]!;
    const v = value(r);
    if (v !== undefined && v !== null) return { key, ok: true, value: v };
    if (r.error) return { key, ok: false, error: serviceError(r.error.code, r.error.details) };
    return {
      key,
      ok: false,
      error: serviceError(
        grpc.status.INTERNAL,
        `the node's result for key ${i + 1} of the batch holds neither a value nor an error`,
      ),
    };
  });
}

/** A call as the client makes it, before it has an id and a deadline. */
export type Request = KvCall extends infer T ? (T extends unknown ? Omit<T, 'id' | 'deadline'> : never) : never;

/** A node's answer to a call, on the stream or unary: the reply of the call's op. */
export type Answer = Exclude<KvReply, { op: 'error' }>;

/** `a` as the answer to a call of `op`; another kind (a node's bug) is INTERNAL. */
export function answerOf<O extends Answer['op']>(a: KvReply, op: O): Extract<Answer, { op: O }> {
  const is = (x: KvReply): x is Extract<Answer, { op: O }> => x.op === op;
  if (!is(a)) throw serviceError(grpc.status.INTERNAL, `the node answered a ${op} with a ${a.op} reply`);
  return a;
}
