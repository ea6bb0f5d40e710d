/**
 * What a node serves, once its parts are built (RingkvNode.start, node.ts): the gRPC
 * services on its port (gossip, Admin, the key-value and replica services, handoff and
 * repair, Control, health, reflection), and its HTTP port (--http): the status page,
 * /metrics and /api/*, the cluster's transfers gathered from its members.
 *
 * Owns: which services the port serves and what each is given. Must not: start timers or
 * stop the node but on a failed HTTP start (node.ts owns the lifecycle), or contain a
 * service's logic (transport/ and the parts do).
 */

import * as grpc from '@grpc/grpc-js';
import type { HealthImplementation } from 'grpc-health-check';
import { ReflectionService } from '@grpc/reflection';
import { field } from '../membership/endpoint.js';
import { protos, serviceClient } from '../transport/protos.js';
import { CONTROL_SERVICE, controlService } from '../transport/control-wire.js';
import { gather } from '../transport/gather.js';
import { adminService, bucketsReply, ringReply, statusReply } from '../transport/admin-service.js';
import type { NodeMetrics } from './http/metrics.js';
import { HttpServer } from './http/http-server.js';
import type { GossipExchange } from './gossip-exchange.js';
import { keysHeld } from './bucket-purge.js';
import { repairUnitFor } from './topology/unit-repair.js';
import type { NodeLinks, NodeParts } from './part-builders.js';

/** The node as its services read it: its parts, and the commands and figures Admin answers with. */
export type ServedNode = Parameters<typeof adminService>[0] & NodeParts & { readonly metrics: NodeMetrics };

/** Add every gRPC service of the node to `server`: gossip, Admin, replication, handoff, Control, health, reflection. */
export function addServices(
  node: ServedNode,
  links: NodeLinks,
  server: grpc.Server,
  gossip: GossipExchange,
  health: HealthImplementation,
): void {
  gossip.addServices(server);
  server.addService(serviceClient('ringkv.v1.Admin').service, adminService(node));
  node.replication.addServices(
    server,
    (impl, role) => node.metrics.instrument(impl, role),
    (operation, role, code, seconds, siblings) => node.metrics.observe(operation, role, code, seconds, siblings),
  );
  node.handoff.addServices(server);
  server.addService(
    serviceClient(CONTROL_SERVICE).service,
    controlService({
      clusterName: node.config.clusterName,
      admit: () => node.admit(),
      decommission: () => node.decommission(false),
      transfers: () => node.transfers(),
      buckets: () => node.buckets.entries(),
      bucketKeys: (name, limit) => keysHeld(node.store, name, limit),
      repairRange: (r) =>
        repairUnitFor(
          {
            id: node.id,
            replicas: node.config.replicas,
            view: () => links.view(),
            isUp: (peer) => peer === node.id || node.gossiper.isUp(peer),
            checkClasses: (n, classes) => void node.handoff.served(n, classes),
            repairOne: (range, peers, n) => node.repairs.repairOne(range, peers, n),
          },
          r,
        ),
      refuse: () => links.refuse(),
      log: node.log.child({ component: 'control' }),
    }),
  );
  health.addToServer(server);
  new ReflectionService(protos().definition).addToServer(server);
}

/** Serve the status page and /metrics on `listen` (--http); when that fails the node stops and the error is thrown. */
export async function startHttp(
  listen: string,
  node: ServedNode,
  links: NodeLinks,
  gossip: GossipExchange,
): Promise<HttpServer> {
  const { security } = node;
  try {
    return await HttpServer.start(listen, {
      metrics: node.metrics,
      status: (n) => statusReply(node, n),
      ring: (n) => ringReply(node, n),
      events: () => gossip.events.recent(),
      buckets: () => bucketsReply(node.buckets),
      transfers: () => clusterTransfers(node, links),
      refusal: (req, path) => {
        const details = security.httpRefusal(req.headers.authorization);
        if (details !== undefined)
          security.refused({
            path: `HTTP ${path}`,
            peer: req.socket.remoteAddress ?? 'unknown',
            code: grpc.status.UNAUTHENTICATED,
            details,
          });
        return details;
      },
      log: node.log.child({ component: 'http' }),
    });
  } catch (e) {
    await node.stop();
    throw e;
  }
}

/**
 * Transfers of every member this node holds up and still a member, asked in parallel
 * through their Control service (3 s each), this node's own too: the status page's
 * /api/transfers, as `ringkv transfers` gathers them.
 */
function clusterTransfers(node: ServedNode, links: NodeLinks): Promise<{ replies: unknown[]; unreachable: string[] }> {
  const removed = node.removed;
  const members = [...node.gossiper.states()]
    .filter(
      (st) => (st.id === node.id || node.gossiper.isUp(st.id)) && !removed.has(st.id) && field(st, 'status') !== 'left',
    )
    .map((st) => st.id);
  return gather(members, (peer) => links.control().transfers(peer, 3000));
}
