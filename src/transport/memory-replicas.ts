/**
 * The in-memory replica network (docs/architecture.md: the transport's fake): every node's
 * LocalReplica in one process, with faults a test or simulation sets per link: a node
 * that cannot be reached (unreachable), or a delay (past the call's deadline: a timeout;
 * the call may still run, as on a real network). Failures are ReplicaFailures, as the
 * gRPC transport reports them.
 *
 * Owns: routing calls to replicas and the faults. Must not: interpret calls.
 */
import { STEP_NAMES } from '../kinds/index.js';
import type { LocalReplica } from '../replication/local-replica.js';
import {
  ReplicaFailure,
  asReplicaFailure,
  callName,
  type ReplicaApi,
  type ReplicaCall,
  type ReplicaOp,
  type ReplyTo,
} from '../replication/replica-api.js';

export interface LinkFault {
  /** The call never reaches the node: UNAVAILABLE. */
  readonly unreachable?: boolean;
  /** ms before the call reaches the node. */
  readonly delayMs?: number;
  /** Only these calls are delayed (default: every call). */
  readonly delayOnly?: readonly string[];
  /** Calls the node refuses RK_UNSUPPORTED, as a node of an earlier release refuses the data types' calls. */
  readonly unsupported?: readonly string[];
  /** Calls the node runs whose answer is lost: UNAVAILABLE, as a stream that broke with the call on it. */
  readonly lostReply?: readonly string[];
}

/** Calls made, by what replica-api.ts callName labels them (an operation, or a known step by its name). */
export type CallCounts = Record<Exclude<ReplicaOp, 'step'>, number> & { [step: string]: number };
const OPS: readonly string[] = [
  ...(['apply', 'merge', 'read', 'digest', 'counterUpdate', 'writeMany', 'readRange'] satisfies ReplicaOp[]),
  ...STEP_NAMES,
];
const emptyCounts = (): CallCounts => Object.fromEntries(OPS.map((op) => [op, 0])) as CallCounts;

export class MemoryReplicaNetwork {
  readonly replicas = new Map<string, LocalReplica>();
  /** Fault on calls from `from` to `to`; the key is `${from}>${to}`, or `*>${to}` for any sender. */
  readonly faults = new Map<string, LinkFault>();
  /** Calls made, by method. */
  readonly calls: CallCounts = emptyCounts();
  /** Calls made to each node, by method. */
  readonly callsTo = new Map<string, CallCounts>();

  add(id: string, replica: LocalReplica): void {
    this.replicas.set(id, replica);
  }

  /** The ReplicaApi as node `from` sees the network. */
  from(from: string): ReplicaApi {
    return { call: (to, c, deadline) => this.#call(from, to, c, deadline) };
  }

  async #call<C extends ReplicaCall>(from: string, to: string, c: C, deadline: number): Promise<ReplyTo<C>> {
    const op = callName(c);
    this.calls[op] = (this.calls[op] ?? 0) + 1;
    let to_ = this.callsTo.get(to);
    if (to_ === undefined) this.callsTo.set(to, (to_ = emptyCounts()));
    to_[op] = (to_[op] ?? 0) + 1;
    const fault = this.faults.get(`${from}>${to}`) ?? this.faults.get(`*>${to}`) ?? {};
    const replica = this.replicas.get(to);
    if (fault.unreachable || replica === undefined)
      throw new ReplicaFailure('unreachable', 'RK_UNAVAILABLE', `no connection to ${to}`);
    if (fault.unsupported?.includes(op))
      throw new ReplicaFailure(
        'refused',
        'RK_UNSUPPORTED',
        `peer ${to} runs a release without data types and cannot take this call; upgrade it`,
      );
    const delay = fault.delayOnly === undefined || fault.delayOnly.includes(op) ? (fault.delayMs ?? 0) : 0;
    if (delay > 0) {
      const left = deadline - Date.now();
      await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, left))));
      if (delay > left) {
        void replica.call(c).catch(() => undefined); // it arrives late; the caller has given up
        throw new ReplicaFailure('timeout', 'RK_TIMEOUT', `${to} did not answer before the deadline`);
      }
    }
    let answer: ReplyTo<C>;
    try {
      answer = await replica.call(c);
    } catch (e) {
      // As the wire answers: a failure with the replica's code, not its exception.
      throw asReplicaFailure(e);
    }
    if (fault.lostReply?.includes(op))
      throw new ReplicaFailure('unreachable', 'RK_UNAVAILABLE', `no answer from ${to}: the stream broke`);
    return answer;
  }
}
