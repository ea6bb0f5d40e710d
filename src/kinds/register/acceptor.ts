/**
 * Compare-and-set's acceptor: one replica's Paxos state of one key — the
 * highest ballot it promised, the latest proposal it accepted and has not seen committed,
 * the latest committed proposal (the register's value), and the last few commits before
 * it (their ids and bases: the chain a proposer reads, `history`) — with the acceptor's rules
 * (`onPrepare`, `onPropose`, `onCommit`) and the join of two replicas' states; its record,
 * format 5, is register-record.ts's. Pure. The proposer's side (what to do with
 * a round's replies) is replication/paxos.ts's; docs/architecture.md tells the whole.
 *
 * **Why states may be joined.** Anti-entropy, streaming and hints copy records between
 * replicas; for an acceptor that means one replica taking another's promises and
 * acceptances. `joinAcceptors` takes the greater of each (promise, accepted proposal,
 * commit), drops an accepted proposal a commit covers, and keeps the newest
 * HISTORY_LENGTH of every other commit either knows (the top of a union: a join too, so
 * replicas that saw different commits converge on the same history). That is safe for Paxos: a higher
 * promise only refuses more; an accepted proposal above the latest commit may be
 * re-proposed by any later ballot, which Paxos allows of any accepted value (every
 * proposal above a chosen ballot carries the chosen value); and a commit is what a quorum
 * chose. A replacement node that takes a leaver's state this way stands in for its
 * acceptor.
 *
 * Owns: the acceptor's rules and join. Must not: do I/O, decide what a
 * proposer does, or know the network.
 */

/** A ballot: a number, then the proposer's id to break ties. Ordered by `compareBallots`. */
export interface Ballot {
  readonly n: number;
  readonly by: string;
}

/** Below every ballot a proposer makes. */
export const NO_BALLOT: Ballot = { n: 0, by: '' };

export function compareBallots(a: Ballot, b: Ballot): number {
  return a.n - b.n || (a.by < b.by ? -1 : a.by > b.by ? 1 : 0);
}

export const maxBallot = (a: Ballot, b: Ballot): Ballot => (compareBallots(a, b) >= 0 ? a : b);

/**
 * A commit as the chain remembers it: the request `id` it wrote, decided on the commit of
 * request `base` (absent: on a register never written), under a ballot. Committed
 * proposals form a chain by their bases (each is decided on the one before), which tells a
 * proposer whose proposal was preempted whether it can still apply, and a retry whether
 * its write applied (replication/paxos.ts decide).
 */
export interface Link {
  readonly ballot: Ballot;
  readonly id: string;
  readonly base?: string | undefined;
}

/** A proposal: the register's value after it (null: absent), and its link in the chain. */
export interface Proposal<V> extends Link {
  readonly value: V | null;
}

/** How many commits before the latest an acceptor remembers (`Acceptor.history`). */
export const HISTORY_LENGTH = 8;

/** One replica's Paxos state of one key. */
export interface Acceptor<V> {
  readonly promised: Ballot;
  /** The latest proposal accepted and not known committed (one at or below `committed` is dropped). */
  readonly accepted: Proposal<V> | undefined;
  /** The latest committed proposal: the register's value here. */
  readonly committed: Proposal<V> | undefined;
  /** Commits before it this replica learned (committed, or by a join), newest first, at most HISTORY_LENGTH. */
  readonly history: readonly Link[];
}

export const EMPTY_ACCEPTOR: Acceptor<never> = {
  promised: NO_BALLOT,
  accepted: undefined,
  committed: undefined,
  history: [],
};

export type PrepareReply<V> =
  | {
      readonly promised: true;
      readonly accepted: Proposal<V> | undefined;
      readonly committed: Proposal<V> | undefined;
      readonly history: readonly Link[];
    }
  | { readonly promised: false; readonly higher: Ballot };

export type ProposeReply = { readonly accepted: true } | { readonly accepted: false; readonly higher: Ballot };

/** A prepare: promised when `ballot` is above every ballot promised here (and then the acceptor's proposals go back). */
export function onPrepare<V>(a: Acceptor<V>, ballot: Ballot): { acceptor: Acceptor<V>; reply: PrepareReply<V> } {
  if (compareBallots(ballot, a.promised) <= 0) return { acceptor: a, reply: { promised: false, higher: a.promised } };
  return {
    acceptor: { ...a, promised: ballot },
    reply: { promised: true, accepted: a.accepted, committed: a.committed, history: a.history },
  };
}

/**
 * A proposal: accepted when its ballot is at least the one promised here. One at the
 * ballot of the commit held (a copy arriving after its own commit) is accepted without
 * being kept: the commit is that proposal.
 */
export function onPropose<V>(a: Acceptor<V>, p: Proposal<V>): { acceptor: Acceptor<V>; reply: ProposeReply } {
  if (compareBallots(p.ballot, a.promised) < 0) return { acceptor: a, reply: { accepted: false, higher: a.promised } };
  if (a.committed !== undefined && compareBallots(p.ballot, a.committed.ballot) <= 0)
    return { acceptor: a, reply: { accepted: true } };
  return { acceptor: { ...a, promised: p.ballot, accepted: p }, reply: { accepted: true } };
}

/**
 * A commit (a proposal a quorum accepted): kept when newer than the commit held, which
 * then joins the history (an older one joins it at once). A commit raises the promise to
 * its ballot (no proposal below a chosen one can matter), and drops an accepted proposal
 * it covers.
 */
export function onCommit<V>(a: Acceptor<V>, p: Proposal<V>): Acceptor<V> {
  const { committed, history } = joinCommits(a, { committed: p, history: [] }, (x, y) =>
    compareBallots(x.ballot, y.ballot),
  );
  const accepted =
    a.accepted !== undefined && compareBallots(a.accepted.ballot, committed!.ballot) <= 0 ? undefined : a.accepted;
  return { promised: maxBallot(a.promised, p.ballot), accepted, committed, history };
}

/** The join of two replicas' states of one key: each part's greater (module comment). Commutative, associative, idempotent. */
export function joinAcceptors<V>(
  a: Acceptor<V>,
  b: Acceptor<V>,
  order: (x: Proposal<V>, y: Proposal<V>) => number,
): Acceptor<V> {
  const { committed, history } = joinCommits(a, b, order);
  let accepted = greater(a.accepted, b.accepted, order);
  if (accepted !== undefined && committed !== undefined && compareBallots(accepted.ballot, committed.ballot) <= 0)
    accepted = undefined;
  return { promised: maxBallot(a.promised, b.promised), accepted, committed, history };
}

const greater = <V>(
  x: Proposal<V> | undefined,
  y: Proposal<V> | undefined,
  order: (x: Proposal<V>, y: Proposal<V>) => number,
): Proposal<V> | undefined => (x === undefined ? y : y === undefined ? x : order(x, y) >= 0 ? x : y);

/**
 * The greater commit of two states, and the newest HISTORY_LENGTH links of every other
 * commit they know (both histories, and the lesser commit unless it is the same link):
 * the top of a union, so a join in any order and grouping keeps the same ones.
 */
function joinCommits<V>(
  a: Pick<Acceptor<V>, 'committed' | 'history'>,
  b: Pick<Acceptor<V>, 'committed' | 'history'>,
  order: (x: Proposal<V>, y: Proposal<V>) => number,
): { committed: Proposal<V> | undefined; history: readonly Link[] } {
  const committed = greater(a.committed, b.committed, order);
  const lesser = committed === a.committed ? b.committed : a.committed;
  const distinct = lesser !== undefined && linkOrder(lesser, committed!) !== 0;
  return { committed, history: newest(distinct ? [...a.history, ...b.history, lesser] : [...a.history, ...b.history]) };
}

/** Links by ballot, then (one ballot commits one proposal, so only a bug or a forger gets here) id and base. */
export const linkOrder = (x: Link, y: Link): number =>
  compareBallots(x.ballot, y.ballot) || compareNames(x.id, y.id) || compareNames(x.base ?? '', y.base ?? '');

/** The newest HISTORY_LENGTH distinct links of `links`, newest first, as links only (a proposal's value dropped). */
function newest(links: readonly Link[]): readonly Link[] {
  const out: Link[] = [];
  for (const l of [...links].sort((x, y) => linkOrder(y, x))) {
    if (out.length > 0 && linkOrder(out[out.length - 1]!, l) === 0) continue;
    out.push(l.base === undefined ? { ballot: l.ballot, id: l.id } : { ballot: l.ballot, id: l.id, base: l.base });
    if (out.length === HISTORY_LENGTH) break;
  }
  return out;
}

/**
 * Whether two states are the same: whether their canonical bytes would be, compared field
 * by field (a step under the key's lock asks it each time; encoding both cost a tenth of a
 * contended node's CPU).
 */
export function sameRegister(a: RegisterState, b: RegisterState): boolean {
  if (a === b) return true;
  const sameProposal = (x: Proposal<Buffer> | undefined, y: Proposal<Buffer> | undefined): boolean =>
    x === y ||
    (x !== undefined &&
      y !== undefined &&
      linkOrder(x, y) === 0 &&
      (x.value === null || y.value === null ? x.value === y.value : x.value.equals(y.value)));
  return (
    compareBallots(a.promised, b.promised) === 0 &&
    sameProposal(a.accepted, b.accepted) &&
    sameProposal(a.committed, b.committed) &&
    a.history.length === b.history.length &&
    a.history.every((l, i) => linkOrder(l, b.history[i]!) === 0)
  );
}

/** A register's value as the store keeps it: bytes, or null (absent). */
export type RegisterState = Acceptor<Buffer>;

/** Two proposals of one key in a total order: by ballot, then (one ballot proposes one value, so only a bug or a forger gets here) by id and value bytes. */
export function proposalOrder(x: Proposal<Buffer>, y: Proposal<Buffer>): number {
  return linkOrder(x, y) || compareValues(x.value, y.value);
}

const compareNames = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
const compareValues = (x: Buffer | null, y: Buffer | null): number =>
  x === null ? (y === null ? 0 : -1) : y === null ? 1 : Buffer.compare(x, y);
