import { describe, expect, it } from 'vitest';
import { claimRing } from '../../../src/ring/index.js';
import type { RingView } from '../../../src/membership/ring-view.js';
import { repairUnitFor, type UnitRepairDeps } from '../../../src/node/topology/unit-repair.js';
import { BucketError } from '../../../src/buckets/index.js';
import { toStatus } from '../../../src/transport/status.js';
import type { RepairRangeRequest__Output } from '../../../src/transport/generated/ringkv/internal/v1/RepairRangeRequest.js';

const ring = claimRing(
  ['a', 'b', 'c', 'd'].map((id) => ({ id })),
  3,
  { tokensPerNode: 4 },
);
const range = ring.ranges(3)[0]!;
const self = range.replicas[0]!;
const hex = (t: bigint): string => t.toString(16).padStart(16, '0');

function deps(o: Partial<UnitRepairDeps> = {}): UnitRepairDeps & { asked: unknown[] } {
  const asked: unknown[] = [];
  return {
    id: self,
    replicas: 3,
    view: () => ({ ring, target: ring }) as unknown as RingView,
    isUp: () => true,
    checkClasses: () => undefined,
    repairOne: async (r, peers, n) => (
      asked.push({ r, peers, n }),
      { leavesDiffering: 1, keysExchanged: 5, bytes: 300, recordBytes: 200 }
    ),
    asked,
    ...o,
  };
}

const req = (o: Partial<RepairRangeRequest__Output> = {}): RepairRangeRequest__Output => ({
  cluster: 'c',
  from: 'z',
  start: hex(range.start),
  end: hex(range.end),
  n: 0,
  classes: [3],
  replicas: [...range.replicas],
  ...o,
});
const status = async (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => 'resolved',
    (e: unknown) => toStatus(e),
  );

describe('Control RepairRange on the replica asked', () => {
  it('repairs the unit with its other replicas, of the class asked (0: every key)', async () => {
    const d = deps();
    expect(await repairUnitFor(d, req())).toEqual({ leavesDiffering: 1, keysExchanged: 5, bytes: 300 });
    expect(d.asked).toEqual([
      { r: { start: range.start, end: range.end }, peers: range.replicas.slice(1), n: undefined },
    ]);
    const d1 = deps();
    await repairUnitFor(d1, req({ n: 3 }));
    expect(d1.asked).toMatchObject([{ n: 3 }]);
  });

  it('a malformed range or class is INVALID_ARGUMENT; a unit it may not repair now FAILED_PRECONDITION, saying why', async () => {
    expect(await status(repairUnitFor(deps(), req({ start: 'xyz' })))).toMatchObject({
      code: 3,
      details: expect.stringMatching(/a range is two tokens of 16 hex digits, got "xyz"/),
    });
    expect(await status(repairUnitFor(deps(), req({ n: 17 })))).toMatchObject({
      code: 3,
      details: expect.stringMatching(/n must be a replica count of 1-16/),
    });
    expect(await status(repairUnitFor(deps(), req({ end: hex(range.end - 1n) })))).toMatchObject({
      code: 9,
      details: expect.stringMatching(/is not a range of/),
    });
    expect(await status(repairUnitFor(deps({ isUp: (x) => x !== range.replicas[2] }), req()))).toMatchObject({
      code: 9,
      details: `${range.replicas[2]} down: the unit cannot be repaired now`,
    });
    const notReady = deps({
      checkClasses: () => {
        throw new BucketError('BK_NOT_READY', 'the bucket tables differ');
      },
    });
    expect(await status(repairUnitFor(notReady, req()))).toMatchObject({
      code: 9,
      details: 'the bucket tables differ',
    });
    expect(notReady.asked).toEqual([]);
  });
});
