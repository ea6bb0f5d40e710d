/**
 * This node's side of gossip: its gossiper (started with the fields its config and
 * node.json give), the messages it sends (a round's, replies, announcements), the Gossip
 * service that takes its peers' messages, and a log line per membership event.
 *
 * Owns: the gossiper and the channels to peers. Must not: schedule rounds (node.ts owns
 * the timers) or act on what gossip changed (`changed` does: the node rebuilds its view).
 */
import { performance } from 'node:perf_hooks';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { Gossiper } from '../membership/gossiper.js';
import { field, formatTokens, type EndpointState } from '../membership/endpoint.js';
import { GossipSender, gossipService } from '../transport/gossip-wire.js';
import { WIRE_SCHEMA } from '../transport/protos.js';
import type { NodeConfig } from './config.js';
import type { Identity } from './identity.js';
import { MembershipLog } from './membership-log.js';

export interface GossipExchangeDeps {
  readonly config: Pick<
    NodeConfig,
    'clusterName' | 'zone' | 'rack' | 'weight' | 'replicas' | 'seeds' | 'phiThreshold' | 'gossipIntervalMs' | 'join'
  >;
  /** This node as node.json has it at start. */
  readonly identity: Identity;
  /** The address this node gossips, for peers to reach it at. */
  readonly address: string;
  /** The member table kept from the last run (members.json); `fresh`: a new data dir. */
  readonly known: { readonly states: EndpointState[]; readonly fresh: boolean };
  /** Gossip may have changed the member table: rebuild the view if ownership changed. */
  changed(): void;
  /** Is the node stopping? Its Gossip service then refuses messages. */
  stopping(): boolean;
  /** How this node dials its peers (security/node-security.ts). */
  readonly peerCredentials: grpc.ChannelCredentials;
  readonly log: Logger;
}

export class GossipExchange {
  readonly gossiper: Gossiper;
  readonly #sender: GossipSender;
  /** Membership events: logged, and the last ones kept for the status page. */
  readonly events: MembershipLog;

  constructor(private readonly deps: GossipExchangeDeps) {
    const { config, identity, known, log } = deps;
    this.gossiper = new Gossiper({
      id: identity.id,
      clusterName: config.clusterName,
      generation: identity.generation,
      fields: startFields(config, identity, deps.address),
      seeds: config.seeds,
      random: Math.random,
      now: performance.now(),
      detector: { threshold: config.phiThreshold, firstIntervalMs: config.gossipIntervalMs },
      // A node with a new data dir first checks, unseen, that its id is not a member's.
      shadow: known.fresh,
      known: known.states,
    });
    this.events = new MembershipLog(log.child({ component: 'membership' }));
    const peerLog = log.child({ component: 'gossip' });
    this.#sender = new GossipSender(
      Math.max(1000, 2 * config.gossipIntervalMs),
      (to, err) => peerLog.debug({ peer: to, code: err.code, err: err.details }, 'gossip message not delivered'),
      deps.peerCredentials,
    );
  }

  /** The address member `id` gossips, if known. */
  addressOf(id: string): string | undefined {
    const st = this.gossiper.state(id);
    return st === undefined ? undefined : field(st, 'addr');
  }

  /** The Gossip service: a peer's message in, replies out (sent as messages of their own). */
  addServices(server: grpc.Server): void {
    server.addService(
      ...gossipService({
        refuse: () => (this.deps.stopping() ? 'node is shutting down' : undefined),
        receive: (message) => {
          const replies = this.gossiper.receive(performance.now(), message);
          const refused = this.after();
          for (const r of replies) this.#sender.send(r.to, r.message);
          return refused;
        },
      }),
    );
  }

  /** Log membership events, rebuild the ring if ownership changed. Returns why a message was refused, if it was. */
  after(): string | undefined {
    const refused = this.#logEvents();
    this.deps.changed();
    return refused;
  }

  /** One gossip round. */
  round(): void {
    const out = this.gossiper.tick(performance.now());
    this.after();
    for (const o of out) this.#sender.send(o.to, o.message);
  }

  /** Judge peers between rounds, so that a conviction is not up to a round late. */
  judge(): void {
    this.gossiper.judge(performance.now());
    this.#logEvents(); // up/down is not ownership: no ring to rebuild
  }

  /** Tell the seeds, every peer known and `remembered` addresses our state; do not wait. */
  announce(remembered: readonly string[]): void {
    for (const o of this.gossiper.announce(remembered)) this.#sender.send(o.to, o.message);
  }

  /** Tell every peer our state now; settles once they have it, or after a second at most. */
  async announceNow(): Promise<void> {
    const sends = this.gossiper.announce().map((o) => this.#sender.send(o.to, o.message));
    await Promise.race([Promise.all(sends), new Promise((r) => setTimeout(r, 1000))]);
  }

  /** Keep channels only to the seeds and these peers: the map stays bounded under churn. */
  retain(peers: readonly string[]): void {
    this.#sender.retain(new Set([...this.deps.config.seeds, ...peers]));
  }

  close(): void {
    this.#sender.close();
  }

  /** Log the gossiper's events; returns why a message was refused, if one was. */
  #logEvents(): string | undefined {
    let refused: string | undefined;
    for (const e of this.gossiper.takeEvents()) {
      this.events.record(this.gossiper, e);
      if (e.type === 'refused') refused = e.reason;
    }
    return refused;
  }
}

/** The gossip fields this node starts with, from its config and node.json. */
function startFields(
  config: GossipExchangeDeps['config'],
  identity: Identity,
  address: string,
): Record<string, string> {
  const fields: Record<string, string> = {
    addr: address,
    zone: config.zone,
    rack: config.rack,
    weight: String(config.weight),
    status: identity.status,
    // The wire contract this node speaks, for rolling upgrades to check.
    schema: WIRE_SCHEMA,
    // Replicas per key: a cluster setting every node must share (housekeeping.ts checks).
    replicas: String(config.replicas),
  };
  if (identity.tokens !== undefined) fields.tokens = formatTokens(identity.tokens);
  if (identity.removing !== undefined) fields.removing = identity.removing;
  if (identity.removed.length > 0) fields.removed = identity.removed.join(',');
  if (identity.replaces !== undefined) fields.replaces = identity.replaces;
  if (identity.heirs !== '') fields.heirs = identity.heirs;
  if (identity.status === 'joining' && config.join === 'manual' && !identity.admitted) fields.standby = 'true';
  return fields;
}
