/**
 * Compare-and-set's rounds: the proposer of replication/paxos.ts run over the
 * network, against the acceptors of a key's replicas (kinds/register/acceptor.ts). A write
 * (`write`: put if absent, put or delete if the version is a given one) and a
 * linearizable read (`read`) each run Paxos rounds until they decide:
 *
 * - **Who.** The key's N primaries only, and while its range moves, also the replicas it
 *   moves to: each round needs a majority of every such group (Cassandra's pending
 *   endpoints). No fallbacks and no hints: a stand-in's promise would not meet a later
 *   quorum of the real replicas.
 * - **Cost.** Uncontended, a write is a prepare and a proposal (two round trips to a
 *   majority); its commit goes to every replica off the client's path, and a replica that
 *   misses it learns it from the next round that reads it (`lagging`), from anti-entropy,
 *   or from a later commit. A read is one round trip.
 * - **Contention.** A round refused by a higher ballot starts again above it after a
 *   jittered, growing pause (so that two proposers do not keep preempting each other).
 * - **Outcomes.** Applied (with the new version's context); not applied (the condition
 *   failed: the current value and context); or, once a proposal of its own may have been
 *   accepted without the proposer learning that it was chosen, unknown (RK_CAS_UNKNOWN:
 *   the client reads the key to learn). A request that proposed nothing that could have
 *   been accepted and could not finish fails RK_UNAVAILABLE: nothing was written.
 *
 * Owns: sending rounds and waiting for their quorums, backoff. Must not: decide what a
 * round's replies mean (paxos.ts does) or know the wire (ReplicaApi).
 */
import {
  HISTORY_LENGTH,
  NO_BALLOT,
  maxBallot,
  PAXOS_COMMIT,
  PAXOS_PREPARE,
  PAXOS_PROPOSE,
  REGISTER,
  type Ballot,
  type PrepareReply,
  type Proposal,
  type ProposeReply,
} from '../kinds/index.js';
import { randomBytes } from 'node:crypto';
import { showKey } from '../kinds/kv-errors.js';
import {
  afterPrepare,
  casContext,
  decide,
  mayHaveBeenAccepted,
  nextBallot,
  quorumOf,
  type Condition,
} from './paxos.js';
import { ReplicaFailure, callStep, transient, type ReplicaApi } from './replica-api.js';
import { ReplicationError } from './replication-errors.js';

/** What a conditional write ended with, when it ended with an answer. */
export type CasOutcome =
  | { readonly applied: true; readonly context: Buffer }
  | { readonly applied: false; readonly value: Buffer | null; readonly context: Buffer };

/** A linearizable read: the value (null: absent) and its context. */
export interface CasRead {
  readonly value: Buffer | null;
  readonly context: Buffer;
}

export interface CasDeps {
  readonly self: string;
  readonly replicas: ReplicaApi;
  isUp(id: string): boolean;
  /** Wall clock, ms: the floor of ballot numbers, so a restarted proposer does not reuse its ballots. */
  now(): number;
  /** Uniform in [0, 1): the backoff's jitter. */
  random(): number;
  /** How long a commit sent off the client's path may take, ms. */
  readonly commitTimeoutMs: number;
  readonly log: { debug(o: object, m: string): void };
}

export interface CasCounters {
  /** Rounds started again after a refusal or too few answers (contention, mostly). */
  casRetries: number;
  casNotApplied: number;
  casUnknown: number;
}

/** The first pause after a refused round, ms; it doubles per retry, up to CAS_BACKOFF_MAX_MS, and each is drawn uniformly below that. */
const CAS_BACKOFF_MS = 2;
const CAS_BACKOFF_MAX_MS = 100;

/** One round's end: the replies (aligned with the nodes that gave them), whether every group's majority said yes, and how many replicas surely said no or never got the call. */
interface Round<R> {
  readonly nodes: string[];
  readonly replies: R[];
  readonly reached: boolean;
  readonly definiteNo: number;
  /** Replies that said no for a higher ballot: contention. */
  readonly refusals: number;
  readonly error: unknown;
}

type Kind =
  { readonly read: true } | { readonly read: false; readonly condition: Condition<Buffer>; readonly id: string };

export class CasProposer {
  #commitsOut = 0;

  constructor(
    private readonly deps: CasDeps,
    private readonly counters: CasCounters,
  ) {}

  /** A conditional write of `key` among `groups` (its replicas now, and after a move when one is under way), by request `id`. */
  async write(
    key: Buffer,
    groups: readonly (readonly string[])[],
    condition: Condition<Buffer>,
    id: string,
    deadline: number,
  ): Promise<CasOutcome> {
    return (await this.#run(key, groups, { read: false, condition, id }, deadline)) as CasOutcome;
  }

  /** The register at `key`, as of a Paxos round that finishes any write in progress first. */
  async read(key: Buffer, groups: readonly (readonly string[])[], deadline: number): Promise<CasRead> {
    return (await this.#run(key, groups, { read: true }, deadline)) as CasRead;
  }

  async #run(
    key: Buffer,
    groups: readonly (readonly string[])[],
    kind: Kind,
    deadline: number,
  ): Promise<CasOutcome | CasRead> {
    const members = [...new Set(groups.flat())];
    // Unique to this request: two of this node's requests must never share a ballot.
    const by = `${Buffer.from(this.deps.self, 'utf8').toString('latin1').slice(0, 200)}/${randomBytes(6).toString('hex')}`;
    const op = kind.read ? 'consistent read' : 'compare-and-set';
    let seen: Ballot = NO_BALLOT;
    let mayHaveApplied = false;
    /** The base of the proposal of this request that may have been accepted (paxos.ts decide). */
    let ownBase: string | undefined;
    /** The highest ballot this request proposed its own write at (decide's `own`). */
    let ownBallot: Ballot = NO_BALLOT;
    let why = '';
    const notDone = kind.read ? 'could not read it' : 'was not applied';
    for (let attempt = 0; Date.now() < deadline; attempt++) {
      if (attempt > 0) {
        this.counters.casRetries++;
        const pause = Math.min(CAS_BACKOFF_MAX_MS, CAS_BACKOFF_MS << Math.min(attempt, 10)) * this.deps.random();
        if (Date.now() + pause >= deadline) break;
        await new Promise((r) => setTimeout(r, pause));
      }
      const short = groups.find((g) => g.filter((id) => this.#up(id)).length < quorumOf(g.length));
      if (short !== undefined) {
        why = `only ${short.filter((id) => this.#up(id)).length} of its replicas ${short.join(', ')} are up, and a majority (${quorumOf(short.length)}) must answer`;
        if (mayHaveApplied) break;
        throw new ReplicationError(
          'RK_UNAVAILABLE',
          `${op} of key ${showKey(key)} ${notDone}: ${why}. Nothing was written; retry when they are back`,
        );
      }
      const ballot = nextBallot(seen, by, this.deps.now());
      const prepared = await this.#round(
        members,
        groups,
        deadline,
        (n) => callStep(this.deps.replicas, n, REGISTER, PAXOS_PREPARE, key, ballot, deadline),
        (r: PrepareReply<Buffer>) => r.promised,
      );
      for (const r of prepared.replies) if (!r.promised) seen = maxBallot(seen, r.higher);
      seen = maxBallot(seen, ballot);
      if (!prepared.reached) {
        why = this.#whyShort('promises', prepared);
        if (this.#retryable(prepared, mayHaveApplied)) continue;
        break;
      }
      const next = afterPrepare(prepared.replies, 1); // every group's majority promised (#round)
      if (next.kind === 'retry') continue; // not reached: #round counted the promises
      if (next.kind === 'finish') {
        // A proposal accepted above the latest commit: finish it under this ballot, whoever's it is.
        const mine = !kind.read && next.id === kind.id;
        if (mine) ((mayHaveApplied = true), (ownBase = next.base), (ownBallot = ballot));
        const proposal: Proposal<Buffer> = { ballot, value: next.value, id: next.id, base: next.base };
        const proposed = await this.#propose(key, members, groups, proposal, deadline, seen);
        seen = proposed.seen;
        if (proposed.reached) {
          this.#commit(key, members, proposal);
          if (mine) return { applied: true, context: casContext(proposal) };
          attempt = -1; // progress, not contention: start again at once
          continue;
        }
        why = this.#whyShort('acceptances', proposed.round);
        if (this.#retryable(proposed.round, mayHaveApplied)) continue;
        break;
      }
      const lagging = next.lagging.map((i) => prepared.nodes[i]!);
      if (next.committed !== undefined && lagging.length > 0) this.#commit(key, lagging, next.committed);
      if (kind.read) return { value: next.committed?.value ?? null, context: casContext(next.committed) };
      const d = decide(
        kind.condition,
        kind.id,
        next.committed,
        mayHaveApplied,
        (a, b) => a.equals(b),
        mayHaveApplied ? { base: ownBase, ballot: ownBallot } : undefined,
        next.known,
      );
      if (d.kind === 'applied') return { applied: true, context: casContext({ id: kind.id }) };
      if (d.kind === 'not-applied') {
        this.counters.casNotApplied++;
        return { applied: false, value: d.current, context: casContext(next.committed) };
      }
      if (d.kind === 'unknown') {
        why =
          'a proposal of this request may have been accepted by a minority of replicas, and a later round could still finish it';
        break;
      }
      // Proposed again on the same base (decide): the earlier proposal may still be chosen, so it stays may-have-applied.
      // Otherwise an earlier proposal of this request is dead (decide): this one is its only live one.
      if (d.again !== true) {
        mayHaveApplied = false;
        ownBase = next.committed?.id;
      }
      const proposal: Proposal<Buffer> = { ballot, value: d.value, id: kind.id, base: ownBase };
      ownBallot = ballot;
      const proposed = await this.#propose(key, members, groups, proposal, deadline, seen);
      seen = proposed.seen;
      if (proposed.reached) {
        this.#commit(key, members, proposal);
        return { applied: true, context: casContext(proposal) };
      }
      if (mayHaveBeenAccepted(proposed.round.definiteNo, members.length)) mayHaveApplied = true;
      why = this.#whyShort('acceptances', proposed.round);
      if (!this.#retryable(proposed.round, mayHaveApplied)) break;
    }
    if (mayHaveApplied) {
      this.counters.casUnknown++;
      throw new ReplicationError(
        'RK_CAS_UNKNOWN',
        `${op} of key ${showKey(key)} has an unknown outcome: ${why}. It may or may not have been applied; read the key (a consistent read finishes it either way), or send it again with the same request id, which answers applied if it applied and at most one write followed it (usually up to ${HISTORY_LENGTH})`,
      );
    }
    throw new ReplicationError(
      'RK_UNAVAILABLE',
      `${op} of key ${showKey(key)} ${notDone} before its deadline: ${why || 'contending writers kept preempting it'}. Nothing was written; retry`,
    );
  }

  /**
   * Whether a round that failed is worth another: only when a higher ballot refused it
   * (contention). Replicas that did not answer, or answered busy, will not answer the next
   * round sooner; and a replica's refusal of the request itself (not busy: replica-api.ts
   * transient) is the request's error, when nothing of it may have applied.
   */
  #retryable(r: Round<unknown>, mayHaveApplied: boolean): boolean {
    if (!mayHaveApplied && r.error instanceof ReplicaFailure && !transient(r.error)) throw r.error;
    return r.refusals > 0;
  }

  async #propose(
    key: Buffer,
    members: string[],
    groups: readonly (readonly string[])[],
    proposal: Proposal<Buffer>,
    deadline: number,
    seen: Ballot,
  ): Promise<{ round: Round<ProposeReply>; reached: boolean; seen: Ballot }> {
    const round = await this.#round(
      members,
      groups,
      deadline,
      (n) => callStep(this.deps.replicas, n, REGISTER, PAXOS_PROPOSE, key, proposal, deadline),
      (r: ProposeReply) => r.accepted,
    );
    for (const r of round.replies) if (!r.accepted) seen = maxBallot(seen, r.higher);
    return { round, reached: round.reached, seen };
  }

  /** Send the commit to `nodes`, off the client's path: a replica that misses it learns it later (the module comment). */
  #commit(key: Buffer, nodes: readonly string[], proposal: Proposal<Buffer>): void {
    const deadline = Date.now() + this.deps.commitTimeoutMs;
    for (const n of nodes) {
      if (!this.#up(n)) continue;
      this.#commitsOut++;
      void callStep(this.deps.replicas, n, REGISTER, PAXOS_COMMIT, key, proposal, deadline)
        .catch((e: unknown) =>
          this.deps.log.debug(
            { node: n, err: String(e) },
            'a Paxos commit did not reach its replica; a later round or repair carries it',
          ),
        )
        .finally(() => this.#commitsOut--);
    }
  }

  /** Commits sent after their writes were answered and not yet ended: work the node still does for calls it answered. */
  get commitsInFlight(): number {
    return this.#commitsOut;
  }

  #up(id: string): boolean {
    return id === this.deps.self || this.deps.isUp(id);
  }

  #whyShort(what: string, r: Round<unknown>): string {
    const failure = r.error instanceof ReplicaFailure ? ` (${r.error.code}: ${r.error.message})` : '';
    return `too few ${what} from a majority of its replicas: ${r.definiteNo} refused or down${failure}`;
  }

  /**
   * Send `call` to every member up and wait for a majority of each group to answer `ok`;
   * end early once that can no longer happen, or at the deadline. Calls still out then
   * may yet run (not counted as a definite no).
   */
  #round<R>(
    members: readonly string[],
    groups: readonly (readonly string[])[],
    deadline: number,
    call: (node: string) => Promise<R>,
    ok: (r: R) => boolean,
  ): Promise<Round<R>> {
    return new Promise((resolve) => {
      const nodes: string[] = [],
        replies: R[] = [];
      const need = groups.map((g) => quorumOf(g.length));
      const yes = groups.map(() => 0),
        no = groups.map(() => 0);
      let definiteNo = 0,
        refusals = 0,
        settled = 0,
        done = false,
        error: unknown;
      const end = (reached: boolean): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve({ nodes: [...nodes], replies: [...replies], reached, definiteNo, refusals, error });
      };
      const timer = setTimeout(() => end(false), Math.max(0, deadline - Date.now()));
      const count = (node: string, tally: number[]): void => groups.forEach((g, i) => g.includes(node) && tally[i]!++);
      const check = (): void => {
        if (yes.every((c, i) => c >= need[i]!)) end(true);
        else if (settled === members.length || no.some((c, i) => groups[i]!.length - c < need[i]!)) end(false);
      };
      for (const node of members) {
        if (!this.#up(node)) {
          (settled++, definiteNo++);
          count(node, no);
          continue;
        }
        call(node).then(
          (r) => {
            if (done) return;
            settled++;
            (nodes.push(node), replies.push(r));
            if (ok(r)) count(node, yes);
            else (definiteNo++, refusals++, count(node, no));
            check();
          },
          (e: unknown) => {
            if (done) return;
            (settled++, (error = e));
            // Not a definite no: a call may have run there whatever the failure — a timeout, a
            // stream that broke with the call on it (unreachable), an answer that did not decode.
            count(node, no);
            check();
          },
        );
      }
      check();
    });
  }
}
