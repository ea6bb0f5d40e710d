/**
 * The bytes every kind of record is written in: unsigned LEB128 varints, a bounds-checked
 * reader over a record's body, and the one error every decoder throws.
 *
 * Owns: varints (their size, writing them, reading them in their shortest form), and
 * `DecodeError`. Must not: know any kind's layout (each kind's folder owns its format).
 */

/** Thrown by the decoders; the store turns it into a KvError that names the key. */
export class DecodeError extends Error {
  override name = 'DecodeError';
}

export function varintSize(n: number): number {
  let size = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    size++;
  }
  return size;
}

export function writeVarint(buf: Buffer, pos: number, n: number): number {
  while (n >= 0x80) {
    buf[pos++] = (n % 0x80) | 0x80;
    n = Math.floor(n / 0x80);
  }
  buf[pos++] = n;
  return pos;
}

/** Reads a record's body from `start` to `end`, refusing (DecodeError) to read past `end`. */
export class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }
  byte(): number {
    if (this.pos >= this.end) throw new DecodeError('truncated');
    return this.buf[this.pos++]!;
  }
  varint(): number {
    let n = 0,
      scale = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.byte();
      n += (b & 0x7f) * scale;
      if (b < 0x80) {
        if (n > Number.MAX_SAFE_INTEGER) break;
        return n;
      }
      scale *= 0x80;
    }
    throw new DecodeError('integer out of range');
  }
  /** A varint, refused unless in its shortest form (so a canonical record re-encodes to its own bytes); `what` names the record. */
  uint(what: string): number {
    const at = this.pos,
      n = this.varint();
    if (this.pos - at !== varintSize(n)) throw new DecodeError(`${what}: an integer not in its shortest form`);
    return n;
  }
  bytes(len: number): Buffer {
    if (len > this.end - this.pos) throw new DecodeError('truncated');
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }
}

export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
