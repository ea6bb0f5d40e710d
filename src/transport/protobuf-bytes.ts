/**
 * Protobuf's wire format by hand, for the messages ringkv encodes itself (the replica and
 * key-value streams): sizes first, then one exact-size buffer; fields decoded as views of
 * the received buffer. Only what those messages use: varints, length-delimited fields,
 * one-byte tags (field numbers below 16); unknown fields are skipped.
 *
 * Owns: the bytes. Must not: know any message (replica-codec.ts, kv-codec.ts do).
 */

export class WireDecodeError extends Error {
  override name = 'WireDecodeError';
}

export const LEN = 2,
  VARINT = 0;

export function varintSize(n: number): number {
  let s = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    s++;
  }
  return s;
}

/** A length-delimited field of `len` bytes; proto3 leaves empty ones out. */
export const bytesField = (len: number): number => (len === 0 ? 0 : 1 + varintSize(len) + len);
// sint64 (zigzag) in bigints: a JavaScript number is exact to 2^53 only, and a zigzag doubles it.
const zigzag = (n: bigint): bigint => (n >= 0n ? n << 1n : (-n << 1n) - 1n);
const unzigzag = (z: bigint): bigint => ((z & 1n) === 1n ? -((z + 1n) >> 1n) : z >> 1n);
const U64 = (1n << 64n) - 1n;

function varint64Size(n: bigint): number {
  let s = 1;
  while (n >= 128n) {
    n >>= 7n;
    s++;
  }
  return s;
}

/** A sint64 field; proto3 leaves zero out. */
export const sint64Field = (n: bigint): number => (n === 0n ? 0 : 1 + varint64Size(zigzag(n) & U64));

export function writeSint64(w: Writer, field: number, n: bigint): void {
  if (n === 0n) return;
  w.tag(field, VARINT);
  let z = zigzag(n) & U64;
  while (z >= 128n) {
    w.buf[w.pos++] = Number(z & 127n) | 128;
    z >>= 7n;
  }
  w.buf[w.pos++] = Number(z);
}

/** A varint of up to 10 bytes (any 64-bit value), as an unsigned bigint. */
export function readVarint64(r: Reader): bigint {
  let z = 0n;
  for (let i = 0, shift = 0n; i < 10; i++, shift += 7n) {
    if (r.pos >= r.end) throw new WireDecodeError('a varint runs past the end of its message');
    const b = r.buf[r.pos++]!;
    z |= BigInt(b & 127) << shift;
    if (b < 128) return z & U64;
  }
  throw new WireDecodeError('a varint is longer than 10 bytes');
}

export const readSint64 = (r: Reader): bigint => unzigzag(readVarint64(r));

/** A sub-message field: always written, even empty (it says which op this is). */
export const messageField = (len: number): number => 1 + varintSize(len) + len;
export const varintField = (n: number): number => (n === 0 ? 0 : 1 + varintSize(n));

export class Writer {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  varint(n: number): void {
    while (n >= 128) {
      this.buf[this.pos++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }

  tag(field: number, wire: number): void {
    this.buf[this.pos++] = (field << 3) | wire; // every field number here is below 16
  }

  uint(field: number, n: number): void {
    if (n === 0) return;
    this.tag(field, VARINT);
    this.varint(n);
  }

  bytes(field: number, b: Uint8Array): void {
    if (b.length === 0) return;
    this.tag(field, LEN);
    this.varint(b.length);
    this.raw(b);
  }

  /** `b` as it is (after a field's tag and length). */
  raw(b: Uint8Array): void {
    const len = b.length;
    // A copy call costs more than a short loop (keys, contexts, small records).
    if (len > 64) this.buf.set(b, this.pos);
    else for (let i = 0; i < len; i++) this.buf[this.pos + i] = b[i]!;
    this.pos += len;
  }

  string(field: number, s: string, len: number): void {
    if (len === 0) return;
    this.tag(field, LEN);
    this.varint(len);
    this.pos += this.buf.write(s, this.pos, len, 'utf8');
  }

  message(field: number, len: number): void {
    this.tag(field, LEN);
    this.varint(len);
  }
}

export const EMPTY: Buffer = Buffer.alloc(0);

export class Reader {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    readonly end: number,
  ) {}

  get done(): boolean {
    return this.pos >= this.end;
  }

  varint(): number {
    let n = 0,
      m = 1;
    for (let i = 0; i < 8; i++) {
      if (this.pos >= this.end) throw new WireDecodeError('a varint runs past the end of its message');
      const b = this.buf[this.pos++]!;
      n += (b & 127) * m;
      if (b < 128) return n;
      m *= 128;
    }
    throw new WireDecodeError('a varint is longer than 8 bytes');
  }

  /** The next field's tag: number << 3 | wire type. */
  tag(): number {
    const b = this.buf[this.pos];
    // Every field here has a one-byte tag; longer ones are a newer peer's, decoded in full.
    if (b !== undefined && b < 128 && this.pos < this.end) {
      this.pos++;
      return b;
    }
    return this.varint();
  }

  /** The length of the next length-delimited field, checked against the message. */
  length(): number {
    const len = this.varint();
    if (len > this.end - this.pos)
      throw new WireDecodeError(`a field of ${len} bytes runs past the end of its message`);
    return len;
  }

  /** A length-delimited field as a view of the buffer. */
  bytes(): Buffer {
    const len = this.length();
    const b = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return b;
  }

  /** A length-delimited field as a string. */
  string(): string {
    const len = this.length();
    const s = this.buf.toString('utf8', this.pos, this.pos + len);
    this.pos += len;
    return s;
  }

  /** The end of a nested message that starts here. */
  nested(): number {
    const len = this.length();
    return this.pos + len;
  }

  skip(wire: number): void {
    if (wire === VARINT) this.varint();
    else if (wire === LEN) {
      // Not `this.pos += this.length()`: that reads pos before length() moves it past the length's own bytes.
      const len = this.length();
      this.pos += len;
    } else if (wire === 1) this.pos += 8;
    else if (wire === 5) this.pos += 4;
    else throw new WireDecodeError(`unknown wire type ${wire}`);
    if (this.pos > this.end) throw new WireDecodeError('a field runs past the end of its message');
  }
}

export function expect(wire: number, want: number, what: string): void {
  if (wire !== want) throw new WireDecodeError(`${what} has wire type ${wire}, not ${want}`);
}

/**
 * How a batch's items are laid out, calls and replies alike: field 1 of the batch is
 * repeated, one item each; an item is its id (field 1), a number in field 2 when the
 * item has one (a call's time left), and its body as the one field of a oneof whose
 * field number names the operation.
 */
export interface ItemLayout<T> {
  /** Field 2's value; undefined for items without one (replies). */
  second(item: T): number | undefined;
  /** The oneof field that holds the body. */
  opField(item: T): number;
  bodySize(item: T): number;
  writeBody(w: Writer, item: T): void;
}

const itemSize = <T>(l: ItemLayout<T>, x: T & { id: number }, body: number): number => {
  const second = l.second(x);
  return varintField(x.id) + (second === undefined ? 0 : varintField(second)) + messageField(body);
};

/** Bytes one item takes in its batch. */
export function batchItemSize<T extends { id: number }>(l: ItemLayout<T>, x: T): number {
  return messageField(itemSize(l, x, l.bodySize(x)));
}

/** The batch holding `items`, in one buffer of the exact size. */
export function encodeBatch<T extends { id: number }>(l: ItemLayout<T>, items: readonly T[]): Buffer {
  const bodies = items.map((x) => l.bodySize(x));
  const sizes = items.map((x, i) => itemSize(l, x, bodies[i]!));
  const w = new Writer(Buffer.allocUnsafe(sizes.reduce((a, s) => a + messageField(s), 0)));
  items.forEach((x, i) => {
    w.message(1, sizes[i]!);
    w.uint(1, x.id);
    const second = l.second(x);
    if (second !== undefined) w.uint(2, second);
    w.message(l.opField(x), bodies[i]!);
    l.writeBody(w, x);
  });
  return w.buf;
}

/** An item's header as read: its id, field 2 (0 when absent), which oneof field held the body, and a reader over the body. */
export interface ItemHeader {
  readonly id: number;
  readonly second: number;
  readonly opField: number;
  readonly body: Reader;
}

/**
 * The items of the batch in `buf`, each decoded by `item` from its header. Bodies are
 * the length-delimited fields numbered from `firstOp` to `lastOp`. Throws WireDecodeError
 * when `buf` is not such a batch, or an item names no operation (unless `unknownOp` is
 * 'pass': then `item` gets opField 0 and an empty body, and answers that item alone).
 */
export function decodeBatch<T>(
  buf: Buffer,
  what: string,
  firstOp: number,
  lastOp: number,
  item: (h: ItemHeader) => T,
  o: { readonly unknownOp?: 'throw' | 'pass' } = {},
): T[] {
  const out: T[] = [];
  const r = new Reader(buf, 0, buf.length);
  while (!r.done) {
    const t = r.tag();
    if (t >>> 3 !== 1) {
      r.skip(t & 7);
      continue;
    }
    expect(t & 7, LEN, what);
    const end = r.nested();
    const x = new Reader(buf, r.pos, end);
    r.pos = end;
    let id = 0,
      second = 0,
      opField = 0,
      bodyStart = 0,
      bodyEnd = 0;
    while (!x.done) {
      const t2 = x.tag(),
        f = t2 >>> 3,
        wire = t2 & 7;
      if (f === 1 && wire === VARINT) id = x.varint();
      else if (f === 2 && wire === VARINT) second = x.varint();
      else if (f >= firstOp && f <= lastOp && wire === LEN) {
        opField = f;
        bodyEnd = x.nested();
        bodyStart = x.pos;
        x.pos = bodyEnd;
      } else x.skip(wire);
    }
    if (opField === 0 && o.unknownOp !== 'pass') throw new WireDecodeError(`${what} ${id} names no operation`);
    out.push(item({ id, second, opField, body: new Reader(buf, bodyStart, bodyEnd) }));
  }
  return out;
}
