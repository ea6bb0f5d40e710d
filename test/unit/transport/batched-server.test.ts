/**
 * The server side of a batched stream (batched-stream.ts) on a stand-in call: how replies
 * are cut into messages. A message must never pass the node's message limit because
 * small replies were queued before a large one (gRPC would break the stream, and every
 * call on it), and a reply over the limit by itself is refused alone.
 */
import { EventEmitter } from 'node:events';
import type * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { BatchedServer, FLUSH_BYTES, type ServerCodec } from '../../../src/transport/batched-stream.js';
import { NODE_MAX_MESSAGE_BYTES } from '../../../src/transport/protos.js';

interface Call {
  id: number;
  deadline: number;
  /** Bytes of its reply. */
  bytes: number;
}
interface Reply {
  id: number;
  bytes: number;
  error?: string;
}

/** A duplex call that records each message the server writes (as the ids and sizes it holds). */
class FakeCall extends EventEmitter {
  readonly messages: Reply[][] = [];
  ended = false;
  pause(): void {}
  resume(): void {}
  write(buf: Buffer, cb: () => void): boolean {
    this.messages.push(JSON.parse(buf.subarray(0, buf.indexOf(0)).toString()) as Reply[]);
    setImmediate(cb);
    return true;
  }
  end(): void {
    this.ended = true;
  }
}

/** Messages as bytes of the replies' sizes (a JSON header, zero-padded): their length is what gRPC would send. */
const codec = (tooLarge: boolean): ServerCodec<Call, Reply> => ({
  decode: (buf) => JSON.parse(buf.toString()) as Call[],
  encode: (rs) => {
    const head = Buffer.from(
      JSON.stringify(rs.map((r) => ({ id: r.id, bytes: r.bytes, ...(r.error ? { error: r.error } : {}) }))),
    );
    const size = rs.reduce((a, r) => a + r.bytes, 0);
    return Buffer.concat([head, Buffer.alloc(Math.max(size - head.length, 1))]);
  },
  size: (r) => r.bytes,
  refuse: () => undefined,
  run: async (c) => ({ id: c.id, bytes: c.bytes }),
  ...(tooLarge
    ? { tooLarge: (r: Reply, size: number): Reply => ({ id: r.id, bytes: 100, error: `too large: ${size}` }) }
    : {}),
});

async function serve(calls: Call[], tooLarge = true): Promise<FakeCall> {
  const call = new FakeCall();
  new BatchedServer().serve(call as unknown as grpc.ServerDuplexStream<Buffer, Buffer>, codec(tooLarge));
  // One message of calls: all run at once, their replies sent in the same turn.
  call.emit('data', Buffer.from(JSON.stringify(calls)));
  call.emit('end');
  for (let i = 0; i < 100 && !call.ended; i++) await new Promise((r) => setTimeout(r, 5));
  return call;
}

const sizeOf = (m: Reply[]): number => m.reduce((a, r) => a + r.bytes, 0);
const deadline = Date.now() + 60_000;

describe('batched server: replies into messages', () => {
  it('a large reply after small ones starts a message of its own, so none passes the message limit', async () => {
    // 200 KiB of small replies (under FLUSH_BYTES, so still queued), then a page or a record near the limit.
    const small = Array.from({ length: 20 }, (_, i) => ({ id: i + 1, deadline, bytes: 10 * 1024 }));
    const large = { id: 100, deadline, bytes: NODE_MAX_MESSAGE_BYTES - 32 * 1024 };
    const call = await serve([...small, large, { id: 101, deadline, bytes: 10 }]);
    expect(
      call.messages
        .flat()
        .map((r) => r.id)
        .sort((a, b) => a - b),
    ).toEqual([...small.map((c) => c.id), 100, 101]);
    for (const m of call.messages) expect(sizeOf(m)).toBeLessThanOrEqual(NODE_MAX_MESSAGE_BYTES);
    expect(call.messages.find((m) => m.some((r) => r.id === 100))).toHaveLength(1);
  });

  it('small replies still share messages, each message at most FLUSH_BYTES', async () => {
    const calls = Array.from({ length: 100 }, (_, i) => ({ id: i + 1, deadline, bytes: 30 * 1024 }));
    const call = await serve(calls);
    expect(call.messages.flat()).toHaveLength(100);
    expect(call.messages.length).toBeLessThanOrEqual(Math.ceil((100 * 30 * 1024) / FLUSH_BYTES) + 1);
    for (const m of call.messages) expect(sizeOf(m)).toBeLessThanOrEqual(FLUSH_BYTES);
  });

  it('a reply over the message limit by itself is refused alone (the codec says how); the others are sent', async () => {
    const call = await serve([
      { id: 1, deadline, bytes: 10 },
      { id: 2, deadline, bytes: NODE_MAX_MESSAGE_BYTES + 1 },
      { id: 3, deadline, bytes: 10 },
    ]);
    const replies = call.messages.flat();
    expect(replies.find((r) => r.id === 2)).toEqual({
      id: 2,
      bytes: 100,
      error: `too large: ${NODE_MAX_MESSAGE_BYTES + 1}`,
    });
    expect(replies.map((r) => r.id).sort()).toEqual([1, 2, 3]);
  });
});
