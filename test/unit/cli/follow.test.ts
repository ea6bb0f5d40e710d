/**
 * `follow` (behind decommission, removenode and commit) against a fake Admin server: a
 * driver that misses a few polls while it streams under load is still followed to the
 * end; one that stops answering for good is reported as gone.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { MISSES_BEFORE_GONE, follow, followJoin } from '../../../src/cli/follow.js';
import { serviceClient } from '../../../src/transport/protos.js';
import type { TransfersReply } from '../../../src/client/admin.js';

const MOVE = 'remove-n4-abc';
let server: grpc.Server | undefined;

afterEach(() => {
  server?.forceShutdown();
  server = undefined;
});

/** An Admin server whose Transfers fails `failures(call)` calls, then reports the removal done. */
async function fakeDriver(fails: (call: number) => boolean): Promise<{ address: string; calls: () => number }> {
  let calls = 0;
  server = new grpc.Server();
  server.addService(serviceClient('ringkv.v1.Admin').service, {
    transfers: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => {
      calls++;
      if (fails(calls)) return cb({ code: grpc.status.DEADLINE_EXCEEDED, details: 'busy' });
      cb(null, {
        nodeId: 'n1',
        movements: [],
        pulls: [],
        outgoing: [],
        drive: { kind: 'remove', node: 'n4', move: MOVE, phase: 'removed', startedAtMs: 1, gainers: [] },
        streamBytesPerSecond: 0,
      });
    },
    status: (_call: unknown, cb: grpc.sendUnaryData<unknown>) =>
      cb(null, { clusterName: 'c', nodeId: 'n1', replicas: 3, members: [], counters: {} }),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server!.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  return { address: `127.0.0.1:${port}`, calls: () => calls };
}

const removed = (address: string) => (t: TransfersReply | undefined) =>
  t === undefined
    ? `${address} stopped answering`
    : t.drive?.move === MOVE && t.drive.phase === 'removed'
      ? true
      : false;

describe('follow', () => {
  it(`keeps following a driver that misses up to ${MISSES_BEFORE_GONE - 1} polls in a row`, async () => {
    const driver = await fakeDriver((n) => n < MISSES_BEFORE_GONE);
    await expect(
      follow('removenode n4', driver.address, MOVE, removed(driver.address), { everyMs: 10 }),
    ).resolves.toBeDefined();
    expect(driver.calls()).toBe(MISSES_BEFORE_GONE);
  });

  it(`reports the driver gone after ${MISSES_BEFORE_GONE} missed polls in a row`, async () => {
    const driver = await fakeDriver(() => true);
    await expect(
      follow('removenode n4', driver.address, MOVE, removed(driver.address), { everyMs: 10 }),
    ).rejects.toThrow(`${driver.address} stopped answering`);
    expect(driver.calls()).toBe(MISSES_BEFORE_GONE);
  });

  it('ends with a line of where the change stood when it finished, not the last 2-second line', async () => {
    const driver = await fakeDriver(() => false);
    let text = '';
    const out = { isTTY: false, write: (x: string) => ((text += x), true) } as unknown as NodeJS.WriteStream;
    await follow('removenode n4', driver.address, MOVE, removed(driver.address), { everyMs: 10, out });
    expect(text).toMatch(/^removenode n4: 0\/0 ranges, 0 keys, 0 B in \d+ s, removed\n$/m);
    expect(text.trimEnd().split('\n').at(-1)).toMatch(/, removed$/);
  });
});

describe('followJoin', () => {
  const member = (id: string, status: string, over: object = {}) => ({
    id,
    address: `127.0.0.1:700${id.slice(1)}`,
    zone: 'a',
    rack: 'r1',
    status,
    up: true,
    generation: 1,
    heartbeat: 5,
    tokens: 64,
    ownership: 0,
    loadBytes: 0,
    weight: 1,
    phi: 0,
    hints: 0,
    progress: '',
    stopping: false,
    ...over,
  });

  /** An Admin server whose Status answers `members(call)`. */
  async function fakeNode(members: (call: number) => object[]): Promise<string> {
    let calls = 0;
    server = new grpc.Server();
    server.addService(serviceClient('ringkv.v1.Admin').service, {
      status: (_call: unknown, cb: grpc.sendUnaryData<unknown>) =>
        cb(null, { clusterName: 'c', nodeId: 'n4', replicas: 3, members: members(++calls), counters: {} }),
    });
    const port = await new Promise<number>((resolve, reject) =>
      server!.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    return `127.0.0.1:${port}`;
  }
  const capture = () => {
    const o = { text: '', out: undefined as unknown as NodeJS.WriteStream };
    o.out = { isTTY: false, write: (x: string) => ((o.text += x), true) } as unknown as NodeJS.WriteStream;
    return o;
  };

  it('says which change a waiting joiner waits for, then follows it to normal', async () => {
    const address = await fakeNode((n) => [
      member('n1', 'normal'),
      member('n5', n < 3 ? 'joining' : 'normal', { progress: n < 3 ? '3/10' : '' }),
      member('n4', n < 5 ? 'joining' : 'normal'),
    ]);
    const c = capture();
    await followJoin(address, 'n4', { everyMs: 10, out: c.out });
    expect(c.text).toContain('join n4: waiting for its turn (one topology change at a time: n5 is joining)\n');
    expect(c.text).toContain(
      `join n4: waiting for its turn (no other change under way; its log's "joining: waiting" lines say what it waits for)\n`,
    );
  });

  it('stops at once with what to do when the node left or was removed, rather than wait for a join that never comes', async () => {
    for (const status of ['left', 'removed']) {
      const address = await fakeNode(() => [member('n1', 'normal'), member('n4', status, { up: false })]);
      await expect(followJoin(address, 'n4', { everyMs: 10, out: capture().out, timeoutMs: 5000 })).rejects.toThrow(
        `n4 is ${status}: it will not join; start a new node with a new id and an empty data dir`,
      );
      server!.forceShutdown();
    }
  });
});
