/**
 * The in-memory replica network (docs/architecture.md: the transport's fake): every node's
 * LocalReplica in one process, with faults a test or simulation sets per link: a node
 * that cannot be reached (unreachable), or a delay (past the call's deadline: a timeout;
 * the call may still run, as on a real network). Failures are ReplicaFailures, as the
 * gRPC transport reports them.
 *
 * Owns: routing calls to replicas and the faults. Must not: interpret calls.
 */
import type { LocalReplica } from '../replication/local-replica.js';
import { ReplicaFailure, asReplicaFailure, type ApplyResult, type ReplicaApi } from '../replication/replica-api.js';

export interface LinkFault {
  /** The call never reaches the node: UNAVAILABLE. */
  readonly unreachable?: boolean;
  /** ms before the call reaches the node. */
  readonly delayMs?: number;
  /** Only these calls are delayed (default: every call). */
  readonly delayOnly?: readonly (keyof CallCounts)[];
  /** Calls the node refuses RK_UNSUPPORTED, as a node of an earlier release refuses the data types' calls. */
  readonly unsupported?: readonly (keyof CallCounts)[];
  /** Calls the node runs whose answer is lost: UNAVAILABLE, as a stream that broke with the call on it. */
  readonly lostReply?: readonly (keyof CallCounts)[];
}

/** Calls made, by ReplicaApi method. */
export type CallCounts = Record<
  | 'apply'
  | 'merge'
  | 'read'
  | 'digest'
  | 'counterUpdate'
  | 'writeMany'
  | 'readRange'
  | 'paxosPrepare'
  | 'paxosPropose'
  | 'paxosCommit',
  number
>;
const emptyCounts = (): CallCounts => ({
  apply: 0,
  merge: 0,
  read: 0,
  digest: 0,
  counterUpdate: 0,
  writeMany: 0,
  readRange: 0,
  paxosPrepare: 0,
  paxosPropose: 0,
  paxosCommit: 0,
});

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
    const call = async <T>(
      to: string,
      deadline: number,
      method: keyof MemoryReplicaNetwork['calls'],
      fn: (r: LocalReplica) => Promise<T>,
    ): Promise<T> => {
      this.calls[method]++;
      let to_ = this.callsTo.get(to);
      if (to_ === undefined) this.callsTo.set(to, (to_ = emptyCounts()));
      to_[method]++;
      const fault = this.faults.get(`${from}>${to}`) ?? this.faults.get(`*>${to}`) ?? {};
      const replica = this.replicas.get(to);
      if (fault.unreachable || replica === undefined)
        throw new ReplicaFailure('unreachable', 'RK_UNAVAILABLE', `no connection to ${to}`);
      if (fault.unsupported?.includes(method))
        throw new ReplicaFailure(
          'refused',
          'RK_UNSUPPORTED',
          `peer ${to} runs a release without data types and cannot take this call; upgrade it`,
        );
      const delay = fault.delayOnly === undefined || fault.delayOnly.includes(method) ? (fault.delayMs ?? 0) : 0;
      if (delay > 0) {
        const left = deadline - Date.now();
        await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, left))));
        if (delay > left) {
          void fn(replica).catch(() => undefined); // it arrives late; the caller has given up
          throw new ReplicaFailure('timeout', 'RK_TIMEOUT', `${to} did not answer before the deadline`);
        }
      }
      let answer: T;
      try {
        answer = await fn(replica);
      } catch (e) {
        // As the wire answers: a failure with the replica's code, not its exception.
        throw asReplicaFailure(e);
      }
      if (fault.lostReply?.includes(method))
        throw new ReplicaFailure('unreachable', 'RK_UNAVAILABLE', `no answer from ${to}: the stream broke`);
      return answer;
    };
    return {
      apply: (to, key, value, context, deadline, requestId, expiresAt): Promise<ApplyResult> =>
        call(to, deadline, 'apply', (r) => r.apply(key, value, context, requestId, expiresAt)),
      merge: (to, key, record, hintFor, deadline) => call(to, deadline, 'merge', (r) => r.merge(key, record, hintFor)),
      read: (to, key, hintFor, deadline) => call(to, deadline, 'read', (r) => r.read(key, hintFor)),
      digest: (to, key, deadline) => call(to, deadline, 'digest', (r) => r.digest(key)),
      counterUpdate: (to, key, amount, deadline, requestId) =>
        call(to, deadline, 'counterUpdate', (r) => r.counterUpdate(key, amount, requestId)),
      writeMany: (to, parent, ops, deadline, requestId) =>
        call(to, deadline, 'writeMany', (r) => r.writeMany(parent, ops, requestId)),
      readRange: (to, parent, after, limit, deadline) =>
        call(to, deadline, 'readRange', (r) => r.readRange(parent, after, limit)),
      paxosPrepare: (to, key, ballot, deadline) =>
        call(to, deadline, 'paxosPrepare', (r) => r.paxosPrepare(key, ballot)),
      paxosPropose: (to, key, proposal, deadline) =>
        call(to, deadline, 'paxosPropose', (r) => r.paxosPropose(key, proposal)),
      paxosCommit: (to, key, proposal, deadline) =>
        call(to, deadline, 'paxosCommit', (r) => r.paxosCommit(key, proposal)),
    };
  }
}
