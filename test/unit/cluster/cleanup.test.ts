import { describe, expect, it } from 'vitest';
import {
  AUTO_CLEANUP_START,
  autoCleanupDone,
  autoCleanupPutOff,
  autoCleanupStep,
  cleanupPlan,
  type AutoCleanupState,
} from '../../../src/cluster/cleanup.js';
import type { Movement } from '../../../src/membership/ring-view.js';
import { World } from './world.js';

describe('cleanup plan', () => {
  it('deletes exactly the ranges this node holds no replica of', () => {
    const w = World.of(['a', 'b', 'c', 'd', 'e']);
    const view = w.view();
    const plan = cleanupPlan({ self: 'a', status: 'normal', view, classes: [3] });
    if (plan.kind !== 'delete') throw new Error(plan.message);
    const all = view.ring!.ranges(3);
    expect(plan.ranges.length).toBeGreaterThan(0);
    expect(plan.ranges).toEqual(all.filter((r) => !r.replicas.includes('a')));
    // With N = the ring's size, every node replicates everything: nothing to delete.
    expect(cleanupPlan({ self: 'a', status: 'normal', view, classes: [5] })).toEqual({ kind: 'delete', ranges: [] });
  });

  it('is refused while a change is in progress, and on a node that is not a normal owner', () => {
    const w = World.of(['a', 'b', 'c', 'd'], ['j']);
    expect(cleanupPlan({ self: 'j', status: 'joining', view: w.view(), classes: [3] })).toEqual({
      kind: 'refuse',
      message: 'j is joining, not an owner: nothing to clean up against',
    });
    w.set('d', { status: 'leaving' });
    expect(cleanupPlan({ self: 'a', status: 'normal', view: w.view(), classes: [3] })).toMatchObject({
      kind: 'refuse',
      message: expect.stringMatching(/^d is leaving: cleanup waits/),
    });
  });
});

describe('automatic cleanup, decided', () => {
  const moving: Movement[] = [{ kind: 'join', node: 'x', driver: 'x' }];
  const look = (
    s: AutoCleanupState,
    now: number,
    o: { fingerprint?: string; moving?: boolean; owner?: boolean; delayMs?: number } = {},
  ) =>
    autoCleanupStep(s, {
      now,
      delayMs: o.delayMs ?? 1000,
      view: { fingerprint: o.fingerprint ?? 'f', movements: o.moving ? moving : [] },
      owner: o.owner ?? true,
    });

  it('due once the ownership stood still for the delay, once per ownership', () => {
    let s = look(AUTO_CLEANUP_START, 0).state;
    expect(look(s, 999).clean).toBe(false);
    expect(look(s, 1000).clean).toBe(true);
    s = autoCleanupDone(s, 'f');
    expect(look(s, 50_000).clean).toBe(false);
    s = look(s, 60_000, { fingerprint: 'g' }).state; // a new ownership: the delay starts again
    expect(look(s, 60_999, { fingerprint: 'g' }).clean).toBe(false);
    expect(look(s, 61_000, { fingerprint: 'g' }).clean).toBe(true);
  });

  it('never while a change runs or the node is no owner; the delay counts from when that ends; 0 is never', () => {
    let s = look(AUTO_CLEANUP_START, 0, { moving: true }).state;
    expect(look(s, 10_000, { moving: true }).clean).toBe(false);
    s = look(s, 10_000, { moving: true }).state;
    s = look(s, 11_000).state; // nothing moves from here
    expect(look(s, 11_999).clean).toBe(false);
    expect(look(s, 12_000).clean).toBe(true);
    s = look(s, 12_000, { owner: false }).state;
    expect(look(s, 12_500, { owner: false }).clean).toBe(false);
    expect(look(AUTO_CLEANUP_START, 10 ** 9, { delayMs: 0 })).toEqual({ state: AUTO_CLEANUP_START, clean: false });
  });

  it('a cleanup put off (refused, failed) is due again one delay later', () => {
    let s = look(AUTO_CLEANUP_START, 0).state;
    expect(look(s, 1000).clean).toBe(true);
    s = autoCleanupPutOff(s, 1000);
    expect(look(s, 1999).clean).toBe(false);
    expect(look(s, 2000).clean).toBe(true);
  });
});
