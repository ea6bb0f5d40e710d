/**
 * Sub-keys: the stored keys of a data type's parts (convergent sets and maps).
 * Each set element, each map field and each element of a set field is a record of its own
 * under a *sub-key* of its parent key (a named bucket's stored key). A sub-key is placed by
 * its parent's bytes (`placementKey`: storage/keys.ts hashes those), so a parent's sub-keys
 * sit on the parent's token, one contiguous span on the parent's replicas.
 *
 *   sub-key = MARK 00 len(1) bucket varint(len(key)) key path     (the head: bucket.ts)
 *   path    = 01 element                   a set's element: 1–1,024 bytes, to the end
 *           | field
 *   field   = 'r' len(1) name              a register field (a multi-value register)
 *           | 'f' len(1) name              a flag field
 *           | 'c' len(1) name              a counter field
 *           | 's' len(1) name 01 element   an element of a set field
 *           | 'm' len(1) name field        a field of a map field
 *
 * A field's name is 1–255 bytes and a path at most MAX_PATH_DEPTH fields deep. Every part
 * is length-prefixed or runs to the end, so the encoding is prefix-free: the sub-keys of a
 * parent (or of one of its fields) are exactly the stored keys that begin with its prefix,
 * one span in byte order (`subKeySpan`), which no other parent's sub-key enters, even one
 * whose key the first's extends, nor any key of the other kinds written since buckets
 * (bucket.ts). Each sub-key
 * has one encoding (a minimal varint, a strict grammar), so parseSubKey and subKey are each
 * other's inverse, and a malformed sub-key is refused (DT_*), never read as another.
 *
 * Owns: encoding and parsing sub-keys, their limits and spans, a stored key's placement key.
 * Must not: hash (storage/keys.ts places keys and makes context checks), know a bucket's
 * type, records or the store.
 */
import {
  DEFAULT_BUCKET,
  DataTypeError,
  MARK,
  MAX_PARENT_KEY_BYTES,
  SUBKEY,
  SUBKEY_NAME_AT,
  bucketNameAt,
  splitKey,
  subKeyHead,
  type SiblingPolicy,
  type SubKeyHead,
} from './bucket.js';

/** The longest set element, bytes (a set field's too). */
export const MAX_ELEMENT_BYTES = 1024;
/** The longest map field name, bytes. */
export const MAX_FIELD_NAME_BYTES = 255;
/** The most fields a path nests: a field of a map of a map of a map. */
export const MAX_PATH_DEPTH = 4;

/** The byte before a set element in a path. */
export const ELEMENT = 0x01;

import type { MapFieldType } from '../common/map-entries.js';

/** A map field's type (common/map-entries.ts: the client names it the same). */
export type FieldType = MapFieldType;
export const FIELD_TYPES: readonly FieldType[] = ['register', 'flag', 'counter', 'set', 'map'];
const TAG: Readonly<Record<FieldType, number>> = { register: 0x72, flag: 0x66, counter: 0x63, set: 0x73, map: 0x6d };
const TYPE_OF_TAG = new Map(FIELD_TYPES.map((t) => [TAG[t], t]));

/** A field of a path as a caller names it: a name (a string is its UTF-8 bytes) and its type. */
export interface FieldName {
  readonly name: string | Uint8Array;
  readonly type: FieldType;
}

/**
 * What a sub-key names under its parent: a set's element (no fields), a register, flag or
 * counter field (no element), or an element of a set field (both). Every field but the
 * last is a map.
 */
export interface SubPath {
  readonly fields?: readonly FieldName[];
  readonly element?: string | Uint8Array;
}

/** A parsed sub-key. Buffers are views of the parsed bytes, except `parent`. */
export interface SubKey {
  readonly bucket: string;
  /** The parent's stored key (`MARK len name key`): its placement key. */
  readonly parent: Buffer;
  /** The parent's user key. */
  readonly key: Buffer;
  readonly fields: readonly { readonly name: Buffer; readonly type: FieldType }[];
  /** The set element, when the sub-key names one. */
  readonly element: Buffer | undefined;
}

const bytesOf = (b: string | Uint8Array): Buffer =>
  typeof b === 'string' ? Buffer.from(b, 'utf8') : Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** A name or element for a message: quoted text, else hex (both cut short). */
function show(b: Uint8Array): string {
  const text = Buffer.from(b.buffer, b.byteOffset, Math.min(b.length, 64)).toString('utf8');
  const cut = b.length > 64 ? '…' : '';
  return /^[\x20-\x7e]*$/.test(text)
    ? JSON.stringify(text) + cut
    : `0x${Buffer.from(b.buffer, b.byteOffset, Math.min(b.length, 32)).toString('hex')}${b.length > 32 ? '…' : ''}`;
}

function checkElement(e: Uint8Array): void {
  if (e.length === 0) throw new DataTypeError('DT_ELEMENT_EMPTY', 'a set element must have at least one byte');
  if (e.length > MAX_ELEMENT_BYTES)
    throw new DataTypeError(
      'DT_ELEMENT_TOO_LARGE',
      `set element of ${e.length} bytes is over the limit of ${MAX_ELEMENT_BYTES}; use a shorter element (a hash of it, say)`,
    );
}

function checkName(name: Uint8Array): void {
  if (name.length === 0) throw new DataTypeError('DT_FIELD_NAME_EMPTY', 'a map field name must have at least one byte');
  if (name.length > MAX_FIELD_NAME_BYTES)
    throw new DataTypeError(
      'DT_FIELD_NAME_TOO_LARGE',
      `map field name of ${name.length} bytes is over the limit of ${MAX_FIELD_NAME_BYTES}; use a shorter name`,
    );
}

function checkDepth(depth: number): void {
  if (depth > MAX_PATH_DEPTH)
    throw new DataTypeError(
      'DT_PATH_TOO_DEEP',
      `a path of ${depth} nested fields is over the limit of ${MAX_PATH_DEPTH}; nest fewer maps (join names instead: "a.b")`,
    );
}

/** The bucket name and user key of a parent: a named bucket's stored key, not a sub-key. */
function parentParts(parent: Uint8Array): { name: Buffer; key: Uint8Array } {
  if (subKeyHead(parent) !== undefined)
    throw new DataTypeError(
      'DT_BAD_PARENT',
      'a sub-key has no sub-keys of its own: name the fields of a map field in one path',
    );
  const { bucket, key } = splitKey(parent);
  if (bucket === DEFAULT_BUCKET)
    throw new DataTypeError(
      'DT_BAD_PARENT',
      "sets and maps live in named buckets: this is no named bucket's stored key",
    );
  if (key.length > MAX_PARENT_KEY_BYTES)
    throw new DataTypeError(
      'DT_BAD_PARENT',
      `a parent key of ${key.length} bytes is over the limit of ${MAX_PARENT_KEY_BYTES}`,
    );
  return { name: Buffer.from(bucket, 'latin1'), key };
}

/** A path's fields checked (names, types, depth, every field but the last a map): as tag and name bytes. */
function checkFields(fields: readonly FieldName[]): { tag: number; name: Buffer }[] {
  checkDepth(fields.length);
  return fields.map((f, i) => {
    const tag = Object.hasOwn(TAG, f.type) ? TAG[f.type] : undefined;
    if (tag === undefined)
      throw new DataTypeError(
        'DT_BAD_PATH',
        `unknown field type ${JSON.stringify(f.type)}: use ${FIELD_TYPES.join(', ')}`,
      );
    const name = bytesOf(f.name);
    checkName(name);
    if (i < fields.length - 1 && f.type !== 'map')
      throw new DataTypeError('DT_BAD_PATH', `field ${show(name)} is a ${f.type}: only a map field has fields`);
    return { tag, name };
  });
}

/** The prefix of a parent's sub-keys (its head), then the given segments, then `tail`. */
function build(parent: Uint8Array, segments: readonly { tag: number; name: Buffer }[], tail?: Buffer): Buffer {
  const { name, key } = parentParts(parent);
  let len = MARK.length + 2 + name.length + varintBytes(key.length) + key.length;
  for (const s of segments) len += 2 + s.name.length;
  if (tail !== undefined) len += 1 + tail.length;
  const out = Buffer.allocUnsafe(len);
  MARK.copy(out, 0);
  out[MARK.length] = SUBKEY;
  out[MARK.length + 1] = name.length;
  name.copy(out, MARK.length + 2);
  let at = writeVarint(out, MARK.length + 2 + name.length, key.length);
  out.set(key, at);
  at += key.length;
  for (const s of segments) {
    out[at] = s.tag;
    out[at + 1] = s.name.length;
    s.name.copy(out, at + 2);
    at += 2 + s.name.length;
  }
  if (tail !== undefined) {
    out[at] = ELEMENT;
    tail.copy(out, at + 1);
  }
  return out;
}

/**
 * The sub-key of `path` under `parent` (a named bucket's stored key). Refuses, with a
 * DT_* code, a parent of another kind and a path that breaks the grammar or a limit.
 */
export function subKey(parent: Uint8Array, path: SubPath): Buffer {
  const fields = path.fields ?? [];
  const segments = checkFields(fields);
  const last = fields[fields.length - 1];
  if (path.element === undefined) {
    if (last === undefined)
      throw new DataTypeError('DT_BAD_PATH', 'a sub-key names a set element or a map field: give one');
    if (last.type === 'set' || last.type === 'map')
      throw new DataTypeError(
        'DT_BAD_PATH',
        `field ${show(segments[segments.length - 1]!.name)} is a ${last.type}: name one of its ${last.type === 'set' ? 'elements' : 'fields'}`,
      );
    return build(parent, segments);
  }
  if (last !== undefined && last.type !== 'set')
    throw new DataTypeError(
      'DT_BAD_PATH',
      `field ${show(segments[segments.length - 1]!.name)} is a ${last.type}: only a set field has elements`,
    );
  const element = bytesOf(path.element);
  checkElement(element);
  return build(parent, segments, element);
}

/** Why `stored` has no sub-key head, for DT_BAD_SUBKEY. */
function notSubKey(stored: Uint8Array): DataTypeError {
  const marked =
    stored.length > MARK.length &&
    Buffer.from(stored.buffer, stored.byteOffset, MARK.length).equals(MARK) &&
    stored[MARK.length] === SUBKEY;
  return new DataTypeError(
    'DT_BAD_SUBKEY',
    marked
      ? 'malformed sub-key: its bucket name, parent key length or parent key is not valid, or it has no path'
      : `not a sub-key: a sub-key begins with the bytes ${Buffer.concat([MARK, Buffer.from([SUBKEY])]).toString('hex')}`,
  );
}

/** The parent stored key (`MARK len name key`) of a sub-key with head `head`: new bytes. */
function parentOf(stored: Uint8Array, head: SubKeyHead): Buffer {
  const { nameLen } = head;
  const keyLen = head.keyEnd - head.keyStart;
  const out = Buffer.allocUnsafe(MARK.length + 1 + nameLen + keyLen);
  MARK.copy(out, 0);
  out[MARK.length] = nameLen;
  out.set(stored.subarray(SUBKEY_NAME_AT, SUBKEY_NAME_AT + nameLen), MARK.length + 1);
  out.set(stored.subarray(head.keyStart, head.keyEnd), MARK.length + 1 + nameLen);
  return out;
}

/**
 * The parts of a sub-key. Anything else, and any sub-key that breaks the grammar or a
 * limit, is refused with a DT_* code naming what is wrong: never read as another sub-key.
 */
export function parseSubKey(stored: Uint8Array): SubKey {
  const head = subKeyHead(stored);
  if (head === undefined) throw notSubKey(stored);
  const b = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
  const fields: { name: Buffer; type: FieldType }[] = [];
  let at = head.keyEnd;
  let element: Buffer | undefined;
  for (;;) {
    const tag = b[at]!; // at < b.length: a head has a path, and each step below checks
    if (tag === ELEMENT && (fields.length === 0 || fields[fields.length - 1]!.type === 'set')) {
      element = b.subarray(at + 1);
      checkElement(element);
      break;
    }
    const type = TYPE_OF_TAG.get(tag);
    if (type === undefined)
      throw new DataTypeError(
        'DT_BAD_PATH',
        `malformed sub-key path: byte 0x${tag.toString(16).padStart(2, '0')} at ${at - head.keyEnd} is no field tag${fields.length > 0 ? '' : ' nor the element mark 01'}`,
      );
    checkDepth(fields.length + 1);
    if (at + 1 >= b.length) throw new DataTypeError('DT_BAD_PATH', 'malformed sub-key path: it ends inside a field');
    const len = b[at + 1]!;
    if (at + 2 + len > b.length)
      throw new DataTypeError(
        'DT_BAD_PATH',
        `malformed sub-key path: a field name of ${len} bytes cut short at ${b.length - at - 2}`,
      );
    const name = b.subarray(at + 2, at + 2 + len);
    checkName(name);
    fields.push({ name, type });
    at += 2 + len;
    if (type === 'register' || type === 'flag' || type === 'counter') {
      if (at !== b.length)
        throw new DataTypeError(
          'DT_BAD_PATH',
          `malformed sub-key path: ${b.length - at} bytes past the end of ${type} field ${show(name)}`,
        );
      break;
    }
    if (at === b.length)
      throw new DataTypeError(
        'DT_BAD_PATH',
        `malformed sub-key path: ${type} field ${show(name)} names no ${type === 'set' ? 'element' : 'field'}`,
      );
    if (type === 'set' && b[at] !== ELEMENT)
      throw new DataTypeError(
        'DT_BAD_PATH',
        `malformed sub-key path: set field ${show(name)} is followed by no element mark 01`,
      );
  }
  return {
    bucket: bucketNameAt(b, SUBKEY_NAME_AT, head.nameLen),
    parent: parentOf(b, head),
    key: b.subarray(head.keyStart, head.keyEnd),
    fields,
    element,
  };
}

/**
 * How the records of a stored key join when it is a sub-key: a register field's
 * last-writer-wins (a map's register holds one value, never siblings), every other
 * sub-key's causally (a set element's or flag's adds are an observed-remove set of dots).
 * Undefined for a key that is no sub-key (its bucket's policy applies), and for a
 * malformed one (parseSubKey refuses it where it matters).
 */
export function subKeyPolicy(stored: Uint8Array): SiblingPolicy | undefined {
  if (!isSubKey(stored)) return undefined;
  try {
    return parseSubKey(stored).fields.at(-1)?.type === 'register' ? 'lww' : 'siblings';
  } catch {
    return undefined;
  }
}

/** Whether a stored key is a sub-key (it has a sub-key head; its path is parseSubKey's to check). */
export function isSubKey(stored: Uint8Array): boolean {
  return stored[MARK.length] === SUBKEY && subKeyHead(stored) !== undefined;
}

/**
 * The bytes whose hash places a stored key: a sub-key's parent stored key (new bytes),
 * any other key itself. For a key that is no sub-key this costs one byte compare, or
 * five when the byte after where a mark would end is zero.
 */
export function placementKey(stored: Uint8Array): Uint8Array {
  if (stored[MARK.length] !== SUBKEY) return stored;
  const head = subKeyHead(stored);
  return head === undefined ? stored : parentOf(stored, head);
}

/** The least byte string above every string that begins with `prefix` (which does not begin with 0xff). */
function successor(prefix: Buffer): Buffer {
  let i = prefix.length - 1;
  while (prefix[i] === 0xff) i--;
  const out = Buffer.from(prefix.subarray(0, i + 1));
  out[i]!++;
  return out;
}

/**
 * The byte span [gte, lt) of the sub-keys of `parent`, or (with `fields`) of the sub-keys
 * under one of its fields (all of a map or set field's, the one of a register): exactly
 * the stored keys that begin with the prefix, so no other parent's or field's sub-key
 * and no key of another kind lies inside. All lie on the parent's token, so in the store
 * this is one range of data keys under that token.
 */
export function subKeySpan(parent: Uint8Array, fields: readonly FieldName[] = []): { gte: Buffer; lt: Buffer } {
  const gte = build(parent, checkFields(fields));
  return { gte, lt: successor(gte) };
}

/** Write the minimal varint (LEB128) of `n` (a safe integer ≥ 0) at `at`; returns the end. */
function writeVarint(out: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  out[at++] = n;
  return at;
}

function varintBytes(n: number): number {
  let bytes = 1;
  for (; n >= 0x80; bytes++) n = Math.floor(n / 0x80);
  return bytes;
}
