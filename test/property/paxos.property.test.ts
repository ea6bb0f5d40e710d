/**
 * Compare-and-set's Paxos core (src/kinds/register/acceptor.ts's acceptor, src/replication/paxos.ts's
 * proposer rules) in a deterministic simulation,
 * on fixed seeds: three acceptors, three proposers each running a list of reads, writes
 * and compare-and-sets, and a network that delivers their messages in any order, drops
 * them, or delivers them twice, while acceptors' states are copied into each other now
 * and then (joined, as anti-entropy, streaming and hints copy records: kinds/register/acceptor.ts); a proposer that waits too long starts a new round, and
 * gives up (an unknown outcome) after a few. Every history is checked by the
 * linearizability search (test/jepsen/linearizability.ts): reads, writes and CAS must
 * look as if each took effect at one instant inside its call, whatever the network did.
 * The same search fails on the histories a broken core makes (the last test); and a core
 * that reads no history (the commits acceptors remember) ends more calls unknown.
 * PAXOS_DEBUG=1 prints a failing run's plans, choices and history.
 */
import {
  EMPTY_ACCEPTOR,
  NO_BALLOT,
  compareBallots,
  joinAcceptors,
  onCommit,
  onPrepare,
  onPropose,
  type Acceptor,
  type Ballot,
  type PrepareReply,
  type Proposal,
} from '../../src/kinds/index.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { afterPrepare, decide, mayHaveBeenAccepted, nextBallot, quorumOf } from '../../src/replication/paxos.js';
import { checkLinearizable, type CasOp, type HistoryOp } from '../jepsen/linearizability.js';

type Planned =
  | { readonly kind: 'read' }
  | { readonly kind: 'write'; readonly value: string }
  | { readonly kind: 'cas'; readonly expect: string | null; readonly value: string };

type Msg =
  | {
      readonly to: 'acceptor';
      readonly acceptor: number;
      readonly from: number;
      readonly round: number;
      readonly kind: 'prepare';
      readonly ballot: Ballot;
    }
  | {
      readonly to: 'acceptor';
      readonly acceptor: number;
      readonly from: number;
      readonly round: number;
      readonly kind: 'propose';
      readonly proposal: Proposal<string>;
    }
  | {
      readonly to: 'acceptor';
      readonly acceptor: number;
      readonly from: number;
      readonly round: number;
      readonly kind: 'commit';
      readonly proposal: Proposal<string>;
    }
  | {
      readonly to: 'proposer';
      readonly proposer: number;
      readonly from: number;
      readonly round: number;
      readonly kind: 'prepared';
      readonly reply: PrepareReply<string>;
    }
  | {
      readonly to: 'proposer';
      readonly proposer: number;
      readonly from: number;
      readonly round: number;
      readonly kind: 'proposed';
      readonly accepted: boolean;
      readonly higher?: Ballot;
    };

interface Run {
  readonly planned: Planned;
  readonly id: string;
  readonly startMs: number;
  attempts: number;
  mayHaveApplied: boolean;
  /** The base of its proposal that may have been accepted, and the highest ballot it proposed its own at (decide's `own`). */
  ownBase?: string | undefined;
  ownBallot: Ballot;
}

interface Proposer {
  readonly name: string;
  readonly ops: Planned[];
  run: Run | undefined;
  phase: 'idle' | 'prepare' | 'propose';
  round: number;
  ballot: Ballot;
  seen: Ballot;
  prepared: Map<number, PrepareReply<string>>;
  proposal: Proposal<string> | undefined;
  /** The proposal being proposed is another's, found in progress: finish it, then start again. */
  finishing: boolean;
  accepts: Set<number>;
  rejects: Set<number>;
}

const N = 3,
  Q = quorumOf(N),
  MAX_ROUNDS = 6;

/**
 * One simulated run: `choices` drive the network; the history of every proposer's calls.
 * `variant`: a broken core, or (safe) one that ignores the acceptors' histories.
 */
function simulate(
  plans: Planned[][],
  choices: readonly number[],
  variant?: 'no-finish' | 'no-quorum' | 'any-commit-kills' | 'no-history',
): HistoryOp[] {
  let acceptors: Acceptor<string>[] = Array.from({ length: N }, () => EMPTY_ACCEPTOR);
  const proposers: Proposer[] = plans.map((ops, i) => ({
    name: `p${i}`,
    ops: [...ops],
    run: undefined,
    phase: 'idle',
    round: 0,
    ballot: { n: 0, by: `p${i}` },
    seen: { n: 0, by: '' },
    prepared: new Map(),
    proposal: undefined,
    finishing: false,
    accepts: new Set(),
    rejects: new Set(),
  }));
  const inFlight: Msg[] = [];
  const history: HistoryOp[] = [];
  let now = 0,
    nextId = 0;

  const finish = (p: Proposer, outcome: 'ok' | 'unknown', op: CasOp | undefined): void => {
    const run = p.run!;
    if (op !== undefined) history.push({ key: 'k', startMs: run.startMs, endMs: now, outcome, op, id: run.id });
    p.run = undefined;
    p.phase = 'idle';
    p.round++;
  };
  const giveUp = (p: Proposer): void => {
    const planned = p.run!.planned;
    // A read that gave up says nothing; a write or CAS may have been applied.
    finish(
      p,
      'unknown',
      planned.kind === 'read'
        ? undefined
        : planned.kind === 'write'
          ? { kind: 'write', value: planned.value }
          : { kind: 'cas', expect: planned.expect, value: planned.value },
    );
  };
  const prepare = (p: Proposer): void => {
    const run = p.run!;
    if (++run.attempts > MAX_ROUNDS) return giveUp(p);
    p.round++;
    p.ballot = nextBallot(p.seen, p.name);
    p.seen = p.ballot;
    p.phase = 'prepare';
    p.prepared = new Map();
    for (let a = 0; a < N; a++)
      inFlight.push({
        to: 'acceptor',
        acceptor: a,
        from: proposers.indexOf(p),
        round: p.round,
        kind: 'prepare',
        ballot: p.ballot,
      });
  };
  const propose = (p: Proposer, proposal: Proposal<string>, finishing: boolean): void => {
    p.phase = 'propose';
    p.proposal = proposal;
    p.finishing = finishing;
    p.accepts = new Set();
    p.rejects = new Set();
    for (let a = 0; a < N; a++)
      inFlight.push({
        to: 'acceptor',
        acceptor: a,
        from: proposers.indexOf(p),
        round: p.round,
        kind: 'propose',
        proposal,
      });
  };
  const commit = (p: Proposer, proposal: Proposal<string>): void => {
    for (let a = 0; a < N; a++)
      inFlight.push({
        to: 'acceptor',
        acceptor: a,
        from: proposers.indexOf(p),
        round: p.round,
        kind: 'commit',
        proposal,
      });
  };
  const applied = (p: Proposer): void => {
    const planned = p.run!.planned as Exclude<Planned, { kind: 'read' }>;
    finish(
      p,
      'ok',
      planned.kind === 'write'
        ? { kind: 'write', value: planned.value }
        : { kind: 'cas', expect: planned.expect, value: planned.value, applied: true },
    );
  };

  const onPrepared = (p: Proposer): void => {
    const replies = [...p.prepared.values()];
    const promises = replies.filter((r) => r.promised).length;
    if (promises < Q && replies.length - promises <= N - Q) return; // still waiting
    const next = afterPrepare(replies, Q);
    const run = p.run!;
    if (next.kind === 'retry') {
      if (compareN(next.higher, p.seen) > 0) p.seen = next.higher;
      return prepare(p);
    }
    if (next.kind === 'finish' && variant !== 'no-finish') {
      if (next.id === run.id) ((run.mayHaveApplied = true), (run.ownBase = next.base), (run.ownBallot = p.ballot));
      return propose(p, { ballot: p.ballot, value: next.value, id: next.id, base: next.base }, true);
    }
    const current = next.kind === 'current' ? next.committed : undefined;
    if (next.kind === 'current')
      for (const i of next.lagging)
        inFlight.push({
          to: 'acceptor',
          acceptor: [...p.prepared.keys()][i]!,
          from: proposers.indexOf(p),
          round: p.round,
          kind: 'commit',
          proposal: current!,
        });
    const planned = run.planned;
    if (planned.kind === 'read') return finish(p, 'ok', { kind: 'read', value: current?.value ?? null });
    // Broken: takes any commit of another's as proof its own proposal is dead, not only one on the same base (and reads no history).
    const own = run.mayHaveApplied
      ? variant === 'any-commit-kills'
        ? { base: current?.base, ballot: NO_BALLOT }
        : { base: run.ownBase, ballot: run.ownBallot }
      : undefined;
    const known =
      next.kind === 'current' && variant !== 'any-commit-kills' && variant !== 'no-history' ? next.known : [];
    const d = decide<string>(
      planned.kind === 'write' ? { value: planned.value } : { expect: planned.expect, value: planned.value },
      run.id,
      current,
      run.mayHaveApplied,
      (a, b) => a === b,
      own,
      known,
    );
    if (d.kind === 'applied') return applied(p);
    if (d.kind === 'unknown') return giveUp(p);
    if (d.kind === 'not-applied')
      return finish(p, 'ok', {
        kind: 'cas',
        expect: (planned as { expect: string | null }).expect,
        value: planned.value,
        applied: false,
        current: d.current,
      });
    // Proposed again on the same base, the earlier proposal may still be chosen; else any earlier proposal of its own is dead (decide).
    if (d.again !== true) {
      run.mayHaveApplied = false;
      run.ownBase = current?.id;
    }
    run.ownBallot = p.ballot;
    propose(p, { ballot: p.ballot, value: d.value, id: run.id, base: current?.id }, false);
  };

  const deliver = (m: Msg): void => {
    if (m.to === 'acceptor') {
      const a = acceptors[m.acceptor]!;
      if (m.kind === 'prepare') {
        const r = onPrepare(a, m.ballot);
        acceptors = acceptors.map((x, i) => (i === m.acceptor ? r.acceptor : x));
        inFlight.push({
          to: 'proposer',
          proposer: m.from,
          from: m.acceptor,
          round: m.round,
          kind: 'prepared',
          reply: r.reply,
        });
      } else if (m.kind === 'propose') {
        const r = onPropose(a, m.proposal);
        acceptors = acceptors.map((x, i) => (i === m.acceptor ? r.acceptor : x));
        inFlight.push({
          to: 'proposer',
          proposer: m.from,
          from: m.acceptor,
          round: m.round,
          kind: 'proposed',
          accepted: r.reply.accepted,
          ...(r.reply.accepted ? {} : { higher: r.reply.higher }),
        });
      } else acceptors = acceptors.map((x, i) => (i === m.acceptor ? onCommit(x, m.proposal) : x));
      return;
    }
    const p = proposers[m.proposer]!;
    if (p.run === undefined || m.round !== p.round) return; // a reply to a round given up
    if (m.kind === 'prepared' && p.phase === 'prepare') {
      if (p.prepared.has(m.from)) return; // a duplicate
      p.prepared.set(m.from, m.reply);
      return onPrepared(p);
    }
    if (m.kind === 'proposed' && p.phase === 'propose') {
      if (m.accepted) p.accepts.add(m.from);
      else {
        p.rejects.add(m.from);
        if (m.higher !== undefined && compareN(m.higher, p.seen) > 0) p.seen = m.higher;
      }
      const needed = variant === 'no-quorum' ? 1 : Q;
      if (p.accepts.size >= needed) {
        commit(p, p.proposal!);
        if (!p.finishing) return applied(p);
        if (p.proposal!.id === p.run.id) return applied(p); // another proposer's round had left ours in progress
        return prepare(p);
      }
      if (p.rejects.size > N - needed) {
        // Only a rejection from every acceptor proves none accepted (an acceptance may be on its way).
        if (!p.finishing && mayHaveBeenAccepted(p.rejects.size, N)) p.run.mayHaveApplied = true;
        return prepare(p);
      }
    }
  };

  /** No answer in time: a new round; a proposal of its own that timed out may have been accepted somewhere. */
  const timeout = (p: Proposer): void => {
    if (p.phase === 'propose' && !p.finishing) p.run!.mayHaveApplied = true;
    prepare(p);
  };

  const start = (p: Proposer): void => {
    const planned = p.ops.shift()!;
    p.run = {
      planned,
      id: `${p.name}.${nextId++}`,
      startMs: now,
      attempts: 0,
      mayHaveApplied: false,
      ownBallot: NO_BALLOT,
    };
    prepare(p);
  };

  for (const c of choices) {
    now++;
    const pick = c % 100;
    const idle = proposers.filter((p) => p.run === undefined && p.ops.length > 0);
    const waiting = proposers.filter((p) => p.run !== undefined);
    if (pick < 15 && idle.length > 0) start(idle[c % idle.length]!);
    else if (pick < 80 && inFlight.length > 0) deliver(inFlight.splice(Math.floor(c / 100) % inFlight.length, 1)[0]!);
    else if (pick < 88 && inFlight.length > 0)
      inFlight.splice(Math.floor(c / 100) % inFlight.length, 1); // dropped
    else if (pick < 93 && inFlight.length > 0)
      deliver(inFlight[Math.floor(c / 100) % inFlight.length]!); // delivered, and again later
    else if (pick < 96) {
      // Anti-entropy (or streaming, or a hint): one replica's state joined into another's.
      const from = Math.floor(c / 100) % N,
        to = Math.floor(c / 300) % N;
      if (from !== to)
        acceptors = acceptors.map((x, i) =>
          i === to
            ? joinAcceptors(
                x,
                acceptors[from]!,
                (a, b) => compareBallots(a.ballot, b.ballot) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
              )
            : x,
        );
    } else if (waiting.length > 0) timeout(waiting[Math.floor(c / 100) % waiting.length]!);
  }
  // Then a network that loses nothing: every call ends, applied, answered, or given up.
  for (let guard = 0; guard < 100_000 && proposers.some((p) => p.run !== undefined || p.ops.length > 0); guard++) {
    now++;
    const idle = proposers.find((p) => p.run === undefined && p.ops.length > 0);
    if (idle !== undefined) start(idle);
    else if (inFlight.length > 0) deliver(inFlight.shift()!);
    else timeout(proposers.find((p) => p.run !== undefined)!);
  }
  return history;
}

const compareN = compareBallots;

const VALUES = ['a', 'b', 'c'];
/** Each proposer's calls: reads, writes and CAS; values are unique per call (`p0.3`) so a read names its write. */
const plansArb = fc
  .array(
    fc.array(
      fc.record({
        kind: fc.constantFrom('read' as const, 'write' as const, 'cas' as const, 'cas' as const),
        expect: fc.option(fc.constantFrom(...VALUES), { nil: null }),
        from: fc.nat(20),
      }),
      { minLength: 1, maxLength: 6 },
    ),
    { minLength: 3, maxLength: 3 },
  )
  .map((ps) =>
    ps.map((ops, p) =>
      ops.map((o, i): Planned => {
        const value = `p${p}.${i}`;
        if (o.kind === 'read') return { kind: 'read' };
        if (o.kind === 'write') return { kind: 'write', value };
        // Expect a value some call writes (or absent), so that some CAS apply.
        return { kind: 'cas', expect: o.expect === null ? null : `p${o.from % 3}.${o.from % 4}`, value };
      }),
    ),
  );

describe('Paxos compare-and-set under a lossy, reordering, duplicating network', () => {
  it('every history is linearizable, and most calls end with a definite answer', () => {
    let calls = 0,
      definite = 0,
      appliedCas = 0,
      refusedCas = 0;
    fc.assert(
      fc.property(plansArb, fc.array(fc.nat(100_000), { minLength: 50, maxLength: 400 }), (plans, choices) => {
        const history = simulate(plans, choices);
        const v = checkLinearizable(history);
        if (v.linearizable !== true && process.env.PAXOS_DEBUG)
          console.log(
            JSON.stringify(plans),
            JSON.stringify(choices),
            '\n' +
              [...history]
                .sort((a, b) => a.startMs - b.startMs)
                .map((x) => `${x.id} ${x.startMs}-${x.endMs} ${x.outcome} ${JSON.stringify(x.op)}`)
                .join('\n'),
          );
        expect(v.linearizable, JSON.stringify(v.keys[0]?.stuckAt)).toBe(true);
        calls += history.length;
        definite += history.filter((h) => h.outcome === 'ok').length;
        appliedCas += history.filter((h) => h.outcome === 'ok' && h.op.kind === 'cas' && h.op.applied === true).length;
        refusedCas += history.filter((h) => h.outcome === 'ok' && h.op.kind === 'cas' && h.op.applied === false).length;
      }),
      { numRuns: 400, seed: 31 },
    );
    // The simulation exercises what it claims: CAS both ways, and answers despite the losses.
    expect(appliedCas).toBeGreaterThan(50);
    expect(refusedCas).toBeGreaterThan(50);
    expect(definite / calls).toBeGreaterThan(0.7);
  });

  it('reading the commits the acceptors remember leaves fewer calls unknown than the latest commit alone, and as linearizable', () => {
    const unknown = { history: 0, 'no-history': 0 };
    fc.assert(
      fc.property(plansArb, fc.array(fc.nat(100_000), { minLength: 50, maxLength: 400 }), (plans, choices) => {
        for (const variant of ['history', 'no-history'] as const) {
          const history = simulate(plans, choices, variant === 'history' ? undefined : variant);
          expect(checkLinearizable(history).linearizable).toBe(true);
          unknown[variant] += history.filter((h) => h.outcome === 'unknown').length;
        }
      }),
      { numRuns: 400, seed: 32 },
    );
    if (process.env.PAXOS_DEBUG) console.log('unknown outcomes', unknown);
    expect(unknown.history).toBeLessThan(unknown['no-history']);
  });

  it('the search catches a core that skips finishing a proposal in progress, chooses without a quorum, or gives up on its proposal too soon', () => {
    for (const broken of ['no-finish', 'no-quorum', 'any-commit-kills'] as const) {
      let caught = 0;
      fc.assert(
        fc.property(plansArb, fc.array(fc.nat(100_000), { minLength: 50, maxLength: 400 }), (plans, choices) => {
          if (checkLinearizable(simulate(plans, choices, broken)).linearizable === false) caught++;
        }),
        { numRuns: 400, seed: 31 },
      );
      expect(caught, broken).toBeGreaterThan(0);
    }
  });
});
