import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../../src/client/admin.js';
import { MovementRefused } from '../../../src/node/topology/movement-driver.js';
import { RepairRefused } from '../../../src/repair/runs.js';
import { BadChange, PlanOutdated } from '../../../src/node/topology/staged.js';
import { KvError } from '../../../src/storage/index.js';
import { RingError } from '../../../src/ring/ring-errors.js';
import { adminService } from '../../../src/transport/admin-service.js';
import { serviceClient } from '../../../src/transport/protos.js';
import { STATUS_BY_CODE, type ErrorCode } from '../../../src/transport/status.js';

// The node's refusal classes carry codes of the table (checked by the compiler here).
const CODES: Record<string, ErrorCode> = {
  MovementRefused: new MovementRefused('').code,
  RepairRefused: new RepairRefused('').code,
  BadChange: new BadChange('').code,
  PlanOutdated: new PlanOutdated('').code,
};

type Deps = Parameters<typeof adminService>[0];
const fail = (e: Error) => async (): Promise<never> => {
  throw e;
};
const throwing = (e: Error) => (): never => {
  throw e;
};

/** An Admin service whose node refuses every command, each with another error. */
const deps = {
  id: 'n1',
  config: { clusterName: 'c', replicas: 3, faultInjection: 'off' },
  decommission: fail(new MovementRefused('n1 is leaving, not normal: only a normal member can be decommissioned')),
  removeNode: fail(new KvError('KV_CLOSED', 'the store is closed')),
  cleanup: fail(new Error('disk on fire')),
  admit: fail(new RingError('RING_UNKNOWN_MEMBER', 'no member n9')),
  staged: {
    plan: throwing(new BadChange('unknown change "swap": expected join, leave or remove')),
    commit: throwing(
      new PlanOutdated('the ring changed since the plan: read the new plan (ringkv plan) and commit again'),
    ),
    clear: throwing(new MovementRefused('a commit is running: its changes cannot be discarded now')),
  },
  repairs: { start: throwing(new RepairRefused('n1 owns no ranges yet: nothing to repair')), status: {} },
  clock: { offsetMs: 0, maxOffsetMs: 86_400_000, now: () => 0 },
} as unknown as Deps;

let server: grpc.Server;
let admin: AdminClient;

beforeAll(async () => {
  server = new grpc.Server();
  server.addService(serviceClient('ringkv.v1.Admin').service, adminService(deps));
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
  );
  admin = new AdminClient(`127.0.0.1:${port}`, 5000);
});

afterAll(() => {
  admin?.close();
  server?.forceShutdown();
});

describe('errors mapped once: every code has a status', () => {
  it('each code of the table maps to a gRPC status other than OK', () => {
    for (const [code, status] of Object.entries(STATUS_BY_CODE)) {
      expect(grpc.status[status], code).toBeDefined();
      expect(status, code).not.toBe(grpc.status.OK);
    }
    for (const [cls, code] of Object.entries(CODES))
      expect(Object.hasOwn(STATUS_BY_CODE, code), `${cls}: ${code}`).toBe(true);
  });
});

describe('an Admin command refused reaches the client with the status of its code', () => {
  const S = grpc.status;
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: grpc.ServiceError) => ({ code: S[e.code], details: e.details }),
    );

  it.each([
    [
      'MovementRefused (decommission)',
      () => admin.decommission(),
      'FAILED_PRECONDITION',
      'n1 is leaving, not normal: only a normal member can be decommissioned',
    ],
    [
      'MovementRefused (clear)',
      () => admin.clear(),
      'FAILED_PRECONDITION',
      'a commit is running: its changes cannot be discarded now',
    ],
    ['RepairRefused', () => admin.repair(), 'FAILED_PRECONDITION', 'n1 owns no ranges yet: nothing to repair'],
    [
      'BadChange',
      () => admin.plan([{ kind: 'join', node: 'n4' }]),
      'INVALID_ARGUMENT',
      'unknown change "swap": expected join, leave or remove',
    ],
    [
      'PlanOutdated',
      () => admin.commit(),
      'ABORTED',
      'the ring changed since the plan: read the new plan (ringkv plan) and commit again',
    ],
    [
      "the service's own: no node named",
      () => admin.removeNode(''),
      'INVALID_ARGUMENT',
      'name the node to remove: ringkv removenode ID',
    ],
    [
      "the service's own: a range that is not two tokens",
      () => admin.repair({ start: 'x', end: 'y' }),
      'INVALID_ARGUMENT',
      'a range is two tokens of 16 hex digits, START-END (as ringkv ring shows them), got "x-y"',
    ],
    [
      "the service's own: clock skew with fault injection off",
      () => admin.setClockOffset(10),
      'FAILED_PRECONDITION',
      'this node refuses clock skew: it is for fault-injection tests, which start nodes with --fault-injection on',
    ],
    ["a store's code (KV_CLOSED)", () => admin.removeNode('n2'), 'UNAVAILABLE', 'the store is closed'],
    ["the ring's code (RING_UNKNOWN_MEMBER)", () => admin.admit(), 'NOT_FOUND', 'no member n9'],
    ['an error without a code', () => admin.cleanup(), 'INTERNAL', 'internal error: disk on fire'],
  ])('%s → %s', async (_what, call, code, details) => {
    expect(await refusal(call())).toEqual({ code, details });
  });
});
