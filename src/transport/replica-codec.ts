/**
 * The Replica service's stream messages (proto/ringkv/internal/v1/replica.proto:
 * ReplicaCalls and ReplicaReplies), encoded and decoded by hand rather than through
 * proto-loader's dynamic objects: one exact-size buffer per batch, and fields decoded as
 * views of the received buffer, not copies. The bytes are plain protobuf, so grpcurl and
 * reflection describe them truly. (bench/replica-codec.ts measures the difference.)
 *
 * Owns: the byte layout of a batch. Must not: know what the calls mean (replica-wire.ts
 * maps them to ReplicaApi and LocalReplica).
 */

export type WireCall =
  | { id: number; deadline: number; op: 'apply'; key: Buffer; value: Buffer | null; context: Buffer }
  | { id: number; deadline: number; op: 'merge'; key: Buffer; record: Buffer; hintFor: string }
  | { id: number; deadline: number; op: 'read'; key: Buffer; hintFor: string }
  | { id: number; deadline: number; op: 'digest'; key: Buffer };

export type WireReply =
  | { id: number; op: 'apply'; record: Buffer; context: Buffer }
  | { id: number; op: 'merge'; changed: boolean }
  | { id: number; op: 'read'; record: Buffer | undefined }
  | { id: number; op: 'digest'; digest: Buffer }
  | { id: number; op: 'error'; code: string; message: string };

export class WireDecodeError extends Error {
  override name = 'WireDecodeError';
}

// Field numbers, as in replica.proto.
const CALL_OP = { apply: 3, merge: 4, read: 5, digest: 6 } as const;
const REPLY_OP = { apply: 2, merge: 3, read: 4, digest: 5, error: 6 } as const;
const LEN = 2, VARINT = 0;

function varintSize(n: number): number {
  let s = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    s++;
  }
  return s;
}

/** A length-delimited field of `len` bytes; proto3 leaves empty ones out. */
const bytesField = (len: number): number => (len === 0 ? 0 : 1 + varintSize(len) + len);
/** A sub-message field: always written, even empty (it says which op this is). */
const messageField = (len: number): number => 1 + varintSize(len) + len;
const varintField = (n: number): number => (n === 0 ? 0 : 1 + varintSize(n));

class Writer {
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
    const len = b.length;
    if (len === 0) return;
    this.tag(field, LEN);
    this.varint(len);
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

function callBody(c: WireCall): number {
  switch (c.op) {
    case 'apply':
      return bytesField(c.key.length) + bytesField(c.value?.length ?? 0) + (c.value === null ? 2 : 0) + bytesField(c.context.length);
    case 'merge':
      return bytesField(c.key.length) + bytesField(c.record.length) + bytesField(Buffer.byteLength(c.hintFor));
    case 'read':
      return bytesField(c.key.length) + bytesField(Buffer.byteLength(c.hintFor));
    case 'digest':
      return bytesField(c.key.length);
  }
}

/** Bytes one call takes in a batch (ReplicaCalls field 1). */
export function callSize(c: WireCall): number {
  const body = callBody(c);
  return messageField(varintField(c.id) + varintField(c.deadline) + messageField(body));
}

/** ReplicaCalls holding `calls`. */
export function encodeCalls(calls: readonly WireCall[]): Buffer {
  const bodies = calls.map(callBody);
  const sizes = calls.map((c, i) => varintField(c.id) + varintField(c.deadline) + messageField(bodies[i]!));
  const w = new Writer(Buffer.allocUnsafe(sizes.reduce((a, s) => a + messageField(s), 0)));
  calls.forEach((c, i) => {
    w.message(1, sizes[i]!);
    w.uint(1, c.id);
    w.uint(2, c.deadline);
    w.message(CALL_OP[c.op], bodies[i]!);
    switch (c.op) {
      case 'apply':
        w.bytes(1, c.key);
        if (c.value !== null) w.bytes(2, c.value);
        else w.uint(3, 1);
        w.bytes(4, c.context);
        break;
      case 'merge':
        w.bytes(1, c.key);
        w.bytes(2, c.record);
        w.string(3, c.hintFor, Buffer.byteLength(c.hintFor));
        break;
      case 'read':
        w.bytes(1, c.key);
        w.string(2, c.hintFor, Buffer.byteLength(c.hintFor));
        break;
      case 'digest':
        w.bytes(1, c.key);
        break;
    }
  });
  return w.buf;
}

function replyBody(r: WireReply): number {
  switch (r.op) {
    case 'apply':
      return bytesField(r.record.length) + bytesField(r.context.length);
    case 'merge':
      return r.changed ? 2 : 0;
    case 'read':
      return r.record === undefined ? 0 : 2 + bytesField(r.record.length);
    case 'digest':
      return bytesField(r.digest.length);
    case 'error':
      return bytesField(Buffer.byteLength(r.code)) + bytesField(Buffer.byteLength(r.message));
  }
}

/** Bytes one reply takes in a batch (ReplicaReplies field 1). */
export function replySize(r: WireReply): number {
  return messageField(varintField(r.id) + messageField(replyBody(r)));
}

/** ReplicaReplies holding `replies`. */
export function encodeReplies(replies: readonly WireReply[]): Buffer {
  const bodies = replies.map(replyBody);
  const sizes = replies.map((r, i) => varintField(r.id) + messageField(bodies[i]!));
  const w = new Writer(Buffer.allocUnsafe(sizes.reduce((a, s) => a + messageField(s), 0)));
  replies.forEach((r, i) => {
    w.message(1, sizes[i]!);
    w.uint(1, r.id);
    w.message(REPLY_OP[r.op], bodies[i]!);
    switch (r.op) {
      case 'apply':
        w.bytes(1, r.record);
        w.bytes(2, r.context);
        break;
      case 'merge':
        w.uint(1, r.changed ? 1 : 0);
        break;
      case 'read':
        if (r.record !== undefined) {
          w.uint(1, 1);
          w.bytes(2, r.record);
        }
        break;
      case 'digest':
        w.bytes(1, r.digest);
        break;
      case 'error':
        w.string(1, r.code, Buffer.byteLength(r.code));
        w.string(2, r.message, Buffer.byteLength(r.message));
        break;
    }
  });
  return w.buf;
}

const EMPTY: Buffer = Buffer.alloc(0);

class Reader {
  constructor(
    readonly buf: Buffer,
    public pos: number,
    readonly end: number,
  ) {}

  get done(): boolean {
    return this.pos >= this.end;
  }

  varint(): number {
    let n = 0, m = 1;
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
    if (len > this.end - this.pos) throw new WireDecodeError(`a field of ${len} bytes runs past the end of its message`);
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
    else if (wire === LEN) this.pos += this.length();
    else if (wire === 1) this.pos += 8;
    else if (wire === 5) this.pos += 4;
    else throw new WireDecodeError(`unknown wire type ${wire}`);
    if (this.pos > this.end) throw new WireDecodeError('a field runs past the end of its message');
  }
}

function expect(wire: number, want: number, what: string): void {
  if (wire !== want) throw new WireDecodeError(`${what} has wire type ${wire}, not ${want}`);
}

const CALL_OPS = ['apply', 'merge', 'read', 'digest'] as const;
const REPLY_OPS = ['apply', 'merge', 'read', 'digest', 'error'] as const;

/** The ReplicaCalls in `buf`. Throws WireDecodeError when it is not one. */
export function decodeCalls(buf: Buffer): WireCall[] {
  const out: WireCall[] = [];
  const r = new Reader(buf, 0, buf.length);
  while (!r.done) {
    const t = r.tag();
    if (t >>> 3 !== 1) r.skip(t & 7);
    else {
      expect(t & 7, LEN, 'a call');
      const end = r.nested();
      out.push(decodeCall(r, end));
      r.pos = end;
    }
  }
  return out;
}

function decodeCall(outer: Reader, end: number): WireCall {
  const r = new Reader(outer.buf, outer.pos, end);
  let id = 0, deadline = 0, op: (typeof CALL_OPS)[number] | undefined, body = 0, bodyEnd = 0;
  while (!r.done) {
    const t = r.tag(), f = t >>> 3, wire = t & 7;
    if (f === 1 && wire === VARINT) id = r.varint();
    else if (f === 2 && wire === VARINT) deadline = r.varint();
    else if (f >= 3 && f <= 6 && wire === LEN) {
      op = CALL_OPS[f - 3];
      bodyEnd = r.nested();
      body = r.pos;
      r.pos = bodyEnd;
    } else r.skip(wire);
  }
  if (op === undefined) throw new WireDecodeError(`call ${id} names no operation`);
  const b = new Reader(r.buf, body, bodyEnd);
  let key = EMPTY, value = EMPTY, tombstone = false, context = EMPTY, record = EMPTY, hintFor = '';
  while (!b.done) {
    const t = b.tag(), f = t >>> 3, wire = t & 7;
    // Field numbers per message (replica.proto): key is 1 everywhere.
    if (f === 1 && wire === LEN) key = b.bytes();
    else if (op === 'apply' && f === 2 && wire === LEN) value = b.bytes();
    else if (op === 'apply' && f === 3 && wire === VARINT) tombstone = b.varint() !== 0;
    else if (op === 'apply' && f === 4 && wire === LEN) context = b.bytes();
    else if (op === 'merge' && f === 2 && wire === LEN) record = b.bytes();
    else if (((op === 'merge' && f === 3) || (op === 'read' && f === 2)) && wire === LEN) hintFor = b.string();
    else b.skip(wire);
  }
  switch (op) {
    case 'apply':
      return { id, deadline, op, key, value: tombstone ? null : value, context };
    case 'merge':
      return { id, deadline, op, key, record, hintFor };
    case 'read':
      return { id, deadline, op, key, hintFor };
    case 'digest':
      return { id, deadline, op, key };
  }
}

/** The ReplicaReplies in `buf`. Throws WireDecodeError when it is not one. */
export function decodeReplies(buf: Buffer): WireReply[] {
  const out: WireReply[] = [];
  const r = new Reader(buf, 0, buf.length);
  while (!r.done) {
    const t = r.tag();
    if (t >>> 3 !== 1) r.skip(t & 7);
    else {
      expect(t & 7, LEN, 'a reply');
      const end = r.nested();
      out.push(decodeReply(r, end));
      r.pos = end;
    }
  }
  return out;
}

function decodeReply(outer: Reader, end: number): WireReply {
  const r = new Reader(outer.buf, outer.pos, end);
  let id = 0, op: (typeof REPLY_OPS)[number] | undefined, body = 0, bodyEnd = 0;
  while (!r.done) {
    const t = r.tag(), f = t >>> 3, wire = t & 7;
    if (f === 1 && wire === VARINT) id = r.varint();
    else if (f >= 2 && f <= 6 && wire === LEN) {
      op = REPLY_OPS[f - 2];
      bodyEnd = r.nested();
      body = r.pos;
      r.pos = bodyEnd;
    } else r.skip(wire);
  }
  if (op === undefined) throw new WireDecodeError(`reply ${id} names no result`);
  const b = new Reader(r.buf, body, bodyEnd);
  let first = EMPTY, second = EMPTY, flag = false;
  while (!b.done) {
    const t = b.tag(), f = t >>> 3, wire = t & 7;
    if (f === 1 && wire === VARINT) flag = b.varint() !== 0;
    else if (f === 1 && wire === LEN) first = b.bytes();
    else if (f === 2 && wire === LEN) second = b.bytes();
    else b.skip(wire);
  }
  switch (op) {
    case 'apply':
      return { id, op, record: first, context: second };
    case 'merge':
      return { id, op, changed: flag };
    case 'read':
      return { id, op, record: flag ? second : undefined };
    case 'digest':
      return { id, op, digest: first };
    case 'error':
      return { id, op, code: first.toString('utf8'), message: second.toString('utf8') };
  }
}
