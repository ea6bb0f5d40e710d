import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { Client } from '../../../src/client/index.js';

describe('Client, before any network', () => {
  it('needs at least one node', () => {
    expect(() => new Client({ nodes: [] })).toThrow(/at least one host:port/);
  });

  it("refuses a request over a node's message limit itself with INVALID_ARGUMENT and what to do, and a key that is not bytes with a TypeError", async () => {
    // A deadline well past the first call's set-up (loading the protos, opening a channel:
    // 200 ms under CI's load), so that UNAVAILABLE, not the deadline, ends it.
    const c = new Client({ nodes: ['127.0.0.1:1'], deadlineMs: 5000 });
    try {
      await expect(c.put('k', Buffer.alloc(9 << 20))).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: /a request of \d+ bytes is over the \d+ bytes one request to a node may carry; split it/,
      });
      await expect(c.get(42 as unknown as string)).rejects.toThrow(/key must be a string or a Uint8Array, got number/);
      // Nothing listens there: UNAVAILABLE once every node was tried.
      await expect(c.get('k')).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    } finally {
      c.close();
    }
  });
});
