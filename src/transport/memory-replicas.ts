/**
 * The in-memory replica network (docs/architecture.md: the transport's fake): every node's
 * LocalReplica in one process, with faults a test or simulation sets per link: a node
 * that cannot be reached (UNAVAILABLE), or a delay (past the call's deadline:
 * DEADLINE_EXCEEDED, as gRPC reports it; the call may still run, as on a real network).
 *
 * Owns: routing calls to replicas and the faults. Must not: interpret calls.
 */
import type { LocalReplica } from '../replication/local-replica.js';
import type { ApplyResult, ReplicaApi } from '../replication/replica-api.js';
import { toStatus } from './status.js';

export interface LinkFault {
  /** The call never reaches the node: UNAVAILABLE. */
  readonly unreachable?: boolean;
  /** ms before the call reaches the node. */
  readonly delayMs?: number;
}

const UNAVAILABLE = 14, DEADLINE_EXCEEDED = 4;

function grpcError(code: number, details: string): Error {
  return Object.assign(new Error(`${code} ${details}`), { code, details });
}

export class MemoryReplicaNetwork {
  readonly replicas = new Map<string, LocalReplica>();
  /** Fault on calls from `from` to `to`; the key is `${from}>${to}`, or `*>${to}` for any sender. */
  readonly faults = new Map<string, LinkFault>();
  /** Calls made, by method. */
  readonly calls = { apply: 0, merge: 0, read: 0 };

  add(id: string, replica: LocalReplica): void {
    this.replicas.set(id, replica);
  }

  /** The ReplicaApi as node `from` sees the network. */
  from(from: string): ReplicaApi {
    const call = async <T>(to: string, deadline: number, method: keyof MemoryReplicaNetwork['calls'], fn: (r: LocalReplica) => Promise<T>): Promise<T> => {
      this.calls[method]++;
      const fault = this.faults.get(`${from}>${to}`) ?? this.faults.get(`*>${to}`) ?? {};
      const replica = this.replicas.get(to);
      if (fault.unreachable || replica === undefined) throw grpcError(UNAVAILABLE, `no connection to ${to}`);
      const delay = fault.delayMs ?? 0;
      if (delay > 0) {
        const left = deadline - Date.now();
        await new Promise((r) => setTimeout(r, Math.min(delay, Math.max(0, left))));
        if (delay > left) {
          void fn(replica).catch(() => undefined); // it arrives late; the caller has given up
          throw grpcError(DEADLINE_EXCEEDED, 'Deadline exceeded');
        }
      }
      try {
        return await fn(replica);
      } catch (e) {
        // As the gRPC service answers: a status, not the replica's exception.
        const s = toStatus(e);
        throw grpcError(s.code!, s.details!);
      }
    };
    return {
      apply: (to, key, value, context, deadline): Promise<ApplyResult> => call(to, deadline, 'apply', (r) => r.apply(key, value, context)),
      merge: (to, key, record, hintFor, deadline) => call(to, deadline, 'merge', (r) => r.merge(key, record, hintFor)),
      read: (to, key, hintFor, deadline) => call(to, deadline, 'read', (r) => r.read(key, hintFor)),
    };
  }
}
