/**
 * The writes of one request on sub-keys of a parent (a set's elements, a map's fields),
 * as `Store.writeMany` takes them: the ops, their checks, their write ids, their limits,
 * and what the store answers.
 *
 * Owns: the shape and checks of a sub-key op. Must not: do I/O.
 */
import { DataTypeError, type SubPath } from '../buckets/index.js';
import { KvError } from '../kinds/kv-errors.js';
import type { WriteId } from '../kinds/dots.js';
import { checkAmount, counterWriteId } from '../kinds/counter/counter.js';
import { writeIdOf } from './request-checks.js';
import { checkValueSize } from '../kinds/kv-errors.js';

const EMPTY = Buffer.alloc(0);

/**
 * One write of `writeMany`, on the sub-key `path` names under the parent (a set's element,
 * or a map's field or a set field's element):
 * - `add` writes PRESENT superseding whatever this replica holds of it (so it adds one live
 *   sibling, and a concurrent remove elsewhere, which did not see the new dot, loses to
 *   it): a set element, or a flag field (enable);
 * - `remove` writes a tombstone superseding exactly what `context` (a read of that
 *   sub-key) saw, and its clock absorbs the context, so adds the reader saw that reach
 *   this replica later are superseded on arrival: a set element, a flag (disable), or a
 *   register (clear; last writer wins against a concurrent assign);
 * - `assign` writes a register field's value, last writer wins (versions.ts updateLww);
 * - `increment` adds `amount` (negative: subtracts) to a counter field, as its issuer
 *   (counter.ts), as counterUpdate does a counter key;
 * - `remove` of a counter field resets it: takes out the increments its context (a map
 *   read's, counter.ts encodeCounterContext) saw; a concurrent increment still counts.
 */
export type SubOp =
  | { readonly op: 'add'; readonly path: SubPath }
  | { readonly op: 'remove'; readonly path: SubPath; readonly context: Uint8Array }
  | { readonly op: 'assign'; readonly path: SubPath; readonly value: Uint8Array }
  | { readonly op: 'increment'; readonly path: SubPath; readonly amount: number };

/** One sub-key `writeMany` wrote (or found written before: `duplicate`), with its record after the call. */
export interface SubWrite {
  readonly key: Buffer;
  /** The sub-key's record after the call: what the other replicas merge (a hint holds it). */
  readonly record: Buffer;
  /** An increment's delta (counterUpdate's): what the other replicas merge, sent `record` when they refuse it (KV_COUNTER_GAP). */
  readonly delta?: Buffer;
  readonly duplicate: boolean;
}

export interface WriteManyResult {
  /** Per op, in the order given. */
  readonly writes: SubWrite[];
  /** True when every op's request id showed it was applied here before: nothing was written. */
  readonly duplicate: boolean;
}

/** The value of a present set element (or an enabled flag). */
export const PRESENT = Buffer.from([0x01]);
/** The most ops one writeMany call may carry. */
export const MAX_SUB_OPS = 1000;
/** The most bytes of keys and records (and deltas) one writeMany may write: what its issuer answers, in one message of a node's (8 MiB), with room to spare. */
export const MAX_WRITE_MANY_BYTES = 6 << 20;
/** The most sub-keys, and bytes of records, one readRange page holds. */
export const MAX_RANGE_KEYS = 1000;
export const MAX_RANGE_BYTES = 4 << 20;

/** What each op of writeMany applies to, as a refusal names it. */
const OP_TARGETS: Readonly<Record<SubOp['op'], string>> = {
  add: 'a set element or a flag field (enable)',
  remove: 'a set element, a flag field (disable), a register field (clear) or a counter field (reset)',
  assign: 'a register field',
  increment: 'a counter field',
};

/** What a path names, for a refusal: an element, a field of its type, or the parent itself. */
function pathNames(path: SubPath): string {
  const last = path.fields?.[path.fields.length - 1];
  return path.element !== undefined
    ? 'an element'
    : last === undefined
      ? 'the parent itself'
      : `a ${String(last.type)} field`;
}

/**
 * Refuses (DT_BAD_OP) an op of writeMany of an unknown kind or on a path that names
 * nothing it applies to, and an assign's value or an increment's amount that breaks its
 * limit (KV_VALUE_TOO_LARGE, KV_BAD_AMOUNT). The path's own grammar is subKey's to check.
 */
export function checkSubOp(op: SubOp, at: number, maxValueBytes: number): void {
  if (!Object.hasOwn(OP_TARGETS, op.op))
    throw new DataTypeError(
      'DT_BAD_OP',
      `op ${at}: unknown op ${JSON.stringify((op as { op: unknown }).op)}; use ${Object.keys(OP_TARGETS).join(', ')}`,
    );
  const last = op.path.fields?.[op.path.fields.length - 1]?.type;
  const element = op.path.element !== undefined;
  const fits =
    op.op === 'add'
      ? element || last === 'flag'
      : op.op === 'remove'
        ? element || last === 'flag' || last === 'register' || last === 'counter'
        : op.op === 'assign'
          ? !element && last === 'register'
          : !element && last === 'counter';
  if (!fits)
    throw new DataTypeError(
      'DT_BAD_OP',
      `op ${at}: ${op.op} applies to ${OP_TARGETS[op.op]}, not ${pathNames(op.path)}; use that one's op`,
    );
  if (op.op === 'assign') {
    if (!(op.value instanceof Uint8Array))
      throw new KvError('KV_BAD_VALUE', `op ${at}: a register's value must be bytes, got ${typeof op.value}`);
    checkValueSize(op.value.length, maxValueBytes, `op ${at}: a register value of ${op.value.length} bytes`);
  }
  if (op.op === 'increment') checkAmount(op.amount);
}

/** An op's write id under a request id: what shows it was applied here before. */
export function subWriteId(requestId: Uint8Array, op: SubOp): WriteId {
  switch (op.op) {
    case 'add':
      return writeIdOf(requestId, PRESENT, EMPTY);
    case 'remove':
      return writeIdOf(requestId, null, op.context);
    case 'assign':
      return writeIdOf(requestId, op.value, EMPTY);
    case 'increment':
      return counterWriteId(requestId, op.amount);
  }
}
