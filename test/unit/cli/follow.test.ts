/**
 * `follow` (behind decommission, removenode and commit) against a fake Admin server: a
 * driver that misses a few polls while it streams under load is still followed to the
 * end; one that stops answering for good is reported as gone.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { MISSES_BEFORE_GONE, follow } from '../../../src/cli/follow.js';
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
      cb(null, { nodeId: 'n1', movements: [], pulls: [], outgoing: [], drive: { kind: 'remove', node: 'n4', move: MOVE, phase: 'removed', startedAtMs: 1, gainers: [] }, streamBytesPerSecond: 0 });
    },
    status: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => cb(null, { clusterName: 'c', nodeId: 'n1', replicas: 3, members: [], counters: {} }),
  });
  const port = await new Promise<number>((resolve, reject) => server!.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { address: `127.0.0.1:${port}`, calls: () => calls };
}

const removed = (address: string) => (t: TransfersReply | undefined) =>
  t === undefined ? `${address} stopped answering` : t.drive?.move === MOVE && t.drive.phase === 'removed' ? true : false;

describe('follow', () => {
  it(`keeps following a driver that misses up to ${MISSES_BEFORE_GONE - 1} polls in a row`, async () => {
    const driver = await fakeDriver((n) => n < MISSES_BEFORE_GONE);
    await expect(follow('removenode n4', driver.address, MOVE, removed(driver.address), { everyMs: 10 })).resolves.toBeDefined();
    expect(driver.calls()).toBe(MISSES_BEFORE_GONE);
  });

  it(`reports the driver gone after ${MISSES_BEFORE_GONE} missed polls in a row`, async () => {
    const driver = await fakeDriver(() => true);
    await expect(follow('removenode n4', driver.address, MOVE, removed(driver.address), { everyMs: 10 })).rejects.toThrow(`${driver.address} stopped answering`);
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
