/**
 * The data types' calls behind the public Client's methods (kv.ts): counters, sets and
 * maps, each checked (its options, its operations) and sent as its unary call on the
 * path every call of a key takes (TypedCaller: the key's replicas first, failover,
 * hedges and moves, one deadline). A write's request id is in the request, so every
 * attempt carries the same one.
 *
 * Owns: each data-type call's request and the answer it gives. Must not: choose nodes or
 * send attempts (the TypedCaller does), or page through a whole set or map (Client does,
 * with its own setRead and mapRead).
 */
import * as grpc from '@grpc/grpc-js';
import { callUnary, type ServiceClient } from '../transport/protos.js';
import type { KvReply } from '../transport/kv-codec.js';
import {
  MAX_SET_OPS,
  type CallOptions,
  type CounterResetOptions,
  type CounterUpdateOptions,
  type GetOptions,
  type SetOp,
  type SetPage,
  type SetReadOptions,
  type SetUpdateOptions,
} from './client-types.js';
import { EMPTY, answerOf, confirmsOf, decimal, type Request } from './kv-requests.js';
import { entryOf, wireMapOps, type MapOp, type MapPage } from './maps.js';
import { RULES, checkOptions } from './options.js';
import { amountOf, bytes, serviceError } from './wire-values.js';

/** What a data-type call needs of its client: a request id, and a call of a key with its attempts. */
export interface TypedCaller {
  /** The deadline of a call that sets none, ms. */
  readonly deadlineMs: number;
  /** What every call carries: the client's token, if any. */
  readonly metadata: grpc.Metadata | undefined;
  /** A write's request id: the caller's, else a new one. */
  requestId(o: { readonly requestId?: Uint8Array }): Buffer;
  /** A call that has a streamed form (a counter update): on the stream, or its unary call. */
  call(req: Request, o: CallOptions): Promise<KvReply>;
  /** A unary call of `key` made by `send`, with one deadline, to each attempt's node. */
  typedCall<T>(
    bucket: string,
    key: Buffer,
    kind: 'read' | 'write',
    o: CallOptions,
    send: (c: ServiceClient<'ringkv.v1.KeyValue'>, options: grpc.CallOptions) => Promise<T>,
  ): Promise<T>;
}

/** A page read's request (SetRead, MapRead): after the page before, at most `limit`. */
function pageRequest(bucket: string, key: Buffer, o: SetReadOptions) {
  return {
    bucket,
    key,
    after: o.after !== undefined ? bytes(o.after, 'after') : EMPTY,
    limit: o.limit ?? 0,
    r: o.r ?? 0,
  };
}

/** An update's write fields (SetUpdate, MapUpdate): its request id, W and confirmations. */
function writeFields(caller: TypedCaller, o: SetUpdateOptions) {
  return { requestId: caller.requestId(o), w: o.w ?? 0, ...confirmsOf(o) };
}

/** Client.counterUpdate: the update, with its request id, sent as a put is; the value answered. */
export async function counterUpdate(
  caller: TypedCaller,
  key: string | Uint8Array,
  amount: number | bigint,
  options?: CounterUpdateOptions,
): Promise<{ value: bigint }> {
  const o = checkOptions('counterUpdate', options, RULES.update);
  const n = amountOf(amount);
  const k = bytes(key, 'key');
  const bucket = o.bucket ?? '';
  const req = {
    op: 'counterUpdate' as const,
    bucket,
    key: k,
    amount: BigInt(n),
    requestId: caller.requestId(o),
    w: o.w ?? 0,
    ...confirmsOf(o),
  };
  return { value: decimal(answerOf(await caller.call(req, o), 'counterUpdate').value) };
}

/** Client.counterGet: a CounterGet at R. */
export async function counterGet(
  caller: TypedCaller,
  key: string | Uint8Array,
  options?: GetOptions,
): Promise<{ value: bigint; found: boolean }> {
  const o = checkOptions('counterGet', options, RULES.get);
  const k = bytes(key, 'key');
  const bucket = o.bucket ?? '';
  const r = await caller.typedCall(bucket, k, 'read', o, (c, options) =>
    callUnary(c, 'CounterGet', { bucket, key: k, r: o.r ?? 0 }, options, caller.metadata),
  );
  return { value: decimal(r.value), found: r.found };
}

/** Client.counterReset: a CounterGet with its context, then a CounterReset of what it saw, in one deadline. */
export async function counterReset(
  caller: TypedCaller,
  key: string | Uint8Array,
  options?: CounterResetOptions,
): Promise<{ value: bigint; found: boolean }> {
  const o = checkOptions('counterReset', options, RULES.reset);
  const k = bytes(key, 'key');
  const bucket = o.bucket ?? '';
  const deadlineMs = o.deadlineMs ?? caller.deadlineMs;
  const started = Date.now();
  const seen = await caller.typedCall(bucket, k, 'read', { bucket, deadlineMs }, (c, options) =>
    callUnary(c, 'CounterGet', { bucket, key: k, r: o.r ?? 0, withContext: true }, options, caller.metadata),
  );
  if (!seen.found) return { value: 0n, found: false };
  const left = Math.max(1, deadlineMs - (Date.now() - started));
  const r = await caller.typedCall(bucket, k, 'write', { bucket, deadlineMs: left }, (c, options) =>
    callUnary(c, 'CounterReset', { bucket, key: k, w: o.w ?? 0, context: seen.context }, options, caller.metadata),
  );
  return { value: decimal(r.value), found: r.found };
}

/** Client.setUpdate: the ops checked and sent as one SetUpdate. */
export async function setUpdate(
  caller: TypedCaller,
  key: string | Uint8Array,
  ops: readonly SetOp[],
  options?: SetUpdateOptions,
): Promise<void> {
  const o = checkOptions('setUpdate', options, RULES.update);
  if (!Array.isArray(ops) || ops.length === 0 || ops.length > MAX_SET_OPS)
    throw serviceError(
      grpc.status.INVALID_ARGUMENT,
      `a set update carries 1 to ${MAX_SET_OPS} operations, got ${Array.isArray(ops) ? ops.length : typeof ops}; split it into several updates`,
    );
  const wire = ops.map((x) => {
    if (x?.op === 'add') return { add: bytes(x.element, 'element') };
    if (x?.op === 'remove')
      return { remove: { element: bytes(x.element, 'element'), context: bytes(x.context, 'context') } };
    throw new TypeError(
      `a set operation is { op: 'add', element } or { op: 'remove', element, context }, got ${JSON.stringify(x)}`,
    );
  });
  const k = bytes(key, 'key');
  const bucket = o.bucket ?? '';
  const req = { bucket, key: k, ops: wire, ...writeFields(caller, o) };
  await caller.typedCall(bucket, k, 'write', o, (c, options) =>
    callUnary(c, 'SetUpdate', req, options, caller.metadata),
  );
}

/** Client.setRead: one SetRead page. */
export async function setRead(
  caller: TypedCaller,
  key: string | Uint8Array,
  options?: SetReadOptions,
): Promise<SetPage> {
  const o = checkOptions('setRead', options, RULES.page);
  const k = bytes(key, 'key');
  const bucket = o.bucket ?? '';
  const req = pageRequest(bucket, k, o);
  const r = await caller.typedCall(bucket, k, 'read', o, (c, options) =>
    callUnary(c, 'SetRead', req, options, caller.metadata),
  );
  return {
    elements: r.elements.map((e) => ({ element: e.element, context: e.context })),
    next: r.next.length > 0 ? r.next : undefined,
  };
}

/** Client.setContains: a SetContains of one element. */
export async function setContains(
  caller: TypedCaller,
  key: string | Uint8Array,
  element: string | Uint8Array,
  options?: GetOptions,
): Promise<{ present: boolean; context: Buffer }> {
  const o = checkOptions('setContains', options, RULES.get);
  const k = bytes(key, 'key');
  const bucket = o.bucket ?? '';
  const req = { bucket, key: k, element: bytes(element, 'element'), r: o.r ?? 0 };
  const r = await caller.typedCall(bucket, k, 'read', o, (c, options) =>
    callUnary(c, 'SetContains', req, options, caller.metadata),
  );
  return { present: r.present, context: r.context };
}

/** Client.mapUpdate: the ops checked (maps.ts) and sent as one MapUpdate. */
export async function mapUpdate(
  caller: TypedCaller,
  key: string | Uint8Array,
  ops: readonly MapOp[],
  options?: SetUpdateOptions,
): Promise<void> {
  const o = checkOptions('mapUpdate', options, RULES.update);
  const wire = wireMapOps(ops);
  const k = bytes(key, 'key');
  const bucket = o.bucket ?? '';
  const req = { bucket, key: k, ops: wire, ...writeFields(caller, o) };
  await caller.typedCall(bucket, k, 'write', o, (c, options) =>
    callUnary(c, 'MapUpdate', req, options, caller.metadata),
  );
}

/** Client.mapRead: one MapRead page. */
export async function mapRead(
  caller: TypedCaller,
  key: string | Uint8Array,
  options?: SetReadOptions,
): Promise<MapPage> {
  const o = checkOptions('mapRead', options, RULES.page);
  const k = bytes(key, 'key');
  const bucket = o.bucket ?? '';
  const req = pageRequest(bucket, k, o);
  const r = await caller.typedCall(bucket, k, 'read', o, (c, options) =>
    callUnary(c, 'MapRead', req, options, caller.metadata),
  );
  return { entries: r.entries.map(entryOf), next: r.next.length > 0 ? r.next : undefined };
}
