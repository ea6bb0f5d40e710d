/**
 * The Paxos core's rules one by one (src/kinds/register/acceptor.ts, src/replication/paxos.ts): ballots, the acceptor's
 * promise, accept and commit, what a proposer makes of a prepare round, and the
 * compare-and-set decision. The whole under a hostile network is
 * test/property/paxos.property.test.ts's.
 */
import {
  EMPTY_ACCEPTOR,
  HISTORY_LENGTH,
  NO_BALLOT,
  compareBallots,
  joinAcceptors,
  onCommit,
  onPrepare,
  onPropose,
  type Acceptor,
  type Ballot,
  type Link,
  type PrepareReply,
  type Proposal,
} from '../../../src/kinds/index.js';
import { describe, expect, it } from 'vitest';
import { afterPrepare, decide, mayHaveBeenAccepted, nextBallot, quorumOf } from '../../../src/replication/paxos.js';

const b = (n: number, by = 'x'): Ballot => ({ n, by });
const p = (n: number, value: string | null, id = `r${n}`, by = 'x'): Proposal<string> => ({
  ballot: b(n, by),
  value,
  id,
});
/** A commit of request `id` decided on `base` (none: on an absent register). */
const on = (n: number, value: string, id: string, base?: string): Proposal<string> => ({
  ...p(n, value, id),
  ...(base === undefined ? {} : { base }),
});
const eq = (x: string, y: string): boolean => x === y;
/** A proposal's link in the chain (its value dropped), as a history holds it. */
const link = ({ value: _, ...l }: Proposal<string>): Link => l;

describe('ballots', () => {
  it('order by number, then by proposer; the next is above what was seen and a floor', () => {
    expect(compareBallots(b(2, 'a'), b(1, 'z'))).toBeGreaterThan(0);
    expect(compareBallots(b(2, 'a'), b(2, 'b'))).toBeLessThan(0);
    expect(compareBallots(b(2, 'a'), b(2, 'a'))).toBe(0);
    expect(nextBallot(b(7, 'q'), 'p')).toEqual(b(8, 'p'));
    expect(nextBallot(b(7, 'q'), 'p', 1000)).toEqual(b(1000, 'p'));
    expect(compareBallots(NO_BALLOT, b(1, ''))).toBeLessThan(0);
    expect(quorumOf(3)).toBe(2);
    expect(quorumOf(5)).toBe(3);
    expect(quorumOf(4)).toBe(3);
  });
});

describe('the acceptor', () => {
  it('promises only above its promise, and answers what it accepted and committed', () => {
    const a0: Acceptor<string> = EMPTY_ACCEPTOR;
    const first = onPrepare(a0, b(5));
    expect(first.reply).toEqual({ promised: true, accepted: undefined, committed: undefined, history: [] });
    expect(onPrepare(first.acceptor, b(5)).reply).toEqual({ promised: false, higher: b(5) });
    expect(onPrepare(first.acceptor, b(4)).reply).toEqual({ promised: false, higher: b(5) });
    const accepted = onPropose(first.acceptor, p(5, 'v')).acceptor;
    expect(onPrepare(accepted, b(6)).reply).toEqual({
      promised: true,
      accepted: p(5, 'v'),
      committed: undefined,
      history: [],
    });
  });

  it('accepts at or above its promise, refuses below, naming the promise', () => {
    const a = onPrepare(EMPTY_ACCEPTOR as Acceptor<string>, b(5)).acceptor;
    expect(onPropose(a, p(4, 'old')).reply).toEqual({ accepted: false, higher: b(5) });
    expect(onPropose(a, p(5, 'v')).acceptor.accepted).toEqual(p(5, 'v'));
    expect(onPropose(a, p(9, 'w')).acceptor.promised).toEqual(b(9));
  });

  it('keeps the newest commit, drops the accepted proposal it covers, and raises the promise', () => {
    let a: Acceptor<string> = onPropose(EMPTY_ACCEPTOR as Acceptor<string>, p(3, 'v')).acceptor;
    a = onCommit(a, p(3, 'v'));
    expect(a).toEqual({ promised: b(3), accepted: undefined, committed: p(3, 'v'), history: [] });
    expect(onCommit(a, p(3, 'v'))).toEqual(a); // the same commit again changes nothing
    expect(onCommit(a, p(2, 'older'))).toEqual({ ...a, history: [link(p(2, 'older'))] }); // an older one is only remembered
    a = onPropose(a, p(7, 'w')).acceptor;
    expect(onCommit(a, p(5, 'u'))).toEqual({
      promised: b(7),
      accepted: p(7, 'w'),
      committed: p(5, 'u'),
      history: [link(p(3, 'v'))],
    }); // a newer proposal stays
  });

  it('remembers the last HISTORY_LENGTH commits before the latest, newest first, and a join keeps the newest of both', () => {
    let a: Acceptor<string> = EMPTY_ACCEPTOR;
    for (let n = 1; n <= 12; n++) a = onCommit(a, on(n, `v${n}`, `r${n}`, n > 1 ? `r${n - 1}` : undefined));
    expect(a.committed?.id).toBe('r12');
    expect(a.history.map((l) => l.id)).toEqual(['r11', 'r10', 'r9', 'r8', 'r7', 'r6', 'r5', 'r4']);
    expect(a.history).toHaveLength(HISTORY_LENGTH);
    expect(a.history[0]).toEqual({ ballot: b(11), id: 'r11', base: 'r10' });
    // A replica that missed r9 to r11 learns them from one that saw them, and the commits it alone saw stay.
    let gap: Acceptor<string> = EMPTY_ACCEPTOR;
    for (const n of [1, 2, 3, 12]) gap = onCommit(gap, on(n, `v${n}`, `r${n}`));
    const j = joinAcceptors(gap, onCommit(EMPTY_ACCEPTOR as Acceptor<string>, on(10, 'v10', 'r10')), (x, y) =>
      compareBallots(x.ballot, y.ballot),
    );
    expect(j.committed?.id).toBe('r12');
    expect(j.history.map((l) => l.id)).toEqual(['r10', 'r3', 'r2', 'r1']);
  });
});

describe('a prepare round', () => {
  const promise = (
    accepted?: Proposal<string>,
    committed?: Proposal<string>,
    history: Link[] = [],
  ): PrepareReply<string> => ({ promised: true, accepted, committed, history });
  const refused = (n: number): PrepareReply<string> => ({ promised: false, higher: b(n) });

  it('retries above the highest refusal without a quorum of promises', () => {
    expect(afterPrepare([promise(), refused(9), refused(4)], 2)).toEqual({ kind: 'retry', higher: b(9) });
    expect(afterPrepare([promise()], 2)).toEqual({ kind: 'retry', higher: NO_BALLOT });
  });

  it('finishes the newest proposal accepted above the latest commit', () => {
    expect(afterPrepare([promise(p(4, 'a'), p(2, 'c')), promise(p(6, 'b'), p(3, 'd')), refused(9)], 2)).toEqual({
      kind: 'finish',
      value: 'b',
      id: 'r6',
    });
    // One at or below the latest commit is no decree in progress.
    expect(afterPrepare([promise(p(3, 'a'), undefined), promise(undefined, p(3, 'a'))], 2)).toEqual({
      kind: 'current',
      committed: p(3, 'a'),
      lagging: [0],
      known: [],
    });
  });

  it('gives the latest commit, and which promises lag it', () => {
    expect(afterPrepare([promise(undefined, p(2, 'x')), promise(undefined, p(5, 'y')), promise()], 2)).toEqual({
      kind: 'current',
      committed: p(5, 'y'),
      lagging: [0, 2],
      known: [p(2, 'x')],
    });
    expect(afterPrepare([promise(), promise()], 2)).toEqual({
      kind: 'current',
      committed: undefined,
      lagging: [],
      known: [],
    });
  });

  it("knows the earlier commits the promises remember: their histories, and a lagging replica's commit", () => {
    const r2 = on(2, 'b', 'r2', 'r1'),
      r3 = on(3, 'c', 'r3', 'r2'),
      r4 = on(4, 'd', 'r4', 'r3');
    const next = afterPrepare(
      [promise(undefined, r4, [link(r3), link(r2)]), promise(undefined, r2, [link(on(1, 'a', 'r1'))]), refused(9)],
      2,
    );
    expect(next).toEqual({
      kind: 'current',
      committed: r4,
      lagging: [1],
      known: [link(r3), link(r2), r2, link(on(1, 'a', 'r1'))],
    });
  });
});

describe('the compare-and-set decision', () => {
  it('proposes when the condition holds, refuses with the value held when not', () => {
    expect(decide({ expect: null, value: 'v' }, 'r', undefined, false, eq)).toEqual({ kind: 'propose', value: 'v' }); // if absent
    expect(decide({ expect: null, value: 'v' }, 'r', p(1, 'w'), false, eq)).toEqual({
      kind: 'not-applied',
      current: 'w',
    });
    expect(decide({ expect: 'w', value: 'v' }, 'r', p(1, 'w'), false, eq)).toEqual({ kind: 'propose', value: 'v' });
    expect(decide({ expect: 'w', value: 'v' }, 'r', p(1, null), false, eq)).toEqual({
      kind: 'not-applied',
      current: null,
    }); // deleted is absent
    expect(decide({ value: null }, 'r', p(1, 'w'), false, eq)).toEqual({ kind: 'propose', value: null }); // unconditional
  });

  it('is applied when the latest commit is its own; unknown, never refused, once its proposal may have been accepted', () => {
    expect(decide({ expect: 'nope', value: 'v' }, 'r1', p(1, 'v', 'r1'), true, eq)).toEqual({ kind: 'applied' });
    expect(decide({ expect: 'nope', value: 'v' }, 'r1', p(1, 'w', 'r0'), true, eq)).toEqual({ kind: 'unknown' });
    expect(decide({ expect: 'w', value: 'v' }, 'r1', p(1, 'w', 'r0'), true, eq)).toEqual({ kind: 'unknown' }); // no second proposal
    expect(mayHaveBeenAccepted(2, 3)).toBe(true);
    expect(mayHaveBeenAccepted(3, 3)).toBe(false);
  });

  it('decides afresh when another write on the same base was committed (its own proposal is dead), and not otherwise', () => {
    // Its proposal, on r0, was preempted; the latest commit is r2's, on r0 too: r0's successor is r2, not it.
    expect(
      decide({ version: 'r0', value: 'v' }, 'me', on(5, 'w', 'r2', 'r0'), true, eq, { base: 'r0', ballot: b(1) }),
    ).toEqual({ kind: 'not-applied', current: 'w' });
    expect(decide({ value: 'v' }, 'me', on(5, 'w', 'r2', 'r0'), true, eq, { base: 'r0', ballot: b(1) })).toEqual({
      kind: 'propose',
      value: 'v',
    });
    // On a register never written: the first commit is another's.
    expect(
      decide({ version: null, value: 'v' }, 'me', on(5, 'w', 'r2'), true, eq, { base: undefined, ballot: b(1) }),
    ).toEqual({ kind: 'not-applied', current: 'w' });
    // The latest commit is on another base: its own may have been committed before it. Unknown.
    expect(
      decide({ version: 'r0', value: 'v' }, 'me', on(5, 'w', 'r3', 'r2'), true, eq, { base: 'r0', ballot: b(1) }),
    ).toEqual({ kind: 'unknown' });
  });

  it('proposes the same write again on the same base while nothing was committed since, and stays may-have-applied', () => {
    // The latest commit is still its base: of its two proposals on r0 at most one can be chosen.
    expect(
      decide({ version: 'r0', value: 'v' }, 'me', on(1, 'u', 'r0'), true, eq, { base: 'r0', ballot: b(1) }),
    ).toEqual({ kind: 'propose', value: 'v', again: true });
    expect(decide({ expect: null, value: 'v' }, 'me', undefined, true, eq, { base: undefined, ballot: b(1) })).toEqual({
      kind: 'propose',
      value: 'v',
      again: true,
    });
    // Never "not applied" while the first may yet be chosen, even were the condition not to hold.
    expect(
      decide({ version: 'r9', value: 'v' }, 'me', on(1, 'u', 'r0'), true, eq, { base: 'r0', ballot: b(1) }),
    ).toEqual({ kind: 'unknown' });
    // Why it stays may-have-applied: the first proposal finished by another round, then writes on top of it.
    // That commit proves nothing about it: unknown (had it forgotten, "not applied" would be a lie).
    expect(
      decide({ version: 'r0', value: 'v' }, 'me', on(9, 'x', 'r6', 'r5'), true, eq, { base: 'r0', ballot: b(1) }),
    ).toEqual({ kind: 'unknown' });
    // But a commit decided on its own proves its own was chosen.
    expect(
      decide({ version: 'r0', value: 'v' }, 'me', on(9, 'x', 'r5', 'me'), true, eq, { base: 'r0', ballot: b(1) }),
    ).toEqual({ kind: 'applied' });
    expect(decide({ version: 'r0', value: 'v' }, 'me', on(9, 'x', 'r5', 'me'), false, eq)).toEqual({ kind: 'applied' });
  });

  it('reads its fate in the earlier commits the replicas remember when more than one was committed since its base', () => {
    // Its proposal on r0 was preempted; r5 (on r0) and r6 (on r5) were committed since. r5 took r0's place: its own is dead.
    const later = on(9, 'x', 'r6', 'r5');
    expect(
      decide({ version: 'r0', value: 'v' }, 'me', later, true, eq, { base: 'r0', ballot: b(1) }, [
        link(on(7, 'w', 'r5', 'r0')),
      ]),
    ).toEqual({ kind: 'not-applied', current: 'x' });
    expect(
      decide({ value: 'v' }, 'me', later, true, eq, { base: 'r0', ballot: b(1) }, [link(on(7, 'w', 'r5', 'r0'))]),
    ).toEqual({ kind: 'propose', value: 'v' });
    // Its own was committed on r0, and two more on top: applied, by its own link or by its successor's base.
    expect(
      decide({ version: 'r0', value: 'v' }, 'me', on(9, 'x', 'r7', 'r6'), true, eq, { base: 'r0', ballot: b(1) }, [
        link(on(8, 'y', 'r6', 'me')),
        link(on(7, 'v', 'me', 'r0')),
      ]),
    ).toEqual({ kind: 'applied' });
    expect(
      decide({ version: 'r0', value: 'v' }, 'me', on(9, 'x', 'r7', 'r6'), true, eq, { base: 'r0', ballot: b(1) }, [
        link(on(8, 'y', 'r6', 'me')),
      ]),
    ).toEqual({ kind: 'applied' });
    // A retry by request id, nothing of it in flight: applied while the replicas remember its commit.
    expect(
      decide({ version: 'r0', value: 'v' }, 'me', on(9, 'x', 'r7', 'r6'), false, eq, undefined, [
        link(on(7, 'v', 'me', 'r0')),
      ]),
    ).toEqual({ kind: 'applied' });
    // A link on its base below its own proposal's ballot is not its base's successor: a link left from an earlier use of
    // that base's request id (sent again once forgotten). Only one above it proves its own dead.
    expect(
      decide({ version: 'k', value: 'v' }, 'me', later, true, eq, { base: 'k', ballot: b(8) }, [
        link(on(3, 'old', 'x', 'k')),
      ]),
    ).toEqual({ kind: 'unknown' });
    expect(
      decide({ version: 'k', value: 'v' }, 'me', later, true, eq, { base: 'k', ballot: b(8) }, [
        link(on(8, 'w', 'x', 'k')),
      ]),
    ).toEqual({ kind: 'unknown' });
    expect(
      decide({ version: 'k', value: 'v' }, 'me', later, true, eq, { base: 'k', ballot: b(8) }, [
        link(on(9, 'w', 'x', 'k')),
      ]),
    ).toEqual({ kind: 'not-applied', current: 'x' });
    // What the replicas remember does not reach its base: unknown still.
    expect(
      decide({ version: 'r0', value: 'v' }, 'me', later, true, eq, { base: 'r0', ballot: b(1) }, [
        link(on(8, 'w', 'r5', 'r4')),
      ]),
    ).toEqual({ kind: 'unknown' });
  });

  it('a version condition holds only on that write (by request id), or on an absent key for none', () => {
    expect(decide({ version: 'r1', value: 'v' }, 'me', p(7, 'w', 'r1'), false, eq)).toEqual({
      kind: 'propose',
      value: 'v',
    });
    expect(decide({ version: 'r1', value: 'v' }, 'me', p(7, 'w', 'r2'), false, eq)).toEqual({
      kind: 'not-applied',
      current: 'w',
    });
    expect(decide({ version: null, value: 'v' }, 'me', p(7, null, 'r2'), false, eq)).toEqual({
      kind: 'propose',
      value: 'v',
    }); // deleted: absent
    expect(decide({ version: null, value: 'v' }, 'me', undefined, false, eq)).toEqual({ kind: 'propose', value: 'v' });
  });
});
