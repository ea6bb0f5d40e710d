/**
 * N classes (cluster/n-classes.ts) and the plans made per class: a key's class from its
 * bucket, the filters of a class (sending, cleanup), the refusal of a plan made on other
 * classes, a join's and a leave's transfers per class (transfer-plan.ts), and cleanup per
 * class (cleanup.ts). With one class, every plan is the plan of one N, unmarked.
 */
import { describe, expect, it } from 'vitest';
import { BucketError, BucketTable, DEFAULT_BUCKET, defaultProps, storedKey } from '../../../src/buckets/index.js';
import { claimRing, joinRing } from '../../../src/ring/index.js';
import {
  classRefusal,
  deleteFilter,
  keyClasses,
  sameClasses,
  sendFilter,
  servedFilter,
} from '../../../src/cluster/n-classes.js';
import { classTransfers, movementTransfers, planTransfers } from '../../../src/cluster/transfer-plan.js';
import { cleanupPlan } from '../../../src/cluster/cleanup.js';
import { World } from './world.js';

function table(buckets: Record<string, number>): BucketTable {
  const t = new BucketTable(3);
  for (const [name, n] of Object.entries(buckets)) t.create(name, { ...defaultProps(3), n }, 1000, 'a');
  return t;
}

const key = (bucket: string, k: string): Buffer => storedKey(bucket, Buffer.from(k));

describe('N classes of a bucket table', () => {
  it("are the distinct n in use, the cluster N among them; a key has its bucket's n, a key of an unknown bucket none", () => {
    const k = keyClasses(table({ five: 5, one: 1, other5: 5 }));
    expect(k.classes).toEqual([1, 3, 5]);
    expect(k.nOf(key(DEFAULT_BUCKET, 'x'))).toBe(3);
    expect(k.nOf(key('five', 'x'))).toBe(5);
    expect(k.nOf(key('other5', 'x'))).toBe(5);
    expect(k.nOf(key('one', 'x'))).toBe(1);
    expect(k.nOf(key('unknown', 'x'))).toBeUndefined();
    expect(keyClasses(new BucketTable(3)).classes).toEqual([3]);
    expect(keyClasses(table({ same: 3 })).classes).toEqual([3]);
  });

  it('send filter: with one class every key; with more the keys of the class; a key of an unknown bucket refuses (BK_NOT_READY)', () => {
    const one = keyClasses(table({ same: 3 }));
    const all = sendFilter(one, 0);
    expect(all(key(DEFAULT_BUCKET, 'x'))).toBe(true);
    expect(all(key('same', 'x'))).toBe(true);
    expect(sendFilter(one, 3)(key('same', 'x'))).toBe(true);
    expect(() => all(key('unknown', 'x'))).toThrow(BucketError);

    const many = keyClasses(table({ five: 5, one: 1 }));
    const c1 = sendFilter(many, 1),
      c3 = sendFilter(many, 3),
      c0 = sendFilter(many, 0);
    expect([c1(key('one', 'x')), c1(key('five', 'x')), c1(key(DEFAULT_BUCKET, 'x'))]).toEqual([true, false, false]);
    expect([c3(key('one', 'x')), c3(key('five', 'x')), c3(key(DEFAULT_BUCKET, 'x'))]).toEqual([false, false, true]);
    expect([c0(key('one', 'x')), c0(key('five', 'x')), c0(key(DEFAULT_BUCKET, 'x'))]).toEqual([true, true, true]);
    expect(() => c3(key('unknown', 'x'))).toThrow(/which this node's bucket table does not have yet: retry/);
    try {
      c1(key('unknown', 'x'));
    } catch (e) {
      expect((e as BucketError).code).toBe('BK_NOT_READY');
    }
  });

  it('delete filter: the keys of the class, never a key of an unknown bucket', () => {
    const many = keyClasses(table({ five: 5, one: 1 }));
    const d1 = deleteFilter(many, 1),
      all = deleteFilter(many, undefined);
    expect([d1(key('one', 'x')), d1(key('five', 'x')), d1(key(DEFAULT_BUCKET, 'x')), d1(key('unknown', 'x'))]).toEqual([
      true,
      false,
      false,
      false,
    ]);
    expect([all(key('one', 'x')), all(key(DEFAULT_BUCKET, 'x')), all(key('unknown', 'x'))]).toEqual([
      true,
      true,
      false,
    ]);
    const single = deleteFilter(keyClasses(new BucketTable(3)), undefined);
    expect([single(key(DEFAULT_BUCKET, 'x')), single(key('unknown', 'x'))]).toEqual([true, false]);
  });

  it('a request planned on other classes is refused with what to do; an older release (no classes) is served every key', () => {
    expect(sameClasses([1, 3], [1, 3])).toBe(true);
    expect(sameClasses([3], [1, 3])).toBe(false);
    expect(classRefusal(0, [], [1, 3])).toBeUndefined();
    expect(classRefusal(1, [1, 3], [1, 3])).toBeUndefined();
    expect(classRefusal(0, [3], [1, 3])).toMatch(
      /planned for buckets of n 3 but this node's bucket table has n 1, 3: retry once the bucket tables converge/,
    );
    expect(classRefusal(5, [1, 3], [1, 3])).toMatch(/no bucket here has n 5/);
    const many = keyClasses(table({ one: 1 }));
    expect(() => servedFilter(many, 0, [3])).toThrow(/retry once the bucket tables converge/);
    expect(servedFilter(many, 1, [1, 3])(key('one', 'x'))).toBe(true);
  });
});

describe('transfers per class', () => {
  const ring = claimRing(
    ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id })),
    3,
    { tokensPerNode: 8 },
  );
  const after = joinRing(ring, { id: 'f' }, 3);

  it('one class: the plan of its N, unmarked (as before buckets)', () => {
    expect(classTransfers(ring, after, [3])).toEqual(
      planTransfers(ring, after, 3).map((t) => ({ ...t, classes: [3] })),
    );
    expect(classTransfers(ring, after, [3]).every((t) => t.n === undefined)).toBe(true);
  });

  it('several: each class its own transfers, marked with its n, each gainer a replica of the range for that n only', () => {
    const plan = classTransfers(ring, after, [1, 3, 5]);
    for (const n of [1, 3, 5]) {
      const mine = plan.filter((t) => t.n === n);
      expect(mine.map(({ n: _, classes: __, ...t }) => t)).toEqual(planTransfers(ring, after, n));
      for (const t of mine) {
        expect(t.classes).toEqual([1, 3, 5]);
        expect(after.replicasForToken(t.end, n)).toContain(t.to);
        expect(ring.replicasForToken(t.end, n)).not.toContain(t.to);
      }
    }
    // The n=5 class moves more than the n=1 class: f gains more ranges as a fifth replica.
    expect(plan.filter((t) => t.n === 5).length).toBeGreaterThan(plan.filter((t) => t.n === 1).length);
  });

  it('a movement of the view: per class, with leaverGone; a class whose n the ring cannot exceed moves nothing', () => {
    // 5 of 5 nodes leaving one: the 4 left already hold every n=5 key (n is capped by the ring's size).
    const small = World.of(['a', 'b', 'c', 'd', 'e']);
    small.set('c', { status: 'leaving' });
    expect(movementTransfers(small.view(), [1, 5]).filter((t) => t.n === 5)).toEqual([]);
    const w = World.of(['a', 'b', 'c', 'd', 'e', 'f']);
    w.set('c', { status: 'leaving' });
    const v = w.view();
    const plan = movementTransfers(v, [1, 5]);
    expect(plan.length).toBeGreaterThan(0);
    expect(new Set(plan.map((t) => t.n))).toEqual(new Set([1, 5]));
    for (const t of plan) expect(t.leaverGone).toBe(false);
  });
});

describe('cleanup per class', () => {
  it('deletes, per class, the ranges this node is no replica of for that n (its keys only)', () => {
    const w = World.of(['a', 'b', 'c', 'd', 'e', 'f']);
    const view = w.view();
    const plan = cleanupPlan({ self: 'a', status: 'normal', view, classes: [1, 3, 5] });
    if (plan.kind !== 'delete') throw new Error(plan.message);
    for (const n of [1, 3, 5]) {
      const want = view
        .ring!.ranges(n)
        .filter((r) => !r.replicas.includes('a'))
        .map((r) => ({ ...r, n }));
      expect(plan.ranges.filter((r) => r.n === n)).toEqual(want);
    }
    // a holds an n=5 copy of more ranges than an n=1 copy: fewer ranges to clean for n=5.
    expect(plan.ranges.filter((r) => r.n === 5).length).toBeLessThan(plan.ranges.filter((r) => r.n === 1).length);
    // One class: the ranges of that N, unmarked.
    const single = cleanupPlan({ self: 'a', status: 'normal', view, classes: [3] });
    if (single.kind !== 'delete') throw new Error(single.message);
    expect(single.ranges).toEqual(view.ring!.ranges(3).filter((r) => !r.replicas.includes('a')));
  });
});
