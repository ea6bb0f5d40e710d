/**
 * Compare-and-set's Paxos steps in the form releases before kinds' steps send and take
 * them (replica.proto PaxosRequest and PaxosResponse). Such a node's calls are run here as
 * the register's steps; and a step call such a node refuses (RK_UNSUPPORTED: it knows no
 * StepRequest) is sent again in this form, so that compare-and-set goes on working while a
 * cluster is upgraded.
 *
 * Owns: the mapping between the register's steps and the Paxos messages. Must not: run
 * them, or know any other kind's steps.
 */
import {
  DecodeError,
  PAXOS_COMMIT,
  PAXOS_PREPARE,
  PAXOS_PROPOSE,
  REGISTER,
  decodeRegister,
  encodeRegister,
  type Ballot,
  type Proposal,
  type RegisterState,
} from '../kinds/index.js';
import { ReplicaFailure, type ReplicaCall } from '../replication/replica-api.js';
import { ReplicationError } from '../replication/replication-errors.js';
import type { WireCall, WirePaxosStep, WireReply } from './replica-codec.js';

type PaxosCall = Extract<WireCall, { op: 'paxos' }>;
type StepCall = Extract<ReplicaCall, { op: 'step' }>;

const STEPS = { prepare: PAXOS_PREPARE, propose: PAXOS_PROPOSE, commit: PAXOS_COMMIT } as const;
/** A step's Paxos step by the step's name. */
const LEGACY = new Map(Object.entries(STEPS).map(([wire, step]) => [step.name, wire as WirePaxosStep]));

const EMPTY = Buffer.alloc(0);

/** A received Paxos call's ballot and proposal: ids as latin1 bytes on the wire, strings in the register. */
const ballotOf = (c: PaxosCall): Ballot => ({ n: c.ballot, by: c.proposer.toString('latin1') });
function proposalOf(c: PaxosCall): Proposal<Buffer> {
  const p = { ballot: ballotOf(c), id: c.proposalId.toString('latin1'), value: c.value };
  return c.base.length === 0 ? p : { ...p, base: c.base.toString('latin1') };
}

/** A Paxos call from a node of an earlier release, as the register's step (a malformed ballot or proposal: KV_BAD_OPTION). */
export function stepOfPaxos(c: PaxosCall): StepCall {
  if (typeof c.step === 'number')
    throw new ReplicationError(
      'RK_UNSUPPORTED',
      `Paxos step ${c.step} is unknown to this node; use PREPARE (1), PROPOSE (2) or COMMIT (3), or upgrade this node to the caller's release`,
    );
  const arg = c.step === 'prepare' ? PAXOS_PREPARE.arg.encode(ballotOf(c)) : STEPS[c.step].arg.encode(proposalOf(c));
  return { op: 'step', key: c.key, kind: REGISTER.format, step: STEPS[c.step].name, arg };
}

/** A register record holding a reply's parts: what a PaxosResponse's state is. */
const state = (promised: Ballot, p?: Omit<RegisterState, 'promised'>): Buffer =>
  encodeRegister({ promised, accepted: p?.accepted, committed: p?.committed, history: p?.history ?? [] });

/** The PaxosResponse to `c`, from the step's reply bytes. */
export function paxosReplyOf(id: number, c: PaxosCall, reply: Buffer): WireReply {
  switch (c.step) {
    case 'prepare': {
      const r = PAXOS_PREPARE.reply.decode(reply);
      return { id, op: 'paxos', ok: r.promised, state: r.promised ? state(ballotOf(c), r) : state(r.higher) };
    }
    case 'propose': {
      const r = PAXOS_PROPOSE.reply.decode(reply);
      return { id, op: 'paxos', ok: r.accepted, state: r.accepted ? EMPTY : state(r.higher) };
    }
    default:
      return { id, op: 'paxos', ok: true, state: EMPTY };
  }
}

/** The Paxos call a node of an earlier release takes for step call `c`, or undefined when `c` is no register step. */
export function paxosOfStep(c: StepCall, deadline: number): Omit<PaxosCall, 'id'> | undefined {
  const step = c.kind === REGISTER.format ? LEGACY.get(c.step) : undefined;
  if (step === undefined) return undefined;
  const p = step === 'prepare' ? undefined : STEPS[step].arg.decode(c.arg);
  const ballot = p?.ballot ?? PAXOS_PREPARE.arg.decode(c.arg);
  return {
    op: 'paxos',
    deadline,
    key: c.key,
    step,
    ballot: ballot.n,
    proposer: Buffer.from(ballot.by, 'latin1'),
    proposalId: Buffer.from(p?.id ?? '', 'latin1'),
    base: Buffer.from(p?.base ?? '', 'latin1'),
    value: p === undefined ? null : p.value,
  };
}

/** A PaxosResponse from `node` as the reply bytes of step call `c`; a state that does not decode is the peer's bug. */
export function stepReplyOfPaxos(c: StepCall, r: Extract<WireReply, { op: 'paxos' }>, node: string): Buffer {
  const held = (): RegisterState => {
    try {
      return decodeRegister(r.state).register;
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      throw new ReplicaFailure(
        'refused',
        'RK_INTERNAL',
        `${node} answered a Paxos step with a state that does not decode: ${e.message}`,
      );
    }
  };
  switch (c.step) {
    case PAXOS_PREPARE.name: {
      const s = r.ok ? held() : undefined;
      return PAXOS_PREPARE.reply.encode(
        s !== undefined
          ? { promised: true, accepted: s.accepted, committed: s.committed, history: s.history }
          : { promised: false, higher: held().promised },
      );
    }
    case PAXOS_PROPOSE.name:
      return PAXOS_PROPOSE.reply.encode(r.ok ? { accepted: true } : { accepted: false, higher: held().promised });
    default:
      return PAXOS_COMMIT.reply.encode(undefined);
  }
}
