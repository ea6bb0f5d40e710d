/**
 * The client and a node's retry advice: a RESOURCE_EXHAUSTED that carries
 * grpc-retry-pushback-ms (the node refused before doing any of the call) sends the call to
 * the next node, and the refusing node goes last for as long as it asked; one without
 * advice is final. Two in-process KeyValue servers with the node's own service code in
 * front of a scripted coordinator.
 */
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, pushbackMs } from '../../../src/client/index.js';
import { ReplicationError } from '../../../src/replication/replication-errors.js';
import { fakeKvServer } from '../../../testkit/fake-kv-node.js';

type Answer = 'ok' | 'overloaded' | 'too-large';

/** A node whose coordinator answers as `answer` says, counting the calls it got. */
class FakeNode {
  answer: Answer = 'ok';
  calls = 0;
  server: grpc.Server | undefined;
  address = '';

  async start(): Promise<void> {
    const run = async <T>(value: T): Promise<T> => {
      this.calls++;
      if (this.answer === 'overloaded')
        throw new ReplicationError(
          'RK_OVERLOADED',
          'this node already coordinates 1 requests (the limit); back off and retry, or spread requests over more nodes',
        );
      // A status with no retry advice, as grpc-js gives for a message over its cap.
      if (this.answer === 'too-large')
        throw Object.assign(new Error('too large'), {
          code: grpc.status.RESOURCE_EXHAUSTED,
          details: 'Received message larger than max',
        });
      return value;
    };
    ({ server: this.server, address: this.address } = await fakeKvServer(run));
  }
}

const a = new FakeNode();
const b = new FakeNode();

beforeAll(async () => {
  await a.start();
  await b.start();
});

afterAll(() => {
  a.server?.forceShutdown();
  b.server?.forceShutdown();
});

function reset(answerA: Answer, answerB: Answer): void {
  a.answer = answerA;
  b.answer = answerB;
  a.calls = b.calls = 0;
}

describe.each([
  ['on its stream', true],
  ['as unary calls', false],
])('the client, %s, and RESOURCE_EXHAUSTED', (_name, streaming) => {
  it('with retry advice tries the next node, and sends the following calls elsewhere while the advice lasts', async () => {
    // In turn (not adaptive), so that which node a call starts at is known.
    const c = new Client({
      nodes: [a.address, b.address],
      tokenAware: false,
      streaming,
      deadlineMs: 3000,
      adaptive: false,
    });
    try {
      // Connected to both first, so that the calls below take a few ms, not the 200 ms advice.
      reset('ok', 'ok');
      await c.get('k');
      await c.get('k');
      expect([a.calls, b.calls]).toEqual([1, 1]);
      reset('overloaded', 'ok');
      // Calls start at a, b, a in turn; each is answered by b: a refuses the first, and is
      // left alone for its 200 ms after.
      for (let i = 0; i < 3; i++) expect((await c.get('k')).found).toBe(true);
      expect(a.calls).toBe(1);
      expect(b.calls).toBe(3);
      // Once the advice has run out, a is asked again.
      a.answer = 'ok';
      await new Promise((r) => setTimeout(r, 250));
      for (let i = 0; i < 4; i++) await c.put('k', 'v');
      expect(a.calls).toBeGreaterThanOrEqual(2);
    } finally {
      c.close();
    }
  });

  it('from every node is thrown with the last node’s advice, each node tried once', async () => {
    const c = new Client({ nodes: [a.address, b.address], tokenAware: false, streaming, deadlineMs: 3000 });
    try {
      reset('overloaded', 'overloaded');
      const e = (await c.put('k', 'v').catch((x: unknown) => x)) as grpc.ServiceError;
      expect(e).toMatchObject({
        code: grpc.status.RESOURCE_EXHAUSTED,
        details: expect.stringMatching(/already coordinates 1 requests/),
      });
      expect(pushbackMs(e)).toBe(200);
      expect(a.calls + b.calls).toBe(2);
    } finally {
      c.close();
    }
  });
});

describe('the client and a RESOURCE_EXHAUSTED without retry advice', () => {
  // As grpc-js answers a unary call whose message is over its cap. On the stream, such a
  // message breaks the stream itself; a call refused there is refused by the node's limits.
  it('takes it as final: no other node is tried', async () => {
    const c = new Client({ nodes: [a.address, b.address], tokenAware: false, streaming: false, deadlineMs: 3000 });
    try {
      reset('too-large', 'too-large');
      const e = (await c.delete('k').catch((x: unknown) => x)) as grpc.ServiceError;
      expect(e).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
      expect(pushbackMs(e)).toBeUndefined();
      expect(a.calls + b.calls).toBe(1);
    } finally {
      c.close();
    }
  });
});

describe('pushbackMs', () => {
  const refused = (code: grpc.status, advice?: string): grpc.ServiceError => {
    const metadata = new grpc.Metadata();
    if (advice !== undefined) metadata.set('grpc-retry-pushback-ms', advice);
    return Object.assign(new Error('x'), { code, details: 'x', metadata });
  };

  it('reads a count of ms from RESOURCE_EXHAUSTED only; a negative or malformed one means do not retry (gRPC)', () => {
    expect(pushbackMs(refused(grpc.status.RESOURCE_EXHAUSTED, '200'))).toBe(200);
    expect(pushbackMs(refused(grpc.status.RESOURCE_EXHAUSTED, '0'))).toBe(0);
    expect(pushbackMs(refused(grpc.status.RESOURCE_EXHAUSTED))).toBeUndefined();
    expect(pushbackMs(refused(grpc.status.RESOURCE_EXHAUSTED, '-1'))).toBeUndefined();
    expect(pushbackMs(refused(grpc.status.RESOURCE_EXHAUSTED, 'soon'))).toBeUndefined();
    expect(pushbackMs(refused(grpc.status.UNAVAILABLE, '200'))).toBeUndefined();
  });
});
