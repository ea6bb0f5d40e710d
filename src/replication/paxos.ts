/**
 * Compare-and-set's consensus core: single-decree Paxos per key, one decree
 * after another, as Cassandra's lightweight transactions run it among a key's replicas —
 * pure functions of their inputs, proven by test/property/paxos.property.test.ts (a
 * simulated network that delays, drops, duplicates and reorders, every history checked by
 * a linearizability search) before any process runs them.
 *
 * Each replica keeps, per key, an **acceptor** (kinds/register/acceptor.ts: the highest ballot it
 * promised, the latest proposal it accepted that it has not seen committed, the latest
 * committed proposal: the register's value, and the links of the commits before it that
 * it learned). A proposer's round:
 *
 * 1. **Prepare** with a ballot above every one it has seen; a quorum of promises carries
 *    their accepted and committed proposals (`afterPrepare`):
 *    - a proposal accepted above the latest commit may have been chosen: the proposer
 *      re-proposes it under its own ballot and commits it (finishing another's decree),
 *      then starts again;
 *    - otherwise the latest commit is the register's value at this ballot: a read answers
 *      it, and a compare-and-set decides on it (`decide`).
 * 2. **Propose** the new value under the ballot: a quorum of acceptances chooses it; the
 *    commit then goes to every replica (learning, off the client's path). Two round trips
 *    to a quorum when nothing contends.
 *
 * Every proposal carries its request's id, so a proposer that sees its own proposal
 * finished or committed knows it applied; and once a proposal of its own may have been
 * accepted anywhere without a quorum, it never answers "not applied" (another round may
 * yet finish it): only applied, or unknown.
 *
 * Owns: a proposer's ballots and what it does with its replies. Must not: do I/O, read a
 * clock, or keep state of its own (the store keeps acceptors; the coordinator will send
 * the messages).
 */
import {
  NO_BALLOT,
  compareBallots,
  maxBallot,
  type Ballot,
  type Link,
  type PrepareReply,
  type Proposal,
} from '../kinds/index.js';

/** The proposer `by`'s next ballot: above `seen` (the highest it has seen), and above `floor` (a clock in ms, say, so that restarts do not reuse ballots). */
export function nextBallot(seen: Ballot, by: string, floor = 0): Ballot {
  return { n: Math.max(seen.n + 1, floor), by };
}

/**
 * Whether a proposal that `rejections` of `n` acceptors refused may have been accepted by
 * another: unless every acceptor refused it (a refusal is final for its ballot: promises
 * only rise), an acceptance may be on its way or lost. A proposer whose own proposal may
 * have been accepted must not answer "not applied" (`decide`'s `mayHaveApplied`), nor
 * whose proposal timed out.
 */
export function mayHaveBeenAccepted(rejections: number, n: number): boolean {
  return rejections < n;
}

/** What a proposer does after a prepare round (`afterPrepare`). */
export type AfterPrepare<V> =
  /** Too few promises: start again above `higher`. */
  | { readonly kind: 'retry'; readonly higher: Ballot }
  /** A proposal accepted above the latest commit: re-propose its value and id under this ballot, commit it, start again. */
  | { readonly kind: 'finish'; readonly value: V | null; readonly id: string; readonly base?: string | undefined }
  /**
   * The register's value at this ballot (undefined: never written), the replies whose commit
   * lags it (send them the commit), and the earlier commits the promises remember (their
   * histories and lagging commits: `decide`'s `known`).
   */
  | {
      readonly kind: 'current';
      readonly committed: Proposal<V> | undefined;
      readonly lagging: readonly number[];
      readonly known: readonly Link[];
    };

/** The quorum of N replicas: a majority. */
export const quorumOf = (n: number): number => Math.floor(n / 2) + 1;

/**
 * A prepare round's outcome from its replies (one per replica that answered, in any
 * order), needing `quorum` promises. Rejections say how high to go next.
 */
export function afterPrepare<V>(replies: readonly PrepareReply<V>[], quorum: number): AfterPrepare<V> {
  let higher = NO_BALLOT;
  const promises: Extract<PrepareReply<V>, { promised: true }>[] = [];
  for (const r of replies) {
    if (r.promised) promises.push(r);
    else higher = maxBallot(higher, r.higher);
  }
  if (promises.length < quorum) return { kind: 'retry', higher };
  let committed: Proposal<V> | undefined;
  for (const r of promises)
    if (
      r.committed !== undefined &&
      (committed === undefined || compareBallots(r.committed.ballot, committed.ballot) > 0)
    )
      committed = r.committed;
  let inProgress: Proposal<V> | undefined;
  for (const r of promises) {
    const a = r.accepted;
    if (a === undefined || (committed !== undefined && compareBallots(a.ballot, committed.ballot) <= 0)) continue;
    if (inProgress === undefined || compareBallots(a.ballot, inProgress.ballot) > 0) inProgress = a;
  }
  if (inProgress !== undefined)
    return inProgress.base === undefined
      ? { kind: 'finish', value: inProgress.value, id: inProgress.id }
      : { kind: 'finish', value: inProgress.value, id: inProgress.id, base: inProgress.base };
  const lagging: number[] = [];
  if (committed !== undefined)
    replies.forEach(
      (r, i) =>
        r.promised &&
        (r.committed === undefined || compareBallots(r.committed.ballot, committed!.ballot) < 0) &&
        lagging.push(i),
    );
  const known = promises.flatMap((r) =>
    r.committed === undefined || r.committed === committed ? r.history : [r.committed, ...r.history],
  );
  return { kind: 'current', committed, lagging, known };
}

/**
 * A conditional write, decided on the register's value at the proposer's ballot:
 * `expect` undefined writes whatever is there (an unconditional write through consensus);
 * null writes only if absent; a value writes only if the register holds exactly that.
 * `equal` compares values. With `version` (what a client's context names: casContext)
 * instead, it writes only if the latest commit is the write of that request id; null:
 * only if absent.
 */
export interface Condition<V> {
  readonly expect?: V | null;
  readonly version?: string | null;
  readonly value: V | null;
}

/** What a compare-and-set does with the register's value at its ballot (`decide`). */
export type Decision<V> =
  /** `again`: the same write proposed again on the same base (a proposal of it may have been accepted): still may-have-applied. */
  | { readonly kind: 'propose'; readonly value: V | null; readonly again?: true }
  | { readonly kind: 'applied' }
  | { readonly kind: 'not-applied'; readonly current: V | null }
  | { readonly kind: 'unknown' };

/**
 * The decision of request `id` given the register's latest commit at its ballot (`current`)
 * and earlier commits the replicas remember (`known`, newest or not: acceptor.ts history):
 * applied already when one of them is its own, or was decided on its own (its base: commits
 * form a chain, below); not applied when the condition fails —
 * unless a proposal of its own may have been accepted somewhere (`mayHaveApplied`), which
 * another round could still finish: then unknown, never "not applied", and it proposes
 * nothing more (a second proposal could apply it twice).
 *
 * Except when that proposal is known dead: `own` is its base and the highest ballot it was
 * proposed at, and a commit known (the latest or an earlier one) is another's decided on
 * that same base, at a higher ballot. Commits form a chain (each decided on the one
 * before), so that base's successor is another's, and a proposal of a lower ballot on the
 * same base can never be chosen after it (a round above it meets the later commit first).
 * A commit chosen on a base is above every other proposal on it (a prepare above the
 * commit's ballot would have met it, and finished it instead of proposing on that base),
 * so the ballot test loses no real case; it rules out a link left from an earlier use of
 * the same base's request id (a client may send an id again once it is forgotten). Then
 * it decides afresh — as several writers on one version all do once one has won. The
 * replicas' histories reach back up to HISTORY_LENGTH commits, so a proposer preempted
 * while that many others committed usually still learns its fate.
 *
 * And when nothing was committed since that base (the latest commit is the base itself):
 * the same decision holds, and the write is proposed again (`again`) at the new ballot,
 * with the same id and base — Paxos lets a proposer whose prepare found nothing in progress
 * propose any value, and of two proposals of one write on one base at most one is chosen
 * (once one is, every later round sees that commit, not the other). Without this, a
 * proposer preempted after a minority accepted its proposal could only answer unknown.
 */
export function decide<V>(
  c: Condition<V>,
  id: string,
  current: Proposal<V> | undefined,
  mayHaveApplied: boolean,
  equal: (a: V, b: V) => boolean,
  own?: { readonly base: string | undefined; readonly ballot: Ballot },
  known: readonly Link[] = [],
): Decision<V> {
  const chain = current === undefined ? known : [current, ...known];
  // A commit known is its own, or was decided on its own: either way it was chosen.
  if (chain.some((l) => l.id === id || l.base === id)) return { kind: 'applied' };
  const again = mayHaveApplied && own !== undefined && current?.id === own.base;
  // Only a link above its own proposals' ballot: a request id may be sent again after its first commit is forgotten, so an old link on the same base may be of that first use.
  const dead = own !== undefined && chain.some((l) => l.base === own.base && compareBallots(l.ballot, own.ballot) > 0);
  if (mayHaveApplied && !dead && !again) return { kind: 'unknown' };
  const held = current?.value ?? null;
  const holds =
    c.version !== undefined
      ? c.version === null
        ? held === null
        : current?.id === c.version
      : c.expect === undefined || (c.expect === null ? held === null : held !== null && equal(held, c.expect));
  // Proposed again, the condition holds as it did on that same commit; never "not applied" while the first may yet be chosen.
  if (again) return holds ? { kind: 'propose', value: c.value, again: true } : { kind: 'unknown' };
  return holds ? { kind: 'propose', value: c.value } : { kind: 'not-applied', current: held };
}

/**
 * A register's version as a client holds it (its context): the request id of the write
 * that made it, after a tag. The id, not the ballot, names it: a write another proposer
 * finished is committed under that proposer's ballot, and may be committed under two
 * ballots on different replicas, yet it is one write. Empty: the register was never
 * written.
 */
export function casContext(committed: { readonly id: string } | undefined): Buffer {
  return committed === undefined ? Buffer.alloc(0) : Buffer.concat([CONTEXT_TAG, Buffer.from(committed.id, 'latin1')]);
}

const CONTEXT_TAG = Buffer.from([0x43, 0x01]);

/** The version a client's context names: null for an empty one (the key must be absent), undefined when it is no register's context. */
export function contextVersion(context: Uint8Array): string | null | undefined {
  if (context.length === 0) return null;
  const b = Buffer.from(context.buffer, context.byteOffset, context.byteLength);
  if (
    b.length < CONTEXT_TAG.length + 1 ||
    b.length > CONTEXT_TAG.length + 255 ||
    !b.subarray(0, CONTEXT_TAG.length).equals(CONTEXT_TAG)
  )
    return undefined;
  return b.toString('latin1', CONTEXT_TAG.length);
}
