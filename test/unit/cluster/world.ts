/**
 * A small cluster for the cluster/ core's tests: each node's node.json (`Persisted`) and
 * the state it gossips, with one table every node sees (gossip converged at once), so a
 * test applies the core's updates, restarts a node (its gossip restarts from node.json,
 * as node/gossip-exchange.ts's start fields do) and asks the core again.
 */
import {
  formatTokens,
  initialState,
  setField,
  type EndpointState,
  type NodeStatus,
} from '../../../src/membership/endpoint.js';
import { ringFromStates, type RingView } from '../../../src/membership/ring-view.js';
import { claimRing } from '../../../src/ring/index.js';
import type { Persisted, Update } from '../../../src/cluster/leave.js';

export const TOKENS = 8;

export interface WorldNode {
  me: Persisted;
  state: EndpointState;
  up: boolean;
}

/** The fields a node starts gossiping with, from its node.json (node/gossip-exchange.ts). */
export function startFields(id: string, me: Persisted): Record<string, string> {
  const f: Record<string, string> = { addr: `${id}:1`, zone: '', rack: '', weight: '1', status: me.status };
  if (me.tokens !== undefined) f.tokens = formatTokens(me.tokens);
  if (me.removing !== undefined) f.removing = me.removing;
  if (me.removed.length > 0) f.removed = me.removed.join(',');
  if (me.heirs !== '') f.heirs = me.heirs;
  return f;
}

export class World {
  readonly nodes = new Map<string, WorldNode>();
  #generation = 1;

  /** `owners` normal members with balanced tokens, and `joiners` (joining, no tokens). */
  static of(owners: string[], joiners: string[] = []): World {
    const w = new World();
    const ring = claimRing(
      owners.map((id) => ({ id })),
      3,
      { tokensPerNode: TOKENS },
    );
    for (const id of owners) w.add(id, 'normal', [...ring.member(id)!.tokens]);
    for (const id of joiners) w.add(id, 'joining', undefined);
    w.agree();
    return w;
  }

  add(id: string, status: NodeStatus, tokens: bigint[] | undefined): void {
    const me: Persisted = { status, tokens, move: undefined, removing: undefined, removed: [], heirs: '' };
    this.nodes.set(id, { me, state: initialState(id, this.#generation++, startFields(id, me)), up: true });
  }

  node(id: string): WorldNode {
    return this.nodes.get(id)!;
  }

  states(): EndpointState[] {
    return [...this.nodes.values()].map((n) => n.state);
  }

  view(): RingView {
    return ringFromStates(this.states(), { tokensPerNode: TOKENS });
  }

  isUp = (id: string): boolean => this.nodes.get(id)?.up ?? false;

  set(id: string, fields: Readonly<Record<string, string>>): void {
    const n = this.node(id);
    for (const [name, value] of Object.entries(fields)) n.state = setField(n.state, name, value);
  }

  /** What the shell does with an update: persist, then gossip. */
  apply(id: string, u: Update): void {
    const n = this.node(id);
    n.me = { ...n.me, ...u.persist };
    this.set(id, u.gossip);
  }

  /** Every live member gossips the view's hash (they all write to its pending ranges). */
  agree(): void {
    const hash = this.view().hash;
    for (const [id, n] of this.nodes) if (n.up) this.set(id, { topo: hash });
  }

  /** The node restarts: a new generation, gossiping what its node.json holds. */
  restart(id: string): void {
    const n = this.node(id);
    n.state = initialState(id, this.#generation++, startFields(id, n.me));
    n.up = true;
  }
}
