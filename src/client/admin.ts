/**
 * A typed client for a node's Admin service (proto/ringkv/v1/admin.proto): every Admin
 * call, behind the CLI's operator commands (status, ring, transfers, decommission, plan,
 * repair, ...), the status page's transfers, and tests.
 *
 * Owns: the calls and their deadlines. Must not: format output (the CLI does).
 */

import * as grpc from '@grpc/grpc-js';
import { callUnary, serviceClient } from '../transport/protos.js';
import { callMetadata, channelCredentials, type ClientSecurity } from '../security/credentials.js';
import { gather } from '../transport/control-wire.js';

export interface RepairStatusReply {
  readonly id: string;
  readonly startedAtMs: number;
  /** 0 while it runs. */
  readonly finishedAtMs: number;
  readonly ranges: number;
  readonly done: number;
  readonly skipped: number;
  readonly failed: number;
  readonly identical: number;
  readonly leavesDiffering: number;
  readonly keysExchanged: number;
  readonly bytes: number;
  readonly recordBytes: number;
  readonly current: string;
  readonly lastProblem: string;
  /** Every range this node replicates, with when it was last repaired with all its replicas (0: not since the node started). */
  readonly repaired: readonly { readonly start: string; readonly end: string; readonly atMs: number }[];
  /** What background repair has done since the node started. */
  readonly background: { readonly ranges: number; readonly keysExchanged: number; readonly bytes: number; readonly failed: number };
}

export interface MemberStatus {
  readonly id: string;
  readonly address: string;
  readonly zone: string;
  readonly rack: string;
  readonly status: string;
  readonly up: boolean;
  readonly generation: number;
  readonly heartbeat: number;
  readonly tokens: number;
  readonly ownership: number;
  readonly loadBytes: number;
  readonly weight: number;
  readonly phi: number;
  /** Hints the member holds for other nodes (as it last gossiped it). */
  readonly hints: number;
  /** Ranges streamed of the topology change it joins by or drives, "done/total"; '' when none. */
  readonly progress: string;
  /** The member told the cluster it is stopping (a drain): down until it starts again. */
  readonly stopping: boolean;
}

export interface StatusReply {
  readonly clusterName: string;
  readonly nodeId: string;
  readonly replicas: number;
  readonly members: readonly MemberStatus[];
  /** The answering node's counters since it started (docs/reads-and-writes.md lists them). */
  readonly counters: Readonly<Record<string, number>>;
}

export interface TokenRange {
  readonly start: string;
  readonly end: string;
  readonly replicas: readonly string[];
}

export interface RingReply {
  readonly replicas: number;
  readonly ranges: readonly TokenRange[];
  /** While a topology change is in progress, the ranges once it is done; empty otherwise. */
  readonly pending: readonly TokenRange[];
}

export interface Endpoint {
  readonly id: string;
  readonly address: string;
  readonly zone: string;
  readonly up: boolean;
  /** Set on a fallback: the down replica it stands in for. */
  readonly hintFor: string;
}

export interface EndpointsReply {
  readonly token: string;
  readonly replicas: number;
  readonly preferenceList: readonly Endpoint[];
  readonly targets: readonly Endpoint[];
}

export interface RangeTransfer {
  readonly start: string;
  readonly end: string;
  readonly state: string;
  readonly peer: string;
  readonly keys: number;
  readonly bytes: number;
  readonly share: number;
  readonly fallbackSource: boolean;
  readonly error: string;
}

export interface TransfersReply {
  readonly nodeId: string;
  readonly movements: readonly string[];
  readonly pulls: readonly { readonly move: string; readonly requestedBy: string; readonly startedAtMs: number; readonly finishedAtMs: number; readonly ranges: readonly RangeTransfer[] }[];
  readonly outgoing: readonly RangeTransfer[];
  readonly drive:
    | {
        readonly kind: string;
        readonly node: string;
        readonly move: string;
        readonly phase: string;
        readonly startedAtMs: number;
        readonly gainers: readonly { readonly node: string; readonly ranges: number; readonly state: string; readonly keys: number; readonly bytes: number; readonly error: string }[];
      }
    | null;
  readonly streamBytesPerSecond: number;
}

export interface MovementReply {
  readonly move: string;
  readonly message: string;
}

export interface PlanReply {
  readonly steps: readonly {
    readonly change: { readonly kind: string; readonly node: string };
    readonly moves: readonly { readonly from: string; readonly to: string; readonly ranges: number; readonly share: number; readonly keys: number; readonly bytes: number }[];
    readonly state: string;
    readonly error: string;
  }[];
  readonly ownership: readonly { readonly node: string; readonly before: number; readonly after: number }[];
  readonly topo: string;
  readonly committing: boolean;
  readonly replicas: number;
}

export class AdminClient {
  readonly #client: grpc.Client;
  readonly #metadata: grpc.Metadata | undefined;

  /** `address`: host:port of any node; `security`: TLS and the admin token (credentials.ts). */
  constructor(
    readonly address: string,
    private readonly deadlineMs = 5000,
    security: ClientSecurity = {},
  ) {
    const Client = serviceClient('ringkv.v1.Admin');
    this.#client = new Client(address, channelCredentials(security));
    this.#metadata = callMetadata(security);
  }

  status(replicas = 0): Promise<StatusReply> {
    return this.#call('status', { replicas }) as Promise<StatusReply>;
  }

  ring(replicas = 0): Promise<RingReply> {
    return this.#call('ring', { replicas }) as Promise<RingReply>;
  }

  /** A key's token, replicas and current write targets. */
  endpoints(key: string | Uint8Array): Promise<EndpointsReply> {
    return this.#call('endpoints', { key: typeof key === 'string' ? Buffer.from(key) : key }) as Promise<EndpointsReply>;
  }

  /** Decommission the node this client talks to (or, with `cancel`, withdraw it). */
  decommission(cancel = false): Promise<MovementReply> {
    return this.#call('decommission', { cancel }) as Promise<MovementReply>;
  }

  /** Remove member `id`, which is down for good; this client's node drives it. */
  removeNode(id: string): Promise<MovementReply> {
    return this.#call('removeNode', { id }) as Promise<MovementReply>;
  }

  /** Delete data this client's node holds for ranges it no longer replicates. */
  cleanup(): Promise<{ deleted: number; kept: number; ranges: number }> {
    return this.#call('cleanup', {}, 10 * 60_000) as Promise<{ deleted: number; kept: number; ranges: number }>;
  }

  /** Stage changes (none: show the stage) and read what they would move. */
  plan(changes: readonly { kind: 'join' | 'leave' | 'remove'; node: string }[] = []): Promise<PlanReply> {
    return this.#call('plan', { changes }) as Promise<PlanReply>;
  }

  commit(): Promise<PlanReply> {
    return this.#call('commit', {}) as Promise<PlanReply>;
  }

  clear(): Promise<PlanReply> {
    return this.#call('clear', {}) as Promise<PlanReply>;
  }

  /** Admit this client's node, a standby started with --join manual. */
  admit(): Promise<MovementReply> {
    return this.#call('admit', {}) as Promise<MovementReply>;
  }

  transfers(): Promise<TransfersReply> {
    return this.#call('transfers', {}) as Promise<TransfersReply>;
  }

  /** Start an anti-entropy repair of the ranges this client's node replicates (overlapping `range` when given). */
  repair(range?: { start: string; end: string }): Promise<RepairStatusReply> {
    return this.#call('repair', range ?? { start: '', end: '' }) as Promise<RepairStatusReply>;
  }

  /** Fault injection: set the offset added to this client's node's wall clock (the node must run with --fault-injection on). */
  setClockOffset(offsetMs: number): Promise<{ offsetMs: number; nowMs: number }> {
    return this.#call('setClockOffset', { offsetMs }) as Promise<{ offsetMs: number; nowMs: number }>;
  }

  /** The repair running on this client's node, or its last one (id '' when none). */
  repairStatus(): Promise<RepairStatusReply> {
    return this.#call('repairStatus', {}) as Promise<RepairStatusReply>;
  }

  close(): void {
    this.#client.close();
  }

  #call(method: string, req: unknown, deadlineMs = this.deadlineMs): Promise<unknown> {
    return callUnary(this.#client, method, req, { deadline: Date.now() + deadlineMs }, this.#metadata);
  }
}

/**
 * Transfers of every member `status` lists as up and still a member, asked in parallel
 * (3 s each): `ringkv transfers` and the status page show them. Members that do not
 * answer are listed in `unreachable`.
 */
export async function clusterTransfers(status: StatusReply, security: ClientSecurity = {}): Promise<{ replies: TransfersReply[]; unreachable: string[] }> {
  const members = status.members.filter((m) => m.up && m.status !== 'left' && m.status !== 'removed');
  const address = new Map(members.map((m) => [m.id, m.address]));
  return gather(
    members.map((m) => m.id),
    async (id) => {
      const c = new AdminClient(address.get(id)!, 3000, security);
      try {
        return await c.transfers();
      } finally {
        c.close();
      }
    },
  );
}
