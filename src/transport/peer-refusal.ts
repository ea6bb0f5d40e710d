/**
 * The two checks every node-to-node call passes before it is served (Handoff, Repair,
 * Control): the caller is of this cluster, and this node is not stopping.
 *
 * Owns: those checks and their statuses. Must not: check anything a service's own
 * request carries beyond its cluster name.
 */
import * as grpc from '@grpc/grpc-js';

export interface PeerRefusal {
  readonly code: grpc.status;
  readonly details: string;
}

/** Why a peer's call is refused before it is served: another cluster (FAILED_PRECONDITION), or `stopping` (UNAVAILABLE); undefined when it may go on. */
export function peerRefusal(cluster: string, ours: string, stopping: string | undefined): PeerRefusal | undefined {
  if (cluster !== ours)
    return { code: grpc.status.FAILED_PRECONDITION, details: `cluster name "${cluster}" is not ours ("${ours}")` };
  if (stopping !== undefined) return { code: grpc.status.UNAVAILABLE, details: stopping };
  return undefined;
}
