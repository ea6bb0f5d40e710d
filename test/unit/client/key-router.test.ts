import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MemberStatus, RingReply, StatusReply } from '../../../src/client/admin.js';
import { KeyRouter } from '../../../src/client/key-router.js';
import { type Ring, claimRing, tokenHex } from '../../../src/ring/index.js';

const member = (id: string, status = 'normal'): MemberStatus =>
  ({ id, address: `addr-of-${id}`, status }) as MemberStatus;

/** What Admin Ring and Status answer for `ring` (as admin-service.ts builds them). */
function replies(ring: Ring, n: number, members: MemberStatus[]): [RingReply, StatusReply] {
  const ranges = ring
    .ranges(n)
    .map((x) => ({ start: tokenHex(x.start), end: tokenHex(x.end), replicas: [...x.replicas] }));
  return [{ replicas: n, ranges, pending: [] }, { members } as unknown as StatusReply];
}

describe('KeyRouter', () => {
  it("sends a key to its replicas' addresses, primary first, as the ring places it", () => {
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const ring = claimRing(
      ids.map((id, i) => ({ id, zone: `z${i % 3}` })),
      3,
      { tokensPerNode: 16, seed: 'router' },
    );
    const router = new KeyRouter(
      ...replies(
        ring,
        3,
        ids.map((id) => member(id)),
      ),
    );
    expect(router.size).toBe(80);
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 40 }), (key) => {
        expect(router.replicasOf(key)).toEqual(ring.preferenceList(key, 3).map((id) => `addr-of-${id}`));
      }),
      { seed: 15, numRuns: 2000 },
    );
  });

  it('leaves out members that do not serve requests (joining) or whose address it does not know, and knows nothing of an empty ring', () => {
    const ring = claimRing(
      ['a', 'b', 'c'].map((id) => ({ id, zone: id })),
      3,
      { tokensPerNode: 4, seed: 'router' },
    );
    const router = new KeyRouter(...replies(ring, 3, [member('a'), member('b', 'joining')]));
    for (const k of ['x', 'y', 'z']) expect(router.replicasOf(Buffer.from(k))).toEqual(['addr-of-a']);
    expect(
      new KeyRouter({ replicas: 3, ranges: [], pending: [] }, { members: [] } as unknown as StatusReply).replicasOf(
        Buffer.from('k'),
      ),
    ).toEqual([]);
  });

  it('counts as down the members the answering node saw down, and those that announced they are stopping (a drain)', () => {
    const ring = claimRing(
      ['a', 'b', 'c'].map((id) => ({ id, zone: id })),
      3,
      { tokensPerNode: 4, seed: 'router' },
    );
    const m = (id: string, up: boolean, stopping: boolean): MemberStatus => ({ ...member(id), up, stopping });
    const router = new KeyRouter(...replies(ring, 3, [m('a', true, false), m('b', false, false), m('c', true, true)]));
    expect(['a', 'b', 'c'].map((id) => router.isDown(`addr-of-${id}`))).toEqual([false, true, true]);
  });
});
