/**
 * Hostile transport-level input for a real `ringkv node` (issue 16): raw TCP and HTTP/2
 * frames over node:net, malformed gRPC over node:http2, oversized messages, floods of
 * connections, streams and control frames, and slow clients.
 *
 * Each attack is an async function of the node's address ("127.0.0.1:port") and bounded
 * options; it returns a plain record of what the attacker saw: a gRPC status and its
 * details, an HTTP status without one, a GOAWAY or RST_STREAM code, the connection closed
 * by the server, or no answer within the attack's time. Every loop is bounded in count and
 * in time, and every socket and session is closed before the attack returns.
 *
 * Nothing here imports src/: messages are encoded by hand (a few protobuf fields), so the
 * attacks keep working while the node's code changes.
 *
 * Owns: the sockets and sessions each attack opens. Must not: attack anything but the
 * address it is given, or leave a socket open once the attack returns.
 */
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';

// ---------------------------------------------------------------------------------------
// What an attack returns.

export interface Observed {
  readonly attack: string;
  /** What the attacker saw, in one line. */
  readonly result: string;
  /** How many attempts ended each way, when the attack made many. */
  readonly outcomes?: Readonly<Record<string, number>>;
  /** Figures of the attack itself (bytes sent, connections opened, ...). */
  readonly notes?: Readonly<Record<string, number | string | boolean>>;
  readonly ms: number;
}

const EMPTY: Buffer = Buffer.alloc(0);
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function hostPort(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(':');
  return { host: address.slice(0, i), port: Number(address.slice(i + 1)) };
}

/** Counts of each distinct string, most frequent first. */
export function tally(xs: readonly string[]): Record<string, number> {
  const m = new Map<string, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return Object.fromEntries([...m].sort((a, b) => b[1] - a[1]));
}

/** An outcome with what varies per call taken out (keys, counts of requests), so that outcomes tally. */
export function shape(s: string): string {
  return s.replace(/"[^"]*"/g, '"…"').replace(/\b\d+ (requests|calls)\b/g, 'N $1');
}

/** "a ×3; b ×1" (or just "a" when every attempt ended the same way once). */
export function summarize(counts: Readonly<Record<string, number>>): string {
  const e = Object.entries(counts);
  if (e.length === 1 && e[0]![1] === 1) return e[0]![0];
  return e.map(([k, n]) => `${k} ×${n}`).join('; ');
}

// ---------------------------------------------------------------------------------------
// gRPC status and HTTP/2 error names.

const GRPC_CODES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];
export const grpcCodeName = (c: number): string => GRPC_CODES[c] ?? `code ${c}`;

const H2_ERRORS = [
  'NO_ERROR',
  'PROTOCOL_ERROR',
  'INTERNAL_ERROR',
  'FLOW_CONTROL_ERROR',
  'SETTINGS_TIMEOUT',
  'STREAM_CLOSED',
  'FRAME_SIZE_ERROR',
  'REFUSED_STREAM',
  'CANCEL',
  'COMPRESSION_ERROR',
  'CONNECT_ERROR',
  'ENHANCE_YOUR_CALM',
  'INADEQUATE_SECURITY',
  'HTTP_1_1_REQUIRED',
];
export const h2ErrorName = (c: number): string => H2_ERRORS[c] ?? `0x${c.toString(16)}`;

// ---------------------------------------------------------------------------------------
// Raw HTTP/2 frames over net.Socket.

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
export const FRAME = {
  DATA: 0,
  HEADERS: 1,
  PRIORITY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PUSH_PROMISE: 5,
  PING: 6,
  GOAWAY: 7,
  WINDOW_UPDATE: 8,
  CONTINUATION: 9,
} as const;
const FRAME_NAMES = [
  'DATA',
  'HEADERS',
  'PRIORITY',
  'RST_STREAM',
  'SETTINGS',
  'PUSH_PROMISE',
  'PING',
  'GOAWAY',
  'WINDOW_UPDATE',
  'CONTINUATION',
];
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const;

/** One frame; `length` overrides the 24-bit length field (to lie about it). */
export function frame(
  type: number,
  flags: number,
  streamId: number,
  payload: Buffer = EMPTY,
  length = payload.length,
): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(length & 0xffffff, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(streamId >>> 0, 5);
  return Buffer.concat([h, payload]);
}

export function settingsFrame(pairs: readonly (readonly [number, number])[] = []): Buffer {
  const p = Buffer.alloc(pairs.length * 6);
  pairs.forEach(([id, v], i) => {
    p.writeUInt16BE(id, i * 6);
    p.writeUInt32BE(v >>> 0, i * 6 + 2);
  });
  return frame(FRAME.SETTINGS, 0, 0, p);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** HPACK: a literal header field without indexing, new name, no Huffman (RFC 7541 6.2.2). */
function hpackInt(value: number, prefixBits: number, firstByte: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([firstByte | value]);
  const out = [firstByte | max];
  value -= max;
  while (value >= 128) {
    out.push((value % 128) | 128);
    value = Math.floor(value / 128);
  }
  out.push(value);
  return Buffer.from(out);
}
export function hpackLiteral(name: string, value: string | Buffer): Buffer {
  const n = Buffer.from(name, 'latin1');
  const v = typeof value === 'string' ? Buffer.from(value, 'latin1') : value;
  return Buffer.concat([Buffer.from([0x00]), hpackInt(n.length, 7, 0), n, hpackInt(v.length, 7, 0), v]);
}
/** The header block of a gRPC request, all literals. */
export function grpcHeaderBlock(
  authority: string,
  path: string,
  extra: readonly (readonly [string, string | Buffer])[] = [],
): Buffer {
  const base: [string, string][] = [
    [':method', 'POST'],
    [':scheme', 'http'],
    [':path', path],
    [':authority', authority],
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
  ];
  return Buffer.concat([...base, ...extra].map(([n, v]) => hpackLiteral(n, v)));
}

export interface RawFrame {
  readonly type: number;
  readonly flags: number;
  readonly stream: number;
  readonly payload: Buffer;
}

/** The whole frames at the start of `buf` (a server's bytes, after no preface of its own). */
export function parseFrames(buf: Buffer): RawFrame[] {
  const out: RawFrame[] = [];
  let at = 0;
  while (at + 9 <= buf.length) {
    const len = buf.readUIntBE(at, 3);
    if (at + 9 + len > buf.length) break;
    out.push({
      type: buf[at + 3]!,
      flags: buf[at + 4]!,
      stream: buf.readUInt32BE(at + 5) & 0x7fffffff,
      payload: buf.subarray(at + 9, at + 9 + len),
    });
    at += 9 + len;
  }
  return out;
}

function describeFrame(f: RawFrame): string {
  const name = FRAME_NAMES[f.type] ?? `type${f.type}`;
  switch (f.type) {
    case FRAME.SETTINGS:
      return f.flags & FLAG.ACK ? 'SETTINGS-ACK' : 'SETTINGS';
    case FRAME.PING:
      return f.flags & FLAG.ACK ? 'PING-ACK' : 'PING';
    case FRAME.GOAWAY: {
      const code = f.payload.length >= 8 ? f.payload.readUInt32BE(4) : -1;
      const debug = f.payload.subarray(8).toString('latin1');
      return `GOAWAY ${h2ErrorName(code)}${debug ? ` "${debug.slice(0, 80)}"` : ''}`;
    }
    case FRAME.RST_STREAM:
      return `RST_STREAM ${f.payload.length >= 4 ? h2ErrorName(f.payload.readUInt32BE(0)) : '?'}`;
    case FRAME.HEADERS:
      return `HEADERS${f.flags & FLAG.END_STREAM ? '(end)' : ''}`;
    case FRAME.DATA:
      return `DATA${f.flags & FLAG.END_STREAM ? '(end)' : ''}`;
    default:
      return name;
  }
}

/** "SETTINGS, SETTINGS-ACK, GOAWAY PROTOCOL_ERROR" with repeats folded ("PING-ACK ×1000"). */
export function describeFrames(frames: readonly RawFrame[]): string {
  const parts: [string, number][] = [];
  for (const f of frames) {
    const d = describeFrame(f);
    const last = parts[parts.length - 1];
    if (last !== undefined && last[0] === d) last[1]++;
    else parts.push([d, 1]);
  }
  return parts.map(([d, n]) => (n > 1 ? `${d} ×${n}` : d)).join(', ');
}

/** The GOAWAY code the server sent, if any. */
export function goawayIn(frames: readonly RawFrame[]): number | undefined {
  const g = frames.find((f) => f.type === FRAME.GOAWAY);
  return g !== undefined && g.payload.length >= 8 ? g.payload.readUInt32BE(4) : undefined;
}

export interface RawConn {
  readonly socket: net.Socket;
  /** Write, waiting while the socket's buffer is full; false once the connection is gone. */
  write(b: Buffer): Promise<boolean>;
  readonly closed: boolean;
  /** Sleep, returning early (false) when the connection closes. */
  sleep(ms: number): Promise<boolean>;
  /** Bytes the server has sent so far. */
  received(): Buffer;
}

export interface RawResult {
  readonly connected: boolean;
  readonly received: Buffer;
  /** How the connection ended: by the server (FIN or RST), or still open when we closed it. */
  readonly end: 'server-fin' | 'server-reset' | 'still open' | 'connect failed';
  readonly error?: string;
  readonly ms: number;
  readonly bytesSent: number;
}

/**
 * Connect, run `script`, then wait up to `lingerMs` for the server to close; close it
 * ourselves after that (or once `timeoutMs` passes, whatever the script is doing).
 */
export async function rawConversation(
  address: string,
  script: (c: RawConn) => Promise<void>,
  o: { timeoutMs: number; lingerMs?: number },
): Promise<RawResult> {
  const started = Date.now();
  const { host, port } = hostPort(address);
  const socket = net.connect({ host, port });
  const chunks: Buffer[] = [];
  let end: RawResult['end'] | undefined;
  let error: string | undefined;
  let closed = false;
  let bytesSent = 0;
  const closedP = new Promise<void>((resolve) => socket.once('close', () => ((closed = true), resolve())));
  socket.on('data', (d: Buffer) => chunks.push(d));
  socket.on('end', () => (end ??= 'server-fin'));
  socket.on('error', (e: NodeJS.ErrnoException) => {
    error ??= e.code ?? e.message;
    if (e.code === 'ECONNRESET' || e.code === 'EPIPE') end ??= 'server-reset';
  });
  const connected = await new Promise<boolean>((resolve) => {
    socket.once('connect', () => resolve(true));
    socket.once('close', () => resolve(false));
  });
  if (!connected)
    return { connected, received: EMPTY, end: 'connect failed', error, ms: Date.now() - started, bytesSent };
  const conn: RawConn = {
    socket,
    get closed() {
      return closed || socket.destroyed;
    },
    async write(b) {
      if (closed || socket.destroyed || !socket.writable) return false;
      bytesSent += b.length;
      if (socket.write(b)) return true;
      await Promise.race([new Promise((r) => socket.once('drain', r)), closedP]);
      return !closed;
    },
    async sleep(ms) {
      await Promise.race([sleep(ms), closedP]);
      return !closed;
    },
    received: () => Buffer.concat(chunks),
  };
  const deadline = sleep(o.timeoutMs).then(() => 'timeout' as const);
  await Promise.race([script(conn).catch((e: Error) => void (error ??= e.message)), deadline, closedP]);
  const left = Math.max(0, o.timeoutMs - (Date.now() - started));
  await Promise.race([closedP, sleep(Math.min(o.lingerMs ?? 1000, left))]);
  if (!closed) {
    end ??= 'still open';
    socket.destroy();
    await closedP;
  }
  return {
    connected,
    received: Buffer.concat(chunks),
    end: end ?? 'still open',
    error,
    ms: Date.now() - started,
    bytesSent,
  };
}

/** What a raw conversation shows: the server's frames (or bytes, when not HTTP/2) and how it ended. */
export function describeRaw(r: RawResult): string {
  if (!r.connected) return `connect failed (${r.error ?? '?'})`;
  const parts: string[] = [];
  const frames = parseFrames(r.received);
  const looksH2 = frames.length > 0 && frames[0]!.type === FRAME.SETTINGS;
  if (r.received.length === 0) parts.push('no bytes back');
  else if (looksH2) parts.push(describeFrames(frames));
  else parts.push(`${r.received.length} bytes back: ${JSON.stringify(r.received.subarray(0, 60).toString('latin1'))}`);
  parts.push(
    r.end === 'server-fin'
      ? 'connection closed by server'
      : r.end === 'server-reset'
        ? `connection reset by server (${r.error})`
        : 'connection still open when the attacker closed it',
  );
  return parts.join('; ');
}

function rawObserved(attack: string, r: RawResult, notes: Record<string, number | string | boolean> = {}): Observed {
  return {
    attack,
    result: describeRaw(r),
    ms: r.ms,
    notes: { bytesSent: r.bytesSent, bytesBack: r.received.length, ...notes },
  };
}

// ---------------------------------------------------------------------------------------
// Raw TCP and HTTP/2 framing attacks.

/** Random bytes, then (on a second connection) a valid-looking HTTP/1.1 request, then both on one. */
export async function tcpGarbage(address: string, o: { bytes?: number; timeoutMs?: number } = {}): Promise<Observed[]> {
  const bytes = o.bytes ?? 64 * 1024;
  const timeoutMs = o.timeoutMs ?? 5000;
  const http1 = Buffer.from(
    `GET / HTTP/1.1\r\nHost: ${address}\r\nUser-Agent: hostile\r\nAccept: */*\r\n\r\n`,
    'latin1',
  );
  const post = Buffer.from(
    `POST /ringkv.v1.KeyValue/Put HTTP/1.1\r\nHost: ${address}\r\nContent-Type: application/grpc\r\nContent-Length: 5\r\n\r\n\0\0\0\0\0`,
    'latin1',
  );
  const out: Observed[] = [];
  out.push(
    rawObserved(
      'tcp: random bytes',
      await rawConversation(address, async (c) => void (await c.write(randomBytes(bytes))), { timeoutMs }),
    ),
  );
  out.push(
    rawObserved(
      'tcp: HTTP/1.1 GET',
      await rawConversation(address, async (c) => void (await c.write(http1)), { timeoutMs }),
    ),
  );
  out.push(
    rawObserved(
      'tcp: HTTP/1.1 POST to a gRPC path',
      await rawConversation(address, async (c) => void (await c.write(post)), { timeoutMs }),
    ),
  );
  out.push(
    rawObserved(
      'tcp: random bytes then HTTP/1.1 GET',
      await rawConversation(
        address,
        async (c) => {
          if (await c.write(randomBytes(1024))) await c.write(http1);
        },
        { timeoutMs },
      ),
    ),
  );
  return out;
}

/** A preface with one byte wrong, a truncated one, and HTTP/2 frames with no preface at all. */
export async function badPreface(address: string, o: { timeoutMs?: number } = {}): Promise<Observed[]> {
  const timeoutMs = o.timeoutMs ?? 5000;
  const wrong = Buffer.from(PREFACE);
  wrong[5] = 0x58; // PRI * XTTP/2.0
  const cases: [string, Buffer, boolean][] = [
    ['h2: preface with a wrong byte', Buffer.concat([wrong, settingsFrame()]), false],
    ['h2: preface cut short, then silence', PREFACE.subarray(0, 10), true],
    ['h2: frames without a preface', Buffer.concat([settingsFrame(), frame(FRAME.PING, 0, 0, Buffer.alloc(8))]), false],
  ];
  const out: Observed[] = [];
  for (const [name, bytes, quiet] of cases) {
    out.push(
      rawObserved(
        name,
        await rawConversation(address, async (c) => void (await c.write(bytes)), {
          timeoutMs,
          lingerMs: quiet ? timeoutMs : 1000,
        }),
      ),
    );
  }
  return out;
}

/** A proper preface and SETTINGS, then random bytes. */
export async function prefaceThenGarbage(
  address: string,
  o: { bytes?: number; timeoutMs?: number } = {},
): Promise<Observed> {
  const r = await rawConversation(
    address,
    async (c) => {
      if (!(await c.write(Buffer.concat([PREFACE, settingsFrame()])))) return;
      await c.sleep(100);
      await c.write(randomBytes(o.bytes ?? 16 * 1024));
    },
    { timeoutMs: o.timeoutMs ?? 5000 },
  );
  return rawObserved('h2: preface + SETTINGS, then random bytes', r);
}

/** Frames no server should accept, each on its own connection after a proper preface + SETTINGS. */
export async function invalidFrames(
  address: string,
  o: { timeoutMs?: number; lingerMs?: number } = {},
): Promise<Observed[]> {
  const timeoutMs = o.timeoutMs ?? 5000;
  const lingerMs = o.lingerMs ?? 1500;
  const authority = address;
  const headers = grpcHeaderBlock(authority, '/ringkv.v1.KeyValue/Get');
  const cases: [string, () => Buffer[]][] = [
    [
      'frame: unknown type 0xEE (must be ignored)',
      () => [frame(0xee, 0xff, 0, randomBytes(64)), frame(FRAME.PING, 0, 0, Buffer.alloc(8))],
    ],
    ['frame: DATA longer than SETTINGS_MAX_FRAME_SIZE (1 MiB)', () => [frame(FRAME.DATA, 0, 1, Buffer.alloc(1 << 20))]],
    ['frame: header claims 16 MiB, 100 bytes sent', () => [frame(FRAME.DATA, 0, 1, Buffer.alloc(100), 0xffffff)]],
    ['frame: SETTINGS of 7 bytes', () => [frame(FRAME.SETTINGS, 0, 0, Buffer.alloc(7))]],
    ['frame: SETTINGS on stream 1', () => [frame(FRAME.SETTINGS, 0, 1, EMPTY)]],
    ['frame: SETTINGS initial window 2^31', () => [settingsFrame([[0x4, 0x80000000]])]],
    ['frame: PING of 3 bytes', () => [frame(FRAME.PING, 0, 0, Buffer.alloc(3))]],
    ['frame: WINDOW_UPDATE increment 0 on the connection', () => [frame(FRAME.WINDOW_UPDATE, 0, 0, u32(0))]],
    [
      'frame: WINDOW_UPDATE overflowing the window',
      () => [frame(FRAME.WINDOW_UPDATE, 0, 0, u32(0x7fffffff)), frame(FRAME.WINDOW_UPDATE, 0, 0, u32(0x7fffffff))],
    ],
    ['frame: DATA on stream 0', () => [frame(FRAME.DATA, 0, 0, Buffer.alloc(10))]],
    ['frame: DATA on an idle stream', () => [frame(FRAME.DATA, 0, 7, Buffer.alloc(10))]],
    ['frame: HEADERS on an even (server) stream id', () => [frame(FRAME.HEADERS, FLAG.END_HEADERS, 2, headers)]],
    [
      'frame: HEADERS with garbage HPACK',
      () => [frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, randomBytes(200))],
    ],
    [
      'frame: HEADERS with padding longer than the frame',
      () => [
        frame(
          FRAME.HEADERS,
          FLAG.END_HEADERS | FLAG.PADDED,
          1,
          Buffer.concat([Buffer.from([250]), headers.subarray(0, 20)]),
        ),
      ],
    ],
    [
      'frame: stream depends on itself (PRIORITY)',
      () => [frame(FRAME.PRIORITY, 0, 1, Buffer.concat([u32(1), Buffer.from([16])]))],
    ],
    ['frame: CONTINUATION without HEADERS', () => [frame(FRAME.CONTINUATION, FLAG.END_HEADERS, 1, headers)]],
    [
      'frame: PUSH_PROMISE from a client',
      () => [frame(FRAME.PUSH_PROMISE, FLAG.END_HEADERS, 1, Buffer.concat([u32(2), headers]))],
    ],
    ['frame: RST_STREAM on an idle stream', () => [frame(FRAME.RST_STREAM, 0, 5, u32(8))]],
    [
      'frame: stream ids going backwards',
      () => [frame(FRAME.HEADERS, FLAG.END_HEADERS, 5, headers), frame(FRAME.HEADERS, FLAG.END_HEADERS, 3, headers)],
    ],
  ];
  const out: Observed[] = [];
  for (const [name, make] of cases) {
    const r = await rawConversation(
      address,
      async (c) => {
        if (!(await c.write(Buffer.concat([PREFACE, settingsFrame()])))) return;
        await c.sleep(50);
        for (const f of make()) if (!(await c.write(f))) return;
      },
      { timeoutMs, lingerMs },
    );
    out.push(rawObserved(name, r));
  }
  return out;
}

/**
 * HEADERS without END_HEADERS on stream 1, then CONTINUATION frames (CVE-2024-27983 and the
 * 2024 CONTINUATION-flood class): `frames` of `frameBytes` each, every one a new literal header.
 */
export async function continuationFlood(
  address: string,
  o: { frames: number; frameBytes: number; timeoutMs?: number },
): Promise<Observed> {
  let sent = 0;
  const r = await rawConversation(
    address,
    async (c) => {
      if (
        !(await c.write(
          Buffer.concat([
            PREFACE,
            settingsFrame(),
            frame(FRAME.HEADERS, 0, 1, grpcHeaderBlock(address, '/ringkv.v1.KeyValue/Get')),
          ]),
        ))
      )
        return;
      for (let i = 0; i < o.frames; i++) {
        const body =
          o.frameBytes === 0 ? EMPTY : hpackLiteral(`x-c${i}`, Buffer.alloc(Math.max(0, o.frameBytes - 16), 0x61));
        if (!(await c.write(frame(FRAME.CONTINUATION, 0, 1, body)))) return;
        sent++;
      }
    },
    { timeoutMs: o.timeoutMs ?? 20_000, lingerMs: 2000 },
  );
  return rawObserved(`CONTINUATION flood: ${o.frames} × ${o.frameBytes} B, never END_HEADERS`, r, {
    continuationsSent: sent,
  });
}

/** One gRPC request whose header block is `bytes` of metadata, sent as HEADERS + CONTINUATION. */
export async function hugeHeaders(
  address: string,
  o: { bytes: number; headerBytes?: number; timeoutMs?: number },
): Promise<Observed> {
  const each = o.headerBytes ?? 8 * 1024;
  const extra: [string, string][] = [];
  for (let n = 0, i = 0; n < o.bytes; n += each, i++) extra.push([`x-big-${i}`, 'a'.repeat(each)]);
  const block = grpcHeaderBlock(address, '/ringkv.v1.KeyValue/Get', extra);
  const frames: Buffer[] = [];
  for (let at = 0; at < block.length; at += 16384) {
    const part = block.subarray(at, at + 16384);
    const last = at + 16384 >= block.length;
    frames.push(frame(at === 0 ? FRAME.HEADERS : FRAME.CONTINUATION, last ? FLAG.END_HEADERS : 0, 1, part));
  }
  // A valid GetRequest after the headers: key "k".
  const body = grpcMessage(Buffer.from([0x0a, 0x01, 0x6b]));
  const r = await rawConversation(
    address,
    async (c) => {
      if (!(await c.write(Buffer.concat([PREFACE, settingsFrame()])))) return;
      for (const f of frames) if (!(await c.write(f))) return;
      await c.write(frame(FRAME.DATA, FLAG.END_STREAM, 1, body));
    },
    { timeoutMs: o.timeoutMs ?? 10_000, lingerMs: 2000 },
  );
  return rawObserved(`huge metadata: ${(block.length / 1024).toFixed(0)} KiB header block on one request`, r);
}

/**
 * `connections` connections that each commit a protocol error (DATA on stream 0), get the
 * server's GOAWAY, and then simply stay open for `holdMs`: does the server close them?
 */
export async function goawayZombies(address: string, o: { connections: number; holdMs: number }): Promise<Observed> {
  const started = Date.now();
  const rs = await Promise.all(
    Array.from({ length: o.connections }, () =>
      rawConversation(
        address,
        async (c) => {
          if (!(await c.write(Buffer.concat([PREFACE, settingsFrame()])))) return;
          await c.sleep(20);
          await c.write(frame(FRAME.DATA, 0, 0, Buffer.alloc(10)));
        },
        { timeoutMs: o.holdMs, lingerMs: o.holdMs },
      ),
    ),
  );
  const outcomes = tally(
    rs.map((r) => `${describeRaw(r)}${r.end === 'still open' ? '' : ` after ${Math.round(r.ms / 1000)} s`}`),
  );
  return {
    attack: `GOAWAY zombies: ${o.connections} connections after a protocol error, held ${o.holdMs / 1000} s`,
    result: summarize(outcomes),
    outcomes,
    ms: Date.now() - started,
  };
}

/** Control frames the server must answer (PING, SETTINGS) as fast as we can write them, never reading the answers. */
export async function controlFlood(
  address: string,
  o: {
    kind: 'ping' | 'settings' | 'empty-data' | 'window-update';
    count: number;
    timeoutMs?: number;
    pauseReading?: boolean;
  },
): Promise<Observed> {
  let sent = 0;
  const one = (i: number): Buffer => {
    switch (o.kind) {
      case 'ping':
        return frame(FRAME.PING, 0, 0, Buffer.alloc(8, i & 0xff));
      case 'settings':
        return settingsFrame([[0x3, 100]]);
      case 'empty-data':
        return frame(FRAME.DATA, 0, 1, EMPTY);
      case 'window-update':
        return frame(FRAME.WINDOW_UPDATE, 0, 0, u32(1));
    }
  };
  const r = await rawConversation(
    address,
    async (c) => {
      if (o.pauseReading) c.socket.pause(); // never read what the server answers: its queue of ACKs can only grow
      const open =
        o.kind === 'empty-data'
          ? [frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, grpcHeaderBlock(address, '/ringkv.v1.KeyValue/Put'))]
          : [];
      if (!(await c.write(Buffer.concat([PREFACE, settingsFrame(), ...open])))) return;
      const batch = 256;
      for (let i = 0; i < o.count; i += batch) {
        const frames: Buffer[] = [];
        for (let j = i; j < Math.min(o.count, i + batch); j++) frames.push(one(j));
        if (!(await c.write(Buffer.concat(frames)))) return;
        sent += frames.length;
      }
      c.socket.resume();
    },
    { timeoutMs: o.timeoutMs ?? 20_000, lingerMs: 2000 },
  );
  return rawObserved(`${o.kind} flood: ${o.count} frames${o.pauseReading ? ', answers unread' : ''}`, r, {
    framesSent: sent,
  });
}

// ---------------------------------------------------------------------------------------
// gRPC over node:http2.

/** The 5-byte gRPC length prefix. */
export function grpcPrefix(length: number, compressed = false): Buffer {
  const b = Buffer.alloc(5);
  b[0] = compressed ? 1 : 0;
  b.writeUInt32BE(length >>> 0, 1);
  return b;
}
export const grpcMessage = (body: Buffer, compressed = false): Buffer =>
  Buffer.concat([grpcPrefix(body.length, compressed), body]);

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 128) {
    out.push((n % 128) | 128);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return Buffer.from(out);
}
const lenField = (field: number, b: Buffer): Buffer =>
  Buffer.concat([Buffer.from([(field << 3) | 2]), varint(b.length), b]);
const varintField = (field: number, n: number): Buffer =>
  n === 0 ? EMPTY : Buffer.concat([Buffer.from([field << 3]), varint(n)]);

/** A whole PutRequest { key, value } (proto/ringkv/v1/kv.proto). */
export const putRequest = (key: Buffer, value: Buffer): Buffer => Buffer.concat([lenField(1, key), lenField(2, value)]);
export const getRequest = (key: Buffer): Buffer => lenField(1, key);

/** The bytes of a PutRequest up to its value's content, for a message of exactly `messageBytes`. */
export function putHead(key: Buffer, messageBytes: number): { head: Buffer; valueBytes: number } {
  let valueBytes = messageBytes - key.length - 8;
  for (let i = 0; i < 4; i++) {
    const head = Buffer.concat([lenField(1, key), Buffer.from([0x12]), varint(valueBytes)]);
    const want = messageBytes - head.length;
    if (want === valueBytes) return { head, valueBytes };
    valueBytes = want;
  }
  const head = Buffer.concat([lenField(1, key), Buffer.from([0x12]), varint(valueBytes)]);
  return { head, valueBytes };
}

/** KvCalls of `count` gets of `key`, ids from `firstId` (kv.proto: KvCalls/KvCall). */
export function kvGetCalls(key: Buffer, firstId: number, count: number, timeoutMs: number): Buffer {
  const calls: Buffer[] = [];
  for (let i = 0; i < count; i++)
    calls.push(
      lenField(
        1,
        Buffer.concat([varintField(1, firstId + i), varintField(2, timeoutMs), lenField(4, getRequest(key))]),
      ),
    );
  return Buffer.concat(calls);
}
export function kvPutCalls(prefix: string, firstId: number, count: number, timeoutMs: number, value: Buffer): Buffer {
  const calls: Buffer[] = [];
  for (let i = 0; i < count; i++)
    calls.push(
      lenField(
        1,
        Buffer.concat([
          varintField(1, firstId + i),
          varintField(2, timeoutMs),
          lenField(3, putRequest(Buffer.from(`${prefix}${firstId + i}`), value)),
        ]),
      ),
    );
  return Buffer.concat(calls);
}

/** A protobuf reader just big enough for KvReplies. */
class PbReader {
  at = 0;
  constructor(readonly b: Buffer) {}
  get done(): boolean {
    return this.at >= this.b.length;
  }
  varint(): number {
    let n = 0,
      mul = 1;
    for (;;) {
      const x = this.b[this.at++];
      if (x === undefined) throw new Error('truncated varint');
      n += (x & 127) * mul;
      if (x < 128) return n;
      mul *= 128;
    }
  }
  bytes(): Buffer {
    const len = this.varint();
    const v = this.b.subarray(this.at, this.at + len);
    this.at += len;
    return v;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 2) this.bytes();
    else if (wire === 1) this.at += 8;
    else if (wire === 5) this.at += 4;
    else throw new Error(`wire type ${wire}`);
  }
}

/** Each KvReply in a KvReplies message: "OK" or the error's code name. */
export function kvReplyOutcomes(msg: Buffer): { id: number; outcome: string }[] {
  const out: { id: number; outcome: string }[] = [];
  const r = new PbReader(msg);
  while (!r.done) {
    const t = r.varint();
    if (t >>> 3 !== 1 || (t & 7) !== 2) {
      r.skip(t & 7);
      continue;
    }
    const m = new PbReader(r.bytes());
    let id = 0,
      outcome = 'OK';
    while (!m.done) {
      const tt = m.varint();
      if (tt >>> 3 === 1 && (tt & 7) === 0) id = m.varint();
      else if (tt >>> 3 === 5 && (tt & 7) === 2) {
        const e = new PbReader(m.bytes());
        let code = 0,
          details = '';
        while (!e.done) {
          const et = e.varint();
          if (et >>> 3 === 1 && (et & 7) === 0) code = e.varint();
          else if (et >>> 3 === 2 && (et & 7) === 2) details = e.bytes().toString();
          else e.skip(et & 7);
        }
        outcome = `${grpcCodeName(code)}: ${details.slice(0, 100)}`;
      } else m.skip(tt & 7);
    }
    out.push({ id, outcome });
  }
  return out;
}

/** gRPC messages out of a byte stream. */
export class GrpcReader {
  #buf: Buffer = EMPTY;
  push(d: Buffer): Buffer[] {
    this.#buf = this.#buf.length === 0 ? d : Buffer.concat([this.#buf, d]);
    const out: Buffer[] = [];
    while (this.#buf.length >= 5) {
      const len = this.#buf.readUInt32BE(1);
      if (this.#buf.length < 5 + len) break;
      out.push(this.#buf.subarray(5, 5 + len));
      this.#buf = this.#buf.subarray(5 + len);
    }
    return out;
  }
}

export interface H2Conn {
  readonly session: http2.ClientHttp2Session;
  /** The GOAWAY the server sent, if any ("GOAWAY ENHANCE_YOUR_CALM"). */
  goaway: string | undefined;
  error: string | undefined;
  closed: boolean;
  close(): Promise<void>;
}

/** An HTTP/2 session to the node, once the server's SETTINGS arrived (or failed to within `timeoutMs`). */
export async function h2connect(
  address: string,
  options: http2.ClientSessionOptions = {},
  timeoutMs = 5000,
): Promise<H2Conn> {
  const session = http2.connect(`http://${address}`, {
    maxSendHeaderBlockLength: 4 << 20,
    maxSessionMemory: 1 << 20,
    ...options,
  });
  const conn: H2Conn = {
    session,
    goaway: undefined,
    error: undefined,
    closed: false,
    close: async () => {
      if (conn.closed) return;
      const done = new Promise((r) => session.once('close', r));
      session.destroy();
      await Promise.race([done, sleep(2000)]);
    },
  };
  session.on(
    'goaway',
    (code: number, _last: number, data?: Buffer) =>
      (conn.goaway ??= `GOAWAY ${h2ErrorName(code)}${data && data.length > 0 ? ` "${data.toString().slice(0, 80)}"` : ''}`),
  );
  session.on('error', (e: NodeJS.ErrnoException) => (conn.error ??= e.code ?? e.message));
  session.on('close', () => (conn.closed = true));
  session.on('frameError', () => {});
  await Promise.race([
    new Promise((r) => session.once('remoteSettings', r)),
    new Promise((r) => session.once('close', r)),
    sleep(timeoutMs),
  ]);
  return conn;
}

export interface CallOutcome {
  grpcStatus?: number;
  grpcMessage?: string;
  /** gRPC's retry advice (grpc-retry-pushback-ms), when the status carried it. */
  retryPushbackMs?: string;
  httpStatus?: number;
  rstCode?: number;
  timedOut: boolean;
  error?: string;
  /** Bytes the stream took from us (written out through flow control). */
  bytesAccepted: number;
  responseBytes: number;
  messages: Buffer[];
  ms: number;
  goaway?: string;
}

export interface Writer {
  /** Write, waiting for flow control; false once the call is over (answered, reset, closed). */
  write(b: Buffer): Promise<boolean>;
  end(b?: Buffer): void;
  readonly over: boolean;
  readonly stream: http2.ClientHttp2Stream;
}

export interface CallSpec {
  readonly path: string;
  /** Headers beyond the usual gRPC ones (which these override). */
  readonly headers?: http2.OutgoingHttpHeaders;
  /** Writes the request; the call is then waited for. */
  readonly send: (w: Writer) => Promise<void>;
  /** Give up (and cancel the stream) after this long. */
  readonly timeoutMs: number;
  /** Keep response messages (default: count their bytes only). */
  readonly collect?: boolean;
  /** Told of each response message as it arrives. */
  readonly onMessage?: (m: Buffer) => void;
  /** Do not read the response at all (a slow reader). */
  readonly noRead?: boolean;
}

/** One gRPC call on `conn`, written by `spec.send`; what came back. */
export async function grpcCall(conn: H2Conn, spec: CallSpec): Promise<CallOutcome> {
  const started = Date.now();
  const o: CallOutcome = { timedOut: false, bytesAccepted: 0, responseBytes: 0, messages: [], ms: 0 };
  if (conn.closed || conn.session.destroyed)
    return { ...o, error: `session closed${conn.goaway ? ` (${conn.goaway})` : ''}`, goaway: conn.goaway };
  let req: http2.ClientHttp2Stream;
  try {
    req = conn.session.request(
      { ':method': 'POST', ':path': spec.path, 'content-type': 'application/grpc', te: 'trailers', ...spec.headers },
      { endStream: false },
    );
  } catch (e) {
    return { ...o, error: (e as NodeJS.ErrnoException).code ?? (e as Error).message, goaway: conn.goaway };
  }
  const status = (h: http2.IncomingHttpHeaders): void => {
    if (h['grpc-status'] !== undefined) o.grpcStatus = Number(h['grpc-status']);
    const pushback = h['grpc-retry-pushback-ms'];
    if (typeof pushback === 'string') o.retryPushbackMs = pushback;
    const m = h['grpc-message'];
    if (typeof m === 'string') {
      try {
        o.grpcMessage = decodeURIComponent(m);
      } catch {
        o.grpcMessage = m;
      }
    }
  };
  req.on('response', (h) => {
    o.httpStatus = Number(h[':status']);
    status(h);
  });
  req.on('trailers', status);
  req.on('error', (e: NodeJS.ErrnoException) => (o.error ??= e.code ?? e.message));
  const reader = new GrpcReader();
  if (!spec.noRead)
    req.on('data', (d: Buffer) => {
      o.responseBytes += d.length;
      if (spec.collect || spec.onMessage) {
        for (const m of reader.push(d)) {
          if (spec.collect) o.messages.push(m);
          spec.onMessage?.(m);
        }
      }
    });
  let over = false;
  const closed = new Promise<void>((r) => req.once('close', () => ((over = true), r())));
  const ended = new Promise<void>((r) => req.once('end', r));
  const writer: Writer = {
    stream: req,
    get over() {
      return over || req.destroyed || o.grpcStatus !== undefined;
    },
    async write(b) {
      if (writer.over || !req.writable) return false;
      const ok = req.write(b, (err) => {
        if (!err) o.bytesAccepted += b.length;
      });
      if (ok) return true;
      await Promise.race([new Promise((r) => req.once('drain', r)), closed]);
      return !writer.over;
    },
    end(b) {
      if (!req.writable) return;
      if (b === undefined) req.end();
      else
        req.end(b, () => {
          o.bytesAccepted += b.length;
        });
    },
  };
  const timer = sleep(spec.timeoutMs).then(() => 'timeout' as const);
  const sent = await Promise.race([
    spec.send(writer).then(
      () => 'sent' as const,
      (e: Error) => ((o.error ??= e.message), 'sent' as const),
    ),
    timer,
  ]);
  const finished = sent === 'timeout' ? 'timeout' : await Promise.race([closed.then(() => 'closed' as const), timer]);
  if (finished === 'timeout') {
    // Give an answer that raced the timer a moment to land.
    await Promise.race([ended, sleep(20)]);
    o.timedOut = o.grpcStatus === undefined;
    if (!req.destroyed) req.close(http2.constants.NGHTTP2_CANCEL);
    await Promise.race([closed, sleep(1000)]);
  }
  if (req.rstCode !== undefined && req.rstCode !== 0) o.rstCode = req.rstCode;
  o.goaway = conn.goaway;
  o.ms = Date.now() - started;
  return o;
}

/** One line: the gRPC status, else the HTTP status, RST_STREAM, GOAWAY, error or silence. */
export function describeCall(o: CallOutcome, timeoutMs?: number): string {
  if (o.grpcStatus !== undefined) {
    const advice =
      o.retryPushbackMs !== undefined
        ? ` [grpc-retry-pushback-ms ${o.retryPushbackMs}]`
        : o.grpcStatus === 8
          ? ' [no retry advice]'
          : '';
    return `${grpcCodeName(o.grpcStatus)}${o.grpcMessage && o.grpcMessage !== 'OK' ? `: ${o.grpcMessage.slice(0, 120)}` : ''}${advice}`;
  }
  if (o.httpStatus !== undefined && o.httpStatus !== 200) return `HTTP ${o.httpStatus}, no grpc-status`;
  // A stream we cancelled ourselves at the timeout: the server said nothing.
  if (o.timedOut) return `no answer within ${timeoutMs ?? o.ms} ms`;
  if (o.rstCode !== undefined) return `RST_STREAM ${h2ErrorName(o.rstCode)}${o.goaway ? ` (${o.goaway})` : ''}`;
  if (o.goaway !== undefined) return o.goaway;
  if (o.error !== undefined) return `error ${o.error}`;
  return 'stream closed without a status';
}

/** The generic way a message of `messageBytes` is written: prefix, PutRequest head, filler chunks. */
const FILLER = Buffer.alloc(1 << 20, 0x61);
async function writePut(
  w: Writer,
  key: Buffer,
  messageBytes: number,
  upTo = messageBytes + 5,
  chunkBytes = FILLER.length,
): Promise<void> {
  const { head, valueBytes } = putHead(key, messageBytes);
  let budget = upTo;
  const first = Buffer.concat([grpcPrefix(messageBytes), head]);
  const firstPart = first.subarray(0, Math.min(first.length, budget));
  if (!(await w.write(firstPart))) return;
  budget -= firstPart.length;
  let left = Math.min(valueBytes, budget);
  while (left > 0) {
    const n = Math.min(left, chunkBytes);
    if (!(await w.write(n === FILLER.length ? FILLER : FILLER.subarray(0, n)))) return;
    left -= n;
  }
}

/** One call on a fresh session, closed afterwards. */
async function oneCall(
  address: string,
  spec: CallSpec,
  sessionOptions: http2.ClientSessionOptions = {},
): Promise<CallOutcome> {
  const conn = await h2connect(address, sessionOptions);
  try {
    return await grpcCall(conn, spec);
  } finally {
    await conn.close();
  }
}

/** gRPC-level malformed requests, each on its own connection: what status each gets. */
export async function grpcMalformed(
  address: string,
  o: { timeoutMs?: number; bombBytes?: number; metadataBytes?: number } = {},
): Promise<Observed[]> {
  const timeoutMs = o.timeoutMs ?? 5000;
  const key = Buffer.from('hostile-key');
  const put = putRequest(key, Buffer.from('v'));
  const bombBytes = o.bombBytes ?? 200 << 20;
  // A gzip bomb: `bombBytes` of zeros in one gzip member, decompressing to far over the limit.
  const bomb = gzipSync(Buffer.alloc(bombBytes), { level: 9 });
  const bigMeta = (o.metadataBytes ?? 1 << 20) / 16;
  const metadata: http2.OutgoingHttpHeaders = {};
  for (let i = 0, each = 16 * 1024; i * each < bigMeta * 16; i++) metadata[`x-big-${i}`] = 'a'.repeat(each);
  const cases: [string, CallSpec['send'], http2.OutgoingHttpHeaders?, string?][] = [
    [
      'grpc: prefix claims 1000 bytes, 10 sent, END_STREAM',
      async (w) => w.end(Buffer.concat([grpcPrefix(1000), Buffer.alloc(10)])),
    ],
    [
      'grpc: prefix claims 4 GiB (0xFFFFFFFF)',
      async (w) => w.end(Buffer.concat([grpcPrefix(0xffffffff), Buffer.alloc(1000)])),
    ],
    ['grpc: prefix cut short (3 bytes), END_STREAM', async (w) => w.end(Buffer.from([0, 0, 0]))],
    ['grpc: no message, END_STREAM (unary)', async (w) => w.end()],
    ['grpc: two messages on a unary call', async (w) => w.end(Buffer.concat([grpcMessage(put), grpcMessage(put)]))],
    [
      'grpc: garbage protobuf body',
      async (w) => w.end(grpcMessage(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x99]))),
    ],
    ['grpc: compressed flag = 1, no grpc-encoding', async (w) => w.end(grpcMessage(put, true))],
    [
      'grpc: compressed flag = 1, grpc-encoding gzip, not gzip',
      async (w) => w.end(grpcMessage(put, true)),
      { 'grpc-encoding': 'gzip' },
    ],
    ['grpc: grpc-encoding br (unsupported)', async (w) => w.end(grpcMessage(put, true)), { 'grpc-encoding': 'br' }],
    [
      `grpc: gzip bomb (${(bomb.length / 1024).toFixed(0)} KiB → ${bombBytes >> 20} MiB)`,
      async (w) => void (await w.write(grpcMessage(bomb, true)), w.end()),
      { 'grpc-encoding': 'gzip' },
    ],
    ['grpc: grpc-timeout "garbage"', async (w) => w.end(grpcMessage(put)), { 'grpc-timeout': 'garbage' }],
    [
      'grpc: grpc-timeout "99999999H" (overflows)',
      async (w) => w.end(grpcMessage(put)),
      { 'grpc-timeout': '99999999H' },
    ],
    ['grpc: grpc-timeout "0n"', async (w) => w.end(grpcMessage(put)), { 'grpc-timeout': '0n' }],
    ['grpc: content-type text/plain', async (w) => w.end(grpcMessage(put)), { 'content-type': 'text/plain' }],
    ['grpc: no content-type', async (w) => w.end(grpcMessage(put)), { 'content-type': undefined }],
    ['grpc: :method GET', async (w) => w.end(), { ':method': 'GET' }],
    [
      'grpc: unknown method /ringkv.v1.KeyValue/Nope',
      async (w) => w.end(grpcMessage(put)),
      {},
      '/ringkv.v1.KeyValue/Nope',
    ],
    ['grpc: unknown path /../../etc/passwd', async (w) => w.end(grpcMessage(put)), {}, '/../../etc/passwd'],
    ['grpc: empty key and value', async (w) => w.end(grpcMessage(putRequest(EMPTY, EMPTY)))],
    ['grpc: 64 KiB key', async (w) => w.end(grpcMessage(putRequest(Buffer.alloc(64 * 1024, 0x6b), Buffer.from('v'))))],
    [
      'grpc: Stream batch that does not decode',
      async (w) => w.end(grpcMessage(Buffer.from([0x0a, 0x05, 0xff, 0xff]))),
      {},
      '/ringkv.v1.KeyValue/Stream',
    ],
    [
      'grpc: internal Replica service, garbage',
      async (w) => w.end(grpcMessage(randomBytes(64))),
      {},
      '/ringkv.internal.v1.Replica/Read',
    ],
    [
      `grpc: ${((o.metadataBytes ?? 1 << 20) / 1024).toFixed(0)} KiB of metadata (node:http2 client)`,
      async (w) => w.end(grpcMessage(getRequest(key))),
      metadata,
      '/ringkv.v1.KeyValue/Get',
    ],
  ];
  const out: Observed[] = [];
  for (const [name, send, headers, path] of cases) {
    const started = Date.now();
    const r = await oneCall(address, { path: path ?? '/ringkv.v1.KeyValue/Put', headers, send, timeoutMs });
    out.push({
      attack: name,
      result: describeCall(r, timeoutMs),
      ms: Date.now() - started,
      notes: { bytesAccepted: r.bytesAccepted },
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Oversized messages.

export interface OversizedOptions {
  /** Messages sent. */
  readonly count: number;
  /** Size each message's length prefix claims and that we try to send, bytes. */
  readonly bytes: number;
  /** Streams at once on the one connection (1: one after the other). */
  readonly parallel: number;
  /** Per message. */
  readonly timeoutMs?: number;
  /** Stop starting messages after this long. */
  readonly maxMs?: number;
}

/**
 * `count` Put messages of `bytes` each to KeyValue/Put over one HTTP/2 connection, each on
 * its own stream, `parallel` at a time, streamed in 1 MiB chunks through flow control.
 */
export async function oversizedPuts(address: string, o: OversizedOptions): Promise<Observed> {
  const started = Date.now();
  const timeoutMs = o.timeoutMs ?? 60_000;
  const maxMs = o.maxMs ?? 300_000;
  const results: string[] = [];
  let accepted = 0,
    maxAccepted = 0,
    next = 0;
  const conns: H2Conn[] = [await h2connect(address)];
  let reconnecting: Promise<void> | undefined;
  const lane = async (): Promise<void> => {
    while (next < o.count && Date.now() - started < maxMs) {
      const i = next++;
      if (conns[conns.length - 1]!.closed) {
        // The server dropped the connection: a new one, as a client would.
        reconnecting ??= h2connect(address).then((c) => {
          conns.push(c);
          reconnecting = undefined;
        });
        await reconnecting;
      }
      const conn = conns[conns.length - 1]!;
      const r = await grpcCall(conn, {
        path: '/ringkv.v1.KeyValue/Put',
        send: (w) => writePut(w, Buffer.from(`big-${i}`), o.bytes).then(() => w.end()),
        timeoutMs,
      });
      results.push(shape(describeCall(r, timeoutMs)));
      accepted += r.bytesAccepted;
      maxAccepted = Math.max(maxAccepted, r.bytesAccepted);
    }
  };
  try {
    await Promise.all(Array.from({ length: o.parallel }, lane));
  } finally {
    await Promise.all(conns.map((c) => c.close()));
  }
  const connections = conns.length;
  const outcomes = tally(results);
  return {
    attack: `oversized: ${o.count} × ${fmtBytes(o.bytes)} Put, ${o.parallel === 1 ? 'sequential' : `${o.parallel} at a time`}`,
    result: summarize(outcomes),
    outcomes,
    ms: Date.now() - started,
    notes: { sent: results.length, bytesAcceptedTotal: accepted, bytesAcceptedMaxPerMessage: maxAccepted, connections },
  };
}

export function fmtBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(n % (1 << 30) === 0 ? 0 : 1)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(n % (1 << 20) === 0 ? 0 : 1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(0)} KiB`;
  return `${n} B`;
}

// ---------------------------------------------------------------------------------------
// Floods.

export interface FloodOptions {
  /** Raw TCP connections that send nothing. */
  readonly tcp: number;
  /** HTTP/2 sessions (preface and SETTINGS done) with no stream. */
  readonly h2: number;
  readonly holdMs: number;
  /** Connections opened at once. */
  readonly batch?: number;
  /** Bound on the whole attack. */
  readonly maxMs?: number;
  /** Called while every connection is held (e.g. to probe the node meanwhile). */
  readonly whileHeld?: () => Promise<void>;
}

/** Open `tcp` bare TCP connections and `h2` HTTP/2 sessions, hold them `holdMs`, close them all. */
export async function connectionFlood(address: string, o: FloodOptions): Promise<Observed> {
  const started = Date.now();
  const maxMs = o.maxMs ?? o.holdMs + 120_000;
  const batch = o.batch ?? 200;
  const { host, port } = hostPort(address);
  const sockets: net.Socket[] = [];
  const sessions: H2Conn[] = [];
  const errors: string[] = [];
  let tcpOpen = 0,
    tcpClosedByServer = 0,
    h2Open = 0,
    h2ClosedByServer = 0,
    closing = false;
  const openTcp = (): Promise<void> =>
    new Promise((resolve) => {
      const s = net.connect({ host, port });
      sockets.push(s);
      s.on('error', (e: NodeJS.ErrnoException) => errors.push(`tcp ${e.code ?? e.message}`));
      s.once('connect', () => {
        tcpOpen++;
        resolve();
      });
      s.once('close', () => {
        if (!closing) tcpClosedByServer++;
        resolve();
      });
      s.on('data', () => {});
    });
  for (let i = 0; i < o.tcp && Date.now() - started < maxMs; i += batch)
    await Promise.all(Array.from({ length: Math.min(batch, o.tcp - i) }, openTcp));
  for (let i = 0; i < o.h2 && Date.now() - started < maxMs; i += batch) {
    const made = await Promise.all(
      Array.from({ length: Math.min(batch, o.h2 - i) }, () => h2connect(address, {}, 10_000)),
    );
    for (const c of made) {
      sessions.push(c);
      if (!c.closed && c.session.remoteSettings !== undefined && c.error === undefined) h2Open++;
      else errors.push(`h2 ${c.error ?? c.goaway ?? 'closed before SETTINGS'}`);
      c.session.once('close', () => {
        if (!closing) h2ClosedByServer++;
      });
    }
  }
  const openedMs = Date.now() - started;
  const hold = sleep(Math.min(o.holdMs, Math.max(0, maxMs - openedMs)));
  await Promise.all([hold, o.whileHeld?.()]);
  const stillTcp = sockets.filter((s) => !s.destroyed && s.readyState === 'open').length;
  const stillH2 = sessions.filter((c) => !c.closed).length;
  closing = true;
  for (const s of sockets) s.destroy();
  await Promise.all(sessions.map((c) => c.close()));
  const errs = tally(errors);
  const result =
    `opened ${tcpOpen}/${o.tcp} TCP and ${h2Open}/${o.h2} HTTP/2 in ${openedMs} ms; after ${o.holdMs} ms ${stillTcp} TCP and ${stillH2} HTTP/2 still open` +
    (tcpClosedByServer + h2ClosedByServer > 0
      ? `; closed by server: ${tcpClosedByServer} TCP, ${h2ClosedByServer} HTTP/2`
      : '; none closed by server') +
    (errors.length > 0 ? `; errors: ${summarize(errs)}` : '');
  return {
    attack: `connection flood: ${o.tcp} TCP + ${o.h2} HTTP/2 held ${o.holdMs / 1000} s`,
    result,
    outcomes: errs,
    ms: Date.now() - started,
    notes: { tcpOpen, h2Open, stillTcp, stillH2, tcpClosedByServer, h2ClosedByServer },
  };
}

/** Streams opened and reset at once (CVE-2023-44487, "rapid reset"), `streams` of them on one connection. */
export async function rapidReset(address: string, o: { streams: number; maxMs?: number }): Promise<Observed> {
  const started = Date.now();
  const maxMs = o.maxMs ?? 30_000;
  const conn = await h2connect(address);
  let opened = 0;
  const errors: string[] = [];
  try {
    while (opened < o.streams && !conn.closed && Date.now() - started < maxMs) {
      for (let j = 0; j < 100 && opened < o.streams; j++, opened++) {
        try {
          const req = conn.session.request(
            {
              ':method': 'POST',
              ':path': '/ringkv.v1.KeyValue/Get',
              'content-type': 'application/grpc',
              te: 'trailers',
            },
            { endStream: false },
          );
          req.on('error', (e: NodeJS.ErrnoException) => errors.push(e.code ?? e.message));
          req.close(http2.constants.NGHTTP2_CANCEL);
        } catch (e) {
          errors.push((e as NodeJS.ErrnoException).code ?? (e as Error).message);
          break;
        }
      }
      await new Promise((r) => setImmediate(r));
    }
    await Promise.race([new Promise((r) => conn.session.once('close', r)), sleep(1000)]);
    const errs = tally(errors);
    const result =
      `${opened} streams opened and reset; ` +
      (conn.goaway
        ? `server sent ${conn.goaway}`
        : conn.closed
          ? `connection closed by server (${conn.error ?? 'no GOAWAY'})`
          : 'connection still open') +
      (errors.length ? `; client errors: ${summarize(errs)}` : '');
    return { attack: `rapid reset: ${o.streams} streams`, result, ms: Date.now() - started, notes: { opened } };
  } finally {
    await conn.close();
  }
}

/** Many calls at once: `unary` concurrent unary Puts on one connection, and one Stream batch of `streamCalls` Puts. */
export async function inFlightFlood(
  address: string,
  o: { unary: number; streamCalls: number; timeoutMs?: number },
): Promise<Observed[]> {
  const timeoutMs = o.timeoutMs ?? 20_000;
  const value = Buffer.alloc(100, 0x76);
  const out: Observed[] = [];
  {
    const started = Date.now();
    const conn = await h2connect(address, { peerMaxConcurrentStreams: o.unary });
    try {
      const rs = await Promise.all(
        Array.from({ length: o.unary }, (_, i) =>
          grpcCall(conn, {
            path: '/ringkv.v1.KeyValue/Put',
            send: async (w) => w.end(grpcMessage(putRequest(Buffer.from(`flood-${i}`), value))),
            timeoutMs,
          }),
        ),
      );
      const outcomes = tally(rs.map((r) => shape(describeCall(r, timeoutMs))));
      out.push({
        attack: `in-flight: ${o.unary} concurrent unary Puts, one connection`,
        result: summarize(outcomes),
        outcomes,
        ms: Date.now() - started,
      });
    } finally {
      await conn.close();
    }
  }
  {
    const started = Date.now();
    const conn = await h2connect(address);
    try {
      const replies: string[] = [];
      const r = await grpcCall(conn, {
        path: '/ringkv.v1.KeyValue/Stream',
        timeoutMs,
        onMessage: (m) => {
          for (const x of kvReplyOutcomes(m)) replies.push(shape(x.outcome));
        },
        send: async (w) => {
          if (!(await w.write(grpcMessage(kvPutCalls('sflood-', 1, o.streamCalls, timeoutMs, value))))) return;
          // Half-close once every reply is in (or the call ends, or time is nearly up).
          const end = Date.now() + timeoutMs - 500;
          while (!w.over && Date.now() < end && replies.length < o.streamCalls) await sleep(50);
          w.end();
        },
      });
      const outcomes = tally(replies);
      const all = replies;
      out.push({
        attack: `in-flight: one Stream batch of ${o.streamCalls} Puts`,
        result: `${all.length} replies: ${summarize(outcomes)}; stream ended ${describeCall(r, timeoutMs)}`,
        outcomes,
        ms: Date.now() - started,
      });
    } finally {
      await conn.close();
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Slow clients.

/** `connections` connections that each send the preface (then SETTINGS) one byte every `intervalMs`. */
export async function slowPreface(
  address: string,
  o: { connections: number; intervalMs?: number; maxMs: number },
): Promise<Observed> {
  const started = Date.now();
  const intervalMs = o.intervalMs ?? 1000;
  const bytes = Buffer.concat([PREFACE, settingsFrame()]);
  const rs = await Promise.all(
    Array.from({ length: o.connections }, () =>
      rawConversation(
        address,
        async (c) => {
          for (let i = 0; i < bytes.length && Date.now() - started < o.maxMs; i++) {
            if (!(await c.write(bytes.subarray(i, i + 1)))) return;
            if (!(await c.sleep(intervalMs))) return;
          }
          await c.sleep(Math.max(0, o.maxMs - (Date.now() - started)));
        },
        { timeoutMs: o.maxMs + 100, lingerMs: 0 },
      ),
    ),
  );
  const outcomes = tally(
    rs.map(
      (r) =>
        `${r.end}${r.end === 'server-fin' || r.end === 'server-reset' ? ` after ${Math.round(r.ms / 1000)} s` : ''}`,
    ),
  );
  const sent = rs.reduce((a, r) => a + r.bytesSent, 0) / Math.max(1, rs.length);
  return {
    attack: `slow preface: ${o.connections} connection(s), 1 byte / ${intervalMs / 1000} s`,
    result: `${summarize(outcomes)} (${sent.toFixed(0)} bytes sent each; first answer: ${describeRaw(rs[0]!)})`,
    outcomes,
    ms: Date.now() - started,
  };
}

/**
 * A client that opens KeyValue/Stream with a receive window of `windowBytes` and pipelines
 * `gets` Gets of a `valueBytes` value, never reading a reply: the node's replies back up.
 */
export async function streamNoRead(
  address: string,
  o: { valueBytes: number; gets: number; batch?: number; holdMs: number; windowBytes?: number },
): Promise<Observed> {
  const started = Date.now();
  // A key of its own: a blind put beside an earlier run's value would make siblings, and bigger replies.
  const key = Buffer.from(
    `hostile-slow-reader-${o.valueBytes}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`,
  );
  const seed = await oneCall(address, {
    path: '/ringkv.v1.KeyValue/Put',
    send: async (w) => w.end(grpcMessage(putRequest(key, Buffer.alloc(o.valueBytes, 0x73)))),
    timeoutMs: 10_000,
  });
  if (seed.grpcStatus !== 0)
    return {
      attack: 'slow reader',
      result: `could not write the value first: ${describeCall(seed)}`,
      ms: Date.now() - started,
    };
  const batch = o.batch ?? 50;
  const conn = await h2connect(address, { settings: { initialWindowSize: o.windowBytes ?? 0 } });
  let sent = 0;
  try {
    const r = await grpcCall(conn, {
      path: '/ringkv.v1.KeyValue/Stream',
      noRead: true,
      timeoutMs: o.holdMs,
      send: async (w) => {
        while (sent < o.gets && !w.over && Date.now() - started < o.holdMs) {
          const n = Math.min(batch, o.gets - sent);
          if (!(await w.write(grpcMessage(kvGetCalls(key, sent + 1, n, 60_000))))) break;
          sent += n;
          await sleep(10);
        }
        // Hold the stream open, unread, until the time is up.
        while (!w.over && Date.now() - started < o.holdMs) await sleep(100);
      },
    });
    const state =
      r.timedOut || !r.grpcStatus
        ? `stream still open after ${Math.round((Date.now() - started) / 1000)} s, nothing read (${fmtBytes(sent * o.valueBytes)} of replies owed)`
        : describeCall(r);
    return {
      attack: `slow reader: Stream of ${o.gets} Gets of a ${fmtBytes(o.valueBytes)} value, window ${o.windowBytes ?? 0}`,
      result: `${sent} Gets sent; ${state}${conn.goaway ? `; ${conn.goaway}` : ''}`,
      ms: Date.now() - started,
      notes: { sent, repliesOwedBytes: sent * o.valueBytes },
    };
  } finally {
    await conn.close();
  }
}

/**
 * `streams` unary Puts (spread over `connections` connections) that each send `fraction` of a
 * `messageBytes` message, then stall until `holdMs` passes; with `grpcTimeout`, each also
 * carries that grpc-timeout header.
 */
export async function stalledPuts(
  address: string,
  o: {
    streams: number;
    connections?: number;
    messageBytes: number;
    fraction: number;
    holdMs: number;
    grpcTimeout?: string;
  },
): Promise<Observed> {
  const started = Date.now();
  const connections = Math.max(1, Math.min(o.connections ?? 1, o.streams));
  const conns = await Promise.all(Array.from({ length: connections }, () => h2connect(address)));
  const upTo = Math.max(1, Math.min(o.messageBytes + 4, Math.floor((o.messageBytes + 5) * o.fraction)));
  try {
    const rs = await Promise.all(
      Array.from({ length: o.streams }, (_, i) =>
        grpcCall(conns[i % connections]!, {
          path: '/ringkv.v1.KeyValue/Put',
          headers: o.grpcTimeout ? { 'grpc-timeout': o.grpcTimeout } : {},
          timeoutMs: o.holdMs,
          send: async (w) => {
            await writePut(w, Buffer.from(`stall-${i}`), o.messageBytes, upTo, 64 * 1024);
            while (!w.over && Date.now() - started < o.holdMs) await sleep(100);
          },
        }),
      ),
    );
    const outcomes = tally(rs.map((r) => (r.timedOut ? 'held open by the server, no answer' : shape(describeCall(r)))));
    const accepted = rs.reduce((a, r) => a + r.bytesAccepted, 0);
    return {
      attack: `stalled Puts: ${o.streams} × ${(o.fraction * 100).toFixed(0)}% of ${fmtBytes(o.messageBytes)} over ${connections} conn.${o.grpcTimeout ? `, grpc-timeout ${o.grpcTimeout}` : ''}, held ${o.holdMs / 1000} s`,
      result: `${summarize(outcomes)}; ${fmtBytes(accepted)} taken by the server`,
      outcomes,
      ms: Date.now() - started,
      notes: { bytesAccepted: accepted },
    };
  } finally {
    await Promise.all(conns.map((c) => c.close()));
  }
}
