/**
 * The nested messages of the Replica service's calls and replies (replica.proto
 * SubKeyOp, PathField, SubKeyRecord), encoded and decoded by hand as replica-codec.ts does
 * the calls that hold them, and the field readers both share.
 *
 * Owns: those messages' byte layout. Must not: know what the calls mean.
 */
import type { FieldType } from '../buckets/index.js';
import {
  EMPTY,
  LEN,
  VARINT,
  bytesField,
  messageField,
  readSint64,
  readVarint64,
  sint64Field,
  varintField,
  writeSint64,
  Reader,
  type Writer,
} from './protobuf-bytes.js';

/** A field of a sub-key's path (replica.proto PathField); a type this release does not know stays its number, for the store to refuse. */
export interface WirePathField {
  readonly name: Buffer;
  readonly type: FieldType | number;
}

/**
 * One write on a sub-key (replica.proto SubKeyOp): `op` is a kind this release does not
 * know as its number, and `element` undefined when unset (a field), so that the replica
 * refuses what is wrong with its own clear code rather than the decoder guessing. `value`
 * is an assign's, `amount` an increment's as sent (any sint64: the replica refuses what
 * is past its bound, KV_BAD_AMOUNT).
 */
export interface WireSubOp {
  readonly op: WireSubOpKind | number;
  readonly fields: readonly WirePathField[];
  readonly element: Buffer | undefined;
  readonly context: Buffer;
  readonly value: Buffer;
  readonly amount: bigint;
}

export type WireSubOpKind = 'add' | 'remove' | 'assign' | 'increment';

/** A sub-key and its record (replica.proto SubKeyRecord); `delta` a counter field increment's (empty otherwise). */
export interface WireSubKeyRecord {
  readonly key: Buffer;
  readonly record: Buffer;
  readonly delta?: Buffer;
}

// Enums' numbers, as in replica.proto (SubKeyOp.Kind, FieldType).
const KIND: Readonly<Record<WireSubOpKind, number>> = { add: 1, remove: 2, assign: 3, increment: 4 };
const KIND_OF = new Map<number, WireSubOpKind>(Object.entries(KIND).map(([k, n]) => [n, k as WireSubOpKind]));
const FIELD_TYPE: Readonly<Record<FieldType, number>> = { register: 1, flag: 2, counter: 3, set: 4, map: 5 };
const FIELD_TYPE_OF = new Map<number, FieldType>(Object.entries(FIELD_TYPE).map(([t, n]) => [n, t as FieldType]));

// A kind or type the caller named wrongly (no type stops it at run time) goes as 0, unspecified: the replica refuses it.
const kindNumber = (op: WireSubOp['op']): number =>
  typeof op === 'number' ? op : Object.hasOwn(KIND, op) ? KIND[op] : 0;
const typeNumber = (t: WirePathField['type']): number =>
  typeof t === 'number' ? t : Object.hasOwn(FIELD_TYPE, t) ? FIELD_TYPE[t] : 0;

/** An enum's value: an int32, so a negative one is ten bytes on the wire (a peer's bug, or a fuzzer's), read whole for the replica to refuse. */
export const readEnum = (r: Reader): number => Number(BigInt.asIntN(32, readVarint64(r)));

/** An optional bytes field (proto3 `optional`): written when set, even empty. */
export const optionalBytesField = (b: Buffer | undefined): number => (b === undefined ? 0 : messageField(b.length));

export function writeOptionalBytes(w: Writer, field: number, b: Buffer | undefined): void {
  if (b === undefined) return;
  w.message(field, b.length);
  w.raw(b);
}

const pathFieldSize = (f: WirePathField): number => bytesField(f.name.length) + varintField(typeNumber(f.type));
export const subOpSize = (o: WireSubOp): number =>
  varintField(kindNumber(o.op)) +
  o.fields.reduce((a, f) => a + messageField(pathFieldSize(f)), 0) +
  optionalBytesField(o.element) +
  bytesField(o.context.length) +
  bytesField(o.value.length) +
  sint64Field(o.amount);
const recordSize = (r: WireSubKeyRecord): number =>
  bytesField(r.key.length) + bytesField(r.record.length) + bytesField(r.delta?.length ?? 0);
export const recordsSize = (rs: readonly WireSubKeyRecord[]): number =>
  rs.reduce((a, r) => a + messageField(recordSize(r)), 0);

export function writeSubOp(w: Writer, o: WireSubOp): void {
  w.uint(1, kindNumber(o.op));
  for (const f of o.fields) {
    w.message(2, pathFieldSize(f));
    w.bytes(1, f.name);
    w.uint(2, typeNumber(f.type));
  }
  writeOptionalBytes(w, 3, o.element);
  w.bytes(4, o.context);
  w.bytes(5, o.value);
  writeSint64(w, 6, o.amount);
}

export function writeRecords(w: Writer, field: number, rs: readonly WireSubKeyRecord[]): void {
  for (const r of rs) {
    w.message(field, recordSize(r));
    w.bytes(1, r.key);
    w.bytes(2, r.record);
    w.bytes(3, r.delta ?? EMPTY);
  }
}

/** Each field of the message `r` holds, to its end: `take` reads one it knows and says so; the others are skipped. */
export function eachField(r: Reader, take: (field: number, wire: number) => boolean): void {
  while (!r.done) {
    const t = r.tag();
    if (!take(t >>> 3, t & 7)) r.skip(t & 7);
  }
}

/** A nested message's reader: from here to its end (the caller moves past it). */
export function nestedReader(b: Reader): Reader {
  const end = b.nested();
  const r = new Reader(b.buf, b.pos, end);
  b.pos = end;
  return r;
}

function readPathField(r: Reader): WirePathField {
  let name = EMPTY,
    type = 0;
  eachField(r, (f, wire) => {
    if (f === 1 && wire === LEN) name = r.bytes();
    else if (f === 2 && wire === VARINT) type = readEnum(r);
    else return false;
    return true;
  });
  return { name, type: FIELD_TYPE_OF.get(type) ?? type };
}

export function readSubOp(r: Reader): WireSubOp {
  let kind = 0,
    element: Buffer | undefined,
    context = EMPTY,
    value = EMPTY,
    amount = 0n;
  const fields: WirePathField[] = [];
  eachField(r, (f, wire) => {
    if (f === 1 && wire === VARINT) kind = readEnum(r);
    else if (f === 2 && wire === LEN) fields.push(readPathField(nestedReader(r)));
    else if (f === 3 && wire === LEN) element = r.bytes();
    else if (f === 4 && wire === LEN) context = r.bytes();
    else if (f === 5 && wire === LEN) value = r.bytes();
    else if (f === 6 && wire === VARINT) amount = readSint64(r);
    else return false;
    return true;
  });
  return { op: KIND_OF.get(kind) ?? kind, fields, element, context, value, amount };
}

export function readRecord(r: Reader): WireSubKeyRecord {
  let key = EMPTY,
    record = EMPTY,
    delta = EMPTY;
  eachField(r, (f, wire) => {
    if (f === 1 && wire === LEN) key = r.bytes();
    else if (f === 2 && wire === LEN) record = r.bytes();
    else if (f === 3 && wire === LEN) delta = r.bytes();
    else return false;
    return true;
  });
  return delta.length > 0 ? { key, record, delta } : { key, record };
}
