/**
 * Maps as the client takes and gives them (docs/data-types.md#maps): field ops to the
 * wire's MapOp, MapRead's entries from the wire, and a whole map's entries assembled into
 * one nested value (Client.mapGet).
 *
 * Owns: the shapes of map ops, entries and values, and their checks before sending. Must
 * not: call a node (kv.ts does).
 */
import * as grpc from '@grpc/grpc-js';
import { amountOf, bytes, serviceError } from './wire-values.js';
import type { MapEntry__Output } from '../transport/generated/ringkv/v1/MapEntry.js';
import type { MapFieldType__Output } from '../transport/generated/ringkv/v1/MapFieldType.js';
import type { MapOp as WireMapOp } from '../transport/generated/ringkv/v1/MapOp.js';
export type { MapEntry, MapFieldType, MapPage, MapPath } from '../common/map-entries.js';
import type { MapEntry, MapFieldType, MapPage, MapPath } from '../common/map-entries.js';

const FIELD_TYPES: readonly MapFieldType[] = ['register', 'flag', 'counter', 'set', 'map'];

/** One step of a field's path: its name (a string is its UTF-8 bytes) and type. Every step but the last is a map. */
export interface MapField {
  readonly name: string | Uint8Array;
  readonly type: MapFieldType;
}

/**
 * One op of a mapUpdate, on the field `path` names (from the map's top):
 * - `assign` a register's value (concurrent assigns: the last writer wins);
 * - `enable` a flag;
 * - `increment` a counter by `amount` (negative subtracts);
 * - `add` an element to a set field;
 * - `remove`, with the context a read of the entry gave: clear a register, disable a flag,
 *   reset a counter, or remove a set field's `element`. It takes out what that read saw,
 *   not a concurrent write (an increment the read did not see still counts).
 */
export type MapOp =
  | { readonly op: 'assign'; readonly path: readonly MapField[]; readonly value: string | Uint8Array }
  | { readonly op: 'enable'; readonly path: readonly MapField[] }
  | { readonly op: 'increment'; readonly path: readonly MapField[]; readonly amount: number | bigint }
  | { readonly op: 'add'; readonly path: readonly MapField[]; readonly element: string | Uint8Array }
  | {
      readonly op: 'remove';
      readonly path: readonly MapField[];
      readonly element?: string | Uint8Array;
      readonly context: Uint8Array;
    };

/**
 * A whole map as one value (Client.mapGet), by field type as Riak's clients give it: a
 * field's name is its UTF-8 text, and two fields of one name but different types are
 * different fields. Sets' elements in byte order. The records have no prototype, so any
 * name is a field's; two names whose bytes are not UTF-8 may read as one text (the last
 * wins here): mapEntries gives every name's bytes.
 */
export interface MapValue {
  readonly registers: Record<string, Buffer>;
  readonly flags: Record<string, true>;
  readonly counters: Record<string, bigint>;
  readonly sets: Record<string, Buffer[]>;
  readonly maps: Record<string, MapValue>;
}

/** Most ops one mapUpdate carries, as a node takes them. */
export const MAX_MAP_OPS = 1000;

/**
 * The contexts one update of `updateBatches` carries at most, bytes. A counter's context is
 * its whole state (a few KiB with its log), and its reset writes a record as large, so an
 * update of 1,000 counter resets would pass what one update may write (6 MiB).
 */
export const MAX_UPDATE_CONTEXT_BYTES = 2 << 20;

/** The op that removes `e` as its read saw it: a register cleared, a flag disabled, a counter reset, a set field's element removed. */
export function removeOf(e: MapEntry): MapOp {
  return e.kind === 'element'
    ? { op: 'remove', path: e.path, element: e.element, context: e.context }
    : { op: 'remove', path: e.path, context: e.context };
}

/** `ops` as updates of at most MAX_MAP_OPS ops and MAX_UPDATE_CONTEXT_BYTES of contexts each, in order. */
export function updateBatches(ops: readonly MapOp[]): MapOp[][] {
  const out: MapOp[][] = [];
  let batch: MapOp[] = [];
  let bytes = 0;
  for (const op of ops) {
    const size = op.op === 'remove' ? op.context.length : 0;
    if (batch.length > 0 && (batch.length === MAX_MAP_OPS || bytes + size > MAX_UPDATE_CONTEXT_BYTES)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(op);
    bytes += size;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

const WIRE_TYPE = (t: MapFieldType): MapFieldType__Output =>
  `MAP_FIELD_TYPE_${t.toUpperCase()}` as MapFieldType__Output;
const TYPE_OF = new Map<string, MapFieldType>(FIELD_TYPES.map((t) => [WIRE_TYPE(t), t]));

/** A mapUpdate's ops as MapUpdateRequest carries them; INVALID_ARGUMENT for too few or too many, a TypeError for one of no known shape. */
export function wireMapOps(ops: readonly MapOp[]): WireMapOp[] {
  if (!Array.isArray(ops) || ops.length === 0 || ops.length > MAX_MAP_OPS)
    throw serviceError(
      grpc.status.INVALID_ARGUMENT,
      `a map update carries 1 to ${MAX_MAP_OPS} operations, got ${Array.isArray(ops) ? ops.length : typeof ops}; split it into several updates`,
    );
  return ops.map((x): WireMapOp => {
    if (!Array.isArray(x?.path))
      throw new TypeError(`a map operation names its field by path: [{ name, type }, ...], got ${JSON.stringify(x)}`);
    const path = x.path.map((f: MapField) => ({
      name: bytes(f?.name, 'a field name'),
      type: WIRE_TYPE(String(f?.type) as MapFieldType),
    }));
    switch (x.op) {
      case 'assign':
        return { path, assign: bytes(x.value, 'a register value') };
      case 'enable':
        return { path, enable: true };
      case 'increment':
        return { path, increment: amountOf(x.amount) };
      case 'add':
        return { path, add: bytes(x.element, 'element') };
      case 'remove':
        return {
          path,
          remove: {
            element: x.element === undefined ? Buffer.alloc(0) : bytes(x.element, 'element'),
            context: bytes(x.context, 'context'),
          },
        };
      default:
        throw new TypeError(
          `a map operation's op is assign, enable, increment, add or remove, got ${JSON.stringify((x as { op: unknown }).op)}`,
        );
    }
  });
}

/** A MapRead entry as the client gives it. */
export function entryOf(e: MapEntry__Output): MapEntry {
  const path = e.path.map((f) => ({ name: f.name, type: TYPE_OF.get(f.type) ?? ('register' as const) }));
  const last = path[path.length - 1]?.type;
  if (last === 'counter') return { kind: 'counter', path, value: BigInt(e.counter), context: e.context };
  if (last === 'set') return { kind: 'element', path, element: e.element, context: e.context };
  if (last === 'flag') return { kind: 'flag', path, context: e.context };
  return { kind: 'register', path, value: e.value, context: e.context };
}

/** Records without a prototype: a field named `constructor` or `__proto__` is a field like any other. */
const record = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;
const emptyMap = (): MapValue => ({
  registers: record(),
  flags: record(),
  counters: record(),
  sets: record(),
  maps: record(),
});

/** Entries (in path order, as mapRead gives them) assembled into one nested value. */
export function assemble(entries: Iterable<MapEntry>): MapValue {
  const top = emptyMap();
  for (const e of entries) {
    if (e.path.length === 0) continue; // no field (no node writes one)
    let m = top;
    for (const f of e.path.slice(0, -1)) m = m.maps[f.name.toString('utf8')] ??= emptyMap();
    const name = e.path[e.path.length - 1]!.name.toString('utf8');
    if (e.kind === 'register') m.registers[name] = e.value;
    else if (e.kind === 'flag') m.flags[name] = true;
    else if (e.kind === 'counter') m.counters[name] = e.value;
    else (m.sets[name] ??= []).push(e.element);
  }
  return top;
}
